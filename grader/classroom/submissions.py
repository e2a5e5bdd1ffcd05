"""The submissions of a class folder: what counts as one (a subfolder or an archive),
where the class really is (a Gradescope export's root, or Canvas's flat bulk download
gathered per student), and each submission's report folder name. `batch`, `similarity`
and the Slurm plan find a class the same way."""
from __future__ import annotations

from pathlib import Path
from typing import Callable

from . import canvas
from ..config.rubric import Rubric
from ..grading.collect import is_archive, submission_name
from ..report.folder import safe_name
from .roster import METADATA_FILE, export_root


def find_submissions(folder: Path) -> tuple[list[Path], list[str]]:
    """The submissions in a batch folder, and what was skipped there."""
    entries: list[Path] = []
    skipped: list[str] = []
    for p in sorted(folder.iterdir()):
        if p.name.startswith(".") or p.name == "__MACOSX" or p.name == METADATA_FILE:
            continue
        if p.is_symlink():
            skipped.append(f"{p.name}: a symbolic link")
        elif p.is_dir() or is_archive(p):
            entries.append(p)
        else:
            skipped.append(f"{p.name}: neither a folder nor an archive")
    return entries, skipped


def folder_names(entries: list[Path]) -> dict[Path, str]:
    """Each submission's report folder name: its name made safe, -2, -3... where two
    collide (in the order of the sorted entries, so a resumed batch finds the same)."""
    seen: dict[str, int] = {}
    out: dict[Path, str] = {}
    for e in sorted(entries):
        base = safe_name(submission_name(e))
        seen[base] = seen.get(base, 0) + 1
        out[e] = base if seen[base] == 1 else f"{base}-{seen[base]}"
    return out


def class_folder(folder: Path, rubric: Rubric, out: Path, say: Callable[[str], None]) -> Path:
    """The folder to grade: a Gradescope export's root, or Canvas's flat bulk download
    (and loose student files) gathered per student under `out` (grader/classroom/canvas.py)."""
    folder = export_root(folder)
    if canvas.is_flat(folder, rubric.submitted_files):
        staged = canvas.stage(folder, rubric.submitted_files, out)
        say(f"{folder}: student files laid out flat (Canvas's bulk download, or loose files): "
            f"gathered per student into {staged}")
        return staged
    return folder
