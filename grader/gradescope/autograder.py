"""`gradescope-zip`: the Gradescope autograder zip.

Gradescope machines have no GPU: the autograder grades correctness with the CPU
emulator, and reports performance as not measured (performance is graded on the
course's GPU machine with `batch`). The zip holds setup.sh and run_autograder at its
root, and the grader with what it needs (handout/, solution/student/, data/) under
source/ layout: Gradescope unpacks the zip into /autograder/source.
"""
from __future__ import annotations

import os
import stat
import random
import zipfile
from pathlib import Path

from ..grading.build_types import Layout

TEMPLATES = Path(__file__).resolve().parent   # setup.sh and run_autograder, beside this file
# The grader's own folder (grader/ in a checkout, scanlab_grader/ installed): grader/ in the
# zip, less the course an installed package carries (added from the layout as the rest is).
PACKAGE = TEMPLATES.parent
SKIP_DIRS = {"__pycache__", ".pytest_cache", ".git"}


def _add_tree(z: zipfile.ZipFile, root: Path, base: Path, prefix: str = "") -> None:
    for dirpath, dirnames, filenames in os.walk(root):
        dirnames[:] = sorted(d for d in dirnames if d not in SKIP_DIRS and not d.startswith("build")
                             and Path(dirpath, d) != PACKAGE / "course")
        for name in sorted(filenames):
            p = Path(dirpath, name)
            if p.is_symlink() or name.endswith(".pyc"):
                continue
            _add_file(z, p, prefix + p.relative_to(base).as_posix())


def _add_file(z: zipfile.ZipFile, path: Path, arcname: str, executable: bool = False) -> None:
    info = zipfile.ZipInfo(arcname, date_time=(2024, 1, 1, 0, 0, 0))
    mode = 0o755 if executable or path.stat().st_mode & stat.S_IXUSR else 0o644
    info.external_attr = (stat.S_IFREG | mode) << 16
    info.compress_type = zipfile.ZIP_DEFLATED
    z.writestr(info, path.read_bytes())


DRAW_SEED_FILE = "draw-seed"   # in the zip's root (/autograder/source/ on Gradescope)


def build_zip(layout: Layout, out: Path, rubric: Path, draw_seed: int | None = None) -> Path:
    """The autograder zip. It holds the class's secret draw seed (`draw_seed`, else a fresh
    one) in DRAW_SEED_FILE: every student's grade on Gradescope faces the same drawn cases."""
    out.parent.mkdir(parents=True, exist_ok=True)
    tmp = out.with_suffix(".zip.tmp")
    seed = draw_seed if draw_seed is not None else random.SystemRandom().randrange(1, 2**63)
    with zipfile.ZipFile(tmp, "w") as z:
        z.writestr(DRAW_SEED_FILE, f"{seed}\n")
        _add_file(z, TEMPLATES / "setup.sh", "setup.sh", executable=True)
        _add_file(z, TEMPLATES / "run_autograder", "run_autograder", executable=True)
        _add_tree(z, PACKAGE, PACKAGE, "grader/")
        _add_tree(z, layout.handout, layout.root)
        _add_tree(z, layout.solution, layout.root)
        _add_tree(z, layout.data, layout.root)
        if rubric.resolve() != (layout.data / "rubric.toml").resolve():
            _add_file(z, rubric, "data/rubric.toml")
    tmp.replace(out)
    return out
