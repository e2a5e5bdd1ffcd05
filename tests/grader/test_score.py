"""Scoring arithmetic."""
from __future__ import annotations

import math

import pytest

from grader.grading.score import correctness_points, performance_credit, performance_points


def test_correctness_proportional():
    assert correctness_points(10, 10, 30, "proportional") == 30
    assert correctness_points(5, 10, 30, "proportional") == 15
    assert correctness_points(0, 10, 30, "proportional") == 0
    assert correctness_points(1, 3, 10, "proportional") == pytest.approx(10 / 3)


def test_correctness_all_or_nothing():
    assert correctness_points(10, 10, 30, "all-or-nothing") == 30
    assert correctness_points(9, 10, 30, "all-or-nothing") == 0


def test_correctness_no_cases_earns_nothing():
    assert correctness_points(0, 0, 30, "proportional") == 0


def test_correctness_rejects_nonsense():
    with pytest.raises(ValueError):
        correctness_points(11, 10, 30, "proportional")
    with pytest.raises(ValueError):
        correctness_points(1, 10, 30, "partial")


@pytest.mark.parametrize("slowdown", [0.2, 0.5, 1.0, 1.1, 1.2])
def test_full_credit_within_threshold(slowdown):
    assert performance_credit(slowdown, 1.2) == 1.0


def test_proportional_beyond_threshold():
    assert performance_credit(2.4, 1.2) == pytest.approx(0.5)
    assert performance_credit(12.0, 1.2) == pytest.approx(0.1)
    assert performance_credit(1.5, 1.0) == pytest.approx(1 / 1.5)


def test_continuous_at_threshold():
    below = performance_credit(1.2 - 1e-9, 1.2)
    above = performance_credit(1.2 + 1e-9, 1.2)
    assert below == 1.0 and above == pytest.approx(1.0, abs=1e-8)


def test_monotone_non_increasing():
    values = [performance_credit(s / 10, 1.2) for s in range(1, 200)]
    assert all(a >= b for a, b in zip(values, values[1:]))
    assert all(0 < v <= 1 for v in values)


@pytest.mark.parametrize("bad", [0.0, -1.0, math.inf, math.nan])
def test_credit_rejects_bad_slowdowns(bad):
    with pytest.raises(ValueError):
        performance_credit(bad, 1.2)


def test_threshold_below_one_is_rejected():
    with pytest.raises(ValueError):
        performance_credit(1.0, 0.9)


def test_performance_points_mean_of_cases():
    assert performance_points([1.0, 2.4], 20, 1.2) == pytest.approx(20 * (1 + 0.5) / 2)
    assert performance_points([], 20, 1.2) == 0


def test_a_task_of_no_performance_points_is_not_measured_without_a_gpu():
    """Without a GPU no task is timed, one worth 0 performance points included: "not
    measured" (its performance None, as every other task's), never a measured 0 of 0 (seen
    when a new task of 0 performance points was added: issue 48's copy, where the emulator's
    verdict tests failed on it). On a GPU it is "not eligible"."""
    from types import SimpleNamespace
    from grader.config.rubric import PerfCase, TaskRubric
    from grader.grading import pipeline
    task = TaskRubric(5, "segmented-reduce", "segmented-reduce", "segmented_reduce.cuh",
                      ("segmented-reduce",), 10, 0, (PerfCase("segmented-reduce", "add-i32", 1 << 20, 256),))
    check = SimpleNamespace(verdict="correct", placeholder=False)
    build = SimpleNamespace(ok=True, binary="scanlab")
    for times, perf, expect in [(False, True, "not_measured"), (True, False, "not_measured"),
                                (True, True, "not_eligible")]:
        session = SimpleNamespace(backend=SimpleNamespace(times=times), options=SimpleNamespace(perf=perf))
        why = pipeline._not_timed(session, task, check, build)  # type: ignore[arg-type]
        assert why is not None and why.status == expect, (times, perf)
