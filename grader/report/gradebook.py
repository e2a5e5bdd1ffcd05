"""A batch's gradebook files, one row per student (a group's members each get the
submission's row; a submission nobody is known for gets one row without a name):

  grades.csv             every figure, numbers only (points, passed and total cases,
                         slowdowns), identity first and the words in a last `comment`
                         column, so a spreadsheet reads no cell as a date or as text;
  gradescope-scores.csv  Gradescope's score upload layout: Name, SID, Email, Total Score;
  canvas-grades.csv      Canvas's gradebook import layout: Student, ID, SIS User ID,
                         SIS Login ID, Section, then the assignment's column, with the
                         Points Possible row.

The upload files carry the score `[gradebook] score` of the rubric names ("total", or
"performance" where correctness is Gradescope's own autograder score), less the `[late]`
penalty (grader/report/late.py), with the score before it beside it; a submission
without an SID or email cannot be matched there and is left out (the class summary
names it). See grader/README.md, "The round trip to the gradebook".
"""
from __future__ import annotations

import csv
from pathlib import Path

from . import problems
from .copies import Copies
from .late import Lateness, lateness, penalised
from ..results import Student, SubmissionResult
from ..config.rubric import Rubric

PLAIN = "grades.csv"
GRADESCOPE = "gradescope-scores.csv"
CANVAS = "canvas-grades.csv"
FILES = (PLAIN, GRADESCOPE, CANVAS)

IDENTITY = ["submission", "name", "sid", "email", "section", "submission_id", "submitted_at", "late"]
# How late (hours, empty when not known or on time) and what it cost: the points taken and
# the score after them (what the upload files carry; `score` is the score before).
LATE_COLUMNS = ["late_hours", "late_penalty", "score_after_late"]
# The round trip (grader/README.md): the emulator half's correctness (Gradescope's
# autograder score, from the export) and the GPU half's correction of it.
GPU_COLUMNS = ["emulator_correctness", "gpu_correction"]
# What the file shares (grader/report/copies.py): task numbers ("1 3"), submission names, a share.
COPY_COLUMNS = ["same_as_reference", "same_as_handout", "identical_to", "most_similar",
                "most_similar_share"]
NO_SUBMISSION = "no submission"
# The columns of words (the others hold numbers, or nothing).
WORDS = {*IDENTITY, "same_as_reference", "same_as_handout", "identical_to", "most_similar", "comment"}


def _num(value: float | None, digits: int = 2) -> str:
    return "" if value is None else f"{value:.{digits}f}"


def columns(rubric: Rubric) -> list[str]:
    """The columns of grades.csv."""
    cols = IDENTITY + LATE_COLUMNS + ["score", "max_score", "correctness", "correctness_max", "performance",
                       "performance_max", "performance_measured", "bonus"]
    for t in rubric.tasks:
        n = f"task{t.number}"
        cols += [f"{n}_passed", f"{n}_total", f"{n}_correctness", f"{n}_performance",
                 f"{n}_slowdown", f"{n}_placeholder"]
    return cols + ["integration_passed", "integration_total", *COPY_COLUMNS, *GPU_COLUMNS, "seed", "seconds",
                   "comment"]


def flags(result: SubmissionResult) -> list[str]:
    """What an instructor should look at besides the score."""
    out = []
    for tr in result.tasks:
        if any(p.implausible for p in tr.perf):
            out.append(f"task {tr.number}: implausible timing (faster than memory allows; not scored)")
        if any(p.noisy for p in tr.perf):
            out.append(f"task {tr.number}: timing noisy")
    return out


def late_of(result: SubmissionResult, rubric: Rubric) -> Lateness:
    return lateness(result.identity, rubric.late)


def comment(result: SubmissionResult, rubric: Rubric | None = None) -> str:
    """The words of a row: what keeps it from full marks, flags, lateness, what was not measured."""
    words = problems(result) + flags(result)
    late = late_of(result, rubric).words() if rubric is not None else ""
    if late:
        words.append(late)
    if not result.performance_measured:
        words.append("performance not measured (no GPU)")
    return "; ".join(w.replace("\n", " ") for w in words)


def students_of(result: SubmissionResult) -> tuple[Student, ...]:
    return result.identity.students or (Student(),)


