#!/usr/bin/env python3
"""The compiled program, for the code rules (code_rules.py imports it; the grader reaches it
through code_rules): the calls a unit's compiled code makes (the compiler's inlining report,
the object's relocations, the PTX), which of them reach the handout's placeholder from a
task's kernels, and which symbols the object needs from elsewhere.

Standard library only (Python 3.9+), like code_rules.py beside it.
"""
from __future__ import annotations

import functools
import os
import re
import subprocess
from dataclasses import dataclass, field
from pathlib import Path

TOOL_TIMEOUT_S = 120


@functools.lru_cache(maxsize=16384)
def norm(path: str) -> str:
    # Cached: a preprocessed unit names the same few headers in thousands of line markers,
    # and each realpath is a stat of every folder on the way (the grader's gate ran 2 s
    # of them per build).
    return os.path.realpath(path)


# ---- the compiled program: what a task's kernels reach, what the unit refers to -----------
#
# Decided from what the compiler made, never from the text: a name, a comment or dead code
# (`if constexpr (false)`, `if (false)`) is not a call. Two sources give the calls:
# - the emulator's build (g++): the compiler's own report of every call it inlined
#   (-fopt-info-inline-optimized=FILE, written beside the object: INLINE_REPORT_FLAG) and
#   the object's relocations (the calls it did not inline);
# - the CUDA build (nvcc -lineinfo --keep): the PTX, whose `.loc ..., function_name F,
#   inlined_at FILE LINE` marks every instruction inlined from F, and whose `call` names the
#   rest.

# The handout's placeholder and baseline implementations (harness/baselines.cuh).
PLACEHOLDER_NAMESPACE = "scanlab::baseline::"
INLINE_REPORT = "inline-report.txt"


def inline_report_flag(path: str) -> str:
    """The g++ option that writes the inlining report the call graph reads."""
    return f"-fopt-info-inline-optimized={path}"


@dataclass(frozen=True)
class Call:
    """One call in the compiled code: `caller` calls (or inlined) `callee` (function_key
    names), from `file`:`line` when the compiler says where."""
    caller: str
    callee: str
    file: str = ""
    line: int = 0
    inlined: bool = False      # the compiler put the callee's code into the caller


_INNERMOST_TEMPLATE = re.compile(r"<[^<>]*>")


def _strip_templates(name: str) -> str:
    """`f<A<int>, 8>` -> `f`: the innermost <...> removed until none is left."""
    while True:
        new = _INNERMOST_TEMPLATE.sub("", name)
        if new == name:
            return new
        name = new


@functools.lru_cache(maxsize=65536)
def function_key(name: str) -> str:
    """A compiled function's qualified name without return type, template arguments,
    parameters and clone marks: `void scanlab::f<Add<int>, 8>(int*) [clone .part.0]`,
    g++'s `void scanlab::f(int*) [with Op = Add<int>]` and a lambda of f all read
    `scanlab::f` (every instantiation of a function is one node of the call graph)."""
    name = re.sub(r"\s*\[(with|clone) [^\]]*\]", "", name).strip()
    name = re.sub(r"\.(isra|constprop|part|cold|lto_priv)(\.\d+)?", "", name)
    # An unnamed namespace as c++filt and g++'s reports spell it, and nvcc's prefix of a
    # name of internal linkage (`_INTERNAL_<hash>_<unit>::scanlab::...`): a grading build's
    # placeholders are the student unit's own (harness/baselines.cuh).
    name = name.replace("(anonymous namespace)::", "").replace("{anonymous}::", "")
    name = re.sub(r"_INTERNAL_\w+::", "", name)
    if name.startswith(("operator new", "operator delete")):
        return name.split("(")[0]
    name = re.sub(r"operator\s*\(\)", "operator_call", name)
    name = re.sub(r"operator\s*(<<=?|>>=?|<=>|<=?|>=?|->)", "operator_sym", name)
    name = _strip_templates(name)
    while "decltype" in name:           # a return type `decltype(...)`
        i = name.index("decltype")
        j, depth = name.find("(", i), 0
        for k in range(j, len(name)):
            depth += {"(": 1, ")": -1}.get(name[k], 0)
            if depth == 0:
                break
        name = name[:i] + name[k + 1:] if j >= 0 else name[:i] + name[i + 8:]
    name = name.split("(", 1)[0].strip()
    return name.split()[-1] if name.split() else name


