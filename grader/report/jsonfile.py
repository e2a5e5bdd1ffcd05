"""The grader's own results JSON: everything, hidden cases included (for instructors)."""
from __future__ import annotations

import json
from pathlib import Path

from ..results import SubmissionResult, from_jsonable, to_jsonable

FORMAT = "scanlab-grader-results"
FORMAT_VERSION = 1


def document(result: SubmissionResult) -> dict:
    data = to_jsonable(result)
    data["performance_measured"] = result.performance_measured
    return {"format": FORMAT, "format_version": FORMAT_VERSION, **data}


def write(result: SubmissionResult, path: Path) -> None:
    """Written to a temporary file first, then renamed: never half a file."""
    tmp = path.with_name(path.name + ".tmp")
    tmp.write_text(json.dumps(document(result), indent=2, allow_nan=False) + "\n", encoding="utf-8")
    tmp.replace(path)


def read(path: Path) -> SubmissionResult:
    """A result written by write() (a batch resumed). Raises ValueError for anything else."""
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as e:
        raise ValueError(f"{path}: {e}") from None
    if not isinstance(data, dict) or data.get("format") != FORMAT or data.get("format_version") != FORMAT_VERSION:
        raise ValueError(f"{path}: not a {FORMAT} file of version {FORMAT_VERSION}")
    try:
        result: SubmissionResult = from_jsonable(SubmissionResult, data)
    except (TypeError, ValueError, KeyError, StopIteration) as e:
        raise ValueError(f"{path}: {e}") from None
    return result
