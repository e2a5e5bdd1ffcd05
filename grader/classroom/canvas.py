"""Canvas's bulk download ("Download Submissions") and loose single files, as a class.

Canvas puts every file of every submission flat in one folder, each name prefixed with
the student: `lastfirst_12345_67890_scan.cuh` (the name as one lower-case word, Canvas's
user id, the file's attachment id, the name the student uploaded), `lastfirst_LATE_12345_
67890_scan.cuh` for a late one, and `scan-1.cuh`, `scan-2.cuh` where a student uploaded a
file of the same name again. A class folder may also hold a student's file on its own
(`alice_scan.cuh`, `alice-scan.cuh`: a name-prefixed student file).

`stage` gathers the files of each student into a folder of their own under the batch's
output folder (`canvas-submissions/lastfirst_12345/`, the suffixes taken off, the latest
upload kept), with the other entries of the class folder copied beside them, and
writes `.canvas-layout.json` there (each folder's Canvas user id and late flag), which
grader/classroom/roster.py matches against a Canvas gradebook export's ID column. The grader then
grades that folder like any class folder; what is staged again is the same bytes, so a
`--resume`d batch keeps its results.
"""
from __future__ import annotations

import json
import re
import shutil
from dataclasses import dataclass, field
from pathlib import Path

from ..grading.collect import ARCHIVE_SUFFIXES, is_archive, student_file_of
from ..results import Identity, Student

LAYOUT_FILE = ".canvas-layout.json"
STAGED = "canvas-submissions"
_CANVAS = re.compile(r"^(?P<who>[a-z0-9]+?)(?P<late>_late)?_(?P<user>\d+)_(?P<file>\d+)_(?P<name>.+)$",
                     re.IGNORECASE)
_RESUBMITTED = re.compile(r"^(?P<stem>.+?)-(?P<n>\d+)(?P<ext>\.[^.]+)$")


@dataclass
class Group:
    """The files of one student in a flat folder."""
    name: str                      # the staged folder's name
    user_id: str = ""              # Canvas's user id ("" for a loose file)
    late: bool | None = None
    files: dict[str, tuple[int, int, Path]] = field(default_factory=dict)  # name -> (upload, attachment, path)


def _plain_name(name: str, wanted: tuple[str, ...]) -> tuple[str, int]:
    """The file name the student uploaded, without Canvas's `-N` suffix, and N."""
    if name in wanted:
        return name, 0
    m = _RESUBMITTED.match(name)
    if m and m.group("stem") + m.group("ext") in wanted:
        return m.group("stem") + m.group("ext"), int(m.group("n"))
    return name, 0


def _loose(name: str, wanted: tuple[str, ...]) -> tuple[str, str] | None:
    """`alice_scan.cuh` -> ("alice", "scan.cuh"): a student file with a name before it."""
    w = student_file_of(name, wanted)
    return (name[: -len(w) - 1], w) if w and w != name else None


def groups(folder: Path, wanted: tuple[str, ...]) -> tuple[dict[str, Group], set[Path]]:
    """The flat files of `folder` grouped by student, and the files so taken."""
    found: dict[str, Group] = {}
    taken: set[Path] = set()
    for p in sorted(folder.iterdir()):
        if not p.is_file() or p.is_symlink() or p.name.startswith("."):
            continue
        m = _CANVAS.match(p.name)
        if m:
            key = f"{m.group('who').lower()}_{m.group('user')}"
            g = found.setdefault(key, Group(key, m.group("user")))
            if m.group("late"):
                g.late = True
            plain, upload = _plain_name(m.group("name"), wanted)
            attachment = int(m.group("file"))
        else:
            loose = _loose(p.name, wanted)
            if loose is None:
                continue
            key, plain = loose
            g = found.setdefault(key, Group(key))
            upload, attachment = 0, 0
        before = g.files.get(plain)
        if before is None or (upload, attachment) > before[:2]:
            g.files[plain] = (upload, attachment, p)
        taken.add(p)
    for g in found.values():
        if g.user_id and g.late is None:
            g.late = False
    return found, taken


def is_flat(folder: Path, wanted: tuple[str, ...]) -> bool:
    """Whether `folder` holds student files laid out flat (Canvas's or loose)."""
    return bool(groups(folder, wanted)[0])


def stage(folder: Path, wanted: tuple[str, ...], out: Path) -> Path:
    """The class folder with its flat files gathered per student (see the module doc):
    out/canvas-submissions/, made afresh. The other entries are linked there."""
    found, taken = groups(folder, wanted)
    target = out / STAGED
    if target.exists():
        shutil.rmtree(target)
    target.mkdir(parents=True)
    layout: dict[str, dict[str, object]] = {}
    for key, g in sorted(found.items()):
        only = next(iter(g.files.values()))[2] if len(g.files) == 1 else None
        if only is not None and is_archive(only):   # a zip uploaded as the submission
            suffix = next(s for s in ARCHIVE_SUFFIXES if only.name.lower().endswith(s))
            shutil.copyfile(only, target / (key + suffix))
        else:
            sub = target / key
            sub.mkdir()
            for plain, (_, _, path) in sorted(g.files.items()):
                shutil.copyfile(path, sub / plain)
        layout[key] = {"user_id": g.user_id, "late": g.late}
    for p in sorted(folder.iterdir()):   # the class's other entries, as they are
        if p in taken or p.name.startswith(".") or p.is_symlink() or (target / p.name).exists():
            continue
        if p.is_dir():
            shutil.copytree(p, target / p.name, symlinks=True)
        else:
            shutil.copyfile(p, target / p.name)
    (target / LAYOUT_FILE).write_text(json.dumps(layout, indent=2, sort_keys=True) + "\n", encoding="utf-8")
    return target


def read_layout(folder: Path) -> dict[str, Identity]:
    """The identities a staged folder's file names gave (empty where none was staged)."""
    try:
        data = json.loads((folder / LAYOUT_FILE).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}
    out: dict[str, Identity] = {}
    for name, g in data.items() if isinstance(data, dict) else []:
        user = str(g.get("user_id", "")) if isinstance(g, dict) else ""
        late = g.get("late") if isinstance(g, dict) else None
        out[name] = Identity((Student(name=name, canvas_id=user),) if user else (),
                             late=late if isinstance(late, bool) else None)
    return out