def is_placeholder(key: str) -> bool:
    return key.startswith(PLACEHOLDER_NAMESPACE)


_INLINED = re.compile(r"^(.*?):(\d+):\d+: optimized:\s+Inlin(?:ing|ed) (.+?)/(\d+) into (.+?)/(\d+)"
                      r"(?: which now has .*|\.)?\s*$")


def gcc_inline_calls(report: str) -> list[Call]:
    """The calls g++ inlined (its -fopt-info-inline-optimized report): `FILE:LINE:COL:
    optimized: Inlining CALLEE/ID into CALLER/ID.`, the location being the call's. A
    function is named in full somewhere in the report, elsewhere by its short name only
    (`f.isra/12`): the node number says which."""
    rows = [m for m in map(_INLINED.match, report.splitlines()) if m]
    full: dict[str, str] = {}
    for m in rows:
        for name, node in ((m.group(3), m.group(4)), (m.group(5), m.group(6))):
            if len(name) > len(full.get(node, "")):
                full[node] = name
    return [Call(function_key(full[m.group(6)]), function_key(full[m.group(4)]), m.group(1),
                 int(m.group(2)), True) for m in rows]


def demangle(names: list[str]) -> dict[str, str]:
    """Mangled -> demangled (c++filt; a name it cannot read stays as it is)."""
    names = sorted(set(names))
    if not names:
        return {}
    r = subprocess.run(["c++filt"], input="\n".join(names) + "\n", capture_output=True, text=True,
                       timeout=TOOL_TIMEOUT_S)
    out = r.stdout.splitlines() if r.returncode == 0 else names
    return dict(zip(names, out)) if len(out) == len(names) else {n: n for n in names}


_PTX_FUNCTION = re.compile(r"^\s*(?:\.(?:visible|weak|extern)\s+)*\.(entry|func)\s+(?:\([^)]*\)\s*)?([\w$.]+)")
_PTX_LOC = re.compile(r"^\s*\.loc\s+(\d+)\s+(\d+)\s+\d+\s*,\s*function_name\s+([\w$]+)"
                      r"(?:\s*\+\s*\d+)?\s*,\s*inlined_at\s+(\d+)\s+(\d+)\s+\d+")
# `call.uni (retval0), f, (param0);`, on one line or (nvcc's way) with the callee on the next.
_PTX_CALL = re.compile(r"^\s*(?:@!?%\w+\s+)?call(?:\.uni)?\s*(?:\([^)]*\)\s*,)?\s*([\w$.]*)")
_PTX_CALLEE = re.compile(r"^\s*([A-Za-z_$][\w$.]*)\s*[,;]?\s*$")
_PTX_ANY_LOC = re.compile(r"^\s*\.loc\s+(\d+)\s+(\d+)")
_PTX_FILE = re.compile(r'^\s*\.file\s+(\d+)\s+"([^"]*)"')
_PTX_STRING = re.compile(r"^([\w$]+):\s*$")
_PTX_BYTES = re.compile(r"^\s*\.b8\s+([\d,\s]+)$")


