"""A student file read the way the compiler's first phases read it, for what is not a
rule: whether a file is still the handout's placeholder up to comments and spacing
(`same_code`, so an untouched bonus is not even built) and where a symbol's name occurs
(grader/grading/checks/compiled.py places its findings with it). The code rules themselves
run on the compiler's own preprocessed unit (grader/rules/code_rules.py), never on this.

Backslash-newlines are spliced, then comments and string/character literals are blanked
(keeping newlines, so line numbers stay right), by the code rules' one C++ lexer
(grader/rules/cpp_text.py).
"""
from __future__ import annotations

from dataclasses import dataclass

from ...rules import cpp_text


@dataclass(frozen=True)
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


def same_code(a: str, b: str) -> bool:
    """Whether two sources differ only in comments and spacing (a placeholder with its
    comments edited is still the placeholder)."""
    def fingerprint(text: str) -> str:
        return "".join(strip_source(text).no_comments.split())
    return a == b or fingerprint(a) == fingerprint(b)


def strip_source(text: str) -> Stripped:
    """Blanks comments and literals (see the module doc)."""
    text = text.replace("\r\n", "\n")
    spliced, origin = cpp_text.splice(text)
    blanked = cpp_text.blank(spliced)
    return Stripped(blanked.code, blanked.no_comments, origin, text)
