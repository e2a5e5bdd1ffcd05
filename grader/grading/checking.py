"""The build and check stage: every planned part built at once, each one's cases run as
soon as it is built (untrusted run, trusted verify); on a GPU also the race check on the
emulator and compute-sanitizer. It returns, per part, a BuildOutcome and a CheckOutcome
(grader/grading/outcomes.py), and the applications; it changes no shared result."""
from __future__ import annotations

import dataclasses
import time
from concurrent.futures import Future, ThreadPoolExecutor, as_completed
from dataclasses import dataclass
from pathlib import Path
from typing import Callable, Mapping, Sequence

from . import cross_checks
from .budget import NO_BUDGET, Budget
from .build import BuildResult
from ..config.assignment import default_assignment
from ..config.cases import Case
from ..config.draw import NOTHING, Drawn
from ..config.rubric import Rubric
from .correctness.applications import ExerciseBuild
from .correctness.check import RunSetup, run_batch
from .checks.rules_engine import placeholder_call
from .outcomes import BuildOutcome, CheckOutcome, PartPlan, not_run, unbuilt
from .plan import ExercisePlan, exercise_build
from ..results import AppResult, BuildInfo, CaseResult, Violation
from .session import Session

Say = Callable[[str], None]
CaseFutures = list["Future[list[CaseResult]]"]
# The applications, given the integration build's driver and the exercises' builds (by
# file), and why none runs ("": they run).
Applications = Callable[[Path, dict[str, ExerciseBuild], str], list[AppResult]]


@dataclass(frozen=True)
class Checked:
    """The build and check stage's answer: by part label, each built part's BuildOutcome
    and every part's CheckOutcome; the applications."""

    builds: Mapping[str, BuildOutcome]
    checks: Mapping[str, CheckOutcome]
    applications: tuple[AppResult, ...] = ()


def cases_of(rubric: Rubric, part: PartPlan, emulator: bool, drawn: Drawn = NOTHING) -> list[Case]:
    """A part's cases: the case file's, then (a task's) the grade's drawn hidden ones."""
    if part.task is not None:
        return rubric.cases_for(part.task.driver_tasks, emulator) + drawn.grade_for(part.task.driver_tasks)
    return rubric.cases_for(rubric.integration_tasks, emulator, rubric.integration.groups)


def sanitizer_runs(rubric: Rubric, drawn: Drawn, driver_tasks: tuple[str, ...]) -> list[tuple[str, list[Case]]]:
    """compute-sanitizer's runs, (tool, cases): the case file's by tool, then the drawn
    ones by tool (runs of their own, so that a drawn run's case stays hidden); none where
    the rubric runs the tool not at all."""
    runs = list(rubric.sanitize_for(driver_tasks).items())
    if rubric.sanitizer.run:
        runs += list(drawn.sanitize_for(driver_tasks).items())
    return runs


# ---- what a build decides, what cases say: pure, one outcome into the next --------------------

def forbidden_message(part: PartPlan, violations: Sequence[Violation], fate: str) -> str:
    """The message of a part whose files break the rules (as written, or as compiled):
    `fate`, "forbidden", 0 points."""
    files = ", ".join(sorted({v.file for v in violations}))
    if part.task is not None:
        return f"{files}: {len(violations)} forbidden construct(s) {fate}, 0 points"
    return f"not run: {files} break(s) the rules (see the tasks)"


def judge_build(part: PartPlan, b: BuildResult) -> BuildOutcome:
    """What the build of `part` decides before a case runs."""
    info = None if (b.violations and b.binary is None) else \
        BuildInfo(b.label, b.ok, b.seconds, b.cached, b.errors, b.origins)   # refused unbuilt: none
    if b.violations:
        fate = "in the compiled code: not run" if b.binary else "as the compiler sees it: not built"
        return BuildOutcome(b, "forbidden", forbidden_message(part, b.violations, fate),
                            part.placeholder, tuple(b.violations) if part.task is not None else (), info)
    if not b.ok or b.binary is None:
        return BuildOutcome(b, "build_failed", "does not compile", part.placeholder, (), info)
    if part.task is not None:
        call = placeholder_call(part.path, part.task.bonus, b.placeholders, part.message)
        if call is not None:
            return BuildOutcome(b, "not_attempted" if call.not_attempted else "built", call.message,
                                True, (), info)
    return BuildOutcome(b, "built", part.message, part.placeholder, (), info)