def ptx_calls(ptx: str) -> list[Call]:
    """The calls of a PTX module compiled with -lineinfo: for each .entry/.func, every
    function inlined into it (the `.loc` lines' function_name, with the call's file and
    line from inlined_at) and every function it calls."""
    files: dict[str, str] = {}
    strings: dict[str, str] = {}
    label = ""
    rows = ptx.splitlines()
    for row in rows:
        m = _PTX_FILE.match(row)
        if m:
            files[m.group(1)] = m.group(2)
            continue
        m = _PTX_STRING.match(row)
        if m:
            label = m.group(1)
            continue
        m = _PTX_BYTES.match(row)
        if m and label.startswith("$L__info_string"):
            # A long string goes on over several .b8 lines, up to its 0.
            data = bytes(int(b) for b in m.group(1).replace(",", " ").split() if b)
            strings[label] = strings.get(label, "") + data.split(b"\0")[0].decode("ascii", "replace")
            if 0 in data:
                label = ""
    raw: list[tuple[str, str, str, int, bool]] = []   # (caller, callee mangled, file, line, inlined)
    current = ""
    calling = False
    site = ("", 0)             # the last .loc: where the next instruction comes from
    for row in rows:
        m = _PTX_FUNCTION.match(row)
        if m:
            current = m.group(2)
            continue
        if not current:
            continue
        if calling:
            m = _PTX_CALLEE.match(row)
            if m:
                raw.append((current, m.group(1), *site, False))
                calling = False
                continue
        m = _PTX_LOC.match(row)
        if m and m.group(3) in strings:
            raw.append((current, strings[m.group(3)], files.get(m.group(4), ""), int(m.group(5)), True))
        m = _PTX_ANY_LOC.match(row)
        if m:
            site = (files.get(m.group(1), ""), int(m.group(2)))
            continue
        m = _PTX_CALL.match(row)
        if m:
            if m.group(1):
                raw.append((current, m.group(1), *site, False))
            else:
                calling = True
    names = demangle([r[0] for r in raw] + [r[1] for r in raw])
    return sorted({Call(function_key(names.get(a, a)), function_key(names.get(b, b)), f, n, i)
                   for a, b, f, n, i in raw}, key=lambda c: (c.caller, c.callee, c.file, c.line))


@dataclass
class ObjectFunction:
    name: str                # demangled
    mangled: str
    section: str
    start: int
    size: int
    kind: str                # FUNC, OBJECT
    refs: set[str] = field(default_factory=set)   # demangled names it refers to


def run_tool(argv: list[str], stdin: str | None = None) -> str:
    r = subprocess.run(argv, input=stdin, capture_output=True, text=True, timeout=TOOL_TIMEOUT_S)
    if r.returncode != 0:
        raise RuntimeError(f"{argv[0]} failed: {r.stderr.strip()[:300]}")
    return r.stdout


def elf_sections(obj: Path) -> dict[str, tuple[str, str]]:
    """Section index -> (name, flags)."""
    found = {}
    for line in run_tool(["readelf", "-SW", str(obj)]).splitlines():
        m = re.match(r"\s*\[\s*(\d+)\]\s+(\S+)\s+\S+\s+\S+\s+\S+\s+\S+\s+\S+\s+(\S*)", line)
        if m:
            found[m.group(1)] = (m.group(2), m.group(3))
    return found


