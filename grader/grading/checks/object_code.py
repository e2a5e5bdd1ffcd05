"""What the student object's code reaches, function by function, and what its device
code keeps: the checks of grader/grading/checks/compiled.py that know the toolchain.

- **references** (readelf -r): for each function or data object of the student object,
  the symbols it refers to (calls, and addresses taken: a pointer to `cudaLaunchKernel`
  is a reference as much as a call).
- **the toolchain's own code**: nvcc writes host code for device code: a launch stub per
  kernel (`__device_stub__*`, which calls `cudaLaunchKernel`), the kernel's host wrapper
  (which calls its stub), a host body for each `__device__` function that only calls
  `exit` (it must never run on the host), and the registration (`__sti____cudaRegisterAll`,
  `__cudaRegister*`, `atexit`). Those are not the student's. The harness's own host code
  in the unit (the functions defined in the task headers harness/tasks/*.cuh,
  student_unit.cu, ...: harness_host_functions) is not either.
- **host code**: on the CUDA build every other host function of the unit is the student's
  (a helper, a constructor of a kernel argument's type that the launch runs, a static
  initializer, a global operator new/delete): refused, the unit's host code is the
  harness's. The toolchain's calls (launch, registration, exit) may come only from the
  toolchain's code: reached from anywhere else (a function pointer), they are refused.
- **device state** (the cubin nvcc kept): a variable in `.nv.global` (a `__device__`
  variable, a function-scope static, in a template or not) outlives a launch: refused.
  `__constant__` data (`.nv.constant*`) cannot be written by device code: allowed. The
  host object's shadows of device variables are not host state.
"""
from __future__ import annotations

import re
import subprocess
from dataclasses import dataclass, field
from pathlib import Path

TOOL_TIMEOUT_S = 120
# Host functions the toolchain writes (demangled names).
TOOLCHAIN_HOST = re.compile(r"^(__device_stub__|__sti__|__cuda|__nv_|__fatbinwrap|__nv_cudaEntry)")
# Every function the harness's headers define with a host body is the harness's, whether
# the compiler inlines it or not (gcc 13 with Ubuntu's default hardening keeps
# launchLookbackScan and planTiles apart; Debian's gcc 12 inlines them).
# A definition starts a line: `void scan(`, `static unsigned splitBlocks(`,
# `__host__ __device__ T packTile(`; device-only code (__device__ without __host__,
# __global__) has no host body.
_HOST_DEFINITION = re.compile(r"^(?:[A-Za-z_][\w:<>,]*[\s*&]+)+(\w+)\(", re.M)
# A class defined at the start of a line (`struct TaskList {`, `struct Plan<tasks::Scan> {`,
# a task's plan): its member functions are the harness's too.
_CLASS_DEFINITION = re.compile(r"^(?:struct|class) (\w+)\b", re.M)
# The C++ library's, and the harness's types' members.
LIBRARY_HOST = re.compile(r"^(scanlab::CudaError::.*|scanlab::Workspace.*|dim3::.*|std::.*|__gnu_cxx::.*)$")


def harness_host_functions(files: list[Path]) -> frozenset[str]:
    """The names of the host functions that these harness files define (the ones the
    student unit includes, from the compiler's -M list): read from the harness itself,
    so a new plan function is known without a list to update."""
    names = set()
    for path in files:
        text = path.read_text(errors="replace") if path.is_file() else ""
        for m in _HOST_DEFINITION.finditer(text):
            line = text[m.start():m.end()]
            if "__global__" in line or ("__device__" in line and "__host__" not in line):
                continue
            names.add(m.group(1))
        names.update(_CLASS_DEFINITION.findall(text))
    return frozenset(names)


def _is_harness(name: str, harness: frozenset[str]) -> bool:
    m = re.match(r"^(?:scanlab::(?:student::)?|\(anonymous namespace\)::)(\w+)(?:<.*>)?\(", name)
    return bool(m and m.group(1) in harness) or bool(LIBRARY_HOST.match(name))


# Calls only the toolchain's code may make (the launch, the registration, the end of a
# device function's host body): reached from elsewhere they are a way around the rules.
TOOLCHAIN_ONLY = re.compile(
    r"^(cudaLaunchKernel\w*|__cudaLaunchKernel\w*|cudaLaunchCooperativeKernel\w*"
    r"|__cudaPushCallConfiguration|__cudaPopCallConfiguration|__cudaRegister\w*"
    r"|__cudaUnregisterFatBinary|__cudaInitModule|exit|atexit)$")


