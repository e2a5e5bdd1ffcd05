"""The report folder of one submission: every format, written from one result."""
from __future__ import annotations

import re
from pathlib import Path

from . import feedback, gradescope, html, jsonfile, junit, leaderboard, markdown, terminal
from ..printable import printable_tree
from .late import lateness, penalised
from ..results import SubmissionResult
from ..config.rubric import Rubric

REPORT_FILES = {"results.json": "the grader's complete results (hidden cases included)",
                "gradescope-results.json": "Gradescope's results.json",
                "junit.xml": "JUnit XML", "summary.md": "Markdown summary",
                "report.html": "the HTML page (tables and the performance picture)",
                "report.txt": "the terminal report",
                "feedback/report.txt": "the report to hand the student (no reference comparison, "
                                       "secret seed or instructor path)",
                "feedback/report.html": "the HTML page to hand the student, likewise"}


def safe_name(name: str) -> str:
    return re.sub(r"[^A-Za-z0-9._-]+", "_", name).strip("._") or "submission"


def late_line(result: SubmissionResult, rubric: Rubric) -> str:
    """The report's last line where the submission was late: how late, and the score the
    `[late]` policy leaves (the upload files carry that one)."""
    late = lateness(result.identity, rubric.late)
    if not late.late:
        return ""
    after = penalised(result.score, result.max_score, late)
    return f"Late work: {late.words()}; score after it {after or 0.0:.2f} / {result.max_score:g}\n"


def write_reports(result: SubmissionResult, rubric: Rubric, out: Path,
                  gradescope_path: Path | None = None, reveal_hidden: bool = False) -> None:
    # (The model is printable already, grader/grading/assemble.py; a result read back
    # from a batch's results.json is too. Once more here: no report holds a raw control
    # character, whoever made the result.)
    result = printable_tree(result)
    out.mkdir(parents=True, exist_ok=True)
    board = leaderboard.entries(result, rubric)
    gradescope.write(result, out / "gradescope-results.json", rubric.gradescope.visibility,
                     rubric.gradescope.stdout_visibility, board)
    if gradescope_path is not None:
        gradescope_path.parent.mkdir(parents=True, exist_ok=True)
        gradescope.write(result, gradescope_path, rubric.gradescope.visibility,
                         rubric.gradescope.stdout_visibility, board)
    junit.write(result, out / "junit.xml")
    markdown.write(result, out / "summary.md")
    html.write(result, out / "report.html")
    (out / "report.txt").write_text(terminal.render(result, reveal_hidden) + late_line(result, rubric),
                                    encoding="utf-8")
    feedback.write(result, rubric, out, late_line(result, rubric))   # what students may be handed
    # Last, and whole or not at all: a resumed batch takes a folder with results.json as done.
    jsonfile.write(result, out / "results.json")
