#!/usr/bin/env python3
"""The code rules of scanlab: what a student file may contain, checked on what the
compiler saw. One implementation, used by the grader (grader/grading/checks/compiled.py imports it)
and by students (`make rules`, or `python3 tools/code_rules.py --student student`).

Nothing here reads the student files its own way: the rules run on the student unit
as the compiler preprocessed it (its own `-E`), so comments, line continuations, a
`//` comment that a lone carriage return ends, macros and `#if` are exactly what was
compiled. The compiler's line markers say which lines came from a student file; a
marker that does not follow the real nesting of includes (a `#line` or GNU line
marker written in a student file) is refused, so code cannot be attributed to another
file. The files the unit reads come from the compiler's own dependency list (`-M`):
one outside the submission, the handout's harness and the compiler's own headers is
refused before anything is built, and its contents are never shown.

Standard library only (Python 3.9+). The rules' data (code_rules.json) is generated
from the grader's rubric (data/rubric.toml) by tools/make_handout.py.
"""
from __future__ import annotations

import argparse
import bisect
import functools
import itertools
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
from dataclasses import dataclass, field
from pathlib import Path

DATA_FILE = "code_rules.json"
TOOL_TIMEOUT_S = 120


@dataclass(frozen=True)
class Rule:
    name: str
    pattern: "re.Pattern[str]"
    message: str


@dataclass(frozen=True)
class Rules:
    rules: tuple[Rule, ...]
    allowed_system_includes: tuple[str, ...]
    allowed_directives: tuple[str, ...]       # besides #include, in the preprocessed unit
    student_files: tuple[str, ...] = ()        # the files of student/
    # What the compiled unit may refer to besides the toolchain's own helpers (regular
    # expressions over demangled names), and each student file's kernels (the functions
    # its task defines: where the call graph starts).
    allowed_calls: tuple[str, ...] = ()
    kernels: tuple[tuple[str, tuple[str, ...]], ...] = ()

    @classmethod
    def from_data(cls, data: dict[str, object]) -> "Rules":
        raw = data.get("rules", [])
        rules = tuple(Rule(str(r["name"]), re.compile(str(r["pattern"])), str(r["message"]))
                      for r in raw if isinstance(r, dict)) if isinstance(raw, list) else ()

        def strings(key: str) -> tuple[str, ...]:
            value = data.get(key, [])
            return tuple(str(v) for v in value) if isinstance(value, list) else ()
        raw_kernels = data.get("kernels", {})
        kernels = tuple((str(k), tuple(str(n) for n in v)) for k, v in raw_kernels.items()
                        if isinstance(v, list)) if isinstance(raw_kernels, dict) else ()
        return cls(rules, strings("allowed_system_includes"), strings("allowed_directives"),
                   strings("student_files"), strings("allowed_calls"), kernels)

    @classmethod
    def load(cls, path: Path) -> "Rules":
        return cls.from_data(json.loads(path.read_text(encoding="utf-8")))


@dataclass(frozen=True)
class Finding:
    file: str      # the path as the student knows it
    line: int      # 0: the file as a whole
    rule: str
    message: str
    excerpt: str

    def __str__(self) -> str:
        where = f"{self.file}:{self.line}" if self.line else self.file
        return f"{where}: {self.message} [{self.rule}]" + (f"\n    {self.excerpt}" if self.excerpt else "")


# ---- the source as the compiler counts its lines -----------------------------------------


def source_line(text: str, line: int) -> str:
    """Line `line` of a source, counted as GCC and nvcc count (only a newline ends a line;
    a lone carriage return does not), trimmed."""
    lines = text.split("\n")
    return lines[line - 1].replace("\r", " ").strip()[:160] if 0 < line <= len(lines) else ""


@functools.lru_cache(maxsize=16384)
def norm(path: str) -> str:
    # Cached: a preprocessed unit names the same few headers in thousands of line markers,
    # and each realpath is a stat of every folder on the way (the grader's gate ran 2 s
    # of them per build).
    return os.path.realpath(path)


# ---- preprocessed text: literals blanked, names unwrapped ----------------------------------

_RAW_PREFIX = re.compile(r'(?:u8|u|U|L)?R"([^()\\\s]{0,16})\(')


