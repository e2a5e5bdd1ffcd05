"""What the compiler saw and made of a submission: the checks that follow a build.

The text check (forbidden.py) is a first, friendly pass over the files as written.
These two look at the student unit (handout/harness/host/student_unit.cu) as compiled:

- **preprocessed**: the unit run through the build's own compiler with -E, so macros
  are expanded, continuations spliced and conditionals decided. The lines that came
  from a student file (by the compiler's line markers) get the rubric's rules again,
  after parenthesized names are unwrapped: `CALL(fopen, ...)` and `(std::getenv)(...)`
  look like the plain calls they are.
- **object**: the symbols of the unit's object file (readelf), against the harness's
  object. The unit may call only the toolchain's own helpers (kernel launch, emulator
  runtime, C++ runtime) and the rubric's `allowed_calls`; it may not define a symbol
  the harness defines strongly or only references (that would replace it), nor a
  C-linkage one (that would replace the system's). Mutable state is no rule: the
  harness restores the student unit's variables before every launch
  (handout/harness/host/student_state.h). Refused is only the state it cannot restore:
  data placed in a section of its own, and (on the GPU build) the host object's own
  variables (the GPU's restoration covers device memory), and thread-local data
  (`thread_local`, .tdata/.tbss: one copy per host thread; nvcc refuses it in device
  code), except the emulator's `__shared__` memory (thread_local there: shared_memory
  tells it by the student line that declares it).

Symbol findings name the student file and line where the name occurs, when it does.
"""
from __future__ import annotations

import re
import subprocess
from dataclasses import dataclass
from pathlib import Path

from . import object_code
from .forbidden import strip_source
from ...results import Violation
from ...config.rubric import ForbiddenRubric
from ...config.assignment import default_assignment
from ...rules import code_rules
from .rules_engine import rules_of

TOOL_TIMEOUT_S = 120
# What the unit may call: the handout's one implementation (code_rules.forbidden_reference).
TOOLCHAIN_CALLS = code_rules.TOOLCHAIN_CALLS
STD_DENIED = code_rules.STD_DENIED
# Data the toolchain generates (fatbinary handles, launch stubs' statics) and the
# handout's "not implemented" flag: not the student's state.
TOOLCHAIN_DATA = re.compile(
    r"^(__cuda\w*|__fatDeviceText|__nv_\w+|.*__device_stub__.*"
    r"|(vtable|typeinfo|typeinfo name|VTT|construction vtable) for .*|DW\.ref\..*"
    r"|scanlab::scanlabNotImplementedFlag)$")
# Sections that are written once, by the loader (relocations), then never again.
READ_ONLY_AFTER_LOAD = (".data.rel.ro", ".init_array", ".fini_array")
# The student unit's data that the emulator's harness restores before every launch
# (handout/emulator/student_state.ld: .data, .data.*, .bss, .bss.* of the unit's object;
# .data.rel.ro is read-only after load, above).
RESTORED_ON_EMULATOR = re.compile(r"^\.(data|bss)(\..*)?$")
ENTRY_POINTS = re.compile(r"^scanlab::student::")


# ---- preprocessed ---------------------------------------------------------------------
# The rules over the preprocessed unit are the handout's code rules (one implementation,
# handout/tools/code_rules.py, which students run too).

unwrap_parenthesized_names = code_rules.unwrap_parenthesized_names


def split_by_origin(preprocessed: str, student_files: dict[str, str]) -> list[code_rules.StudentLines]:
    """The preprocessed lines whose line marker names a student file."""
    return code_rules.split_by_origin(preprocessed, student_files, code_rules.Rules((), (), ())).parts


def scan_preprocessed(preprocessed: str, student_files: dict[str, str], sources: dict[str, str],
                      rules: ForbiddenRubric, handout_dirs: tuple[str, ...] = ()) -> list[Violation]:
    """The rubric's rules over the student's lines after preprocessing (code_rules). `sources`
    maps a submission path to its text, for the excerpt."""
    found = code_rules.scan_preprocessed(preprocessed, student_files, sources, rules_of(rules),
                                         handout_dirs)
    return [Violation(f.file, f.line, f.rule, f.message + (" (as the compiler sees it, macros "
                                                             "expanded)" if f.rule in
                                                             {r.name for r in rules.rules} else ""),
                      f.excerpt) for f in found]