def what_is_not_implemented(cases: Sequence[CaseResult], message: str) -> str:
    """A task some of whose driver tasks still have the handout's stub while others run
    says which ones ("only scan-exclusive is not implemented"); else `message`."""
    by_task: dict[str, list[bool]] = {}
    for c in cases:
        by_task.setdefault(c.case.task, []).append(c.status == "not_implemented")
    stubbed = sorted(t for t, flags in by_task.items() if all(flags))
    if stubbed and len(stubbed) < len(by_task):
        verb = "is" if len(stubbed) == 1 else "are"
        return (f"only {', '.join(stubbed)} {verb} not implemented (the handout's TODO stub "
                f"is still in place there); {', '.join(sorted(set(by_task) - set(stubbed)))} "
                "ran")
    return message


def when_only_order_matters(cases: Sequence[CaseResult], message: str) -> str:
    """A task that passes every case of the commutative operators and fails only with
    the others (mssp, the segmented sum) puts operands in the wrong order somewhere:
    the message says so, in the word the lectures use (when it has none yet)."""
    assignment = default_assignment()
    failing = {c.case.op for c in cases if not c.passed and c.status != "not_implemented"}
    if not failing or message:
        return message
    commutative = {o.name for o in assignment.operators if o.commutative}
    if failing & commutative or not any(c.passed for c in cases if c.case.op in commutative):
        return message
    return (f"fails only with {', '.join(sorted(failing))}, whose operator is not commutative: "
            "somewhere the operands are combined out of order (keep apply(earlier, later) "
            "in the shuffles, across warps, across tiles and blocks)")


def checked(part: PartPlan, built: BuildOutcome, cases: list[CaseResult]) -> CheckOutcome:
    """A built part with its cases run."""
    message = built.message
    if part.task is not None:
        message = when_only_order_matters(cases, what_is_not_implemented(cases, message))
    return CheckOutcome("graded", message, built.placeholder, built.violations, tuple(cases))


def cross_checked(session: Session, part: PartPlan, check: CheckOutcome, race_build: BuildResult | None,
                  race_ready: bool) -> CheckOutcome:
    """A task's correctness with what its GPU grade learns beyond its own cases: its
    emulator build (`race_build`; `race_ready`: the emulator's harness and reference are
    there), where the backends disagree, the notes of what did not run."""
    rubric = session.rubric
    race_note = check.race_note
    if race_build is not None and race_build.violations and check.status != "forbidden":
        # The same files break the rules as the emulator's compiler sees them (code
        # behind #ifdef __CUDACC__ is checked on both sides).
        return dataclasses.replace(check, status="forbidden", cases=(), violations=tuple(race_build.violations),
                                   message=forbidden_message(part, race_build.violations,
                                                             "in the emulator build: not counted"))
    # Only where the emulator's own harness and reference are there (race_ready): a
    # machine that cannot build the emulator at all is no finding against the student.
    if race_build is not None and not race_build.ok and check.status == "graded" \
            and part.task is not None and race_ready:
        check = cross_checks.emulator_build_failed(check, race_build, rubric.cases_for(
            part.task.driver_tasks, True, rubric.race_check_groups), session.seed)
        race_note = check.race_note
    elif race_build is not None and not race_build.ok and not race_ready:
        race_note = session.race_note or "race check not run"
    elif race_build is not None and not race_build.ok:
        race_note = ("race check not run: the file does not build for the CPU emulator "
                     f"({cross_checks.first_error(race_build.errors)})")
    elif check.status != "graded":
        return check
    elif race_ready and not race_note:
        race_note = "race check not run"
    elif not race_ready and session.race_note:
        race_note = session.race_note
    check = dataclasses.replace(check, race_note=race_note)
    if check.status == "graded":
        check = cross_checks.say_where_they_disagree(check)
        if session.sanitizer_note:
            check = dataclasses.replace(check, race_note="; ".join(
                x for x in (check.race_note, session.sanitizer_note) if x))
    return check


