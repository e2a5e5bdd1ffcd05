"""scanlab's autograder: grades submissions of the reduce/scan assignment.

Run it as `python3 -m grader` from the repository root (see grader/README.md); installed
(`pip install .`), this folder is the package `scanlab_grader` and the command
`scanlab-grade`. Every import inside it is relative, so both names work. The folders:

  cli, entry   the command line (entry finds the checkout first); exits: exit statuses
  results      the model every report is written from (grading/assemble makes it)
  config/      the manifest, the rubric and its cases (data/*.toml)
  grading/     one submission, stage by stage (pipeline runs them in a session):
               collect, plan, checks/ (code rules, compiled code, sanitizer), build,
               prebuilt, sandbox, checking, correctness/ (cases, applications),
               timing, score; each returns its outcome, assemble makes the result
  report/      terminal, JSON, Gradescope, JUnit, Markdown, HTML, the class's files
  classroom/   a whole class: batch, roster, canvas, similarity, slurm
  machine/     what this machine offers, its CPU and GPU slots, doctor
  gradescope/  the Gradescope autograder zip and its scripts
"""
from __future__ import annotations

import os
from pathlib import Path

# The one place the version is written (pyproject.toml reads it from here).
__version__ = "1.1"


# How a person runs this grader where it runs now (what it prints to copy): the installed
# command, or the module from a checkout; MODULE is what `python -m` runs (job scripts).
MODULE = __name__
COMMAND = "scanlab-grade" if MODULE == "scanlab_grader" else "python3 -m grader"
# The course an installed package carries (pyproject.toml: scanlab_grader.course).
CARRIED = Path(__file__).resolve().parent / "course"


def is_course(folder: Path) -> bool:
    return (folder / "data" / "assignment.toml").is_file() and (folder / "handout").is_dir()


def _find_root() -> Path:
    """The checkout the grader grades with: it holds handout/, solution/student/ and
    data/. $SCANLAB_ROOT when set; else the folder above this package (a checkout, or
    Gradescope's autograder source); else, for an installed `scanlab-grade`, the
    current folder or one above it (a checkout, or a course folder `scanlab-grade init`
    made); else the course the installed package carries."""
    here = Path(__file__).resolve().parent.parent
    env = os.environ.get("SCANLAB_ROOT")
    cwd = Path.cwd()
    for folder in ([Path(env)] if env else []) + [here, cwd, *cwd.parents, CARRIED]:
        if is_course(folder):
            return folder.resolve()
    return here  # what is missing there is named where it is read


REPO_ROOT = _find_root()
