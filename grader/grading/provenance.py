"""What a grade was made with, besides the rubric and the seeds: the grader's version, the
checkout's commit (where it is a git checkout) and a content digest of the grader's code,
of the harness the submissions are built with (the handout less the student's files, and
the contract) and of the reference solution. Stored in every results.json; a resumed
batch regrades a result whose digests differ from the grader's now (grader/README.md)."""
from __future__ import annotations

import hashlib
import subprocess
from pathlib import Path

from .. import __version__
from ..results import Provenance
from .build_types import Layout
from .contract import source as contract_source

GRADER_DIR = Path(__file__).resolve().parent.parent


def tree_digest(root: Path, suffixes: tuple[str, ...] = (), skip: tuple[str, ...] = ()) -> str:
    """A digest of the files under `root` (those ending in `suffixes`, where given), by
    their relative paths and bytes; build folders, caches and `skip`ped top folders left out."""
    h = hashlib.sha256()
    if not root.is_dir():
        return ""
    for p in sorted(root.rglob("*")):
        rel = p.relative_to(root)
        if (not p.is_file() or rel.parts[0] in skip
                or any(part.startswith(("build", "__pycache__", ".")) for part in rel.parts)
                or (suffixes and not p.name.endswith(suffixes))):
            continue
        h.update(rel.as_posix().encode() + b"\0" + p.read_bytes() + b"\0")
    return h.hexdigest()[:16]


def git_commit(root: Path) -> str:
    """The checkout's commit, with "+changes" where its tracked files differ from it; "" where
    it is not a git checkout (an installed grader, Gradescope's copy)."""
    try:
        head = subprocess.run(["git", "-C", str(root), "rev-parse", "HEAD"], capture_output=True,
                              text=True, timeout=20)
        if head.returncode != 0:
            return ""
        dirty = subprocess.run(["git", "-C", str(root), "status", "--porcelain", "--untracked-files=no"],
                               capture_output=True, text=True, timeout=20)
    except (OSError, subprocess.TimeoutExpired):
        return ""
    return head.stdout.strip() + ("+changes" if dirty.stdout.strip() else "")


def provenance(layout: Layout) -> Provenance:
    """This grader's provenance (computed once per session: a few hundred small files)."""
    harness = tree_digest(layout.handout, skip=("student",)) + tree_digest(contract_source(layout.root))
    return Provenance(__version__, git_commit(layout.root), tree_digest(GRADER_DIR, (".py",)),
                      hashlib.sha256(harness.encode()).hexdigest()[:16], tree_digest(layout.solution))