# ---- build and check: every build at once, each one's cases as soon as it is built -------------

def build_and_check(session: Session, ready: Callable[[], RunSetup], parts: Sequence[PartPlan],
                    paths: dict[str, str], say: Say, phases: dict[str, float],
                    phase_done: Say = lambda line: None, exercises: Sequence[ExercisePlan] = (),
                    applications: Applications | None = None, budget: Budget = NO_BUDGET,
                    drawn: Drawn = NOTHING) -> Checked:
    """Builds every part that has files and runs its cases (the GPU's in one batch
    process per build, the emulator's one process each). On a GPU, each task's files
    are also built for the emulator, whose cases there run with lanes in random order
    (the race check). A build compiles only the driver tasks it runs. `applications`
    runs once everything is built, beside the cases. `ready` gives the run setup (the
    builds start before it is there); `phases` hears how long the builds took.

    On the emulator a build's smallest case runs first, alone: a build that hangs there
    costs one time limit, and its other cases (and, for the integration build, the
    applications) are not started ([limits] max_timeouts_per_task). Nothing starts once
    the submission's `budget` is spent. `drawn`: the grade's secret cases (config/draw.py),
    added to each task's cases, race check and compute-sanitizer runs."""
    rubric = session.rubric
    start = time.monotonic()
    race_builder = session.race_builder
    workers = session.jobs + len(session.gpus) + 2
    built: dict[str, BuildOutcome] = {}
    race_builds: dict[str, BuildResult] = {}
    exercise_built: dict[str, BuildResult] = {}
    checks: list[tuple[PartPlan, CaseFutures]] = []
    race_checks: dict[str, CaseFutures] = {}
    sanitized: dict[str, list[Future[CaseResult]]] = {}
    # compute-sanitizer's runs wait for their build's cases: threads of their own.
    sanitizing = ThreadPoolExecutor(max_workers=4 * len(parts), thread_name_prefix="sanitize")
    with sanitizing, ThreadPoolExecutor(max_workers=workers, thread_name_prefix="grade") as pool:
        builds: dict[Future[BuildResult], tuple[PartPlan, bool]] = {}
        for part in parts:
            if part.files is None:
                continue
            say(f"build {part.label}")
            only = part.task.driver_tasks if part.task is not None else None  # None: integration's
            builds[pool.submit(session.build, session.builder, part.label, dict(part.files),
                               dict(part.origins), paths, only)] = (part, False)
            if race_builder is not None and part.task is not None:
                builds[pool.submit(race_builder.build, f"{part.label} (emulator)", dict(part.files),
                                   dict(part.origins), paths, part.task.driver_tasks)] = (part, True)

        # The exercises build beside the parts; the applications run them later.
        exercise_builds = {pool.submit(session.build, session.builder, f"exercise {e.exercise.name}",
                                       dict(e.files), dict(e.origins), paths, None): e
                           for e in exercises if e.files is not None}

        def all_cases(binary: Path, key: str, run: RunSetup, cases: list[Case]) -> list[CaseResult]:
            """A build's cases, in one process (on a GPU one CUDA context; on the emulator
            each case under the schedule seed a process of its own would get)."""
            if budget.spent:
                return [CaseResult(c, c.seed(session.seed), "not_run", budget.why) for c in cases]
            return run_batch(run, binary, key, cases, session.seed, session.timeouts)

        setup: RunSetup | None = None
        race_setup: RunSetup | None = None
        for future in as_completed(builds):
            part, is_race = builds[future]
            b = future.result()
            if setup is None:
                setup = ready()
                race_setup = session.race_setup if session.race_builder is not None else None
            say(f"build {b.label}: {'ok' if b.ok else 'FAILED'} ({'cached' if b.cached else b.timing()})")
            if is_race:
                assert part.task is not None
                race_builds[part.label] = b
                if b.ok and b.binary is not None and race_setup is not None and not b.violations:
                    race = [dataclasses.replace(c, backend=race_setup.backend.name)
                            for c in rubric.cases_for(part.task.driver_tasks, True, rubric.race_check_groups)
                            + (drawn.race_for(part.task.driver_tasks) if rubric.race_check_groups else [])]
                    race_checks[part.label] = [pool.submit(all_cases, b.binary, b.key, race_setup, race)]
                continue
            outcome = built[part.label] = judge_build(part, b)
            if not outcome.runs or b.binary is None:
                continue
            cases = cases_of(rubric, part, session.backend.reduced_sizes, drawn)
            futures = [pool.submit(all_cases, b.binary, b.key, setup, cases)]
            checks.append((part, futures))
            if session.sanitizer is not None and part.task is not None:
                # The task's own GPU build under compute-sanitizer, beside its cases.
                shown = {n: paths.get(n, f"student/{n}") for n, origin in part.origins.items()
                         if origin.startswith("yours")}
                sanitized[part.label] = [
                    sanitizing.submit(cross_checks.sanitize_after, futures, setup, session.sanitizer, tool,
                                      b.binary, tool_cases, session.seed, shown)
                    for tool, tool_cases in sanitizer_runs(rubric, drawn, part.task.driver_tasks)]
        for exercise_future in as_completed(exercise_builds):
            exercise = exercise_builds[exercise_future]
            eb = exercise_built[exercise.exercise.file] = exercise_future.result()
            say(f"build {eb.label}: " + ("ok" if eb.ok else "FAILED"))

        integ = next((p for p in parts if p.task is None), None)
        integ_build = built.get(integ.label) if integ is not None else None
        integ_futures = [f for p, fs in checks if p.task is None for f in fs]

        def applications_after_cases(run_apps: Applications, binary: Path) -> list[AppResult]:
            """The applications after the integration build's cases: none if one hung."""
            of_exercises = {e.exercise.file: exercise_build(e, exercise_built.get(e.exercise.file))
                            for e in exercises}
            ready_builds = {f: b for f, b in of_exercises.items() if b is not None}
            if any(c.status == "timeout" for f in integ_futures for c in f.result()):
                return run_apps(binary, ready_builds, "not run: the integration build hung (a case timed out)")
            return run_apps(binary, ready_builds, budget.why if budget.spent else "")

        apps = pool.submit(applications_after_cases, applications, integ_build.build.binary) \
            if applications is not None and integ_build is not None and integ_build.runs \
            and integ_build.build.binary is not None else None
        phases["builds"] = time.monotonic() - start
        failed = sum(1 for o in built.values() if not o.build.ok)
        if built:
            phase_done(f"built: {len(built) - failed} of {len(built)} build(s) ok"
                       + (f", {failed} failed" if failed else "") + f" ({phases['builds']:.0f} s)")

        # The GPU cases first, then the race check's, in the rubric's order.
        outcomes: dict[str, CheckOutcome] = {}
        for part, futures in checks:
            check = outcomes[part.label] = checked(part, built[part.label],
                                                   [r for f in futures for r in f.result()])
            say(f"{part.label}: {check.passed}/{check.total} cases passed")
        if checks:
            passed = sum(outcomes[p.label].passed for p, _ in checks)
            total = sum(outcomes[p.label].total for p, _ in checks)
            phase_done(f"cases: {passed}/{total} passed (" + ", ".join(
                f"{p.label} {outcomes[p.label].passed}/{outcomes[p.label].total}" for p, _ in checks)
                + f"; {time.monotonic() - start:.0f} s)")
        for label, futures in race_checks.items():
            done = [r for f in futures for r in f.result()]
            if label in outcomes:
                o = outcomes[label]
                outcomes[label] = dataclasses.replace(o, cases=(*o.cases, *done), race_note=(
                    f"race check: {sum(c.passed for c in done)}/{len(done)} "
                    "cases passed on the CPU emulator (lanes in random order)"))
        for label, sanitizer_futures in sanitized.items():
            outcomes[label] = cross_checks.say_sanitizer_findings(
                outcomes[label], [f.result() for f in sanitizer_futures])
        apps_done = tuple(apps.result()) if apps is not None else ()
    for part in parts:
        check = outcomes.get(part.label) or (not_run(built[part.label]) if part.label in built
                                             else unbuilt(part))
        if part.task is not None:
            check = cross_checked(session, part, check, race_builds.get(part.label), race_setup is not None)
        outcomes[part.label] = check
    return Checked(built, {p.label: outcomes[p.label] for p in parts}, apps_done)
