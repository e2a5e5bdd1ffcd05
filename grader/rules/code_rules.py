#!/usr/bin/env python3
"""The code rules of scanlab: what a student file may contain, checked on what the
compiler saw. One implementation, a module of the grader (grader/rules/, imported by
grader/grading/checks/) and, as a copy that tools/make_handout.py writes into the handout
with compiled_program.py and cpp_text.py, the students' (`make rules`, or
`python3 tools/code_rules.py --student student`).

Nothing here reads the student files its own way: the rules run on the student unit
as the compiler preprocessed it (its own `-E`), so comments, line continuations, a
`//` comment that a lone carriage return ends, macros and `#if` are exactly what was
compiled. The compiler's line markers say which lines came from a student file; a
marker that does not follow the real nesting of includes (a `#line` or GNU line
marker written in a student file) is refused, so code cannot be attributed to another
file. The files the unit reads come from the compiler's own dependency list (`-M`):
one outside the submission, the handout's harness and the compiler's own headers is
refused before anything is built, and its contents are never shown.

Standard library only (Python 3.9+); it imports only its two neighbours, relatively
(the handout's copies import them as the scripts beside them). The rules' data (code_rules.json) is generated
from the grader's rubric (data/rubric.toml) by tools/make_handout.py.
"""
from __future__ import annotations

import argparse
import bisect
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

from .compiled_program import (  # noqa: F401  (re-exported: the grader's names for them)
    CUDA_LAUNCH, INLINE_REPORT, KNOWN_CALLS, PLACEHOLDER_NAMESPACE, STD_DENIED, TOOL_TIMEOUT_S,
    TOOLCHAIN_CALLS, TOOLCHAIN_ONLY, Call, ObjectFunction, _strip_templates, compiler_init_entry,
    demangle,
    elf_sections, forbidden_reference, function_key, gcc_inline_calls, init_entries,
    init_entry_message, inline_report_flag, is_placeholder, norm, object_calls, placed,
    placeholder_calls, placeholder_message, ptx_calls, read_functions, run_tool, thread_local_message,
    thread_locals, undefined_symbols)
from .cpp_text import blank, splice

DATA_FILE = "code_rules.json"


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
    cxx_standard: int = 0                      # the assignment's ([language], data/assignment.toml)

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
        standard = data.get("cxx_standard", 0)
        return cls(rules, strings("allowed_system_includes"), strings("allowed_directives"),
                   strings("student_files"), strings("allowed_calls"), kernels,
                   standard if isinstance(standard, int) else 0)

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


# ---- a variable of the compiled unit, by name ---------------------------------------------

_SHARED_MACRO = re.compile(r"^[ \t]*#[ \t]*define[ \t]+([A-Za-z_]\w*)\b[^\n]*\b__shared__\b", re.M)


def base_name(name: str) -> str:
    """`scanlab::counter` -> `counter`; `foo(int)` -> `foo`; `scanlab::f<int>()` -> `f`;
    a function's static, `scanlab::f<int>(int*)::tile` -> `tile`."""
    name = name.replace("(anonymous namespace)::", "")
    if re.search(r"\)(?: const)?::[A-Za-z_]\w*$", name):
        return name.rsplit("::", 1)[1]
    depth = 0
    cut = len(name)
    for i, c in enumerate(name):
        if c in "<(":
            if depth == 0 and i > 0:
                cut = i
                break
            depth += 1
        elif c in ">)":
            depth -= 1
    head = name[:cut].split("::")[-1].strip()
    return head.split()[-1] if head else name


def shared_memory(name: str, sources: dict[str, str]) -> bool:
    """Whether a thread-local variable of the emulator's student unit is `__shared__`
    memory (handout/emulator/cuda_emu.h: `#define __shared__ thread_local`), not a
    `thread_local` of the student's: a student line that names it says `__shared__` (or a
    macro of the student's that does). One no student line names is the harness's."""
    base = base_name(name)
    if not re.fullmatch(r"[A-Za-z_]\w*", base):
        return False
    token = re.compile(rf"(?<![\w]){re.escape(base)}(?![\w])")
    named = False
    for text in sources.values():
        code = blank(splice(text.replace("\r\n", "\n"))[0]).code
        shared = re.compile(r"(?<![\w])(" + "|".join(
            re.escape(w) for w in {"__shared__", *_SHARED_MACRO.findall(code)}) + r")(?![\w])")
        code = re.sub(r"^[ \t]*#[^\n]*", lambda d: " " * len(d.group(0)), code, flags=re.M)
        for m in token.finditer(code):
            named = True
            # The declaration the name ends: from the end of the statement before it.
            start = max(code.rfind(c, 0, m.start()) for c in ";{}") + 1
            if shared.search(code[start:m.start()]):
                return True
    return not named


