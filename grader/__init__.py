"""scanlab's autograder: grades submissions of the reduce/scan assignment.

Run it as `python3 -m grader` from the repository root (see grader/README.md).
The pipeline, one module per stage:

  rubric   data/rubric.toml and the [grade] cases of data/cases.toml
  collect  unpack a submission safely and find the student files in it
  forbidden  reject constructs the rubric forbids (CUB, asm, <<<, file access, ...)
  build    build the reference (cached) and the submission's variants from a
           pristine copy of the handout
  compiled what the compiler saw and made of a submission: the rules again over the
           preprocessed student unit, and its object's symbols (calls, state, overrides)
  run      sandboxed execution of untrusted programs (bubblewrap's jail, limits,
           scrubbed environment, unprivileged user)
  check    correctness cases: run the submission, verify with the trusted reference
  perf     interleaved timing against the reference on the GPU
  score    points from the rubric
  grade    the pipeline for one submission; batch: a folder of them
  report/  terminal, JSON, Gradescope, JUnit, Markdown and CSV output
"""
from __future__ import annotations

import os
from pathlib import Path

# The one place the version is written (pyproject.toml reads it from here).
__version__ = "1.1"


def _find_root() -> Path:
    """The checkout the grader grades with: it holds handout/, solution/student/ and
    data/. $SCANLAB_ROOT when set; else the folder above this package (a checkout, or
    Gradescope's autograder source); else, for an installed `scanlab-grade`, the
    current folder or one above it."""
    here = Path(__file__).resolve().parent.parent
    env = os.environ.get("SCANLAB_ROOT")
    cwd = Path.cwd()
    for folder in ([Path(env)] if env else []) + [here, cwd, *cwd.parents]:
        if (folder / "data" / "assignment.toml").is_file() and (folder / "handout").is_dir():
            return folder.resolve()
    return here  # what is missing there is named where it is read


REPO_ROOT = _find_root()
