"""A solution student file (solution/student/*.cuh) read as the one source of its task's
student-facing text: its solution regions and placeholders (the handout's copy,
split_solution) and the functions a student writes, each with its doc comment (the
contracts of a generated task page, tools/handout_text.py).

Grammar: `//@@ solution` opens a region of reference code, `//@@ placeholder` ends it
and starts the placeholder, whose lines are `//| code`, up to `//@@ end`. A function a
student writes is one with a region inside its body; its doc comment is the block of
`//` lines right above its declaration (a `template <...>` line, or the line naming it,
at the file's top level)."""
from __future__ import annotations

import re
from dataclasses import dataclass

MARK_SOLUTION = re.compile(r"^\s*//@@ solution\s*$")
MARK_PLACEHOLDER = re.compile(r"^\s*//@@ placeholder\s*$")
MARK_END = re.compile(r"^\s*//@@ end\s*$")
PLACEHOLDER_LINE = re.compile(r"^(\s*)//\|(?: (.*))?$")
# Lines shorter than this (closing braces, `return value;`) are too generic to count
# as leaked solution code.
MIN_LEAK_CHARS = 20
# What a file's first lines say to students only (not the task's text).
YOUR_FILE = re.compile(r"\s*YOUR FILE: edit it\.\s*$")
NOT_THE_NAME = {"__launch_bounds__", "__align__"}


@dataclass
class Split:
    handout: str              # the student's version of the file
    solution_lines: set[str]  # stripped lines only inside solution regions


def split_solution(text: str, name: str) -> Split:
    out: list[str] = []
    inside: set[str] = set()
    outside: set[str] = set()
    state = "shared"
    for number, line in enumerate(text.splitlines(), 1):
        where = f"{name}:{number}"
        if MARK_SOLUTION.match(line):
            if state != "shared":
                raise SystemExit(f"{where}: '//@@ solution' inside another region")
            state = "solution"
        elif MARK_PLACEHOLDER.match(line):
            if state != "solution":
                raise SystemExit(f"{where}: '//@@ placeholder' without '//@@ solution'")
            state = "placeholder"
        elif MARK_END.match(line):
            if state != "placeholder":
                raise SystemExit(f"{where}: '//@@ end' without '//@@ placeholder'")
            state = "shared"
        elif state == "solution":
            inside.add(line.strip())
        elif state == "placeholder":
            m = PLACEHOLDER_LINE.match(line)
            if not m:
                raise SystemExit(f"{where}: placeholder lines must start with '//|'")
            out.append((m.group(1) + (m.group(2) or "")).rstrip())
        else:
            outside.add(line.strip())
            out.append(line)
    if state != "shared":
        raise SystemExit(f"{name}: region not closed with '//@@ end'")
    leaks = {l for l in inside - outside if len(l) >= MIN_LEAK_CHARS and not l.startswith("//")}
    return Split("\n".join(out) + "\n", leaks)


@dataclass(frozen=True)
class StudentFunction:
    """A function the student writes: how it is called, its contract, where they start."""
    name: str
    call: str                      # `name<T, ...>(a, b)`: its template and value parameters
    declaration: str               # as the file declares it, up to its body (no `{`)
    doc: tuple[str, ...]           # its doc comment's lines, without the `//`
    placeholder: tuple[str, ...]   # the handout's code in its place (dedented)

    @property
    def stub(self) -> bool:
        """Whether the placeholder only marks the task as not implemented."""
        return any("notImplemented()" in line for line in self.placeholder)


def comment_text(line: str) -> str:
    return line.strip()[2:].removeprefix(" ").rstrip()


def header_comment(text: str) -> tuple[str, ...]:
    """The file's first comment block, without what it says to students only."""
    lines = []
    for line in text.splitlines():
        if not line.startswith("//"):
            break
        text = comment_text(line)
        if YOUR_FILE.sub("", text) or not text:   # (a line of the marker alone is left out)
            lines.append(YOUR_FILE.sub("", text))
    while lines and not lines[-1]:
        lines.pop()
    return tuple(lines)


def names(parameters: str) -> list[str]:
    """The names of a comma-separated parameter list (commas inside <> or () ignored)."""
    found, depth, start = [], 0, 0
    for i, ch in enumerate(parameters + ","):
        depth += {"<": 1, "(": 1, ">": -1, ")": -1}.get(ch, 0)
        if ch == "," and depth == 0:
            words = re.findall(r"\w+", parameters[start:i].split("=")[0])
            if words:
                found.append(words[-1])
            start = i + 1
    return found


