"""What this machine offers: GPUs, the CUDA compiler, CMake, g++, Boost.Context."""
from __future__ import annotations

import os
import re
import shutil
import subprocess
import tempfile
from dataclasses import dataclass, field
from pathlib import Path


@dataclass(frozen=True)
class Gpu:
    index: int
    name: str
    compute_capability: str   # "9.0"
    memory_mib: int

    @property
    def arch(self) -> str:    # "90", for CMAKE_CUDA_ARCHITECTURES ("native" when unknown)
        cc = self.compute_capability.replace(".", "")
        return cc if cc.isdigit() else "native"


@dataclass(frozen=True)
class Tool:
    name: str
    path: str | None
    version: str = ""
    problem: str = ""          # why it is missing or unusable

    @property
    def ok(self) -> bool:
        return self.path is not None and not self.problem


@dataclass
class Machine:
    gpus: list[Gpu] = field(default_factory=list)
    driver_version: str = ""
    gpu_problem: str = ""      # why no GPU was found
    nvcc: Tool = Tool("nvcc", None)
    cmake: Tool = Tool("cmake", None)
    gxx: Tool = Tool("g++", None)
    boost_context: Tool = Tool("Boost.Context", None)
    cores: int = 1

    @property
    def can_build_cuda(self) -> bool:
        return self.nvcc.ok and self.cmake.ok and self.gxx.ok

    @property
    def can_build_emulator(self) -> bool:
        return self.cmake.ok and self.gxx.ok and self.boost_context.ok

    @property
    def has_gpu(self) -> bool:
        return bool(self.gpus)


def _run(argv: list[str], timeout: float = 30) -> tuple[int, str]:
    try:
        p = subprocess.run(argv, capture_output=True, text=True, timeout=timeout)
        return p.returncode, p.stdout + p.stderr
    except (OSError, subprocess.TimeoutExpired) as e:
        return -1, str(e)


def find_nvcc() -> str | None:
    found = shutil.which("nvcc")
    if found:
        return found
    for candidate in (os.environ.get("CUDA_HOME", ""), os.environ.get("CUDA_PATH", ""),
                      "/usr/local/cuda"):
        if candidate and Path(candidate, "bin", "nvcc").is_file():
            return str(Path(candidate, "bin", "nvcc"))
    return None


def detect_gpus() -> tuple[list[Gpu], str, str]:
    """(GPUs, driver version, the reason there are none)."""
    smi = shutil.which("nvidia-smi")
    if not smi:
        return [], "", "nvidia-smi not found (no NVIDIA driver installed)"
    code, out = _run([smi, "--query-gpu=index,name,compute_cap,memory.total,driver_version",
                      "--format=csv,noheader,nounits"])
    if code != 0:
        # Older drivers know no compute_cap field: the build then asks for "native".
        code, out = _run([smi, "--query-gpu=index,name,memory.total,driver_version",
                          "--format=csv,noheader,nounits"])
        out = "\n".join(",".join(line.split(",")[:2] + [" "] + line.split(",")[2:])
                        for line in out.strip().splitlines()) if code == 0 else out
    if code != 0:
        return [], "", f"nvidia-smi failed: {out.strip().splitlines()[-1] if out.strip() else code}"
    gpus: list[Gpu] = []
    driver = ""
    visible = os.environ.get("CUDA_VISIBLE_DEVICES")
    for line in out.strip().splitlines():
        parts = [p.strip() for p in line.split(",")]
        if len(parts) < 5 or not parts[0].isdigit():
            continue
        index = int(parts[0])
        if visible is not None and str(index) not in visible.split(","):
            continue
        try:
            memory = int(float(parts[3]))
        except ValueError:
            memory = 0
        gpus.append(Gpu(index, parts[1], parts[2], memory))
        driver = parts[4]
    return gpus, driver, "" if gpus else "nvidia-smi lists no GPU"


def _version(argv: list[str], pattern: str) -> str:
    code, out = _run(argv)
    m = re.search(pattern, out)
    return m.group(1) if code == 0 and m else ""


def check_boost_context(gxx: str | None) -> Tool:
    if not gxx:
        return Tool("Boost.Context", None, problem="needs g++")
    source = "#include <boost/context/fiber.hpp>\nint main() { return 0; }\n"
    with tempfile.TemporaryDirectory(prefix="scanlab-doctor-") as tmp:
        src = Path(tmp, "t.cpp")
        src.write_text(source)
        code, out = _run([gxx, str(src), "-o", str(Path(tmp, "t")), "-lboost_context"], 120)
    if code != 0:
        return Tool("Boost.Context", None, problem="not installed (libboost-context-dev): "
                    + (out.strip().splitlines()[0] if out.strip() else f"exit {code}"))
    return Tool("Boost.Context", "libboost_context", "found")


def detect(check_boost: bool = True) -> Machine:
    m = Machine()
    m.cores = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else (os.cpu_count() or 1)
    m.gpus, m.driver_version, m.gpu_problem = detect_gpus()
    nvcc = find_nvcc()
    m.nvcc = Tool("nvcc", nvcc, _version([nvcc, "--version"], r"release ([\d.]+)") if nvcc else "",
                  "" if nvcc else "not found (install the CUDA toolkit, or put nvcc on PATH)")
    cmake = shutil.which("cmake")
    cmake_version = _version([cmake, "--version"], r"cmake version ([\d.]+)") if cmake else ""
    problem = "" if cmake else "not found"
    if cmake_version and tuple(int(x) for x in cmake_version.split(".")[:2]) < (3, 22):
        problem = f"version {cmake_version} is older than the 3.22 the handout needs"
    m.cmake = Tool("cmake", cmake, cmake_version, problem)
    gxx = shutil.which("g++")
    m.gxx = Tool("g++", gxx, _version([gxx, "-dumpfullversion"], r"([\d.]+)") if gxx else "",
                 "" if gxx else "not found")
    m.boost_context = check_boost_context(gxx) if check_boost else Tool("Boost.Context", "unchecked", "")
    return m


def select_gpus(gpus: list[Gpu], spec: str) -> list[Gpu]:
    """The GPUs `spec` names among `gpus` (those visible): "all", or indices as
    nvidia-smi numbers them ("0,2"). ValueError if it names one that is not there."""
    spec = spec.strip().lower()
    if spec in ("", "all"):
        return list(gpus)
    by_index = {g.index: g for g in gpus}
    try:
        wanted = [int(x) for x in spec.split(",") if x.strip()]
    except ValueError:
        raise ValueError(f"--gpus {spec!r}: expected all, or GPU indices like 0,2") from None
    missing = [i for i in wanted if i not in by_index]
    if missing or not wanted:
        raise ValueError(f"--gpus {spec!r}: no GPU {', '.join(map(str, missing))} here (visible: "
                         f"{', '.join(str(g.index) for g in gpus) or 'none'})")
    return [by_index[i] for i in dict.fromkeys(wanted)]
