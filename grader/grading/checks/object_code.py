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
- **host code**: on the CUDA build every other host function of the unit is the student's.
  It is refused where it can run (issue 45): a static initializer and what it calls, a
  special member of a kernel argument's type that the launch (the harness's or the
  toolchain's code) calls and what that calls, a global operator new/delete. The host
  body of a `__host__ __device__` helper that only kernels call never runs: allowed. The toolchain's calls (launch, registration, exit) may come only from the
  toolchain's code: reached from anywhere else (a function pointer), they are refused.
- **device state** (the cubin nvcc kept): a variable in `.nv.global` or `.nv.global.init`
  (a `__device__` variable, a function-scope static, a `const` table, a string literal
  of printf, in a template or not) would outlive a launch, so the harness restores each
  one before every launch (handout/harness/host/student_state.h): device_state_names
  lists them for it, in the program's section `.scanlab.device_state` (add_device_state).
  `__constant__` data (`.nv.constant*`) cannot be written by device code. The host object's shadows of device variables are
  not host state.
"""
from __future__ import annotations

import re
import subprocess
from dataclasses import dataclass, field
from pathlib import Path

from ...rules import code_rules

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


TOOLCHAIN_ONLY = code_rules.TOOLCHAIN_ONLY


# The object's functions and what each refers to: the handout's one implementation
# (handout/tools/code_rules.py), which `make rules` runs too.
Function = code_rules.ObjectFunction
read_functions = code_rules.read_functions
_run = code_rules.run_tool
_demangle = code_rules.demangle
_sections = code_rules.elf_sections


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
    the emulator's every kernel is host code, and its runtime's functions are not the
    harness's, so only the toolchain-only calls, static initializers and operator
    new/delete are checked there)."""
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

    roles = {id(f): role(f) if f.kind == "FUNC" else "data" for f in functions}
    for f in functions:
        name = _plain(f.name)
        r = roles[id(f)]
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
        if r in ("toolchain", "kernel", "harness"):
            continue
        for target in sorted(f.refs):
            if not cuda and code_rules.CUDA_LAUNCH.match(_plain(target)):
                continue    # on the emulator refused wherever it is referenced (compiled.check_symbols)
            if TOOLCHAIN_ONLY.match(_plain(target)) and not (r == "device" and target == "exit"):
                found.append(Finding(target, "symbol-call", f"uses `{target}` outside a kernel "
                                     f"launch (from `{name}`): the harness launches every kernel, "
                                     "and only the toolchain's code may reach it"))
    for f, why in host_code_that_runs(functions, roles) if cuda else []:
        found.append(Finding(_plain(f.name), "host-code", f"defines `{_plain(f.name)}`, host code "
                             f"that runs {why}: student files hold device code (a __host__ "
                             "__device__ helper is fine where only kernels call it); the "
                             "harness's code runs the host side"))
    return found


init_entries = code_rules.init_entries


def check_init_entries(obj: Path, harness: frozenset[str], sources: dict[str, str]) -> list[Finding]:
    """Every entry of the object's init and fini sections (init_entries) that is neither
    the toolchain's (nvcc's registration) nor the harness's: student host code that runs
    before or after main (`__attribute__((constructor))`, `((destructor))`), refused on
    both backends (issue 58, item 3). The compiler's own (a static initializer, refused by
    check_host_code with what it calls; a sanitizer's module constructor) are not."""
    found: list[Finding] = []
    for section, target in init_entries(obj):
        name = _plain(target)
        if TOOLCHAIN_HOST.match(name) or code_rules.compiler_init_entry(name, sources) \
                or _is_harness(name, harness):
            continue
        finding = Finding(name, "host-code", code_rules.init_entry_message(section, name))
        if finding not in found:
            found.append(finding)
    return found


def _special_member(name: str) -> bool:
    """A constructor, destructor, conversion or assignment operator (what a launch runs
    on a kernel argument of the type)."""
    head = code_rules._strip_templates(re.sub(r"\(.*$", "", _plain(name)))
    parts = head.split("::")
    return len(parts) >= 2 and (parts[-1] in (parts[-2], "~" + parts[-2])
                                or parts[-1].startswith("operator") and parts[-1] not in
                                ("operator", "operator()"))


def host_code_that_runs(functions: list[Function], roles: dict[int, str]) -> list[tuple[Function, str]]:
    """The student's host functions that can run on the host (issue 45): those reachable
    from a static initializer (or .init_array), and the special members of the student's
    types that the harness's or the toolchain's code calls (the launch converts, copies
    and destroys kernel arguments), with everything they reach. Any other host body (of a
    __host__ __device__ helper a kernel calls, or nothing calls) never runs there."""
    by_name: dict[str, list[Function]] = {}
    for f in functions:
        by_name.setdefault(f.name, []).append(f)
    start: list[tuple[Function, str]] = []
    for f in functions:
        r = roles[id(f)]
        if _plain(f.name).startswith("_GLOBAL__sub_I") or f.section.startswith((".init_array", ".ctors")):
            start.append((f, "before main (from a static initializer)"))
        elif r in ("toolchain", "kernel", "harness"):
            for target in f.refs:
                for g in by_name.get(target, ()):
                    if roles[id(g)] == "student" and g.kind == "FUNC" and _special_member(g.name):
                        start.append((g, "at a kernel launch (a special member of a kernel "
                                      "argument's type)"))
    reached: dict[int, tuple[Function, str]] = {}
    todo = list(start)
    while todo:
        f, why = todo.pop()
        if id(f) in reached:
            continue
        reached[id(f)] = (f, why)
        for target in f.refs:
            todo += [(g, why) for g in by_name.get(target, ()) if id(g) not in reached]
    return [(f, why) for f, why in reached.values()
            if f.kind == "FUNC" and roles[id(f)] == "student"]


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
    mangled: str = ""  # as the device code's symbol table spells it (the driver looks it up)


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
    return [DeviceVariable(names.get(m, m), s, w, m) for m, s, w in raw]


# nvcc's names for string literals (printf's formats): `$str`, `$str$1`, ...
STRING_LITERAL = re.compile(r"^\$str(\$\d+)?$")
DEVICE_STATE_SECTION = ".scanlab.device_state"


def device_state_names(variables: list[DeviceVariable]) -> str:
    """The program's `.scanlab.device_state` (handout/harness/host/student_state.h): the device
    variables of the student unit that device code can write, which the driver restores
    before every launch, one mangled name a line. A string literal's line is `? name`: the
    driver restores it where it finds it (device code writes one only through a cast
    that C++ leaves undefined); a name it cannot find otherwise stops the run."""
    lines = []
    for v in variables:
        if not (v.writable and v.section.startswith(".nv.global")) or not v.mangled:
            continue
        line = f"? {v.mangled}" if STRING_LITERAL.match(v.mangled) else v.mangled
        if line not in lines:
            lines.append(line)
    return "".join(line + "\n" for line in lines)


def add_device_state(binary: Path, names: str) -> None:
    """Writes the device variables to restore (device_state_names) into the linked
    program's own section, where its driver reads them: nothing beside the program to
    lose on the way to the machine or the sandbox that runs it."""
    listing = binary.with_name(binary.name + ".device-state")
    listing.write_text(names)
    _run(["objcopy", "--remove-section", DEVICE_STATE_SECTION, "--add-section",
          f"{DEVICE_STATE_SECTION}={listing}", "--set-section-flags",
          f"{DEVICE_STATE_SECTION}=readonly", str(binary)])
