"""A rubric file read with its `base` chain: each file's tables merged over its base's
(tables key by key; arrays and values replace; [[task]] tables by task number), a relative
`cases` path made absolute. grader/config/rubric.py makes the Rubric from the result."""
from __future__ import annotations

from pathlib import Path
from typing import Any

from .toml_table import read_toml


class RubricError(ValueError):
    """A rubric that cannot be used, with the reason."""


def _merge_tasks(base: list[Any], over: list[Any]) -> list[Any]:
    """[[task]] tables merged by number: a task the over file names is the base's with its
    keys replaced (a new number is added); the tasks it leaves out are the base's."""
    out = list(base)
    at = {t.get("number"): i for i, t in enumerate(out) if isinstance(t, dict)}
    for task in over:
        number = task.get("number") if isinstance(task, dict) else None
        if number in at and number is not None:
            out[at[number]] = _merge(out[at[number]], task)
        else:
            out.append(task)
    return out


def _merge(base: dict[str, Any], over: dict[str, Any], top: bool = False) -> dict[str, Any]:
    out = dict(base)
    for key, value in over.items():
        if isinstance(value, dict) and isinstance(out.get(key), dict):
            out[key] = _merge(out[key], value)
        elif top and key == "task" and isinstance(value, list) and isinstance(out.get(key), list):
            out[key] = _merge_tasks(out[key], value)
        else:
            out[key] = value
    return out


def read_rubric_toml(path: Path, chain: tuple[Path, ...] = ()) -> tuple[dict[str, Any], tuple[Path, ...]]:
    path = path.resolve()
    if path in chain:
        raise RubricError(f"{path}: `base` refers back to itself")
    data = read_toml(path, "rubric", RubricError)
    # A relative `cases` path is relative to the file that names it.
    rubric_table = data.get("rubric")
    if isinstance(rubric_table, dict) and isinstance(rubric_table.get("cases"), str):
        rubric_table["cases"] = str((path.parent / rubric_table["cases"]).resolve())
    base = data.pop("base", None)
    if base is None:
        return data, (path,)
    if not isinstance(base, str):
        raise RubricError(f"{path}: `base` must be a path")
    base_data, files = read_rubric_toml((path.parent / base), chain + (path,))
    return _merge(base_data, data, top=True), (path,) + files
