"""The grader's small caches on disk (the reference's baselines, its Nsight Compute figures):
a JSON object read whole and replaced whole, so a reader never sees half a file. A cache that
cannot be read is empty; one that cannot be written is measured again next time."""
from __future__ import annotations

import json
import os
import tempfile
from pathlib import Path


def read_object(path: Path) -> dict:
    """The JSON object in `path`; {} when it is missing, unreadable or not an object."""
    try:
        data = json.loads(path.read_text())
    except (OSError, ValueError):
        return {}
    return data if isinstance(data, dict) else {}


def replace_object(path: Path, data: dict, prefix: str) -> None:
    """Writes `data` to a temporary file beside `path` and renames it over `path`."""
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(prefix=prefix, dir=path.parent)
        with os.fdopen(fd, "w") as f:
            json.dump(data, f, indent=1, sort_keys=True)
        os.replace(tmp, path)
    except OSError:
        pass
