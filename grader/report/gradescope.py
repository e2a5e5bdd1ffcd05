"""Gradescope's results.json (https://gradescope-autograders.readthedocs.io/en/latest/specs/).

One test per task for correctness and one for performance where it was measured and is
worth points (on Gradescope, which has no GPU, it is not measured: the top-level output says
so once, and no test pretends to have passed), one for the integration run when
it is worth points, and one for the submission's problems (missing files, forbidden
constructs). Hidden cases appear as counts of passed cases only.
"""
from __future__ import annotations

import json
from pathlib import Path

from . import why
from . import BOUNDARY_GROUP, failure_texts, headline, perf_line, speedup_line, timed_out_words
from ..results import SubmissionResult, TaskResult

MAX_FAILURES = 5
OUTPUT_LIMIT = 8000


def _clip(text: str) -> str:
    return text if len(text) <= OUTPUT_LIMIT else text[:OUTPUT_LIMIT] + "\n[... cut ...]"


def _correctness_output(tr: TaskResult) -> str:
    lines: list[str] = []
    if tr.status in ("missing", "not_attempted"):
        lines.append(f"Not graded: {tr.message}.")
    elif tr.status == "forbidden":
        lines.append(f"Not graded: {tr.message}.")
        lines += [str(v) for v in tr.violations]
    elif tr.status == "build_failed":
        lines.append(f"Not graded: {tr.path} does not compile (built with the reference files "
                     "for the other tasks). The compiler says:")
        lines.append(tr.build.errors if tr.build else "")
    else:
        visible = [c for c in tr.cases if not c.case.hidden]
        hidden = [c for c in tr.cases if c.case.hidden]
        if tr.verdict == "timed_out":
            lines.append(timed_out_words(tr).capitalize() + ": a case ran past its time limit (a hang, "
                         "or far too slow); the cases after it were not run.")
        lines.append(f"{sum(c.passed for c in visible)}/{len(visible)} visible cases passed")
        family = [c for c in visible if c.case.group == BOUNDARY_GROUP]
        if family:
            lines.append(f"  of which {sum(c.passed for c in family)}/{len(family)} of the boundary family "
                         "(every block size, n = 2^k and 2^k +- 1, exact tile multiples)")
        if hidden:
            lines.append(f"{sum(c.passed for c in hidden)}/{len(hidden)} hidden cases passed "
                         "(hidden cases are reported as pass/fail only)")
        shown = failure_texts(tr.cases, MAX_FAILURES)
        if shown:
            lines.append("")
            lines += shown
    if tr.placeholder and tr.status != "not_attempted":
        lines.append(f"({tr.message or 'This file is still the handout placeholder'}.)")
    return _clip("\n".join(lines))


