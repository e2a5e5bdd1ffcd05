"""Every exit status of every command, in one table: `--help` prints it, grader/README.md
shows it (tests/grader/test_cli.py keeps the two in step)."""
from __future__ import annotations

import textwrap

OK = 0
MISSING = 1        # merge: some submissions have no result yet; doctor: this machine cannot grade
GRADER = 2         # the grader could not run (arguments, setup, rubric, roster, nothing to grade)
INTERRUPTED = 130  # Ctrl-C (128 + SIGINT, as shells report it)

# (status, commands, meaning)
TABLE: list[tuple[int, str, str]] = [
    (OK, "every command", "done: the reports were written, whatever the scores (grade, batch, "
     "rescore, merge, similarity), the jobs submitted (slurm), the machine can grade (doctor)"),
    (MISSING, "merge (the merge job of slurm)", "some submissions have no result of this batch yet: "
     "nothing written, they are named with the --resubmit command"),
    (MISSING, "doctor", "this machine cannot grade (no C++ compiler, CMake or Boost.Context)"),
    (GRADER, "every command", "the grader could not run: bad arguments, a submission or folder that "
     "does not exist, a batch folder with no submission, a broken rubric, roster or --due, nothing "
     "to --resume, no compiler, the reference does not build, sbatch refused a job, copydetect "
     "missing (similarity, batch --similarity and slurm --similarity: before anything is graded)"),
    (GRADER, "rescore", "the rubric changes what is measured (cases, timed sizes, rules, limits), or a "
     "submission has no stored result of the batch: nothing written, the batch --resume command said"),
    (INTERRUPTED, "batch", "Ctrl-C: no new submission started, the ones being graded finished and "
     "written with the class's files (marked interrupted; where --out held a complete class, those "
     "files are kept whole and this run's go to in-progress/); a second Ctrl-C quits at once and "
     "loses those; `batch --resume` grades the rest"),
    (INTERRUPTED, "every other command", "Ctrl-C: stopped, nothing more written"),
]


def text() -> str:
    """The table for --help."""
    lines = ["exit status:"]
    for status, commands, meaning in TABLE:
        lines += textwrap.wrap(f"{commands}: {meaning}", 88, initial_indent=f"  {status:<5}",
                               subsequent_indent=" " * 7)
    return "\n".join(lines)


def markdown() -> str:
    """The table for grader/README.md."""
    rows = ["| status | commands | meaning |", "| --- | --- | --- |"]
    rows += [f"| {status} | {commands} | {meaning} |" for status, commands, meaning in TABLE]
    return "\n".join(rows) + "\n"