def blank_literals(text: str) -> str:
    """String and character literals blanked (newlines kept, lengths kept): the rules
    look at code only. The text is preprocessed, so there are no comments left."""
    out = list(text)
    n = len(text)
    i = 0

    def blank(start: int, end: int) -> None:
        for k in range(start, min(end, n)):
            if out[k] != "\n":
                out[k] = " "

    while i < n:
        c = text[i]
        if c == '"' or (c in "uULR" and (i == 0 or not (text[i - 1].isalnum() or text[i - 1] == "_"))
                        and _RAW_PREFIX.match(text, i)):
            m = _RAW_PREFIX.match(text, i)
            if m:
                close = ")" + m.group(1) + '"'
                end = text.find(close, m.end())
                end = n if end < 0 else end + len(close)
                blank(m.end(), end - len(close))
                i = end
                continue
            j = i + 1
            while j < n and text[j] != '"' and text[j] != "\n":
                j += 2 if text[j] == "\\" else 1
            blank(i + 1, j)
            i = j + 1
        elif c == "'":
            k = i - 1       # a digit separator (1'000'000) is no character literal
            while k >= 0 and (text[k].isalnum() or text[k] in "_.'"):
                k -= 1
            if k + 1 < i and text[k + 1].isdigit():
                i += 1
                continue
            j = i + 1
            while j < n and text[j] != "'" and text[j] != "\n":
                j += 2 if text[j] == "\\" else 1
            blank(i + 1, j)
            i = j + 1
        else:
            i += 1
    return "".join(out)


_PAREN_NAME = re.compile(r"\(\s*((?:::\s*)?[A-Za-z_]\w*(?:\s*::\s*[A-Za-z_]\w*)*)\s*\)")


def unwrap_parenthesized_names(code: str) -> str:
    """`(std::getenv)("x")` -> ` std::getenv ("x")`, repeatedly, so a parenthesized name
    reads as the plain name. A call's own argument list, `f(x)`, stays. Lengths are
    kept, so offsets still point at the same characters."""
    def unwrap(m: "re.Match[str]") -> str:
        before = code[:m.start()].rstrip()
        if before and (before[-1].isalnum() or before[-1] in "_)]>"):
            return m.group(0)
        return " " + m.group(1).ljust(len(m.group(0)) - 2) + " "

    while True:
        new = _PAREN_NAME.sub(unwrap, code)
        if new == code:
            return code
        code = new


# ---- line markers: which lines came from which file ---------------------------------------

_MARKER = re.compile(r'^#\s*(?:line\s+)?(\d+)\s+"((?:[^"\\]|\\.)*)"((?:\s+\d+)*)\s*$')
_DIRECTIVE = re.compile(r"^\s*#\s*([A-Za-z_]\w*)")


def _unescape(name: str) -> str:
    return re.sub(r"\\([0-7]{1,3}|.)", lambda m: chr(int(m.group(1), 8))
                  if m.group(1)[0] in "01234567" else m.group(1), name)


@dataclass
class StudentLines:
    """The lines of one student file as they came out of the preprocessor."""
    path: str                                          # as the student knows it
    lines: list[tuple[int, str]] = field(default_factory=list)


@dataclass
class View:
    """The student's part of a preprocessed unit, and what is wrong with its structure."""
    parts: list[StudentLines]
    findings: list[Finding]
    entered: set[str]                                  # every file the unit entered


def _system_header_ok(name: str, flags: set[int], rules: Rules) -> bool:
    return 3 in flags and Path(name).name in rules.allowed_system_includes


