"""Points from results, by the rubric. Pure arithmetic, no I/O."""
from __future__ import annotations

import math


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
