"""The batch grades CSV and the class summary."""
from __future__ import annotations

import csv
import io
import statistics
from pathlib import Path

from grader.results import SubmissionResult
from grader.rubric import Rubric


def columns(rubric: Rubric) -> list[str]:
    cols = ["submission", "score", "max_score", "correctness", "correctness_max", "performance",
            "performance_max"]
    for t in rubric.tasks:
        cols += [f"task{t.number}_status", f"task{t.number}_cases", f"task{t.number}_correctness",
                 f"task{t.number}_performance", f"task{t.number}_slowdown"]
    cols += ["integration", "flags", "error", "seed", "backend", "seconds"]
    return cols


def row(result: SubmissionResult) -> dict[str, str]:
    perf = "" if result.performance_score is None else f"{result.performance_score:.2f}"
    r = {"submission": result.name, "score": f"{result.score:.2f}", "max_score": f"{result.max_score:g}",
         "correctness": f"{result.correctness_score:.2f}", "correctness_max": f"{result.correctness_max:g}",
         "performance": perf if perf else "not measured", "performance_max": f"{result.performance_max:g}"}
    for tr in result.tasks:
        status = tr.verdict
        slow = [p.slowdown for p in tr.perf if p.slowdown]
        r.update({f"task{tr.number}_status": status, f"task{tr.number}_cases": f"{tr.passed}/{tr.total}",
                  f"task{tr.number}_correctness": f"{tr.correctness_points:.2f}",
                  f"task{tr.number}_performance": "not measured" if tr.performance_points is None
                  else f"{tr.performance_points:.2f}",
                  f"task{tr.number}_slowdown": f"{slow[0]:.3f}" if slow else ""})
    integ = result.integration
    r.update({"integration": f"{integ.passed}/{integ.total}" if integ.status == "graded" else integ.status,
              "flags": "; ".join(flags(result)), "error": result.error or "", "seed": str(result.seed), "backend": result.machine.backend,
              "seconds": f"{result.seconds:.1f}"})
    return r


def flags(result: SubmissionResult) -> list[str]:
    """What an instructor should look at besides the score."""
    out = []
    for tr in result.tasks:
        if any(p.implausible for p in tr.perf):
            out.append(f"task {tr.number}: implausible timing (faster than memory allows; not scored)")
        if any(p.noisy for p in tr.perf):
            out.append(f"task {tr.number}: timing noisy")
    return out


def write_grades(results: list[SubmissionResult], rubric: Rubric, path: Path) -> None:
    with open(path, "w", newline="", encoding="utf-8") as f:
        writer = csv.DictWriter(f, fieldnames=columns(rubric))
        writer.writeheader()
        for result in results:
            writer.writerow(row(result))


def class_summary(results: list[SubmissionResult], rubric: Rubric) -> str:
    """The class at a glance (Markdown, also printed)."""
    out = io.StringIO()
    n = len(results)
    scores = [r.score for r in results]
    max_score = results[0].max_score if results else rubric.max_correctness + rubric.max_performance
    out.write(f"# scanlab: class summary ({n} submission{'s' if n != 1 else ''})\n\n")
    if not results:
        return out.getvalue() + "No submissions.\n"
    measured = all(r.performance_measured for r in results)
    out.write(f"Scores out of {max_score:g}"
              + ("" if measured else " (correctness only: performance not measured without a GPU)")
              + f": mean {statistics.mean(scores):.2f}, median {statistics.median(scores):.2f}, "
              f"min {min(scores):.2f}, max {max(scores):.2f}\n\n")
    out.write("| task | all cases pass | wrong | not implemented | does not compile | forbidden | "
              "missing | mean points |\n")
    out.write("| --- | --- | --- | --- | --- | --- | --- | --- |\n")
    for i, t in enumerate(rubric.tasks):
        trs = [r.tasks[i] for r in results]
        count = lambda verdict: sum(1 for tr in trs if tr.verdict == verdict)  # noqa: E731
        mean = statistics.mean(tr.points for tr in trs)
        most = t.max_points if measured else t.correctness_points
        out.write(f"| {t.number} `{t.file}` | {count('correct')} | {count('wrong')} | "
                  f"{count('not_implemented')} | {count('build_failed')} | {count('forbidden')} | "
                  f"{count('missing')} | {mean:.2f} / {most:g} |\n")
    out.write("\nScore distribution:\n\n```text\n")
    bins = [0] * 10
    for s in scores:
        bins[min(9, int(10 * s / max_score)) if max_score else 0] += 1
    for b, in_bin in enumerate(bins):
        out.write(f"{10 * b:3d}-{10 * b + 10:3d}%  {'#' * in_bin} {in_bin}\n")
    out.write("```\n\n| submission | score | problems |\n| --- | --- | --- |\n")
    for r in sorted(results, key=lambda r: r.name):
        problems = [r.error] if r.error else []
        problems += [f"task {tr.number}: {tr.total - tr.passed} case(s) fail" if tr.verdict == "wrong"
                     else f"task {tr.number}: {tr.verdict.replace('_', ' ')}"
                     for tr in r.tasks if tr.verdict != "correct"]
        problems += flags(r)
        out.write(f"| {r.name} | {r.score:.2f} | {'; '.join(p.replace('|', '/') for p in problems) or '-'} |\n")
    return out.getvalue()
