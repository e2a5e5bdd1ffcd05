"""The grader's own results JSON: everything, hidden cases included (for instructors)."""
from __future__ import annotations

import json
from pathlib import Path

from grader.results import SubmissionResult, to_jsonable

FORMAT = "scanlab-grader-results"
FORMAT_VERSION = 1


def document(result: SubmissionResult) -> dict:
    data = to_jsonable(result)
    data["performance_measured"] = result.performance_measured
    return {"format": FORMAT, "format_version": FORMAT_VERSION, **data}


def write(result: SubmissionResult, path: Path) -> None:
    path.write_text(json.dumps(document(result), indent=2, allow_nan=False) + "\n", encoding="utf-8")
