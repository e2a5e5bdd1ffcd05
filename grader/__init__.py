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

from pathlib import Path

__version__ = "1.0"

# The repository (or Gradescope autograder source) the grader belongs to: it holds
# handout/, solution/student/ and data/.
REPO_ROOT = Path(__file__).resolve().parent.parent