def read_functions(obj: Path) -> list[ObjectFunction]:
    """Every defined function and data object of a relocatable ELF object, with what each
    refers to (relocations against its bytes)."""
    sections = elf_sections(obj)
    raw = []
    for line in run_tool(["readelf", "-sW", str(obj)]).splitlines():
        parts = line.split()
        if len(parts) < 8 or not parts[0].rstrip(":").isdigit():
            continue
        value, size, kind, ndx, name = parts[1], parts[2], parts[3], parts[6], parts[7]
        if kind not in ("FUNC", "OBJECT") or ndx in ("UND", "ABS", "COM") or ndx not in sections:
            continue
        raw.append((name, sections[ndx][0], int(value, 16), int(size, 0) if size.isdigit()
                    else int(size, 16), kind))
    names = demangle([r[0] for r in raw])
    functions = [ObjectFunction(names.get(m, m), m, sec, start, size, kind) for m, sec, start, size, kind in raw]
    by_section: dict[str, list[ObjectFunction]] = {}
    for f in functions:
        by_section.setdefault(f.section, []).append(f)
    relocations: list[tuple[str, int, str]] = []
    relocated = ""
    for line in run_tool(["readelf", "-rW", str(obj)]).splitlines():
        m = re.match(r"Relocation section '\.rela?(\S+)'", line)
        if m:
            relocated = m.group(1)
            continue
        parts = line.split()
        if relocated and len(parts) >= 5 and re.fullmatch(r"[0-9a-f]+", parts[0]):
            relocations.append((relocated, int(parts[0], 16), parts[4]))
    targets = demangle(sorted({t for _, _, t in relocations}))
    for section, offset, target in relocations:
        for f in by_section.get(section, []):
            if f.start <= offset < f.start + max(f.size, 1):
                f.refs.add(targets.get(target, target))
                break
        else:
            if not target.startswith("."):
                by_section.setdefault(section, []).append(
                    ObjectFunction(f"(data in {section})", "", section, offset, 1, "OBJECT", {targets.get(target, target)}))
                functions.append(by_section[section][-1])
    # A call to a function of the same section needs no relocation (the assembler resolves
    # it): the disassembly's direct calls and jumps (`call 120 <f>`) name those. Only .text
    # holds several functions (a template's or an inline function's has a section of its own).
    by_mangled = {f.mangled: f for f in functions if f.mangled}
    direct: list[tuple[ObjectFunction, str]] = []
    in_function: ObjectFunction | None = None
    text = [] if not any(s == ".text" for s, _ in sections.values()) else \
        run_tool(["objdump", "-d", "--no-show-raw-insn", "-w", "-j", ".text", str(obj)]).splitlines()
    for line in text:
        m = re.match(r"^[0-9a-f]+ <([^>]+)>:$", line)
        if m:
            in_function = by_mangled.get(m.group(1))
            continue
        m = re.search(r"\s(?:call|jmp)q?\s+[0-9a-f]+ <([^>+]+)>$", line)
        if in_function is not None and m and m.group(1) != in_function.mangled:
            direct.append((in_function, m.group(1)))
    names = demangle([target for _, target in direct])
    for f, target in direct:
        f.refs.add(names.get(target, target))
    return functions


def object_calls(functions: list[ObjectFunction]) -> list[Call]:
    """The calls (and addresses taken) that an object's relocations show, by function."""
    return [Call(function_key(f.name), function_key(r)) for f in functions if f.kind == "FUNC"
            for r in sorted(f.refs)]


# Symbols the toolchain itself puts into the unit (demangled names): nvcc's kernel
# registration and launch, the emulator's runtime, the C++ runtime. Not policy: what
# students may call on purpose is the rubric's [forbidden] allowed_calls.
TOOLCHAIN_CALLS = re.compile(
    r"^(__cuda\w+|cuda(GetLastError|GetErrorString|MemcpyToSymbol|MemcpyFromSymbol|LaunchKernel)\b.*"
    r"|scanlab::emu::detail::.*|_GLOBAL_OFFSET_TABLE_|_Unwind_Resume|__gxx_personality_v0"
    r"|__stack_chk_fail|__dso_handle|atexit"              # atexit: nvcc unregisters its fatbin
    r"|scanlab_kernel_launched"                          # the harness's launch count (unit_entry.h)
    # the emulator's check of every load and store (handout/emulator/emu_race.h: the
    # ThreadSanitizer calls of the grade's builds; the kernel-address ones of the profile build)
    r"|__tsan_((unaligned_|volatile_)?(read|write)(1|2|4|8|16)|(read|write)_range|vptr_(read|update)"
    r"|func_(entry|exit)|init|atomic(8|16|32|64|128)_\w+|atomic_(thread|signal)_fence)"
    r"|__asan_((load|store)(1|2|4|8|16|N)_noabort|handle_no_return|(before|after)_dynamic_init)"
    r"|__cxa_(allocate_exception|free_exception|throw|begin_catch|end_catch|rethrow"
    r"|guard_acquire|guard_release|guard_abort|pure_virtual)"
    r"|memcpy|memmove|memset|memcmp|strlen"
    r"|operator (new|delete)(\[\])?\(.*"
    r"|std::.*"                                          # libstdc++ (but see STD_DENIED)
    r"|(typeinfo|vtable) for .*)$")
