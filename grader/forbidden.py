"""Forbidden constructs: the rubric's rules over a student file.

The file is read the way the compiler's first phases read it: backslash-newlines are
spliced, then comments and string/character literals are blanked (keeping newlines,
so line numbers stay right). #include lines are checked on the text with comments
removed but strings kept (the header name is a string); every other rule sees code
only, so a forbidden word in a comment or a string is no violation.
"""
from __future__ import annotations

import re
from dataclasses import dataclass

from grader.results import Violation
from grader.rubric import ForbiddenRubric


@dataclass
class Stripped:
    code: str           # comments and literals blanked
    no_comments: str    # comments blanked, literals kept
    origin: list[int]   # origin[i]: index in the original text of character i
    original: str

    def line_of(self, index: int) -> int:
        if not self.origin:
            return 1
        pos = self.origin[min(index, len(self.origin) - 1)]
        return self.original.count("\n", 0, pos) + 1

    def source_line(self, line: int) -> str:
        lines = self.original.splitlines()
        return lines[line - 1].strip()[:160] if 0 < line <= len(lines) else ""


_RAW_PREFIX = re.compile(r'(?:u8|u|U|L)?R"([^()\\\s]{0,16})\(')


def _splice(text: str) -> tuple[str, list[int]]:
    out: list[str] = []
    origin: list[int] = []
    i = 0
    n = len(text)
    while i < n:
        if text[i] == "\\":
            j = i + 1
            while j < n and text[j] in " \t":  # compilers accept trailing blanks too
                j += 1
            if j < n and text[j] == "\n":
                i = j + 1
                continue
            if j + 1 < n and text[j] == "\r" and text[j + 1] == "\n":
                i = j + 2
                continue
        out.append(text[i])
        origin.append(i)
        i += 1
    return "".join(out), origin


def same_code(a: str, b: str) -> bool:
    """Whether two sources differ only in comments and spacing (a placeholder with its
    comments edited is still the placeholder)."""
    def fingerprint(text: str) -> str:
        return "".join(strip_source(text).no_comments.split())
    return a == b or fingerprint(a) == fingerprint(b)


def strip_source(text: str) -> Stripped:
    """Blanks comments and literals (see the module doc)."""
    text = text.replace("\r\n", "\n")
    spliced, origin = _splice(text)
    code = list(spliced)
    keep = list(spliced)
    n = len(spliced)
    i = 0

    def blank(buf: list[str], start: int, end: int) -> None:
        for k in range(start, min(end, n)):
            if buf[k] != "\n":
                buf[k] = " "

    while i < n:
        c = spliced[i]
        nxt = spliced[i + 1] if i + 1 < n else ""
        if c == "/" and nxt == "/":
            end = spliced.find("\n", i)
            end = n if end < 0 else end
            blank(code, i, end)
            blank(keep, i, end)
            i = end
        elif c == "/" and nxt == "*":
            end = spliced.find("*/", i + 2)
            end = n if end < 0 else end + 2
            blank(code, i, end)
            blank(keep, i, end)
            code[i] = keep[i] = " "  # a comment is one space
            i = end
        elif c == '"' or (c in "uULR" and _RAW_PREFIX.match(spliced, i)
                           and (i == 0 or not (spliced[i - 1].isalnum() or spliced[i - 1] == "_"))):
            m = _RAW_PREFIX.match(spliced, i)
            if m:
                close = ")" + m.group(1) + '"'
                end = spliced.find(close, m.end())
                end = n if end < 0 else end + len(close)
                blank(code, m.end(), end - len(close))
                i = end
            else:
                j = i + 1
                while j < n and spliced[j] != '"' and spliced[j] != "\n":
                    j += 2 if spliced[j] == "\\" else 1
                blank(code, i + 1, j)
                i = j + 1
        elif c == "'":
            # A digit separator (1'000'000) is no character literal.
            k = i - 1
            while k >= 0 and (spliced[k].isalnum() or spliced[k] in "_.'"):
                k -= 1
            if k + 1 < i and spliced[k + 1].isdigit():
                i += 1
                continue
            j = i + 1
            while j < n and spliced[j] != "'" and spliced[j] != "\n":
                j += 2 if spliced[j] == "\\" else 1
            blank(code, i + 1, j)
            i = j + 1
        else:
            i += 1
    return Stripped("".join(code), "".join(keep), origin, text)


_DIRECTIVE = re.compile(r"^[ \t]*#[ \t]*([A-Za-z_]\w*)?(.*)$", re.M)
_INCLUDE_OK = re.compile(r'"(harness|student)/[A-Za-z0-9_]+\.(h|cuh|hpp)"|<([A-Za-z0-9_]+)>')


def scan(text: str, path: str, rules: ForbiddenRubric) -> list[Violation]:
    """Every violation of the rules in one student file."""
    s = strip_source(text)
    found: list[Violation] = []

    def add(index: int, rule: str, message: str) -> None:
        line = s.line_of(index)
        if not any(v.line == line and v.rule == rule for v in found):
            found.append(Violation(path, line, rule, message, s.source_line(line)))

    for m in _DIRECTIVE.finditer(s.code):
        directive = m.group(1) or ""
        if not directive:
            continue
        if directive == "include":
            # The header name, from the text that still has its string literals.
            argument = s.no_comments[m.start(2):m.end(2)].strip()
            ok = _INCLUDE_OK.fullmatch(argument)
            if not ok or (ok.group(3) and ok.group(3) not in rules.allowed_system_includes):
                allowed = ", ".join(f"<{h}>" for h in rules.allowed_system_includes)
                add(m.start(), "include",
                    f"#include {argument or '(macro)'}: only \"harness/...\" and \"student/...\" "
                    f"headers{' and ' + allowed if allowed else ''} may be included")
        elif directive not in rules.allowed_directives:
            add(m.start(), "directive", f"the preprocessor directive #{directive} is not allowed")
    for rule in rules.rules:
        for m in rule.pattern.finditer(s.code):
            add(m.start(), rule.name, rule.message)
    found.sort(key=lambda v: (v.line, v.rule))
    return found
