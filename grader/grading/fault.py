"""The task at fault of an integration case or an application that fails (issue 42, item 5).

Each task is graded in a build of its own, with the grader's contract versions of the
others (grader/contract/), so its verdict is its own code's. The integration build and
the applications run one task's driver tasks (the scan) with the student's versions of
the tasks it `uses` (data/assignment.toml: the warp scan, the reduce). When such a run
fails, `locate` re-runs the failing cases in builds that hold the student's code of ONE
of those tasks, the others the grader's stand-ins (the contracts, the trusted reference
unit's reduceBlocksKernel, grader/contract/stand_in/'s scan): a task whose code alone
fails there is the task at fault ("fails with your reduce alone"). Only on a failure,
bounded (MAX_CASES, MAX_VARIANTS, TIME_LIMIT_S, the grade's budget), on either backend.
Where the search does not run, the per-task verdicts decide as before: a used task that
fails its own cases is named first (`task_at_fault`)."""
from __future__ import annotations

import time
from collections.abc import Sequence
from concurrent.futures import ThreadPoolExecutor, wait
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable, Mapping

from . import contract
from .budget import Budget
from .build_types import BuildResult
from .correctness.applications import Application, run_application
from .correctness.check import RunSetup
from ..config.assignment import Assignment, Task
from ..config.cases import Case
from ..results import AppResult, CaseResult, TaskResult

# The bounds of one grade's search (it runs only when an integration case or an
# application fails): the failing cases re-run per driver task (the smallest first),
# the builds made, and the seconds it may take (what is not done by then says so).
MAX_CASES = 2
MAX_VARIANTS = 3
TIME_LIMIT_S = 300.0
# A failing case's statuses that are re-run (a hang would cost a time limit per build).
_RERUN = ("fail", "error", "crash")

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


# ---- the search: the failing cases again, with one task the student's at a time ---------------

@dataclass(frozen=True)
class Variant:
    """A build with the student's code of one task (`task`) among the run's tasks, and
    the grader's stand-ins for the others; it compiles `driver_tasks`."""
    task: Task
    files: Mapping[str, bytes]
    driver_tasks: tuple[str, ...]
    why_not: str = ""            # it cannot be made (no stand-in for the task that ran)


@dataclass(frozen=True)
class Tried:
    """What one task's code alone did with the failing run: "fails", "passes", or
    "unknown" (`why`); `alone_in`: what the other tasks were there."""
    task: Task
    verdict: str
    alone_in: str = "the grader's stand-ins"
    why: str = ""


@dataclass(frozen=True)
class Located:
    """The search's answer for one failing run (`what`: the integration's cases, an
    application)."""
    what: str
    tried: tuple[Tried, ...]
    plural: bool = False         # `what` is several cases

    def message(self) -> str:
        return located_message(self)


@dataclass(frozen=True)
class Faults:
    """The task at fault of the grade's failing integration run and applications (by
    application name), each a message; empty where the search did not run."""
    integration: str = ""
    applications: Mapping[str, str] = field(default_factory=dict)
    seconds: float = 0.0
    builds: int = 0


def _alone(t: Task) -> str:
    return f"your {t.name} alone (task {t.number})"


def located_message(found: Located) -> str:
    """One line: the task(s) whose code alone reproduces the failure; else that it needs
    two tasks together; what could not be tried, and why."""
    fails = [t for t in found.tried if t.verdict == "fails"]
    passes = [t for t in found.tried if t.verdict == "passes"]
    unknown = [t for t in found.tried if t.verdict == "unknown"]
    parts: list[str] = []
    verb, it = ("fail", "they pass") if found.plural else ("fails", "it passes")
    if fails:
        parts.append(f"{found.what} {verb} with " + " and with ".join(
            f"your {t.task.name} alone (task {t.task.number}; the other tasks: {t.alone_in})" for t in fails))
        if passes:
            parts.append(f"{it} with " + " and with ".join(_alone(t.task) for t in passes))
    elif passes and not unknown:
        parts.append(f"{found.what} {verb} only with two or more of your tasks together: {it} with "
                     + " and with ".join(_alone(t.task) for t in passes)
                     + " (the other tasks: the grader's stand-ins): look for what one of them relies on "
                       "that the other's contract does not promise")
    else:
        parts.append(f"{found.what}: the task at fault was not found"
                     + (f" ({it} with " + " and with ".join(_alone(t.task) for t in passes) + ")"
                        if passes else ""))
    parts += [f"{_alone(t.task)} not tried: {t.why}" for t in unknown]
    return "; ".join(parts)