# Calls only the toolchain's code may make (the launch, the registration, the end of a
# device function's host body): reached from elsewhere they are a way around the rules
# (grader/grading/checks/object_code.py says from where).
TOOLCHAIN_ONLY = re.compile(
    r"^(cudaLaunchKernel\w*|__cudaLaunchKernel\w*|cudaLaunchCooperativeKernel\w*"
    r"|__cudaPushCallConfiguration|__cudaPopCallConfiguration|__cudaRegister\w*"
    r"|__cudaUnregisterFatBinary|__cudaInitModule|exit|atexit)$")
# The parts of libstdc++ that reach files, threads or the system.
STD_DENIED = re.compile(r"^std::.*\b(basic_[io]?fstream|basic_filebuf|__basic_file|filesystem|thread"
                        r"|this_thread|random_device|set_terminate|set_new_handler|set_unexpected"
                        r"|signal|at_quick_exit)\b")
# What a call the student never wrote comes from.
KNOWN_CALLS = {"__cxa_atexit": " (a static object with a destructor)",
               "__tls_get_addr": " (a thread_local variable)"}


# CUDA's launch and registration (of TOOLCHAIN_ONLY): nvcc's own code refers to them; the
# emulator's toolchain never does (its launch is its runtime's own), so in an emulator
# build a reference to one is the student's.
CUDA_LAUNCH = re.compile(r"^(cuda|__cuda)\w*$")


def forbidden_reference(name: str, allowed_calls: tuple[str, ...], nvcc: bool = True) -> str:
    """The message for an undefined symbol (demangled) of the compiled student unit that
    the assignment does not allow (files, processes, the network, the environment, the
    CUDA runtime, ...: whatever is neither the toolchain's nor allowed), or "". Decided
    from what the compiled code needs, so a student's own function named `signal`,
    `send` or `exit` is never one. `nvcc`: whether the unit is nvcc's, whose own code
    refers to CUDA's launch and registration (where they are reached from is the grader's
    host-code check); on the emulator nothing of the toolchain does, so one is refused."""
    if not nvcc and TOOLCHAIN_ONLY.match(name) and CUDA_LAUNCH.match(name):
        return (f"uses `{name}`, which only the toolchain's kernel launch may reach (the compiled "
                "code refers to it)")
    allowed = (TOOLCHAIN_CALLS.match(name) or TOOLCHAIN_ONLY.match(name)) and not STD_DENIED.match(name)
    if allowed or any(re.match(p, name) for p in allowed_calls):
        return ""
    return (f"uses `{name}`{KNOWN_CALLS.get(name, '')}, which the assignment does not allow (the "
            "compiled code refers to it)")


# The sections whose entries the loader or the C runtime calls before or after main.
INIT_SECTIONS = re.compile(r"^\.(init_array|fini_array|preinit_array|ctors|dtors)(\.\d+)?$")