def split_by_origin(preprocessed: str, student_files: dict[str, str], rules: Rules,
                    handout_dirs: tuple[str, ...] = ()) -> View:
    """The preprocessed lines whose line marker names a student file, checked against the
    nesting of includes: an include from a student file must name a header directly in
    harness/ (the student-facing API; not one of its subfolders) or student/ (exactly
    `handout_dirs` when given), or an allowed standard header, and every marker must
    follow the include stack (else a `#line` or line marker was written in a student
    file). `student_files` maps a file's path in the build to the path the student knows."""
    students = {norm(k): v for k, v in student_files.items()}
    public = {norm(d) for d in handout_dirs}
    out: dict[str, StudentLines] = {}
    findings: list[Finding] = []
    entered: set[str] = set()
    stack: list[str] = []
    line = 0
    last_student = next(iter(students.values()), "")

    def find(shown: str, at: int, rule: str, message: str) -> None:
        if not any(f.file == shown and f.rule == rule and f.message == message for f in findings):
            findings.append(Finding(shown, at, rule, message, ""))

    for text in preprocessed.split("\n"):
        m = _MARKER.match(text)
        if not m:
            current = students.get(stack[-1]) if stack else None
            if current is not None:
                d = _DIRECTIVE.match(text)
                if d and d.group(1) not in rules.allowed_directives:
                    find(current, line, "directive",
                         f"the preprocessor directive #{d.group(1)} is not allowed")
                elif text.strip():
                    out.setdefault(current, StudentLines(current)).lines.append((line, text))
            line += 1
            continue
        number, name = int(m.group(1)), _unescape(m.group(2))
        flags = {int(f) for f in m.group(3).split()}
        real = name if name.startswith("<") else norm(name)
        top = stack[-1] if stack else None
        if top in students:
            last_student = students[top]
        if 1 in flags:
            entered.add(real)
            if top in students:
                ok = real in students or _system_header_ok(real, flags, rules) or (
                    os.path.dirname(real) in public if public
                    else Path(real).parent.name in ("harness", "student"))
                if not ok:
                    allowed = ", ".join(f"<{h}>" for h in rules.allowed_system_includes)
                    find(students[top], line, "include",
                         f"#include of {Path(real).name}: only \"harness/...\" and \"student/...\" "
                         f"headers{' and ' + allowed if allowed else ''} may be included")
            stack.append(real)
        elif 2 in flags:
            if stack:
                stack.pop()
            if not stack or stack[-1] != real:
                find(last_student, line, "line-marker", "a line marker or #line directive "
                     "(code placed as if it came from another file) is not allowed")
                stack = stack[:-1] + [real] if stack else [real]
        elif top is not None and top != real:
            if len(stack) > 1 or top in students:
                find(last_student, line, "line-marker", "a line marker or #line directive "
                     "(code placed as if it came from another file) is not allowed")
            stack[-1] = real
        elif top is None:
            stack.append(real)
        line = number
    return View(list(out.values()), findings, entered)


def scan_preprocessed(preprocessed: str, student_files: dict[str, str], sources: dict[str, str],
                      rules: Rules, handout_dirs: tuple[str, ...] = ()) -> list[Finding]:
    """Every violation of the rules in the student's lines of a preprocessed unit.
    `sources` maps a student path to its text, for the excerpts."""
    view = split_by_origin(preprocessed, student_files, rules, handout_dirs)
    found = list(view.findings)
    for part in view.parts:
        joined = "\n".join(text for _, text in part.lines)
        code = unwrap_parenthesized_names(blank_literals(joined))
        starts = list(itertools.accumulate((len(text) + 1 for _, text in part.lines), initial=0))
        for rule in rules.rules:
            for m in rule.pattern.finditer(code):
                line = part.lines[bisect.bisect_right(starts, m.start()) - 1][0]
                if any(f.file == part.path and f.line == line and f.rule == rule.name for f in found):
                    continue
                found.append(Finding(part.path, line, rule.name, rule.message,
                                     source_line(sources.get(part.path, ""), line)))
    for i, f in enumerate(found):
        if not f.excerpt and f.line:
            found[i] = Finding(f.file, f.line, f.rule, f.message,
                               source_line(sources.get(f.file, ""), f.line))
    found.sort(key=lambda f: (f.file, f.line, f.rule))
    return found


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
    name = name.replace("(anonymous namespace)::", "")
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
    current = ""
    for line in run_tool(["readelf", "-rW", str(obj)]).splitlines():
        m = re.match(r"Relocation section '\.rela?(\S+)'", line)
        if m:
            current = m.group(1)
            continue
        parts = line.split()
        if current and len(parts) >= 5 and re.fullmatch(r"[0-9a-f]+", parts[0]):
            relocations.append((current, int(parts[0], 16), parts[4]))
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
    current: ObjectFunction | None = None
    text = [] if not any(s == ".text" for s, _ in sections.values()) else \
        run_tool(["objdump", "-d", "--no-show-raw-insn", "-w", "-j", ".text", str(obj)]).splitlines()
    for line in text:
        m = re.match(r"^[0-9a-f]+ <([^>]+)>:$", line)
        if m:
            current = by_mangled.get(m.group(1))
            continue
        m = re.search(r"\s(?:call|jmp)q?\s+[0-9a-f]+ <([^>+]+)>$", line)
        if current is not None and m and m.group(1) != current.mangled:
            direct.append((current, m.group(1)))
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


