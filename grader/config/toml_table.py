"""Typed access to one table of a TOML file, naming the table and key in errors.

The rubric and the assignment manifest read their tables through it; each raises
its own error class (`error`)."""
from __future__ import annotations

import tomllib
from dataclasses import field
from pathlib import Path
from typing import Any


def setting(default: Any, doc: str, *, table: str = "", key: str = "", minimum: float | None = None,
            choices: tuple[str, ...] = ()) -> Any:
    """A rubric setting: its default, what it means, and where it is read from
    ([table] key; default: the dataclass's table and the field's name)."""
    return field(default=default, metadata={"doc": doc, "table": table, "key": key,
                                            "minimum": minimum, "choices": choices})


def read_toml(path: Path, what: str, error: type[Exception]) -> dict[str, Any]:
    """The tables of a TOML file; `error` says why it cannot be read (naming `what`)."""
    try:
        return tomllib.loads(path.read_text(encoding="utf-8"))
    except OSError as e:
        raise error(f"cannot read the {what} {path}: {e.strerror}") from None
    except tomllib.TOMLDecodeError as e:
        raise error(f"{path}: not valid TOML: {e}") from None


class TomlTable:
    error: type[Exception] = ValueError

    def __init__(self, data: Any, where: str):
        if not isinstance(data, dict):
            raise self.error(f"{where}: expected a table")
        self.data: dict[str, Any] = data
        self.where = where

    def get(self, key: str, kind: type | tuple[type, ...], default: Any = None) -> Any:
        """The value of `key`, of type `kind` (an int is a float too); `default` when it
        is left out (None: the key is required)."""
        if key not in self.data:
            if default is None:
                raise self.error(f"{self.where}: `{key}` is missing")
            return default
        value = self.data[key]
        if kind is float and isinstance(value, int) and not isinstance(value, bool):
            value = float(value)
        if not isinstance(value, kind) or (isinstance(value, bool) and kind is not bool):
            raise self.error(f"{self.where}: `{key}` = {value!r} has the wrong type")
        return value

    def number(self, key: str, default: float, minimum: float = 0.0) -> float:
        value = self.get(key, float, float(default))
        if value < minimum:
            raise self.error(f"{self.where}: `{key}` must be at least {minimum}")
        return value

    def integer(self, key: str, default: int, minimum: int = 0) -> int:
        value = self.get(key, int, default)
        if value < minimum:
            raise self.error(f"{self.where}: `{key}` must be at least {minimum}")
        return value

    def strings(self, key: str, default: tuple[str, ...] | None = None) -> tuple[str, ...]:
        value = self.get(key, list, None if default is None else list(default))
        if not all(isinstance(v, str) for v in value):
            raise self.error(f"{self.where}: `{key}` must be a list of strings")
        return tuple(value)

    def unknown(self, known: set[str]) -> None:
        """Refuses keys outside `known` (a misspelt key must not be ignored)."""
        extra = set(self.data) - known
        if extra:
            raise self.error(f"{self.where}: unknown key(s) {', '.join(sorted(extra))}")