def init_entries(obj: Path) -> list[tuple[str, str]]:
    """(section, function) for each entry of the object's .init_array, .fini_array,
    .preinit_array, .ctors and .dtors: what runs before or after main. A local function's
    entry is a section plus an offset (`.text.startup + 16`): the function there."""
    sections = elf_sections(obj)
    at: dict[tuple[str, int], str] = {}
    for line in run_tool(["readelf", "-sW", str(obj)]).splitlines():
        parts = line.split()
        if len(parts) >= 8 and parts[3] == "FUNC" and parts[6] in sections:
            at.setdefault((sections[parts[6]][0], int(parts[1], 16)), parts[7])
    entries: list[tuple[str, str]] = []
    section = ""
    for line in run_tool(["readelf", "-rW", str(obj)]).splitlines():
        m = re.match(r"Relocation section '\.rela?(\S+)'", line)
        if m:
            section = m.group(1) if INIT_SECTIONS.match(m.group(1)) else ""
            continue
        e = re.match(r"^[0-9a-f]+\s+[0-9a-f]+\s+\S+\s+[0-9a-f]+\s+(\S+)(?:\s*\+\s*([0-9a-f]+))?", line)
        if section and e:
            target, addend = e.group(1), int(e.group(2) or "0", 16)
            entries.append((section, at.get((target, addend), target) if target.startswith(".") else target))
    names = demangle([t for _, t in entries])
    return [(sec, names.get(t, t)) for sec, t in entries]


# The compiler's own entries: a unit's static initializers (`_GLOBAL__sub_I_<unit>`, refused
# by what they call) and GCC's sanitizer module constructor and destructor (local
# `_sub_I_00099_1`, `_sub_D_00099_0`: -fsanitize=address, the emulator's sanitizer builds).
_COMPILER_INIT = re.compile(r"_GLOBAL__sub_I_.*|_sub_[ID]_\d{5}_\d+")


def compiler_init_entry(name: str, sources: dict[str, str]) -> bool:
    """Whether an init or fini entry (init_entries) is the compiler's own: named as the
    compiler names its functions, a name no student line spells."""
    return bool(_COMPILER_INIT.fullmatch(name)) and not any(
        re.search(rf"(?<!\w){re.escape(name)}(?!\w)", text) for text in sources.values())


def init_entry_message(section: str, name: str) -> str:
    """Why an entry of an init or fini section (init_entries) is refused."""
    when = "after main" if section.startswith((".fini", ".dtors")) else "before main"
    return (f"runs `{name}` on the host {when} (an entry of {section}: "
            "`__attribute__((constructor))` or `((destructor))`): the student unit may hold no "
            "host code that runs by itself")


def thread_locals(obj: Path) -> list[tuple[str, str]]:
    """(name, section) of each thread-local variable the object defines (.tdata, .tbss)."""
    sections = elf_sections(obj)
    raw = [(parts[7], sections[parts[6]][0]) for parts in
           (line.split() for line in run_tool(["readelf", "-sW", str(obj)]).splitlines())
           if len(parts) >= 8 and parts[3] == "TLS" and parts[6] in sections]
    names = demangle([n for n, _ in raw])
    return [(names.get(n, n), sec) for n, sec in raw]


def thread_local_message(name: str, section: str) -> str:
    """Why a student's thread_local variable is refused (state the harness cannot restore)."""
    return (f"keeps state between launches in the thread_local `{name}` (thread-local storage, "
            f"`{section}`: one copy per host thread, which the harness cannot put back before "
            "each launch; device code has none: nvcc refuses thread_local there)")


def undefined_symbols(obj: Path) -> list[str]:
    """The symbols an ELF object needs from elsewhere (demangled)."""
    raw = []
    for line in run_tool(["readelf", "-sW", str(obj)]).splitlines():
        parts = line.split()
        if len(parts) >= 8 and parts[0].rstrip(":").isdigit() and parts[6] == "UND" and parts[7]:
            raw.append(parts[7])
    names = demangle(raw)
    return sorted({names.get(n, n) for n in raw})