def suspects(task: Task, assignment: Assignment, origins: Mapping[str, str],
             files: Mapping[str, bytes], reference: Mapping[str, bytes]) -> list[Task]:
    """The tasks whose code a run of `task`'s driver tasks runs (itself and those it
    `uses`) that are the student's own: in the integration build as theirs (`origins`)
    and not byte for byte the reference's (trusted code is at fault nowhere)."""
    run = [task, *(t for t in assignment.tasks if t.name in task.uses)]
    return sorted((t for t in run if origins.get(t.file, "").startswith("yours")
                   and files.get(t.file) != reference.get(t.file)), key=lambda t: t.number)


def variants(task: Task, chosen: Sequence[Task], files: Mapping[str, bytes], root: Path) -> list[Variant]:
    """A build per suspect: its file alone (the task that ran: its own task build, the
    same files and driver tasks, so the grade's build is reused), the task that ran its
    stand-in (grader/contract/stand_in/) when the suspect is another."""
    out = []
    for t in chosen:
        if t.number == task.number:
            out.append(Variant(t, {t.file: files[t.file]}, task.driver_tasks))
            continue
        stand_in = contract.stand_in(root, task.file)
        out.append(Variant(t, {t.file: files[t.file], task.file: stand_in}, task.driver_tasks)
                   if stand_in is not None else
                   Variant(t, {}, task.driver_tasks, f"the grader has no stand-in for student/{task.file}"))
    return out


def _verdict(results: Sequence[CaseResult | AppResult]) -> str:
    """"fails" (a case or application failed), "passes" (all passed), else "unknown: why"."""
    statuses = [r.status for r in results]
    if any(s in _RERUN for s in statuses):
        return "fails"
    if statuses and all(s == "pass" for s in statuses):
        return "passes"
    return "unknown: its re-run ended " + (", ".join(sorted(set(statuses))) or "with nothing run")


def _key(v: Variant) -> tuple[tuple[tuple[str, bytes], ...], tuple[str, ...]]:
    return tuple(sorted(v.files.items())), v.driver_tasks


Build = Callable[[str, dict[str, bytes], dict[str, str], dict[str, str], tuple[str, ...]], BuildResult]
RunCases = Callable[[Path, str, list[Case]], list[CaseResult]]


@dataclass(frozen=True)
class Search:
    """What `locate` needs of the grade: how to build (the session's builder: its slot,
    its cache) and run cases (the grade's seed and timeouts), the run setup for the
    applications and their n; the student's files (by name), their paths in the
    submission, the integration build's origins, the reference's files, the checkout."""
    build: Build
    run_cases: RunCases
    setup: RunSetup
    app_n: int
    files: Mapping[str, bytes]
    paths: Mapping[str, str]
    origins: Mapping[str, str]
    reference: Mapping[str, bytes]
    root: Path


@dataclass
class _Run:
    """One failing run: a task's failing integration cases and failing applications."""
    cases: list[CaseResult] = field(default_factory=list)
    apps: list[AppResult] = field(default_factory=list)


def _failing_runs(assignment: Assignment, failing: Sequence[CaseResult],
                  apps: Sequence[AppResult]) -> dict[int, _Run]:
    """By the number of the task whose driver tasks ran: its re-runnable failing cases
    (MAX_CASES, the smallest first) and failed applications (not an exercise's: its own
    file is one more suspect the stand-ins do not cover)."""
    runs: dict[int, _Run] = {}
    for c in sorted((c for c in failing if c.status in _RERUN), key=lambda c: (c.case.n, c.case.label)):
        run = runs.setdefault(assignment.driver_task(c.case.task).task, _Run())
        if len(run.cases) < MAX_CASES:
            run.cases.append(c)
    for a in apps:
        if a.status == "fail" and not a.exercise:
            runs.setdefault(a.task, _Run()).apps.append(a)
    return runs