@dataclass
class Function:
    name: str                # demangled
    mangled: str
    section: str
    start: int
    size: int
    kind: str                # FUNC, OBJECT
    refs: set[str] = field(default_factory=set)   # demangled names it refers to


def _run(argv: list[str], stdin: str | None = None) -> str:
    r = subprocess.run(argv, input=stdin, capture_output=True, text=True, timeout=TOOL_TIMEOUT_S)
    if r.returncode != 0:
        raise RuntimeError(f"{argv[0]} failed: {r.stderr.strip()[:300]}")
    return r.stdout


def _demangle(names: list[str]) -> dict[str, str]:
    if not names:
        return {}
    out = _run(["c++filt"], "\n".join(names) + "\n").splitlines()
    return dict(zip(names, out))


def _sections(obj: Path) -> dict[str, tuple[str, str]]:
    """Section index -> (name, flags)."""
    found = {}
    for line in _run(["readelf", "-SW", str(obj)]).splitlines():
        m = re.match(r"\s*\[\s*(\d+)\]\s+(\S+)\s+\S+\s+\S+\s+\S+\s+\S+\s+\S+\s+(\S*)", line)
        if m:
            found[m.group(1)] = (m.group(2), m.group(3))
    return found


def read_functions(obj: Path) -> list[Function]:
    """Every defined function and data object of a relocatable ELF object, with what each
    refers to (relocations against its bytes)."""
    sections = _sections(obj)
    raw = []
    for line in _run(["readelf", "-sW", str(obj)]).splitlines():
        parts = line.split()
        if len(parts) < 8 or not parts[0].rstrip(":").isdigit():
            continue
        value, size, kind, ndx, name = parts[1], parts[2], parts[3], parts[6], parts[7]
        if kind not in ("FUNC", "OBJECT") or ndx in ("UND", "ABS", "COM") or ndx not in sections:
            continue
        raw.append((name, sections[ndx][0], int(value, 16), int(size, 0) if size.isdigit()
                    else int(size, 16), kind))
    names = _demangle([r[0] for r in raw])
    functions = [Function(names.get(m, m), m, sec, start, size, kind) for m, sec, start, size, kind in raw]
    by_section: dict[str, list[Function]] = {}
    for f in functions:
        by_section.setdefault(f.section, []).append(f)
    relocations: list[tuple[str, int, str]] = []
    current = ""
    for line in _run(["readelf", "-rW", str(obj)]).splitlines():
        m = re.match(r"Relocation section '\.rela?(\S+)'", line)
        if m:
            current = m.group(1)
            continue
        parts = line.split()
        if current and len(parts) >= 5 and re.fullmatch(r"[0-9a-f]+", parts[0]):
            relocations.append((current, int(parts[0], 16), parts[4]))
    targets = _demangle(sorted({t for _, _, t in relocations}))
    for section, offset, target in relocations:
        for f in by_section.get(section, []):
            if f.start <= offset < f.start + max(f.size, 1):
                f.refs.add(targets.get(target, target))
                break
        else:
            if not target.startswith("."):
                by_section.setdefault(section, []).append(
                    Function(f"(data in {section})", "", section, offset, 1, "OBJECT", {targets.get(target, target)}))
                functions.append(by_section[section][-1])
    return functions


def _plain(name: str) -> str:
    """`void ns::f<int>(int)` -> `ns::f<int>(int)`, and ` [clone .cold]` dropped."""
    name = re.sub(r" \[clone [^]]*\]", "", name)
    depth = 0
    for i, c in enumerate(name):
        if c in "<(":
            depth += 1
        elif c in ">)":
            depth -= 1
        elif c == " " and depth == 0 and not name.startswith(("operator", "(data", "vtable",
                                                             "typeinfo", "guard variable")):
            return _plain(name[i + 1:])
    return name


@dataclass(frozen=True)
class Finding:
    name: str       # the symbol it is about (demangled)
    rule: str
    message: str


