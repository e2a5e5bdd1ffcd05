"""Feedback students can be handed (grader/README.md, "Feedback for students").

Each submission's report folder gets `feedback/report.txt` and `feedback/report.html`:
the instructor's report less what is the instructor's alone (the comparison with the
reference solution, the secret seeds, the instructor's reproduce command), with every
absolute path shortened to what the student knows (`./build/scanlab-emu`, the file's
name). The class gets `feedback-comments.csv`: per student the LMS's ids, the score after
the late penalty and one comment in the students' words, to paste or upload as the
submission's comment, with the feedback file to attach.
"""
from __future__ import annotations

import csv
import dataclasses
import io
import re
from pathlib import Path

from . import html, problems, terminal
from .late import lateness
from ..config.rubric import Rubric
from ..results import SubmissionResult

FOLDER = "feedback"
COMMENTS = "feedback-comments.csv"
# What a student runs in the handout to see the grade's visible part again.
STUDENT_COMMAND = "make grade-local (in your handout folder)"
# An absolute path: its build/ tail (a driver the student has too), else its last part.
_BUILD_PATH = re.compile(r"(?<![\w.])/(?:[\w.+-]+/)+(build[\w.-]*/[\w.-]+)")
_ABSOLUTE = re.compile(r"(?<![\w.])/(?:[\w.+@-]+/)+([\w.+@-]+)")


def student_safe(text: str) -> str:
    """`text` with every absolute path shortened (the instructor's folders are theirs)."""
    return _ABSOLUTE.sub(r"\1", _BUILD_PATH.sub(r"./\1", text))


def student_result(result: SubmissionResult) -> SubmissionResult:
    """The result as a student may see it: no comparison with the reference solution, no
    secret seed, the student's command to grade again."""
    tasks = [dataclasses.replace(tr, identical_to_reference=False) for tr in result.tasks]
    return dataclasses.replace(result, tasks=tasks, reproduce=STUDENT_COMMAND, perf_seed=0, draw_seed=0)


def write(result: SubmissionResult, rubric: Rubric, out: Path, late_line: str = "") -> Path:
    """out/feedback/report.txt and report.html; returns the folder."""
    shown = student_result(result)
    folder = out / FOLDER
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "report.txt").write_text(student_safe(terminal.render(shown) + late_line), encoding="utf-8")
    (folder / "report.html").write_text(student_safe(html.submission_page(shown)), encoding="utf-8")
    return folder


def comment(result: SubmissionResult, rubric: Rubric) -> str:
    """One comment in the students' words: the score, what kept it from full marks, lateness."""
    words = [f"scanlab: {result.score or 0.0:.2f} / {result.max_score:g}"]
    words += problems(result)
    late = lateness(result.identity, rubric.late).words()
    if late:
        words.append(late)
    if not result.performance_measured:
        words.append("performance not measured here (no GPU)")
    return student_safe("; ".join(w.replace("\n", " ") for w in words))


def write_comments(results: list[SubmissionResult], rubric: Rubric, path: Path,
                   folders: dict[str, str]) -> None:
    """feedback-comments.csv: a row per student (every member of a group) with Canvas's and
    Gradescope's ids, the comment and the feedback folder (`folders`: submission name ->
    its report folder, relative to the class's output)."""
    from .gradebook import upload_score   # the score the upload files carry (after lateness)
    buf = io.StringIO()
    w = csv.writer(buf)
    w.writerow(["Student", "ID", "SIS User ID", "SIS Login ID", "Email", "submission", "score", "comment",
                "feedback"])
    for r in results:
        score = upload_score(r, rubric)[0]
        for s in r.identity.students or ():
            w.writerow([s.name, s.canvas_id, s.sid, s.login, s.email, r.name,
                        "" if score is None else f"{score:.2f}", comment(r, rubric),
                        f"{folders.get(r.name, r.name)}/{FOLDER}/report.html"])
        if not r.identity.students:
            w.writerow(["", "", "", "", "", r.name, "" if score is None else f"{score:.2f}", comment(r, rubric),
                        f"{folders.get(r.name, r.name)}/{FOLDER}/report.html"])
    path.write_text(buf.getvalue(), encoding="utf-8")
