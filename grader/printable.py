"""Text that is safe to show: the one escaping function of every report and every line
the grader prints.

Compiler messages, the student's source lines, file names and a program's output are
untrusted text. A control character in them (a terminal escape sequence that clears
the screen or sets the window's title, a carriage return that overwrites a line, a C1
code that some terminals read as ESC [) must never reach a terminal, a text, Markdown,
HTML, JUnit or JSON report raw: each is shown as `\\xNN` instead. Newline and tab
stay. The escape is idempotent (a backslash is left alone), so text escaped at its
source and again at a report is escaped once.
"""
from __future__ import annotations

import dataclasses
import re
from typing import Any, TypeVar

# C0 but newline and tab, DEL, C1.
CONTROL = re.compile(r"[\x00-\x08\x0b-\x1f\x7f-\x9f]")

T = TypeVar("T")


def printable(text: str) -> str:
    """`text` with every control character but newline and tab shown as `\\xNN` (a CRLF
    line end is a line end)."""
    if not CONTROL.search(text):
        return text
    return CONTROL.sub(lambda m: f"\\x{ord(m.group()):02x}", text.replace("\r\n", "\n"))


def printable_tree(value: T) -> T:
    """`value` with printable() applied to every string in it: through dataclasses
    (frozen or not), lists, tuples, sets and dicts (keys too). Other values are kept;
    what needs no change is returned as it is."""
    return _tree(value)


def _tree(value: Any) -> Any:
    if isinstance(value, str):
        return printable(value)
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        changed = {}
        for f in dataclasses.fields(value):
            if not f.init:
                continue
            old = getattr(value, f.name)
            new = _tree(old)
            if new is not old:
                changed[f.name] = new
        return dataclasses.replace(value, **changed) if changed else value
    if isinstance(value, (list, tuple, set, frozenset)):
        items = [_tree(v) for v in value]
        if all(a is b for a, b in zip(items, value)):
            return value
        return type(value)(items) if not hasattr(value, "_fields") else type(value)(*items)
    if isinstance(value, dict):
        pairs = [(_tree(k), _tree(v)) for k, v in value.items()]
        if all(k is a and v is b for (k, v), (a, b) in zip(pairs, value.items())):
            return value
        return type(value)(pairs)
    return value