def command_variant(argv: list[str], mode: str, output: str, target: str = "unit") -> list[str]:
    """A compile command (-c ... -o X) turned into the preprocessor's: `mode` "-E" writes the
    preprocessed unit to `output`, "-M" the files it reads (a make rule) to `output`."""
    out: list[str] = []
    skip = False
    for a in argv:
        if skip:
            skip = False
            continue
        if a == "-o":
            skip = True
            continue
        out.append(mode if a == "-c" else a)
    if mode == "-M":
        # -MG: a header that is not there is listed (and refused), not an error.
        missing = [] if Path(argv[0]).name.startswith("nvcc") else ["-MG"]
        return out + missing + ["-MF", output, "-MT", target]
    return out + ["-o", output]


# ---- object symbols -------------------------------------------------------------------


@dataclass(frozen=True)
class Symbol:
    name: str          # demangled
    mangled: str
    kind: str          # FUNC, OBJECT, TLS, NOTYPE, ...
    bind: str          # GLOBAL, WEAK, LOCAL, UNIQUE
    section: str       # "" when undefined
    writable: bool

    @property
    def defined(self) -> bool:
        return self.section != ""


def _run(argv: list[str], stdin: str | None = None) -> str:
    r = subprocess.run(argv, input=stdin, capture_output=True, text=True, timeout=TOOL_TIMEOUT_S)
    if r.returncode != 0:
        raise RuntimeError(f"{argv[0]} failed: {r.stderr.strip()[:300]}")
    return r.stdout


def read_symbols(obj: Path) -> list[Symbol]:
    """The symbol table of an ELF object (readelf), names demangled (c++filt)."""
    sections: dict[str, tuple[str, bool]] = {}
    for line in _run(["readelf", "-SW", str(obj)]).splitlines():
        m = re.match(r"\s*\[\s*(\d+)\]\s+(\S+)\s+\S+\s+\S+\s+\S+\s+\S+\s+\S+\s+(\S*)", line)
        if m:
            sections[m.group(1)] = (m.group(2), "W" in m.group(3))
    raw: list[tuple[str, str, str, str]] = []
    for line in _run(["readelf", "-sW", str(obj)]).splitlines():
        parts = line.split()
        if len(parts) < 8 or not parts[0].rstrip(":").isdigit():
            continue
        kind, bind, ndx, name = parts[3], parts[4], parts[6], parts[7]
        if kind in ("FILE", "SECTION") or not name:
            continue
        raw.append((name, kind, bind, ndx))
    names = _run(["c++filt"], "\n".join(r[0] for r in raw) + "\n").splitlines() if raw else []
    symbols = []
    for (mangled, kind, bind, ndx), name in zip(raw, names):
        section, writable = ("", False) if ndx == "UND" else sections.get(ndx, (ndx, False))
        writable = writable and not section.startswith(READ_ONLY_AFTER_LOAD)
        symbols.append(Symbol(_without_return_type(name), mangled, kind, bind, section, writable))
    return symbols


def _without_return_type(name: str) -> str:
    """`void ns::f<int>(int)` -> `ns::f<int>(int)` (c++filt names a template function's
    return type first)."""
    depth = 0
    last_space = -1
    for i, c in enumerate(name):
        if c == "<":
            depth += 1
        elif c == ">":
            depth -= 1
        elif c == "(" and depth == 0:
            break
        elif c == " " and depth == 0:
            last_space = i
    if last_space < 0 or name.startswith(("vtable for", "typeinfo", "guard variable", "VTT for",
                                          "construction vtable", "operator", "non-virtual thunk")):
        return name
    return name[last_space + 1:]


_base_name = code_rules.base_name


def _locate(name: str, sources: dict[str, str]) -> tuple[str, int, str] | None:
    """The first student line where the symbol's name occurs as a token."""
    base = _base_name(name)
    if not re.fullmatch(r"[A-Za-z_]\w*", base):
        return None
    token = re.compile(rf"(?<![\w]){re.escape(base)}(?![\w])")
    for path, text in sources.items():
        s = strip_source(text)
        m = token.search(s.code)
        if m:
            line = s.line_of(m.start())
            return path, line, s.source_line(line)
    return None


shared_memory = code_rules.shared_memory


def restored(s: Symbol, cuda: bool) -> bool:
    """Whether the harness puts this writable variable of the student unit's object back
    before every launch: on the emulator, one in the unit's .data or .bss (not one in a
    section of its own); on the GPU build none of the host
    object's (the device module's variables are restored, object_code.device_state_names)."""
    return not cuda and s.kind == "OBJECT" and bool(RESTORED_ON_EMULATOR.match(s.section))