def check_host_code(functions: list[Function], cuda: bool, harness: frozenset[str]) -> list[Finding]:
    """The host code of the student unit (see the module doc). `harness`: the names of
    the harness's host functions (harness_host_functions). `cuda`: nvcc's object (on
    the emulator's every kernel is host code, so only the toolchain-only calls, static
    initializers and operator new/delete are checked there)."""
    def key(mangled: str) -> str:
        # Without clone suffixes (.cold, .part.0) and internal-linkage marks (L before a
        # name): the wrapper of a static kernel is `_ZN7scanlabL6kernel...`, its stub's
        # name has no L.
        return re.sub(r"L(?=\d)", "", mangled.split(".")[0])

    stubs = {key(re.split(r"[(<]", _plain(f.name)[len("__device_stub__"):])[0]) for f in functions
             if _plain(f.name).startswith("__device_stub__")}
    found: list[Finding] = []

    def role(f: Function) -> str:
        name = _plain(f.name)
        if TOOLCHAIN_HOST.match(name):
            return "toolchain"
        if key(f.mangled[1:]) in stubs:
            return "kernel"                       # a kernel's host wrapper: calls its stub
        if cuda and f.kind == "FUNC" and f.refs and f.refs <= {"exit"}:
            return "device"                       # a __device__ function's host body
        if _is_harness(name, harness):
            return "harness"
        return "student"

    for f in functions:
        name = _plain(f.name)
        r = role(f) if f.kind == "FUNC" else "data"
        if re.match(r"^operator (new|delete)(\[\])?\(", name) and ", void*)" not in name:
            # (The placement forms, `operator new(size_t, void*)`, are the library's
            # inline functions, not replaceable.)
            found.append(Finding(name, "host-code", f"replaces the global `{name}`: the student "
                                 "unit may not change what the harness's allocations do"))
            continue
        if name.startswith("_GLOBAL__sub_I"):
            found.append(Finding(name, "host-code", "runs code on the host before main (a static "
                                 "initializer): the student unit may hold no host code"))
            continue
        if cuda and r == "student":
            found.append(Finding(name, "host-code", f"defines `{name}`, code that runs on the host "
                                 "(a host function, a constructor of a kernel argument's type, ...): "
                                 "student files hold device code only; the harness's code launches it"))
        if r in ("toolchain", "kernel", "harness"):
            continue
        for target in sorted(f.refs):
            if TOOLCHAIN_ONLY.match(_plain(target)) and not (r == "device" and target == "exit"):
                found.append(Finding(target, "symbol-call", f"uses `{target}` outside a kernel "
                                     f"launch (from `{name}`): the harness launches every kernel, "
                                     "and only the toolchain's code may reach it"))
    return found


def variable_key(name: str) -> str:
    """A variable's name as the host object and the cubin both spell it: nvcc names an
    internal-linkage one `_INTERNAL_<hash>::ns::x` in the cubin, g++ `ns::(anonymous
    namespace)::x` in the host object."""
    name = re.sub(r"^_INTERNAL_\w+::", "", name)
    return re.sub(r"(\(anonymous namespace\)|_GLOBAL__N_\w*)::", "", name)


@dataclass(frozen=True)
class DeviceVariable:
    name: str          # demangled
    section: str
    writable: bool


def read_device_variables(cubin: Path) -> list[DeviceVariable]:
    """The data objects of a cubin (device code's ELF) and whether device code can write
    them (`.nv.global*`: yes; `.nv.constant*`: no)."""
    sections = _sections(cubin)
    raw = []
    for line in _run(["readelf", "-sW", str(cubin)]).splitlines():
        parts = line.split()
        if len(parts) >= 8 and parts[3] == "OBJECT" and parts[6] in sections:
            name, flags = sections[parts[6]]
            raw.append((parts[7], name, "W" in flags or name.startswith(".nv.global")))
    names = _demangle([r[0] for r in raw])
    return [DeviceVariable(names.get(m, m), s, w) for m, s, w in raw]


def device_state(variables: list[DeviceVariable]) -> list[Finding]:
    return [Finding(v.name, "state", f"keeps state between launches in `{v.name}` (device memory "
                    "that device code can write: a __device__ variable or a static one): kernels may "
                    "keep nothing from one call to the next (a read-only table may be __constant__ "
                    "or const)")
            for v in variables if v.writable and v.section.startswith(".nv.global")
            and "scanlabNotImplementedFlag" not in v.name]
