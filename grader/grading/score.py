"""Points from results, by the rubric. Pure arithmetic, no I/O."""
from __future__ import annotations

import math

from ..results import SubmissionResult
from ..config.rubric import Rubric


def correctness_points(passed: int, total: int, points: float, scoring: str) -> float:
    """Correctness points for `passed` of `total` cases."""
    if total <= 0 or points <= 0:
        return 0.0
    if not 0 <= passed <= total:
        raise ValueError(f"passed {passed} of {total}")
    if scoring == "all-or-nothing":
        return points if passed == total else 0.0
    if scoring == "proportional":
        return points * passed / total
    raise ValueError(f"unknown scoring {scoring!r}")


def performance_credit(slowdown: float, full_credit_slowdown: float) -> float:
    """The fraction of the performance points for a submission `slowdown` times as
    slow as the reference: 1 up to full_credit_slowdown, then full_credit_slowdown /
    slowdown (so it is continuous at the threshold and halves at twice of it)."""
    if not math.isfinite(slowdown) or slowdown <= 0:
        raise ValueError(f"slowdown {slowdown!r} is not a positive number")
    if full_credit_slowdown < 1:
        raise ValueError("full_credit_slowdown must be at least 1")
    if slowdown <= full_credit_slowdown:
        return 1.0
    return full_credit_slowdown / slowdown


def performance_points(slowdowns: list[float], points: float, full_credit_slowdown: float) -> float:
    """Points of a task timed on several cases: the mean of their credits."""
    if not slowdowns:
        return 0.0
    credits = [performance_credit(s, full_credit_slowdown) for s in slowdowns]
    return points * sum(credits) / len(credits)


def score(result: SubmissionResult, rubric: Rubric) -> None:
    """Fills a graded result's points from its verdicts and timings, by the rubric."""
    for tr in result.tasks:
        earns = tr.status == "graded" and not (tr.placeholder and rubric.correctness.zero_for_placeholders)
        tr.correctness_points = correctness_points(
            tr.passed, tr.total, tr.correctness_max, rubric.correctness_scoring) if earns else 0.0
        if tr.perf_status == "not_measured":
            tr.performance_points = None
        elif tr.perf_status == "measured":
            slowdowns = [p.slowdown for p in tr.perf if p.slowdown is not None]
            tr.performance_points = performance_points(
                slowdowns, tr.performance_max, rubric.performance.full_credit_slowdown)
        else:
            tr.performance_points = 0.0
    integ = result.integration
    integ.points = correctness_points(integ.passed, integ.total, integ.max_points, "proportional") \
        if integ.status == "graded" else 0.0
    result.correctness_score = sum(tr.correctness_points for tr in result.tasks) + integ.points
    result.bonus_score = sum(tr.points for t, tr in zip(rubric.tasks, result.tasks) if t.bonus)
    result.correctness_max = rubric.max_correctness
    result.performance_max = rubric.max_performance
    if all(tr.performance_points is not None for tr in result.tasks):
        result.performance_score = sum(tr.performance_points or 0.0 for tr in result.tasks)
        result.score = result.correctness_score + result.performance_score
        result.max_score = result.correctness_max + result.performance_max
    else:
        # Without a GPU the score is out of the correctness points only.
        result.performance_score = None
        result.score = result.correctness_score
        result.max_score = result.correctness_max