def _unrestorable(s: Symbol) -> str:
    """Why the harness cannot restore this variable, in words."""
    if not RESTORED_ON_EMULATOR.match(s.section):
        return f"a variable in a section of its own, `{s.section}`"
    return "a host variable: the GPU's restoration covers device memory only"


def check_symbols(student: list[Symbol], harness: list[Symbol], sources: dict[str, str],
                  rules: ForbiddenRubric, device_names: frozenset[str] = frozenset(),
                  constants: frozenset[str] = frozenset(), cuda: bool = False) -> list[Violation]:
    """The rules of the module doc over the student unit's symbols. Every finding is
    placed on the student line that names the symbol, or on each student file.
    `device_names`: the device variables of the unit (nvcc's host object has a shadow of
    each; the device code's ELF says whether it is state, grader/grading/checks/object_code.py);
    `constants`: the names a student file declares __constant__ (code_rules.constant_names:
    on the emulator, constant memory is writable host memory)."""
    harness_defined = {s.mangled: s for s in harness if s.defined and s.bind != "LOCAL"}
    harness_used = {s.mangled for s in harness if not s.defined}
    findings: list[tuple[Symbol, str, str]] = []
    for s in student:
        if not s.defined and (s.kind == "TLS" or s.mangled.startswith("_ZTH")):
            continue   # an `extern __shared__` array on the emulator (emu_extern_shared.cmake)
        if not s.defined:
            # The toolchain's own calls (exit, the launch): where they are reached from is
            # grader/grading/checks/object_code.py's check; on the emulator no toolchain
            # code refers to CUDA's launch, so a reference to it is refused here, as `make
            # rules` does (code_rules.forbidden_reference).
            said = code_rules.forbidden_reference(s.name, rules.allowed_calls, nvcc=cuda)
            if said:
                findings.append((s, "symbol-call", said))
            continue
        if s.name.startswith("guard variable for "):
            continue   # the variable it guards is reported
        if s.kind == "TLS" and not (not cuda and shared_memory(s.name, sources)):
            findings.append((s, "state", code_rules.thread_local_message(s.name, s.section)))
            continue
        if s.kind == "OBJECT" and s.writable and not TOOLCHAIN_DATA.match(s.name) \
                and object_code.variable_key(s.name) not in device_names \
                and _base_name(s.name) not in constants and not restored(s, cuda):
            findings.append((s, "state", f"keeps state between launches in `{s.name}` "
                             f"({_unrestorable(s)}), which the harness cannot put back before "
                             "each launch as it does a __device__ or static variable"))
            continue
        if s.bind == "LOCAL" or ENTRY_POINTS.match(s.name):
            continue
        if not s.mangled.startswith("_Z") and not TOOLCHAIN_DATA.match(s.name):
            findings.append((s, "symbol-define", f"defines the C-linkage symbol `{s.name}`, which "
                             "would replace the system's"))
        elif s.mangled in harness_used or (s.bind == "GLOBAL" and s.mangled in harness_defined):
            findings.append((s, "symbol-define", f"defines `{s.name}`, which the harness uses: it "
                             "would replace the harness's own"))
    # A destructor registered with __cxa_atexit is a static object's: said on the line of
    # the student's variable that has one (restoring its bytes would not unregister it).
    objects = [s for s in student if s.defined and s.kind == "OBJECT" and s.writable
               and not TOOLCHAIN_DATA.match(s.name) and not s.name.startswith("guard variable for ")
               and _locate(s.name, sources)]
    placed = [(objects[0].name if s.name == "__cxa_atexit" and objects else s.name, rule,
               message.replace("(a static object with a destructor)",
                               f"(a static object with a destructor: `{objects[0].name}`)")
               if s.name == "__cxa_atexit" and objects else message)
              for s, rule, message in findings]
    return place(placed, sources)


def place(findings: list[tuple[str, str, str]], sources: dict[str, str]) -> list[Violation]:
    """Findings about symbols (name, rule, message) as Violations on the student line that
    names the symbol, or on each student file."""
    found: list[Violation] = []
    for name, rule, message in findings:
        where = _locate(name, sources)
        targets = [where] if where else [(p, 0, "") for p in sources]
        for path, line, excerpt in targets:
            if not any(v.file == path and v.message == message for v in found):
                found.append(Violation(path, line, rule, message, excerpt))
    found.sort(key=lambda v: (v.file, v.line, v.rule))
    return found


# ---- the call graph: what a task's kernels reach ---------------------------------------


