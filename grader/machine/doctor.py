"""`doctor`: what this machine has for grading, and what is missing, in plain words."""
from __future__ import annotations

import importlib.util
import os
import sys

from . import detect as machines
from ..grading import sandbox


# The grader's optional Python packages (pyproject.toml's extras): what each is for. A
# grade needs neither; what it serves says so where it is missing.
OPTIONAL_PACKAGES = (("matplotlib", "the HTML reports' pictures (optional: pip extra `plots`)"),
                     ("copydetect", "--similarity, the class's alike files (optional: pip extra `similarity`)"))
OPTIONAL_VERSIONS = {"matplotlib": ">=3.6", "copydetect": ">=0.5"}


def doctor() -> int:
    m = machines.detect(check_boost=True)
    ok = "ok     "
    no = "MISSING"
    print(f"scanlab grader doctor (Python {sys.version.split()[0]}, {m.cores} CPU cores)\n")
    if m.gpus:
        for g in m.gpus:
            cc = g.compute_capability or "unknown (the driver is too old to say)"
            print(f"  {ok} GPU {g.index}: {g.name}, compute capability {cc}, {g.memory_mib} MiB")
        print(f"  {ok} NVIDIA driver {m.driver_version}")
    else:
        print(f"  {no} GPU: {m.gpu_problem}")
    for tool, why in ((m.nvcc, "builds the CUDA driver (GPU grading)"),
                      (m.cmake, "builds every driver (3.22 or newer)"),
                      (m.gxx, "host compiler, and the CPU emulator build"),
                      (m.boost_context, "the CPU emulator's fibers (libboost-context-dev)")):
        state = ok if tool.ok else no
        detail = f"{tool.version} ({tool.path})" if tool.ok else tool.problem
        print(f"  {state} {tool.name:<14} {detail}  -- {why}")
    identity = sandbox.sandbox_identity()
    if os.geteuid() == 0:
        print(f"  {ok if identity.drops else no} sandbox user   student programs run as "
              f"{identity.name}" + ("" if identity.drops else " (no 'nobody' user: they would run as root)"))
    else:
        print(f"  {ok} sandbox user   not root: student programs run as {identity.name} "
              "(run the grader as root to run them as 'nobody')")
    jail, problem = sandbox.find_jail((), sandbox.gpu_devices(), identity)
    if jail is not None:
        print(f"  {ok} sandbox jail   {jail.describe()}")
    else:
        print(f"  {no} sandbox jail   {problem}: student code would NOT be contained "
              "(every report says so)")
    extras = [(name, why) for name, why in OPTIONAL_PACKAGES if importlib.util.find_spec(name) is None]
    for name, why in OPTIONAL_PACKAGES:
        print(f"  {no if (name, why) in extras else ok} {name:<14} {why}")
    if extras:
        print(f"  install them into this Python: {sys.executable} -m pip install "
              + " ".join(f"'{name}{OPTIONAL_VERSIONS[name]}'" for name, _ in extras))
    print()
    can_gpu = m.has_gpu and m.can_build_cuda
    can_emu = m.can_build_emulator
    if can_gpu:
        print("This machine can grade everything: correctness on the GPU, and performance.")
    elif can_emu:
        print("This machine can grade correctness with the CPU emulator. Performance is reported as "
              "'not measured': grade on a machine with an NVIDIA GPU and nvcc for it.")
        if m.has_gpu and not m.nvcc.ok:
            print("  (there is a GPU: install the CUDA toolkit, or put nvcc on PATH, to use it)")
    else:
        missing = [t.name for t in (m.cmake, m.gxx, m.boost_context) if not t.ok]
        print(f"This machine cannot grade: {', '.join(missing)} missing. On Debian/Ubuntu: "
              "apt-get install cmake g++ libboost-context-dev (as root); elsewhere, the "
              "distribution's CMake, g++ and Boost.Context (or conda/spack without root).")
        return 1
    return 0