def forbidden_reference(name: str, allowed_calls: tuple[str, ...]) -> str:
    """The message for an undefined symbol (demangled) of the compiled student unit that
    the assignment does not allow (files, processes, the network, the environment, the
    CUDA runtime, ...: whatever is neither the toolchain's nor allowed), or "". Decided
    from what the compiled code needs, so a student's own function named `signal`,
    `send` or `exit` is never one."""
    allowed = (TOOLCHAIN_CALLS.match(name) or TOOLCHAIN_ONLY.match(name)) and not STD_DENIED.match(name)
    if allowed or any(re.match(p, name) for p in allowed_calls):
        return ""
    return (f"uses `{name}`{KNOWN_CALLS.get(name, '')}, which the assignment does not allow (the "
            "compiled code refers to it)")


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


_CONSTANT = re.compile(r'__attribute__\s*\(\(\s*__visibility__\s*\(\s*"\s*"\s*\)\s*\)\)')


def constant_names(preprocessed: str, student_files: dict[str, str]) -> set[str]:
    """The variables a student file declares `__constant__`, on the CPU emulator (whose
    `__constant__` leaves `__attribute__((__visibility__("default")))` in the preprocessed
    code): constant memory, which device code cannot write on a GPU."""
    names: set[str] = set()
    for part in split_by_origin(preprocessed, student_files, Rules((), (), ())).parts:
        code = blank_literals("\n".join(text for _, text in part.lines))
        for m in _CONSTANT.finditer(code):
            declaration = re.split(r"[\[=;{(]", code[m.end():], maxsplit=1)[0]
            words = re.findall(r"[A-Za-z_]\w*", declaration)
            if words:
                names.add(words[-1])
    return names


# ---- the files a unit reads ---------------------------------------------------------------


def parse_dependencies(text: str) -> list[str]:
    """The prerequisites of a make rule as `-M` writes it (escaped spaces kept)."""
    body = text.replace("\\\n", " ")
    body = body.split(":", 1)[1] if ":" in body else body
    parts = re.findall(r"(?:\\.|[^\s\\])+", body)
    return [re.sub(r"\\(.)", r"\1", p) for p in parts]


def outside_files(dependencies: list[str], allowed_files: set[str],
                  allowed_dirs: tuple[str, ...]) -> list[str]:
    """The dependencies that are neither an allowed file nor inside an allowed folder."""
    files = {norm(f) for f in allowed_files}
    dirs = tuple(norm(d) for d in allowed_dirs)
    return [d for d in dependencies
            if norm(d) not in files and not any(norm(d).startswith(p + os.sep) for p in dirs)]


def refuse_outside(outside: list[str], sources: dict[str, str]) -> list[Finding]:
    """A finding for each file outside: on the student line that includes it (by its
    name) when there is one. Only the file's name is said, never a word of it."""
    found = []
    for path in outside:
        base = Path(path).name
        where: tuple[str, int] | None = None
        for name, text in sources.items():
            for i, row in enumerate(text.split("\n"), 1):
                if "include" in row and base and base in row:
                    where = (name, i)
                    break
            if where:
                break
        shown, line = where if where else (next(iter(sources), "the submission"), 0)
        found.append(Finding(shown, line, "include",
                             f"reads {path}, a file outside the submission, the handout's "
                             "harness and the compiler's own headers: refused before the build",
                             source_line(sources.get(shown, ""), line)))
    return found


