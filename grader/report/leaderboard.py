"""The class leaderboard: each submission's GB/s at the timed size of the ranked tasks
(rubric [leaderboard]), as Gradescope's `leaderboard` field, a class leaderboard.csv
and a section of class-summary.md, with the reference, the copy bandwidth and (where
the task times it as a baseline: task 4) CUB, measured in the same grading run, as
marker rows."""
from __future__ import annotations

import csv
import io
import statistics
from dataclasses import dataclass
from pathlib import Path

from ..results import PerfResult, SubmissionResult, TaskResult
from ..config.rubric import Rubric

COLUMNS = ["rank", "submission", "students", "gbps", "copy_fraction", "slowdown_vs_reference"]


@dataclass(frozen=True)
class Row:
    task: str                  # the task's name
    label: str                 # a submission's name, or a marker's ("reference", "copy")
    students: str
    gbps: float
    copy_fraction: float | None
    slowdown: float | None
    marker: bool = False


def _timed(tr: TaskResult) -> PerfResult | None:
    """The first timed case of a task whose performance was measured, with its GB/s."""
    if tr.perf_status != "measured" or not tr.perf or tr.perf[0].gbps is None:
        return None
    return tr.perf[0]


def _task(result: SubmissionResult, name: str) -> TaskResult | None:
    return next((tr for tr in result.tasks if tr.name == name), None)


def entries(result: SubmissionResult, rubric: Rubric) -> list[dict[str, object]]:
    """Gradescope's `leaderboard`: one entry per ranked task, higher first. Empty unless
    the rubric shows the leaderboard to students."""
    if not rubric.leaderboard.show:
        return []
    out: list[dict[str, object]] = []
    for name in rubric.leaderboard.tasks:
        tr = _task(result, name)
        p = _timed(tr) if tr else None
        # A task not measured (or not passing) ranks last: 0, not missing, so that
        # Gradescope's column stays numeric.
        label = f"Task {tr.number} {name} GB/s" if tr else f"{name} GB/s"
        out.append({"name": label, "value": round(p.gbps, 1) if p and p.gbps else 0.0, "order": "desc"})
    return out


def rows(results: list[SubmissionResult], name: str) -> list[Row]:
    """The ranked rows of task `name`, fastest first, with the markers where they fall."""
    ranked: list[Row] = []
    references: list[float] = []
    copies: list[float] = []
    cubs: list[float] = []
    for r in results:
        tr = _task(r, name)
        p = _timed(tr) if tr else None
        if p is None or p.gbps is None:
            continue
        who = "; ".join(s.name or s.sid or s.login for s in r.identity.students)
        ranked.append(Row(name, r.name, who, p.gbps, p.copy_fraction, p.slowdown))
        if p.reference_ms and p.student_ms:
            references.append(p.gbps * p.student_ms / p.reference_ms)
        if p.copy_gbps:
            copies.append(p.copy_gbps)
        if p.baselines.get("cub") and p.student_ms:
            cubs.append(p.gbps * p.student_ms / p.baselines["cub"])
    # The markers are the medians over the class's measurements (each grade timed the
    # reference beside the submission, and the copy bandwidth of its GPU).
    if references:
        ref = statistics.median(references)
        copy = statistics.median(copies) if copies else None
        ranked.append(Row(name, "reference", "", ref, ref / copy if copy else None, 1.0, True))
    if copies:
        copy = statistics.median(copies)
        ranked.append(Row(name, "device-to-device copy", "", copy, 1.0, None, True))
    if cubs:
        # CUB's scan, timed as a baseline of the task by the reference driver (task 4).
        cub = statistics.median(cubs)
        copy = statistics.median(copies) if copies else None
        ranked.append(Row(name, "cub::DeviceScan", "", cub, cub / copy if copy else None, None, True))
    return sorted(ranked, key=lambda row: -row.gbps)


def write_csv(results: list[SubmissionResult], rubric: Rubric, path: Path) -> None:
    """leaderboard.csv: per ranked task, the submissions by GB/s (rank 1 the fastest);
    marker rows have no rank."""
    buf = io.StringIO()
    w = csv.writer(buf, lineterminator="\n")
    w.writerow(["task"] + COLUMNS)
    for name in rubric.leaderboard.tasks:
        rank = 0
        for row in rows(results, name):
            if not row.marker:
                rank += 1
            w.writerow([name, "" if row.marker else rank, row.label, row.students, f"{row.gbps:.1f}",
                        "" if row.copy_fraction is None else f"{row.copy_fraction:.3f}",
                        "" if row.slowdown is None else f"{row.slowdown:.3f}"])
    path.write_text(buf.getvalue(), encoding="utf-8")


def markdown_section(results: list[SubmissionResult], rubric: Rubric) -> str:
    """The leaderboard section of class-summary.md ('' without a measured task)."""
    parts: list[str] = []
    for name in rubric.leaderboard.tasks:
        ranked = rows(results, name)
        if not any(not r.marker for r in ranked):
            continue
        t = next(t for t in rubric.tasks if t.name == name)
        case = t.perf[0] if t.perf else None
        timed = f" ({case.task}, {case.op}, n = {case.n})" if case else ""
        parts.append(f"\n### Task {t.number}: {t.title}{timed}\n\n| rank | submission | GB/s | of copy |\n"
                     "| --- | --- | --- | --- |\n")
        rank = 0
        for row in ranked:
            if not row.marker:
                rank += 1
            share = "" if row.copy_fraction is None else f"{100 * row.copy_fraction:.0f}%"
            label = f"*{row.label}*" if row.marker else row.label.replace("|", "/")
            parts.append(f"| {'' if row.marker else rank} | {label} | {row.gbps:.0f} | {share} |\n")
    if not parts:
        return ""
    shown = ("students see their GB/s on Gradescope's leaderboard" if rubric.leaderboard.show
             else "students do not see it (rubric [leaderboard] show = false)")
    return "\n## Leaderboard (GB/s at the timed size)\n\nFor instructors; " + shown + ".\n" + "".join(parts)