def document(result: SubmissionResult, visibility: str = "visible",
             stdout_visibility: str = "hidden", leaderboard: list[dict[str, object]] | None = None) -> dict:
    tests: list[dict] = []
    if result.error or result.missing or result.notes or result.ignored:
        lines = []
        if result.error:
            lines.append(f"Not gradable: {result.error}")
        for name, close in result.missing.items():
            lines.append(f"Missing {name}" + (f" (found {', '.join(close)}: names must match exactly)" if close else ""))
        lines += result.notes
        if result.ignored:
            lines.append(f"Ignored {len(result.ignored)} other file(s): " + ", ".join(result.ignored[:20]))
        tests.append({"name": "Submission", "score": 0.0, "max_score": 0.0,
                      "status": "failed" if result.error or result.missing else "passed",
                      "output": _clip("\n".join(lines)), "visibility": visibility})
    skipped_bonus = []
    for tr in result.tasks:
        if tr.status == "not_attempted":
            skipped_bonus.append(tr)   # optional: not a failed test (said once in the output)
            continue
        correct = (tr.status == "graded" and tr.passed == tr.total and tr.total > 0
                   and tr.correctness_points >= tr.correctness_max - 1e-9)
        tests.append({"name": f"Task {tr.number} ({tr.file}): correctness", "number": f"{tr.number}.1",
                      "score": round(tr.correctness_points, 4), "max_score": tr.correctness_max,
                      "status": "passed" if correct else "failed",
                      "output": _correctness_output(tr), "visibility": visibility})
        if tr.performance_points is None or tr.performance_max <= 0:
            # Not measured here (said once in the top-level output), or nothing to earn: a
            # task with no performance points is never timed, so no test may say it passed.
            continue
        output = perf_line(tr)
        if speedup_line(tr):
            output += "\nSpeedup: " + speedup_line(tr)
        if why.text_lines(tr, ""):
            output += "\n" + "\n".join(why.text_lines(tr, ""))
        tests.append({"name": f"Task {tr.number} ({tr.file}): performance", "number": f"{tr.number}.2",
                      "score": round(tr.performance_points, 4), "max_score": tr.performance_max,
                      "status": "passed" if tr.performance_points >= tr.performance_max - 1e-9 else "failed",
                      "output": _clip(output), "visibility": visibility})
    integ = result.integration
    if integ.max_points > 0 or integ.status == "graded":
        text = (f"{integ.passed}/{integ.total} cases passed with all your files built together"
                + (f"\n{integ.message}" if integ.message else "")
                if integ.status == "graded" else integ.message or "does not compile")
        if integ.status == "build_failed" and integ.build:
            text = "Does not compile with all your files together:\n" + integ.build.errors
        tests.append({"name": "Integration (all files together)", "score": round(integ.points, 4),
                      "max_score": integ.max_points,
                      "status": "passed" if integ.status == "graded" and integ.passed == integ.total else "failed",
                      "output": _clip(text), "visibility": visibility})
    unmeasured = not result.performance_measured and result.performance_max > 0
    bonus = f" ({result.bonus_score:.2f} of it bonus)" if result.bonus_score > 0 else ""
    # Where performance is not measured, one paragraph says so (not the headline and the
    # machine's note too).
    summary = [f"Score: {result.score:.2f} / {result.max_score:g}{bonus}" if unmeasured
               else f"Score: {headline(result)}", f"Seed: {result.seed}"]
    if unmeasured:
        summary.append(
            f"Performance ({result.performance_max:g} points) is not measured here: there is no GPU. "
            f"This score is out of the {result.correctness_max:g} correctness points; the performance "
            "points are graded on the course's GPU machine and given separately.")
    for tr in skipped_bonus:
        summary.append(f"Bonus task {tr.number} ({tr.file}) not attempted: it is optional, nothing is lost.")
    if result.machine.note and not (unmeasured and "not measured" in result.machine.note):
        summary.append(result.machine.note[0].upper() + result.machine.note[1:] + ".")
    if why.refusal_note(result):
        summary.append(why.refusal_note(result) + ".")
    if result.machine.sandbox and not result.machine.contained:
        summary.append(f"Warning: student code was {result.machine.sandbox}.")
    doc: dict[str, object] = {
        "score": round(result.score, 4),
        "execution_time": int(round(result.seconds)),
        "output": "\n".join(summary),
        "output_format": "text",
        "test_output_format": "text",
        "visibility": visibility,
        "stdout_visibility": stdout_visibility,
        "tests": tests,
        "extra_data": {"seed": result.seed, "backend": result.machine.backend,
                       "max_score": result.max_score,
                       "performance_measured": result.performance_measured,
                       "bonus_score": round(result.bonus_score, 4)},
    }
    if leaderboard:
        doc["leaderboard"] = leaderboard
    return doc


def write(result: SubmissionResult, path: Path, visibility: str = "visible",
          stdout_visibility: str = "hidden", leaderboard: list[dict[str, object]] | None = None) -> None:
    path.write_text(json.dumps(document(result, visibility, stdout_visibility, leaderboard), indent=2,
                               allow_nan=False) + "\n", encoding="utf-8")