def compiler_search_dirs(cxx: str) -> tuple[str, ...]:
    """The compiler's own include folders (`-E -v`), where its standard headers live."""
    try:
        r = subprocess.run([cxx, "-x", "c++", "-E", "-v", os.devnull], capture_output=True,
                           text=True, timeout=TOOL_TIMEOUT_S)
    except (OSError, subprocess.SubprocessError):
        return ()
    dirs, inside = [], False
    for line in r.stderr.splitlines():
        if line.startswith("#include <...> search starts here"):
            inside = True
        elif line.startswith("End of search list"):
            break
        elif inside and line.startswith(" "):
            dirs.append(norm(line.strip().split(" (")[0]))
    return tuple(dirs)


# ---- compiler messages ---------------------------------------------------------------------

_HEADER = re.compile(r"^(?:In file included from |\s+from )?(\S[^:(]*?)(?::\d+(?::\d+)?[:,]|\(\d+\):)")


def only_public_messages(log: str, public_dirs: tuple[str, ...]) -> str:
    """A build log without the messages (and their quoted lines) about files outside the
    submission and the handout (relative paths, as the grader rewrote them) or `public_dirs`
    (the compiler's headers): a file of the grading machine is never quoted."""
    out: list[str] = []
    hiding = False
    for line in log.split("\n"):
        m = _HEADER.match(line)
        if m:
            path = m.group(1).strip()
            hiding = Path(path).is_absolute() and not any(
                norm(path).startswith(norm(d) + os.sep) for d in public_dirs)
            if hiding:
                if not out or out[-1] != "(a message about a file outside the submission: not shown)":
                    out.append("(a message about a file outside the submission: not shown)")
                continue
        elif line[:1] not in (" ", "\t", "") and not line.startswith(("In ", "At ")):
            hiding = False
        if not hiding:
            out.append(line)
    return "\n".join(out)


# ---- the local check (what `make rules` runs) ----------------------------------------------


