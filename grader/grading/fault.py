"""The task at fault of an integration case or an application that fails (issue 42).

Each task is graded in a build of its own, with the grader's contract versions of the
others (grader/contract/), so its verdict is its own code's. The integration build and
the applications run one task's driver tasks with the student's versions of the tasks it
`uses` (data/assignment.toml): where one of those fails its own cases, it is the first
suspect, not the task whose driver task ran (task 2's reduce runs inside the scan)."""
from __future__ import annotations

from collections.abc import Sequence

from ..config.assignment import Assignment
from ..results import AppResult, CaseResult, TaskResult

# A task's own verdicts that make it a suspect wherever its code runs.
_FAILED = ("wrong", "timed_out", "build_failed", "not_implemented")


def failing_used_tasks(task: int, tasks: Sequence[TaskResult], assignment: Assignment) -> list[TaskResult]:
    """The tasks that task `task`'s driver tasks run and that fail their own cases."""
    uses = set(assignment.task(task).uses)
    return [t for t in tasks if t.name in uses and t.verdict in _FAILED]


def task_at_fault(task: int, ran: str, tasks: Sequence[TaskResult], assignment: Assignment) -> str:
    """Who to look at when `ran` (what ran, e.g. "your scan (task 3)") fails: the tasks it
    uses that fail their own cases, else `ran` itself."""
    failing = failing_used_tasks(task, tasks, assignment)
    if not failing:
        return f"it uses {ran}"
    names = " and ".join(f"task {t.number}'s {t.name} (student/{t.file})" for t in failing)
    if len(failing) == 1:
        return f"{names}, which {ran} uses, fails its own cases: fix it first"
    return f"{names}, which {ran} uses, fail their own cases: fix them first"


def application_fault(app: AppResult, tasks: Sequence[TaskResult], assignment: Assignment) -> str:
    """The task at fault of a failed application: its exercise on its driver task, or
    the tasks that driver task uses."""
    ran = f"your {app.driver_task} (task {app.task})"
    if app.exercise:
        ran = f"your {app.exercise} (the exercise, student/{app.exercise_file}) on {ran}"
    return task_at_fault(app.task, ran, tasks, assignment)


def integration_fault(cases: Sequence[CaseResult], tasks: Sequence[TaskResult], assignment: Assignment) -> str:
    """The task at fault of each driver task whose integration cases fail, in one line
    ("" when none fails)."""
    failed = dict.fromkeys(c.case.task for c in cases if not c.passed)
    return "; ".join(task_at_fault(assignment.driver_task(d).task, f"your {d} (task {assignment.driver_task(d).task})",
                                   tasks, assignment) for d in failed)