# ---- the source as the compiler counts its lines -----------------------------------------


def source_line(text: str, line: int) -> str:
    """Line `line` of a source, counted as GCC and nvcc count (only a newline ends a line;
    a lone carriage return does not), trimmed."""
    lines = text.split("\n")
    return lines[line - 1].replace("\r", " ").strip()[:160] if 0 < line <= len(lines) else ""


# ---- preprocessed text: names unwrapped (literals blanked by cpp_text.blank) -----------

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
        code = unwrap_parenthesized_names(blank(joined, comments=False).code)
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


# ---- the compiled program (its calls and symbols: compiled_program.py) -------------------


_CONSTANT = re.compile(r'__attribute__\s*\(\(\s*__visibility__\s*\(\s*"\s*"\s*\)\s*\)\)')


def constant_names(preprocessed: str, student_files: dict[str, str]) -> set[str]:
    """The variables a student file declares `__constant__`, on the CPU emulator (whose
    `__constant__` leaves `__attribute__((__visibility__("default")))` in the preprocessed
    code): constant memory, which device code cannot write on a GPU."""
    names: set[str] = set()
    for part in split_by_origin(preprocessed, student_files, Rules((), (), ())).parts:
        code = blank("\n".join(text for _, text in part.lines), comments=False).code
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


def refuse_outside(outside: list[str], sources: dict[str, str],
                   missing: frozenset[str] = frozenset()) -> list[Finding]:
    """A finding for each file outside: on the student line that includes it (by its
    name) when there is one. Only the file's name is said, never a word of it. `missing`:
    the ones that are no file at all (the compiler's -MG lists an include it does not
    find as spelled): said as not found, never as a file outside the submission."""
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
        said = (f"includes {path}, which no include folder of the build holds (a student file "
                "is found by its name beside yours or as \"student/<name>\"): not built"
                if path in missing else
                f"reads {path}, a file outside the submission, the handout's "
                "harness and the compiler's own headers: refused before the build")
        found.append(Finding(shown, line, "include", said, source_line(sources.get(shown, ""), line)))
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
    said = [(function_key(name).rsplit("::", 1)[-1], "symbol-call", message)
            for name in undefined_symbols(obj)
            for message in [forbidden_reference(name, rules.allowed_calls, nvcc=False)] if message]
    # What the object holds (the grader's object check, issue 58): host code that runs
    # before or after main, and thread-local state (but the emulator's __shared__ memory).
    said += [(base_name(name), "host-code", init_entry_message(section, name))
             for section, name in init_entries(obj)
             if not compiler_init_entry(name, sources)]
    said += [(base_name(name), "state", thread_local_message(name, section))
             for name, section in thread_locals(obj) if not shared_memory(name, sources)]
    findings = []
    for word, rule, message in said:
        where = next(((p, i) for p, text in sources.items()
                      for i, row in enumerate(text.split("\n"), 1)
                      if re.search(rf"(?<!\w){re.escape(word)}(?!\w)", row)),
                     (next(iter(sources), "the submission"), 0))
        finding = Finding(where[0], where[1], rule, message, source_line(sources.get(where[0], ""), where[1]))
        if finding not in findings:
            findings.append(finding)
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
        flags = [cxx, *([f"-std=gnu++{rules.cxx_standard}"] if rules.cxx_standard else []), f"-I{root}",
                 "-Wno-unknown-pragmas"]
        # -MG: a header that is not there is listed (and refused below), not an error.
        deps = _run(flags + ["-M", "-MG", "-MF", str(root / "unit.d"), "-MT", "unit", unit], root)
        if deps.returncode != 0:
            return [], only_public_messages(deps.stderr.replace(f"{root}/", ""), ())
        system = compiler_search_dirs(cxx)
        outside = outside_files(parse_dependencies((root / "unit.d").read_text()), set(shown),
                                (str(root / "harness"), str(root / "emulator"), str(root / "student"),
                                 *system))
        if outside:
            return refuse_outside(outside, sources,
                                  frozenset(d for d in outside if not (root / d).exists())), ""
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
