"""The one place a submission's result is made: from what its stages returned
(grader/grading/outcomes.py), once, at the end of its grade (or where a stage stopped it).
No other module of grader/grading/ sets a field of the results model
(tests/grader/test_structure.py holds them to it)."""
from __future__ import annotations

import dataclasses
from datetime import datetime, timezone
from pathlib import Path

from .. import __version__
from .collect import submission_name
from .fault import application_fault, integration_fault
from ..config.measured import measured_digest
from ..config.rubric import Rubric, TaskRubric
from .outcomes import Graded
from ..printable import printable_tree
from ..results import IntegrationResult, MachineInfo, PastScore, SubmissionResult, TaskResult
from .score import ScoreOutcome, score
from .session import Session


def assemble(session: Session, path: Path, graded: Graded, machine: MachineInfo, seconds: float,
             source_digest: str) -> SubmissionResult:
    """The SubmissionResult of the submission at `path` from its stages' outcomes, scored by
    the session's rubric; `machine`, `seconds` and `source_digest` are the grade's own."""
    rubric = session.rubric
    sub = graded.submission
    tasks = [_task(t, graded) for t in rubric.tasks]
    integration = IntegrationResult(max_points=rubric.integration.points)
    check, built = graded.checks.get("integration"), graded.builds.get("integration")
    if check is not None:
        # A graded integration run whose cases fail says the task at fault in its message:
        # found by the builds with one task of the student's each (fault.locate), else from
        # the tasks' own verdicts.
        message = check.message or graded.faults.integration or integration_fault(check.cases, tasks,
                                                                                     rubric.assignment)
        integration = IntegrationResult(check.status, message, built.info if built else None,
                                        list(check.cases), max_points=rubric.integration.points)
    applications = [dataclasses.replace(a, message=f"{a.message}; " + (
        graded.faults.applications.get(a.name) or application_fault(a, tasks, rubric.assignment)))
        if a.status == "fail" else a for a in graded.applications]
    # A refused file is said by its reason; an exercise's or a bonus task's is optional.
    optional = rubric.optional_files
    result = SubmissionResult(
        name=sub.name if sub else submission_name(path), origin=sub.origin if sub else str(path),
        kind=sub.kind if sub else ("folder" if path.is_dir() else "archive"),
        seed=session.seed, machine=machine, graded_at=graded.graded_at, grader_version=__version__,
        rubric=str(rubric.path),
        files={n: f.path for n, f in sub.files.items()} if sub else {},
        missing={n: c for n, c in sub.missing.items() if n not in sub.refused and n not in optional}
        if sub else {},
        ignored=list(sub.ignored) if sub else [],
        notes=[*(sub.notes if sub else ()), *graded.notes],
        error=graded.error or (sub.error if sub else None),
        tasks=tasks, integration=integration, applications=applications,
        seconds=seconds, timings=dict(graded.phases), reproduce=session.reproduce_command(path),
        perf_seed=graded.perf_seed, draw_seed=graded.draw_seed, source_digest=source_digest,
        rubric_digest=rubric.digest, measured_digest=measured_digest(rubric),
        provenance=session.provenance)
    # Every string of the model (compiler messages, source lines, file names, program
    # output) with its control characters escaped: every report and printed line is
    # made from it (grader/printable.py).
    return printable_tree(with_points(result, score(result.tasks, result.integration, rubric)))


def _task(t: TaskRubric, graded: Graded) -> TaskResult:
    """A task's result from its plan, build, correctness and timing (not yet its points)."""
    label = f"task {t.number}"
    plan = next((p for p in graded.plans if p.label == label), None)
    check, built, timing = graded.checks.get(label), graded.builds.get(label), graded.timings.get(t.number)
    if plan is None or check is None:   # the grade stopped before its plan
        return TaskResult(t.number, t.name, t.title, t.file, status="not_graded",
                          correctness_max=t.correctness_points, performance_max=t.performance_points)
    return TaskResult(
        t.number, t.name, t.title, t.file, status=check.status, message=check.message,
        path=plan.path, unchanged=plan.unchanged, identical_to_reference=plan.identical_to_reference,
        digest=plan.digest, placeholder=check.placeholder, violations=list(check.violations),
        build=built.info if built else None, cases=list(check.cases),
        perf=list(timing.perf) if timing else [], race_note=check.race_note,
        perf_status=timing.status if timing else "not_eligible",
        perf_message=timing.message if timing else "",
        profile=graded.profiles.get(t.number),
        correctness_max=t.correctness_points, performance_max=t.performance_points)


def with_points(result: SubmissionResult, points: ScoreOutcome) -> SubmissionResult:
    """`result` with the score stage's points."""
    tasks = [dataclasses.replace(tr, correctness_points=p.correctness, performance_points=p.performance)
             for tr, p in zip(result.tasks, points.tasks)]
    return dataclasses.replace(
        result, tasks=tasks, integration=dataclasses.replace(result.integration, points=points.integration),
        score=points.score, max_score=points.max_score, correctness_score=points.correctness_score,
        correctness_max=points.correctness_max, performance_score=points.performance_score,
        performance_max=points.performance_max, bonus_score=points.bonus_score)


def rescore(result: SubmissionResult, rubric: Rubric) -> SubmissionResult:
    """A graded result scored again by another rubric whose measured parts are the same
    (config.measured.measured_parts): its verdicts, cases and timings kept, each task's maximum
    and points taken from `rubric`. No build, nothing run. The score before it, and its
    rubric, go to the result's history (kept, not overwritten)."""
    by_number = {t.number: t for t in rubric.tasks}
    tasks = [dataclasses.replace(tr, correctness_max=by_number[tr.number].correctness_points,
                                 performance_max=by_number[tr.number].performance_points)
             if tr.number in by_number else tr for tr in result.tasks]
    past = PastScore(result.score, result.max_score, result.rubric, result.rubric_digest,
                     datetime.now(timezone.utc).isoformat(timespec="seconds"))
    rescored = dataclasses.replace(
        result, tasks=tasks, rubric=str(rubric.path), rubric_digest=rubric.digest,
        history=[*result.history, past],
        integration=dataclasses.replace(result.integration, max_points=rubric.integration.points))
    return with_points(rescored, score(rescored.tasks, rescored.integration, rubric))
