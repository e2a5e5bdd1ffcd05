"""The task at fault of a failing integration case or application (grader/grading/fault.py,
issue 42 item 5): a task the failing one uses that fails its own cases is named first."""
from __future__ import annotations

from grader.config.assignment import default_assignment
from grader.config.cases import Case
from grader.grading.fault import application_fault, integration_fault
from grader.results import AppResult, CaseResult, TaskResult


def _task(number: int, passed: bool) -> TaskResult:
    t = default_assignment().task(number)
    case = CaseResult(Case(t.driver_tasks[0], "add-i32", 1000), 1, "pass" if passed else "fail")
    return TaskResult(t.number, t.name, t.title, t.file, cases=[case])


def _integration_cases(passed: bool) -> list[CaseResult]:
    return [CaseResult(Case("scan", "add-i32", 1 << 20), 1, "pass" if passed else "fail")]


def test_a_wrong_reduce_is_named_where_the_scan_fails():
    tasks = [_task(1, True), _task(2, False), _task(3, True), _task(4, True)]
    blame = "task 2's reduce (student/reduce.cuh), which your scan (task 3) uses, fails its own cases: fix it first"
    assert integration_fault(_integration_cases(False), tasks, default_assignment()) == blame
    app = AppResult("normal-cdf", 3, "scan", "fail", "Phi(0) wrong")
    assert application_fault(app, tasks, default_assignment()) == blame


def test_both_used_tasks_wrong_are_both_named():
    tasks = [_task(1, False), _task(2, False), _task(3, False), _task(4, True)]
    app = AppResult("radix-sort", 3, "scan-exclusive", "fail", "", exercise="split", exercise_file="split.cuh")
    assert application_fault(app, tasks, default_assignment()) == (
        "task 1's warp-scan (student/warp_scan.cuh) and task 2's reduce (student/reduce.cuh), which your split "
        "(the exercise, student/split.cuh) on your scan-exclusive (task 3) uses, fail their own cases: "
        "fix them first")


def test_the_scan_is_blamed_only_when_what_it_uses_passes():
    tasks = [_task(1, True), _task(2, True), _task(3, False), _task(4, True)]
    assert integration_fault(_integration_cases(False), tasks, default_assignment()) == "it uses your scan (task 3)"
    # The reduce itself (pi) uses no other task: a wrong reduce is named as itself.
    tasks[1] = _task(2, False)
    assert application_fault(AppResult("pi", 2, "reduce", "fail", ""), tasks, default_assignment()) == \
        "it uses your reduce (task 2)"
    assert integration_fault(_integration_cases(True), tasks, default_assignment()) == ""