def placeholder_calls(calls: list[Call], kernels: dict[str, tuple[str, ...]],
                      files: dict[str, str],
                      task_kernels: dict[str, tuple[str, ...]] | None = None) -> dict[str, Call]:
    """The student files whose task's kernels reach the handout's placeholder or baseline
    code in the compiled program, each with the call that does (its file and line as the
    student knows them, when the compiler said).
    `kernels`: a student path -> the functions its task defines (data/assignment.toml's
    `kernels`); `files`: a file in the build (as the compiler named it) -> the student path;
    `task_kernels`: every task's file name -> its kernels (default: `kernels`' files).
    The roots are those functions and every function the compiler inlined one into (a
    device function lives on inlined in the harness's kernel that calls it); from them the
    calls are followed, inlined or not, to any function of namespace scanlab::baseline.
    Another task's file (its kernels, and calls made in a file of that name: the
    student's, the reference's or a stand-in) is that task's business: task 3 that uses
    a placeholder warp scan is still task 3's work. Only where the other file is the
    student's own and its own kernels do not reach the placeholder does its call count
    for the task that reaches it (a helper there that wraps a placeholder)."""
    shown = {norm(k): v for k, v in files.items()}
    if task_kernels is None:
        task_kernels = {Path(p).name: names for p, names in kernels.items()}
    callees: dict[str, list[Call]] = {}
    inlined_into: dict[str, set[str]] = {}
    for c in calls:
        callees.setdefault(c.caller, []).append(c)
        if c.inlined:
            inlined_into.setdefault(c.callee, set()).add(c.caller)
    nodes = set(callees) | set(inlined_into)
    roots_of = {name: {n for n in nodes if n.rsplit("::", 1)[-1] in names and not is_placeholder(n)}
                for name, names in task_kernels.items()}

    def search(path: str, others: set[str]) -> Call | None:
        """The first call of a placeholder reached from `path`'s roots, not through the
        kernels of, nor calls made in, the files named in `others`."""
        blocked = set().union(*(roots_of.get(o, set()) for o in others))
        names = kernels[path]
        roots = {n for n in nodes if n.rsplit("::", 1)[-1] in names and not is_placeholder(n)}
        todo = list(roots)
        while todo:            # upwards: the functions a root was inlined into
            for outer in inlined_into.get(todo.pop(), ()):
                if outer not in roots:
                    roots.add(outer)
                    todo.append(outer)
        seen, todo = set(roots), sorted(roots)
        hit: Call | None = None
        while todo:
            for c in callees.get(todo.pop(0), ()):
                if (c.file and Path(c.file).name in others) or c.callee in blocked:
                    continue
                if is_placeholder(c.callee):
                    site = shown.get(norm(c.file)) if c.file else None
                    if hit is None or (site == path and shown.get(norm(hit.file)) != path):
                        hit = c
                elif c.callee not in seen:
                    seen.add(c.callee)
                    todo.append(c.callee)
        return hit

    everyone = set(task_kernels) | {Path(p).name for p in kernels}
    strict = {p: search(p, everyone - {Path(p).name}) for p in kernels}
    unflagged_own = {Path(p).name for p, hit in strict.items() if hit is None}
    found: dict[str, Call] = {}
    for path in sorted(kernels):
        hit = strict[path] or search(path, everyone - {Path(path).name} - unflagged_own)
        if hit is not None:
            where = shown.get(norm(hit.file)) if hit.file else None
            found[path] = Call(hit.caller, hit.callee, where or "", hit.line if where else 0)
    return found


def placed(call: Call, source: str) -> Call:
    """A call the compiler gave no line for (a call it did not inline) placed on the first
    line of the student's file that names the callee (for the message only)."""
    if call.line:
        return call
    base = call.callee.rsplit("::", 1)[-1]
    for i, row in enumerate(source.split("\n"), 1):
        if re.search(rf"(?<!\w){re.escape(base)}(?!\w)", row):
            return Call(call.caller, call.callee, call.file, i)
    return call


def placeholder_message(path: str, call: Call) -> str:
    where = f"{path}:{call.line}" if call.line else path
    return (f"{where} calls the handout's placeholder ({call.callee.replace('scanlab::', '')}, "
            "in the compiled code)")