def call_of(declaration: str) -> tuple[str, str]:
    """(name, `name<T...>(a, b)`) of a declaration's text, up to its body's `{`."""
    template = re.match(r"\s*template\s*<(.*?)>\s*(?=[A-Za-z_])", declaration, re.S)
    rest = declaration[template.end():] if template else declaration
    for m in re.finditer(r"(\w+)\s*\(", rest):
        if m.group(1) in NOT_THE_NAME:
            continue
        depth, i = 1, m.end()
        while depth and i < len(rest):
            depth += {"(": 1, ")": -1}.get(rest[i], 0)
            i += 1
        arguments = f"<{', '.join(names(template.group(1)))}>" if template else ""
        return m.group(1), f"{m.group(1)}{arguments}({', '.join(names(rest[m.end():i - 1]))})"
    raise ValueError(f"no function name in {declaration!r}")


def starts_declaration(lines: list[str], i: int) -> bool:
    """Whether line i starts a statement at the file's top level (not a comment, a
    directive, a namespace or a closing brace; a continuation line is indented or
    follows an unfinished line)."""
    line = lines[i]
    if not line or line[0].isspace() or line.startswith(("//", "#", "}", "namespace")):
        return False
    before = lines[i - 1].rstrip() if i else ""
    return not before or before.startswith("//") or before.endswith(("}", ";"))


def is_marker(line: str) -> bool:
    return bool(MARK_SOLUTION.match(line) or MARK_PLACEHOLDER.match(line) or MARK_END.match(line)
                or PLACEHOLDER_LINE.match(line))


def student_functions(text: str, name: str) -> list[StudentFunction]:
    """The functions with a solution region inside their body, in the file's order."""
    lines = text.splitlines()
    found: list[StudentFunction] = []
    start = None      # the line where the last top-level declaration starts
    for i, line in enumerate(lines):
        if starts_declaration(lines, i):
            start = i
        if not (MARK_SOLUTION.match(line) and line[0].isspace() and start is not None):
            continue
        body = next((j for j in range(start, i) if lines[j].rstrip().endswith("{")), None)
        if body is None:
            raise SystemExit(f"{name}:{i + 1}: a solution region inside a function whose declaration "
                             f"(line {start + 1}) has no line ending in its body's '{{'")
        declaration = "\n".join(lines[start:body + 1]).rstrip().removesuffix("{").rstrip()
        function, call = call_of(declaration)
        if found and found[-1].name == function:
            continue
        doc_start = start
        while doc_start > 0 and lines[doc_start - 1].startswith("//") and not is_marker(lines[doc_start - 1]):
            doc_start -= 1
        end = next((j for j in range(i, len(lines)) if MARK_END.match(lines[j])), len(lines))
        placeholder = [m.group(1) + (m.group(2) or "") for l in lines[i:end] if (m := PLACEHOLDER_LINE.match(l))]
        indent = min((len(p) - len(p.lstrip()) for p in placeholder if p.strip()), default=0)
        found.append(StudentFunction(function, call, declaration,
                                     tuple(comment_text(l) for l in lines[doc_start:start]),
                                     tuple(p[indent:].rstrip() for p in placeholder)))
    return found


def declared_contract(number: int, file: str, kernels: tuple[str, ...], source: str, note: str) -> str:
    """A task's contract in the build of another task (grader/contract/README.md): the
    solution file's includes and `kernels` declared as it declares them, never defined."""
    declared = {f.name: f.declaration for f in student_functions(source, file)}
    missing = [k for k in kernels if k not in declared]
    if missing:
        raise SystemExit(f"make_handout: solution/student/{file} has no function with a solution "
                         f"region named {', '.join(missing)} (data/assignment.toml's kernels)")
    includes = "".join(line + "\n" for line in source.splitlines() if line.startswith("#include"))
    return (note + f"// Task {number}'s contract in the build of another task (grader/contract/README.md):\n"
            "// its kernels declared, never defined here (no plan of another task launches them).\n"
            "#pragma once\n" + includes + "\nnamespace scanlab {\n\n"
            + "".join(declared[k] + ";\n\n" for k in kernels) + "}  // namespace scanlab\n")