def _run(argv: list[str], cwd: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(argv, cwd=cwd, capture_output=True, text=True, timeout=TOOL_TIMEOUT_S)


def compiled_check(unit: str, flags: list[str], root: Path, shown: dict[str, str],
                   sources: dict[str, str], rules: Rules) -> tuple[list[Finding], dict[str, str], str]:
    """The unit compiled as the emulator build compiles it (-O3, g++'s inlining report):
    the calls the compiled code needs that the assignment does not allow, and the student
    files whose task's kernels reach the handout's placeholder (path -> message); (findings,
    placeholders, a problem that kept the check from running or "")."""
    report = root / INLINE_REPORT
    obj = root / "unit.o"
    built = _run(flags + ["-O3", "-DNDEBUG", inline_report_flag(str(report)), "-c", "-o", str(obj),
                          unit], root)
    if built.returncode != 0:
        return [], {}, only_public_messages(built.stderr.replace(f"{root}/", ""), ())
    functions = read_functions(obj)
    calls = object_calls(functions) + gcc_inline_calls(report.read_text(errors="replace"))
    by_name = dict(rules.kernels)
    kernels = {v: by_name[Path(k).name] for k, v in shown.items() if Path(k).name in by_name}
    placeholders = {path: placeholder_message(path, placed(call, sources.get(path, "")))
                    for path, call in sorted(placeholder_calls(calls, kernels, shown, by_name).items())}
    findings = []
    for name in undefined_symbols(obj):
        said = forbidden_reference(name, rules.allowed_calls)
        if said:
            where = next(((p, i) for p, text in sources.items()
                          for i, row in enumerate(text.split("\n"), 1)
                          if re.search(rf"(?<!\w){re.escape(function_key(name).rsplit('::', 1)[-1])}(?!\w)", row)),
                         (next(iter(sources), "the submission"), 0))
            findings.append(Finding(where[0], where[1], "symbol-call", said,
                                    source_line(sources.get(where[0], ""), where[1])))
    return findings, placeholders, ""


def check_student(student: Path, handout: Path, rules: Rules, cxx: str,
                  compiled: bool = True) -> tuple[list[Finding], str]:
    """The rules over the student files in `student`, preprocessed and (`compiled`)
    compiled as the emulator build compiles them; (findings, a problem that kept the check
    from running or ""). The files whose task reaches the handout's placeholder are
    printed (the grader counts those tasks as not attempted)."""
    with tempfile.TemporaryDirectory(prefix="scanlab-rules-") as tmp:
        root = Path(tmp)
        for folder in ("harness", "emulator"):
            shutil.copytree(handout / folder, root / folder)
        (root / "student").mkdir()
        names = rules.student_files or tuple(p.name for p in (handout / "student").glob("*.cuh"))
        shown: dict[str, str] = {}
        sources: dict[str, str] = {}
        for name in names:
            src = student / name if (student / name).is_file() else handout / "student" / name
            (root / "student" / name).write_bytes(src.read_bytes())
            if src.parent.resolve() == student.resolve():
                shown[str(root / "student" / name)] = str(src)
                # Bytes decoded as they are: a lone carriage return stays one (read_text
                # would make it a newline, and the lines would not be the compiler's).
                sources[str(src)] = src.read_bytes().decode("utf-8", errors="replace")
        unit = str(root / "emulator" / "student_unit_emu.cpp")
        flags = [cxx, "-std=gnu++20", f"-I{root}", "-Wno-unknown-pragmas"]
        # -MG: a header that is not there is listed (and refused below), not an error.
        deps = _run(flags + ["-M", "-MG", "-MF", str(root / "unit.d"), "-MT", "unit", unit], root)
        if deps.returncode != 0:
            return [], only_public_messages(deps.stderr.replace(f"{root}/", ""), ())
        system = compiler_search_dirs(cxx)
        outside = outside_files(parse_dependencies((root / "unit.d").read_text()), set(shown),
                                (str(root / "harness"), str(root / "emulator"), str(root / "student"),
                                 *system))
        if outside:
            return refuse_outside(outside, sources), ""
        pre = _run(flags + ["-E", "-o", str(root / "unit.i"), unit], root)
        if pre.returncode != 0:
            return [], only_public_messages(pre.stderr.replace(f"{root}/", ""), system)
        text = (root / "unit.i").read_text(encoding="utf-8", errors="replace")
        found = scan_preprocessed(text, shown, sources, rules, (str(root / "harness"),
                                                                 str(root / "student")))
        if not compiled:
            return found, ""
        more, placeholders, problem = compiled_check(unit, flags, root, shown, sources, rules)
        if problem:
            # A file refused already needs no compiling to be refused (inline asm, say,
            # that the emulator's compiler does not take).
            return (found, "") if found else ([], problem)
        for message in placeholders.values():
            print(f"{message}: the grader counts this task as not attempted (0 points)")
        return sorted(found + more, key=lambda f: (f.file, f.line, f.rule)), ""


def main(argv: list[str] | None = None) -> int:
    here = Path(__file__).resolve().parent
    p = argparse.ArgumentParser(description="Checks student files against the assignment's "
                                "code rules, as the grader does (on the preprocessed and the "
                                "compiled code).")
    p.add_argument("--student", type=Path, default=here.parent / "student",
                   help="the folder of your student files (default: the handout's student/)")
    p.add_argument("--handout", type=Path, default=here.parent, help="the handout folder")
    p.add_argument("--rules", type=Path, default=here / DATA_FILE, help="the rules' data")
    p.add_argument("--cxx", default=os.environ.get("CXX") or ("g++" if shutil.which("g++") else "c++"),
                   help="the C++ compiler, g++ (default: $CXX, else g++, else c++)")
    p.add_argument("--preprocessed-only", action="store_true",
                   help="only the rules on the preprocessed code (fast): not the calls of the "
                   "compiled code (placeholders, files, processes, the network, ...)")
    args = p.parse_args(argv)
    rules = Rules.load(args.rules)
    findings, problem = check_student(args.student, args.handout, rules, args.cxx,
                                      not args.preprocessed_only)
    if problem:
        print(f"code rules: the student files could not be preprocessed or compiled:\n{problem}")
        return 2
    for f in findings:
        print(f)
    if findings:
        print(f"code rules: {len(findings)} violation(s): the grader would give the task(s) 0 points")
        return 1
    print("code rules: no violation")
    return 0


if __name__ == "__main__":
    sys.exit(main())
