"""A student file read the way the compiler's first phases read it, for what is not a
rule: whether a file is still the handout's placeholder up to comments and spacing
(`same_code`, so an untouched bonus is not even built) and where a symbol's name occurs
(grader/grading/checks/compiled.py places its findings with it). The code rules themselves run on the
compiler's own preprocessed unit (handout/tools/code_rules.py), never on this.

Backslash-newlines are spliced, then comments and string/character literals are blanked
(keeping newlines, so line numbers stay right).
"""
from __future__ import annotations

import re
from dataclasses import dataclass



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