def _copy_cells(result: SubmissionResult, copies: Copies | None) -> dict[str, str]:
    same_ref = [tr.number for tr in result.tasks if tr.identical_to_reference]
    same_handout = [tr.number for tr in result.tasks if tr.placeholder and tr.status != "not_attempted"]
    cells = {"same_as_reference": " ".join(map(str, same_ref)),
             "same_as_handout": " ".join(map(str, same_handout)),
             "identical_to": "", "most_similar": "", "most_similar_share": ""}
    if copies is not None:
        cells["identical_to"] = " ".join(sorted({o for others in copies.identical.get(result.name, {}).values()
                                                 for o in others}))
        if result.name in copies.closest:
            other, share, _ = copies.closest[result.name]
            cells["most_similar"], cells["most_similar_share"] = other, f"{share:.3f}"
    return cells


def plain_rows(result: SubmissionResult, rubric: Rubric, copies: Copies | None = None) -> list[dict[str, str]]:
    ident = result.identity
    late = late_of(result, rubric)
    after = penalised(result.score, result.max_score, late)
    base = {"submission": result.name, "submission_id": ident.submission_id,
            "submitted_at": ident.submitted_at,
            "late": "" if ident.late is None else str(int(ident.late)),
            "late_hours": _num(late.seconds / 3600 if late.late and late.seconds is not None else None),
            "late_penalty": _num(result.score - (after or 0.0)), "score_after_late": _num(after),
            "score": _num(result.score), "max_score": _num(result.max_score),
            "correctness": _num(result.correctness_score), "correctness_max": _num(result.correctness_max),
            "performance": _num(result.performance_score), "performance_max": _num(result.performance_max),
            "performance_measured": str(int(result.performance_measured)),
            "bonus": _num(result.bonus_score)}
    for tr in result.tasks:
        n = f"task{tr.number}"
        slow = next((p.slowdown for p in tr.perf if p.slowdown), None)
        base.update({f"{n}_passed": str(tr.passed), f"{n}_total": str(tr.total),
                     f"{n}_correctness": _num(tr.correctness_points),
                     f"{n}_performance": _num(tr.performance_points),
                     f"{n}_slowdown": _num(slow, 4), f"{n}_placeholder": str(int(tr.placeholder))})
    integ = result.integration
    base.update({"integration_passed": str(integ.passed), "integration_total": str(integ.total),
                 **_copy_cells(result, copies),
                 "emulator_correctness": _num(ident.autograder_score),
                 "gpu_correction": _num(gpu_correction(result)) if correctness_disagreement(result) is not None
                 else "",
                 "seed": str(result.seed), "seconds": _num(result.seconds, 1),
                 "comment": comment(result, rubric)})
    return [{**base, "name": s.name, "sid": s.sid, "email": s.email, "section": s.section}
            for s in students_of(result)]


def correctness_disagreement(result: SubmissionResult) -> float | None:
    """The GPU grade's correctness points less the emulator half's (Gradescope's autograder
    score, from the export's metadata); None where either is not known (no GPU grade, no
    Gradescope export)."""
    known = result.identity.autograder_score
    if known is None or not result.performance_measured or result.error:
        return None
    return result.correctness_score - known


def gpu_correction(result: SubmissionResult) -> float:
    """What the GPU half's upload adds to correct the emulator half: the correctness points
    the GPU grade does not give (a task right on the emulator and wrong on the GPU), never
    more than the emulator half gave (the emulator's stricter verdict, a race GPUs forgive,
    stands)."""
    differs = correctness_disagreement(result)
    return min(0.0, differs) if differs is not None else 0.0


def raw_upload_score(result: SubmissionResult, rubric: Rubric) -> tuple[float | None, float]:
    """The score `[gradebook] score` names before any late penalty, and what it is out of:
    "performance" (the GPU half of the round trip) is the performance points with the
    GPU's correction of the emulator half's correctness (negative where the GPU shows a
    task wrong), so the two uploads add up to what the GPU says."""
    if rubric.gradebook.score == "performance":
        if result.performance_score is None:
            return None, rubric.max_performance
        return result.performance_score + gpu_correction(result), rubric.max_performance
    return result.score, result.max_score


def upload_score(result: SubmissionResult, rubric: Rubric) -> tuple[float | None, float]:
    """The score the upload files carry (after the late penalty), and what it is out of."""
    raw, maximum = raw_upload_score(result, rubric)
    return penalised(raw, maximum, late_of(result, rubric)), maximum


