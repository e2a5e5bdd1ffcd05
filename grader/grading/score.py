"""Points from results, by the rubric. Pure arithmetic, no I/O."""
from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Sequence

from ..results import IntegrationResult, TaskResult
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


@dataclass(frozen=True)
class TaskPoints:
    correctness: float
    performance: float | None    # None: not measured

    @property
    def total(self) -> float:
        return self.correctness + (self.performance or 0.0)


@dataclass(frozen=True)
class ScoreOutcome:
    """The score stage's answer: each task's points (in the rubric's order), the
    integration build's, and the totals."""

    tasks: tuple[TaskPoints, ...]
    integration: float
    correctness_score: float
    correctness_max: float
    performance_score: float | None      # None: not measured (no GPU)
    performance_max: float
    bonus_score: float
    score: float
    max_score: float


def score(tasks: Sequence[TaskResult], integration: IntegrationResult, rubric: Rubric) -> ScoreOutcome:
    """The points of a graded submission's verdicts and timings (`tasks` in the rubric's
    order; their own points are not read), by the rubric."""
    points = []
    for tr in tasks:
        earns = tr.status == "graded" and not (tr.placeholder and rubric.correctness.zero_for_placeholders)
        correctness = correctness_points(
            tr.passed, tr.total, tr.correctness_max, rubric.correctness_scoring) if earns else 0.0
        performance: float | None
        if tr.perf_status == "not_measured":
            performance = None
        elif tr.perf_status == "measured":
            slowdowns = [p.slowdown for p in tr.perf if p.slowdown is not None]
            performance = performance_points(slowdowns, tr.performance_max,
                                             rubric.performance.full_credit_slowdown)
        else:
            performance = 0.0
        points.append(TaskPoints(correctness, performance))
    integ = correctness_points(integration.passed, integration.total, integration.max_points,
                               "proportional") if integration.status == "graded" else 0.0
    correctness_score = sum(p.correctness for p in points) + integ
    bonus_score = sum(p.total for t, p in zip(rubric.tasks, points) if t.bonus)
    if all(p.performance is not None for p in points):
        performance_score: float | None = sum(p.performance or 0.0 for p in points)
        total = correctness_score + (performance_score or 0.0)
        most = rubric.max_correctness + rubric.max_performance
    else:
        # Without a GPU the score is out of the correctness points only.
        performance_score, total, most = None, correctness_score, rubric.max_correctness
    return ScoreOutcome(tuple(points), integ, correctness_score, rubric.max_correctness,
                        performance_score, rubric.max_performance, bonus_score, total, most)