def locate(search: Search, assignment: Assignment, failing: Sequence[CaseResult],
           apps: Sequence[AppResult], budget: Budget, say: Callable[[str], None] = lambda line: None,
           time_limit_s: float = TIME_LIMIT_S) -> Faults:
    """The task at fault of the failing integration cases (`failing`) and applications
    (`apps`: the failed ones), from builds with one of the student's tasks each
    (`variants`): at most MAX_CASES cases per task and MAX_VARIANTS builds, within
    `time_limit_s` and the grade's `budget`. A run with one suspect, the other tasks it
    runs the reference's files as submitted, needs no build: it had that task alone."""
    started = time.monotonic()
    runs = _failing_runs(assignment, failing, apps)
    decided: dict[int, list[Tried]] = {}
    plans: dict[int, list[Variant]] = {}
    for number, run in runs.items():
        task = assignment.task(number)
        if not task.uses:
            continue   # one task's code ran: "it uses your reduce (task 2)" says it
        chosen = suspects(task, assignment, search.origins, search.files, search.reference)
        if len(chosen) == 1:
            decided[number] = [Tried(chosen[0], "fails", "the reference's own files, as you submitted them")]
        elif chosen:
            plans[number] = variants(task, chosen, search.files, search.root)
    if not decided and not plans:
        return Faults()
    unique = {_key(v): v for vs in plans.values() for v in vs if not v.why_not}
    wanted = list(unique)[:MAX_VARIANTS]

    def try_variant(key: tuple[tuple[tuple[str, bytes], ...], tuple[str, ...]]) -> dict[int, str]:
        """The variant built, and each run that wants it re-run on it: its verdict by run."""
        v = unique[key]
        label = f"task at fault: {_alone(v.task)}"
        stand_in = "(the grader's stand-in) student/"
        paths = {n: search.paths.get(n, f"student/{n}") if n == v.task.file else stand_in + n for n in v.files}
        origins = {n: "yours" if n == v.task.file else "the grader's stand-in" for n in v.files}
        say(f"build {label}")
        b = search.build(label, dict(v.files), origins, paths, v.driver_tasks)
        users = [n for n, vs in plans.items() if any(_key(x) == key for x in vs)]
        if not b.ok or b.binary is None:
            return {n: "unknown: " + ("its build was refused" if b.violations else "it does not build")
                    for n in users}
        out = {}
        for n in users:
            if budget.spent:
                out[n] = "unknown: " + budget.why
                continue
            got: list[CaseResult | AppResult] = []
            if runs[n].cases:
                got += search.run_cases(b.binary, b.key, [c.case for c in runs[n].cases])
            got += [run_application(search.setup, b.binary, Application(a.name, a.driver_task, ""), search.app_n)
                    for a in runs[n].apps]
            out[n] = _verdict(got)
            say(f"{label}: " + ", ".join(r.status for r in got))
        return out

    verdicts: dict[tuple[tuple[tuple[tuple[str, bytes], ...], tuple[str, ...]], int], str] = {}
    if wanted and not budget.spent:
        pool = ThreadPoolExecutor(max_workers=len(wanted), thread_name_prefix="fault")
        futures = {pool.submit(try_variant, k): k for k in wanted}
        done, _ = wait(futures, timeout=max(0.0, min(time_limit_s, budget.end - time.monotonic())))
        # What is not done by then is not waited for (its build and runs end on their own limits).
        pool.shutdown(wait=False, cancel_futures=True)
        for f in done:
            if f.exception() is None:
                verdicts.update({(futures[f], n): verdict for n, verdict in f.result().items()})
    for number, vs in plans.items():
        tried = []
        for v in vs:
            k = _key(v)
            verdict = verdicts.get((k, number), "")
            if v.why_not:
                tried.append(Tried(v.task, "unknown", why=v.why_not))
            elif k not in wanted:
                tried.append(Tried(v.task, "unknown", why=f"at most {MAX_VARIANTS} such builds a grade"))
            elif not verdict:
                tried.append(Tried(v.task, "unknown", why=budget.why if budget.spent else
                                   f"not done within the search's {time_limit_s:.0f} s"))
            elif verdict.startswith("unknown: "):
                tried.append(Tried(v.task, "unknown", why=verdict.removeprefix("unknown: ")))
            else:
                tried.append(Tried(v.task, verdict))
        decided[number] = tried
    integration = "; ".join(Located(_integration_what(runs[n].cases), tuple(decided[n]),
                                    len(runs[n].cases) > 1).message()
                            for n in sorted(runs) if n in decided and runs[n].cases)
    applications = {a.name: Located(f"the application {a.name}", tuple(decided[n])).message()
                    for n, run in runs.items() if n in decided for a in run.apps}
    return Faults(integration, applications, time.monotonic() - started, len(wanted))


def _integration_what(cases: Sequence[CaseResult]) -> str:
    shown = [f"a hidden case of {c.case.task}" if c.case.hidden else c.case.label for c in cases]
    return ("integration cases " if len(shown) > 1 else "integration ") + " and ".join(shown)