def compiled_calls(keep: Path, functions: list[object_code.Function], cuda: bool) -> list[code_rules.Call]:
    """Every call of the student unit as compiled: the object's relocations (the calls not
    inlined), and the inlined ones: g++'s report (the emulator) or nvcc's PTX (-lineinfo)."""
    calls = code_rules.object_calls(functions)
    if cuda:
        ptx = sorted(keep.glob("*.ptx"))
        if not ptx:
            raise RuntimeError("nvcc kept no PTX (--keep) for the call graph")
        for path in ptx:
            calls += code_rules.ptx_calls(path.read_text(errors="replace"))
    else:
        report = keep / code_rules.INLINE_REPORT
        if not report.is_file():
            raise RuntimeError("the compiler wrote no inlining report (-fopt-info) for the call graph")
        calls += code_rules.gcc_inline_calls(report.read_text(errors="replace"))
    return calls


def placeholders(keep: Path, functions: list[object_code.Function], cuda: bool,
                 student_files: dict[str, str], sources: dict[str, str]) -> dict[str, str]:
    """The student files (as the student knows them) whose task's kernels reach the
    handout's placeholder or baseline code in the compiled program, each with the message
    that says where (code_rules.placeholder_calls). `student_files`: a file in the build ->
    its path as the student knows it."""
    assignment = default_assignment()
    by_file = {t.file: t.kernels for t in assignment.tasks}
    by_file.update({e.file: e.kernels for e in assignment.exercises})
    kernels = {shown: by_file[Path(path).name] for path, shown in student_files.items()
               if Path(path).name in by_file}
    found = code_rules.placeholder_calls(compiled_calls(keep, functions, cuda), kernels, student_files,
                                         by_file)
    return {path: code_rules.placeholder_message(path, code_rules.placed(call, sources.get(path, "")))
            for path, call in sorted(found.items())}


# ---- what the emulator's compiler does not even know ------------------------------------

# `file:line:col: error: 'cudaStreamCreate' was not declared in this scope`: the CUDA runtime
# and driver APIs (NVIDIA's `cuda`/`cu` prefixes) are not the emulator's, so a call there
# does not compile; on the GPU the same call is refused by its symbol. Said by the compiler,
# so never the student's own function (theirs is declared).
_UNDECLARED = re.compile(r"^(?P<file>[^\s:][^:]*):(?P<line>\d+):\d+: error: [\u2018'`\"]"
                         r"(?:(?:std)?::)?(?P<name>cuda[A-Z]\w*|cu[A-Z]\w*)[\u2019'`\"] "
                         r"(?:was not declared|has not been declared|is not a member of)", re.M)


def undeclared_runtime_calls(errors: str, sources: dict[str, str]) -> list[Violation]:
    """The CUDA runtime or driver API calls a failed emulator build's errors name as
    undeclared in a student file (its path as the student knows it: `sources`' keys): the
    same refusal as the GPU build's symbol check ("symbol-call"), not a build failure."""
    found: list[Violation] = []
    for m in _UNDECLARED.finditer(errors):
        path, line, name = m.group("file"), int(m.group("line")), m.group("name")
        if path not in sources or any(v.file == path and v.line == line for v in found):
            continue
        found.append(Violation(path, line, "symbol-call", f"uses `{name}`, the CUDA runtime, which the "
                               "assignment does not allow (the emulator does not provide it; on a GPU "
                               "the compiled code's reference to it is refused)",
                               code_rules.source_line(sources[path], line)))
    return found


_DEVICE_THREAD_LOCAL = re.compile(r"^(?P<file>[^\s(][^(]*)\((?P<line>\d+)\): error: cannot use "
                                  r"thread_local specifier for variable declarations in device code", re.M)


def device_thread_locals(errors: str, sources: dict[str, str]) -> list[Violation]:
    """A failed nvcc build's `thread_local` in device code (which nvcc refuses): the same
    refusal as the emulator's object check on thread-local storage ("state"), not a build
    failure (issue 58, item 3)."""
    found: list[Violation] = []
    for m in _DEVICE_THREAD_LOCAL.finditer(errors):
        path, line = m.group("file"), int(m.group("line"))
        if path in sources and not any(v.file == path and v.line == line for v in found):
            found.append(Violation(path, line, "state", "keeps state between launches in a "
                                   "thread_local variable (thread-local storage: device code has "
                                   "none, and on the host the harness cannot put it back before "
                                   "each launch)", code_rules.source_line(sources[path], line)))
    return found