def unmatched(results: list[SubmissionResult]) -> list[str]:
    """Submissions the upload files cannot carry: nobody with an SID, email or Canvas id."""
    return [r.name for r in results if not any(s.sid or s.email or s.canvas_id for s in r.identity.students)]


def _write(path: Path, header: list[str], rows: list[list[str]]) -> None:
    tmp = path.with_suffix(".csv.tmp")
    with open(tmp, "w", newline="", encoding="utf-8") as f:
        w = csv.writer(f)
        w.writerow(header)
        w.writerows(rows)
    tmp.replace(path)


def absent_row(s: Student, rubric: Rubric) -> dict[str, str]:
    """grades.csv's row of a student on the roster who submitted nothing: score 0."""
    row = {c: "" for c in columns(rubric)}
    row.update({"name": s.name, "sid": s.sid, "email": s.email, "section": s.section,
                "score": _num(0.0), "comment": NO_SUBMISSION})
    return row


def write_plain(results: list[SubmissionResult], rubric: Rubric, path: Path,
                copies: Copies | None = None, absent: list[Student] | None = None) -> None:
    cols = columns(rubric)
    rows = [row for r in results for row in plain_rows(r, rubric, copies)] + \
        [absent_row(s, rubric) for s in absent or []]
    _write(path, cols, [[row[c] for c in cols] for row in rows])


def append_plain(result: SubmissionResult, rubric: Rubric, path: Path) -> None:
    """One submission's rows at the end of grades.csv (its header written first if new),
    flushed at once: a batch's CSV grows as it goes."""
    cols = columns(rubric)
    new = not path.exists() or path.stat().st_size == 0
    with open(path, "a", newline="", encoding="utf-8") as f:
        w = csv.writer(f)
        if new:
            w.writerow(cols)
        w.writerows([[row[c] for c in cols] for row in plain_rows(result, rubric)])
        f.flush()


def write_gradescope(results: list[SubmissionResult], rubric: Rubric, path: Path,
                     absent: list[Student] | None = None) -> None:
    rows = []
    for r in results:
        score, _ = upload_score(r, rubric)
        raw, _ = raw_upload_score(r, rubric)
        late = late_of(r, rubric)
        late_words = late.words() if late.late else ""
        rows += [[s.name, s.sid, s.email, _num(score), _num(raw), late_words]
                 for s in r.identity.students if s.sid or s.email]
    # A student who submitted nothing: 0 (Gradescope's upload has no "missing" mark).
    rows += [[s.name, s.sid, s.email, _num(0.0), _num(0.0), ""] for s in absent or [] if s.sid or s.email]
    # Gradescope reads Name, SID, Email and Total Score; the score before the late
    # penalty and the lateness ride beside them for a person to check.
    _write(path, ["Name", "SID", "Email", "Total Score", "Score Before Late Penalty", "Late"], rows)


def write_canvas(results: list[SubmissionResult], rubric: Rubric, path: Path,
                 absent: list[Student] | None = None, column: str = "") -> None:
    """`column`: the assignment's column of Canvas's gradebook export (`HW3: scanlab
    (55501)`), so the import fills it; "": the rubric's `[gradebook] assignment`. Only the
    score after the late penalty: any other column would be imported as an assignment
    (the score before it is in grades.csv and gradescope-scores.csv)."""
    maximum = rubric.max_performance if rubric.gradebook.score == "performance" else \
        (results[0].max_score if results else rubric.max_correctness + rubric.max_performance)
    rows = [["Points Possible", "", "", "", "", _num(maximum)]]
    scored = [(s, upload_score(r, rubric)[0]) for r in results for s in r.identity.students]
    # A student who submitted nothing: 0, as Canvas's "missing" submissions score.
    scored += [(s, 0.0) for s in absent or []]
    rows += [[s.name, s.canvas_id, s.sid, s.login or s.email, s.section, _num(score)]
             for s, score in scored if s.sid or s.email or s.canvas_id]
    _write(path, ["Student", "ID", "SIS User ID", "SIS Login ID", "Section",
                  column or rubric.gradebook.assignment], rows)


def write_all(results: list[SubmissionResult], rubric: Rubric, out: Path, copies: Copies | None = None,
              absent: list[Student] | None = None, canvas_column: str = "") -> list[Path]:
    write_plain(results, rubric, out / PLAIN, copies, absent)
    write_gradescope(results, rubric, out / GRADESCOPE, absent)
    write_canvas(results, rubric, out / CANVAS, absent, canvas_column)
    return [out / name for name in FILES]
