"""C++ text as the compiler's first phases read it: the one lexer of the code rules
(code_rules.py, on the preprocessed unit: literals blanked) and of the grader's reading
of a student file (grader/grading/checks/forbidden.py: splices, comments and literals).

`splice` joins backslash-newlines; `blank` blanks comments (when asked) and string and
character literals, keeping newlines and lengths, so offsets and line numbers stay right.

Standard library only (Python 3.9+), like code_rules.py beside it.
"""
from __future__ import annotations

import re
from dataclasses import dataclass

_RAW_PREFIX = re.compile(r'(?:u8|u|U|L)?R"([^()\\\s]{0,16})\(')


def splice(text: str) -> tuple[str, list[int]]:
    """Backslash-newlines removed (compilers accept blanks between the two too), and
    origin[i]: the index in `text` of the spliced text's character i."""
    out: list[str] = []
    origin: list[int] = []
    i = 0
    n = len(text)
    while i < n:
        if text[i] == "\\":
            j = i + 1
            while j < n and text[j] in " \t":
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


@dataclass(frozen=True)
class Blanked:
    code: str          # comments and literals blanked
    no_comments: str   # comments blanked, literals kept


def _literal_end(text: str, i: int) -> tuple[int, int, int] | None:
    """The literal that starts at `i`: (start of its contents, end of its contents, end of
    the literal), or None where none starts there. A digit separator (1'000'000) is no
    character literal."""
    n = len(text)
    c = text[i]
    if c in "uULR" and (i == 0 or not (text[i - 1].isalnum() or text[i - 1] == "_")):
        m = _RAW_PREFIX.match(text, i)
        if m:
            close = ")" + m.group(1) + '"'
            end = text.find(close, m.end())
            end = n if end < 0 else end + len(close)
            return m.end(), end - len(close), end
    if c == "'":
        k = i - 1
        while k >= 0 and (text[k].isalnum() or text[k] in "_.'"):
            k -= 1
        if k + 1 < i and text[k + 1].isdigit():
            return None
    if c not in "\"'":
        return None
    j = i + 1
    while j < n and text[j] != c and text[j] != "\n":
        j += 2 if text[j] == "\\" else 1
    return i + 1, j, j + 1


def blank(text: str, comments: bool = True) -> Blanked:
    """`text` with its string and character literals blanked (`code`) and, when `comments`,
    its comments blanked in both (a preprocessed unit has none left to blank)."""
    code = list(text)
    keep = list(text)
    n = len(text)

    def spaces(buf: list[str], start: int, end: int) -> None:
        for k in range(start, min(end, n)):
            if buf[k] != "\n":
                buf[k] = " "

    i = 0
    while i < n:
        if comments and text.startswith(("//", "/*"), i):
            end = text.find("\n", i) if text[i + 1] == "/" else text.find("*/", i + 2)
            end = n if end < 0 else end + (2 if text[i + 1] == "*" else 0)
            spaces(code, i, end)
            spaces(keep, i, end)
            i = end
            continue
        literal = _literal_end(text, i)
        if literal is None:
            i += 1
            continue
        start, stop, i = literal
        spaces(code, start, stop)
    return Blanked("".join(code), "".join(keep))
