"""How a rubric setting is declared: once, with its default, meaning and place
(grader/config/rubric.py reads and documents every one)."""
from __future__ import annotations

from dataclasses import field
from typing import Any


def setting(default: Any, doc: str, *, table: str = "", key: str = "", minimum: float | None = None,
            choices: tuple[str, ...] = ()) -> Any:
    """A rubric setting: its default, what it means, and where it is read from
    ([table] key; default: the dataclass's table and the field's name)."""
    return field(default=default, metadata={"doc": doc, "table": table, "key": key,
                                            "minimum": minimum, "choices": choices})
