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
from .build_types import BuildResult
from ..config.assignment import default_assignment
from ..config.boundary import beyond
from ..config.cases import Case
from ..config.draw import NOTHING, Drawn
from ..config.rubric import Rubric
from .correctness.applications import ExerciseBuild
from .correctness.check import COULD_NOT_RUN, PLACEHOLDER_REACHED, RunSetup, TimeoutTracker, run_batch
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
    """A part's cases: the case file's, then (a task's) its boundary family (but a case the
    file already has), then the grade's drawn hidden ones."""
    if part.task is not None:
        fixed = rubric.cases_for(part.task.driver_tasks, emulator)
        return fixed + beyond(drawn.boundary_for(part.task.driver_tasks), fixed) + \
            drawn.grade_for(part.task.driver_tasks)
    return rubric.cases_for(rubric.integration_tasks, emulator, rubric.integration.groups)


def sanitizer_runs(rubric: Rubric, drawn: Drawn, driver_tasks: tuple[str, ...]) -> list[tuple[str, list[Case]]]:
    """compute-sanitizer's runs, (tool, cases): the case file's by tool, then the drawn
    ones by tool (runs of their own, so that a drawn run's case stays hidden); none where
    the rubric runs the tool not at all."""
    runs = list(rubric.sanitize_for(driver_tasks).items())
    if rubric.sanitizer.run:
        runs += list(drawn.sanitize_for(driver_tasks).items())
    return runs


def race_check_cases(rubric: Rubric, drawn: Drawn, driver_tasks: tuple[str, ...], backend: str) -> list[list[Case]]:
    """The race check's cases on `backend`: its groups', then the grade's drawn race-check
    cases (a run of their own where they run apart, so that they stay hidden). The
    emulator's race check runs them; compute-sanitizer's racecheck on the GPU build
    (backend "") runs them instead where the emulator cannot build the file for a gap of
    its own."""
    runs = [rubric.cases_for(driver_tasks, True, rubric.race_check_groups),
            drawn.race_for(driver_tasks) if rubric.race_check_groups else []]
    return [[dataclasses.replace(c, backend=backend) for c in run] for run in runs if run]


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


def reached_placeholder(part: PartPlan, built: BuildOutcome, cases: Sequence[CaseResult]) -> CheckOutcome | None:
    """A task some of whose cases reached the handout's placeholder while they ran (the
    driver's exit status `placeholder`: a grading build's placeholders record themselves
    and do no work, however they were reached, harness/baselines.cuh): not attempted, 0
    points, as the compiled code's call of one is (rules_engine.placeholder_call); a bonus
    is not attempted; the integration build's message says so. None: no case reached one."""
    reached = [c for c in cases if c.placeholder]
    if not reached:
        return None
    if part.task is None:
        said = f"{len(reached)} of {len(cases)} cases {PLACEHOLDER_REACHED}"
        return CheckOutcome("graded", built.message or said, built.placeholder, built.violations, tuple(cases))
    said = (f"{part.path or part.task.file} {PLACEHOLDER_REACHED} ({len(reached)} of {len(cases)} "
            f"cases reached it): not attempted, 0 points")
    if part.task.bonus:
        return CheckOutcome("not_attempted", f"bonus not attempted: {said}", True, built.violations)
    return CheckOutcome("graded", built.message if built.placeholder and built.message else said, True,
                        built.violations, tuple(cases))


def checked(part: PartPlan, built: BuildOutcome, cases: list[CaseResult]) -> CheckOutcome:
    """A built part with its cases run."""
    if (placeholder := reached_placeholder(part, built, cases)) is not None:
        return placeholder
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

    A hang costs its own case: the build's other cases still run, with a shortened limit
    after [limits] max_timeouts_per_task timeouts, and none more (nor, for the integration
    build, the applications) once its timeouts have cost [limits] hang_budget_limits time
    limits and number [limits] hang_budget_case_share of its cases (RunSetup.case_limits). Nothing starts once
    the submission's `budget` is spent. `drawn`: the grade's secret cases (config/draw.py),
    added to each task's cases, race check and compute-sanitizer runs."""
    with _Grading(session, ready, parts, paths, say, budget, drawn) as grading:
        grading.start_builds(exercises)
        grading.take_builds()
        grading.racecheck_instead()
        grading.take_exercise_builds()
        grading.start_applications(exercises, applications)
        grading.say_builds(phases, phase_done)
        grading.take_cases(phase_done)
        grading.take_cross_checks()
        apps_done = grading.applications()
    return Checked(grading.built, grading.part_outcomes(), apps_done)


class _Grading:
    """The build and check stage at work: its pools, its builds' futures, and what came
    back so far (build_and_check's steps, in that order)."""

    def __init__(self, session: Session, ready: Callable[[], RunSetup], parts: Sequence[PartPlan],
                 paths: dict[str, str], say: Say, budget: Budget, drawn: Drawn):
        self.session, self.rubric, self.ready, self.parts = session, session.rubric, ready, parts
        self.paths, self.say, self.budget, self.drawn = paths, say, budget, drawn
        # This grade's timeouts alone: a copy of the same code in the class (the same build
        # key) starts with none, and gets the same grade.
        self.timeouts = TimeoutTracker()
        self.start = time.monotonic()
        self.built: dict[str, BuildOutcome] = {}
        self.race_builds: dict[str, BuildResult] = {}
        self.exercise_built: dict[str, BuildResult] = {}
        self.checks: list[tuple[PartPlan, CaseFutures]] = []
        self.race_checks: dict[str, CaseFutures] = {}
        self.sanitized: dict[str, list[Future[CaseResult]]] = {}
        self.outcomes: dict[str, CheckOutcome] = {}
        self.builds: dict[Future[BuildResult], tuple[PartPlan, bool]] = {}
        self.exercise_builds: dict[Future[BuildResult], ExercisePlan] = {}
        self.setup: RunSetup | None = None
        self.race_setup: RunSetup | None = None
        self.apps: Future[list[AppResult]] | None = None
        # compute-sanitizer's runs wait for their build's cases: threads of their own.
        self.sanitizing = ThreadPoolExecutor(max_workers=4 * len(parts), thread_name_prefix="sanitize")
        self.pool = ThreadPoolExecutor(max_workers=session.jobs + len(session.gpus) + 2,
                                       thread_name_prefix="grade")

    def __enter__(self) -> "_Grading":
        return self

    def __exit__(self, *exc: object) -> None:
        self.pool.shutdown()
        self.sanitizing.shutdown()

    def start_builds(self, exercises: Sequence[ExercisePlan]) -> None:
        """Every part with files (and on a GPU its emulator build, for the race check), and
        the exercises beside them (the applications run them later)."""
        session, race_builder = self.session, self.session.race_builder
        for part in self.parts:
            if part.files is None:
                continue
            self.say(f"build {part.label}")
            only = part.task.driver_tasks if part.task is not None else None  # None: integration's
            self.builds[self.pool.submit(session.build, session.builder, part.label, dict(part.files),
                                         dict(part.origins), self.paths, only)] = (part, False)
            if race_builder is not None and part.task is not None:
                self.builds[self.pool.submit(race_builder.build, f"{part.label} (emulator)", dict(part.files),
                                             dict(part.origins), self.paths, part.task.driver_tasks)] = (part, True)
        self.exercise_builds = {
            self.pool.submit(session.build, session.builder, f"exercise {e.exercise.name}",
                             dict(e.files), dict(e.origins), self.paths, None): e
            for e in exercises if e.files is not None}

    def all_cases(self, label: str, binary: Path, key: str, run: RunSetup, cases: list[Case]) -> list[CaseResult]:
        """A build's cases, in one process (on a GPU one CUDA context; on the emulator
        each case under the schedule seed a process of its own would get)."""
        if self.budget.spent:
            return [CaseResult(c, c.seed(self.session.seed), "not_run", self.budget.why) for c in cases]
        return run_batch(run, binary, key, cases, self.session.seed, self.timeouts,
                         lambda line: self.say(f"{label}: {line}"))

    def take_builds(self) -> None:
        """As each build is done: its cases started (a race build's, the race check's)."""
        for future in as_completed(self.builds):
            part, is_race = self.builds[future]
            b = future.result()
            if self.setup is None:
                self.setup = self.ready()
                self.race_setup = self.session.race_setup if self.session.race_builder is not None else None
            self.say(f"build {b.label}: {'ok' if b.ok else 'FAILED'} ({'cached' if b.cached else b.timing()})")
            if is_race:
                self.start_race_check(part, b)
            else:
                self.start_cases(part, b, self.setup)

    def start_race_check(self, part: PartPlan, b: BuildResult) -> None:
        assert part.task is not None
        self.race_builds[part.label] = b
        race_setup, rubric = self.race_setup, self.rubric
        if b.ok and b.binary is not None and race_setup is not None and not b.violations:
            race = [c for run in race_check_cases(rubric, self.drawn, part.task.driver_tasks, race_setup.backend.name)
                    for c in run]
            self.race_checks[part.label] = [self.pool.submit(self.all_cases, f"{b.label} (race check)", b.binary, b.key, race_setup, race)]

    def start_cases(self, part: PartPlan, b: BuildResult, setup: RunSetup) -> None:
        """A built part's cases, and (a task on a GPU) compute-sanitizer's runs beside them."""
        outcome = self.built[part.label] = judge_build(part, b)
        if not outcome.runs or b.binary is None:
            return
        session = self.session
        cases = cases_of(self.rubric, part, session.backend.reduced_sizes, self.drawn)
        futures = [self.pool.submit(self.all_cases, b.label, b.binary, b.key, setup, cases)]
        self.checks.append((part, futures))
        if session.sanitizer is not None and part.task is not None:
            # The task's own GPU build under compute-sanitizer, beside its cases.
            self.sanitized[part.label] = []
            for tool, tool_cases in sanitizer_runs(self.rubric, self.drawn, part.task.driver_tasks):
                self.sanitize(part, b.binary, setup, futures, tool, tool_cases)

    def sanitize(self, part: PartPlan, binary: Path, setup: RunSetup, after: CaseFutures, tool: str,
                 cases: list[Case]) -> None:
        """One compute-sanitizer run of a task's GPU build, once its cases (`after`) are done."""
        session, sanitizer = self.session, self.session.sanitizer
        assert sanitizer is not None
        shown = {n: self.paths.get(n, f"student/{n}") for n, origin in part.origins.items()
                 if origin.startswith("yours")}

        def run() -> CaseResult:
            done = cross_checks.sanitize_after(after, setup, sanitizer, tool, binary, cases, session.seed, shown)
            self.say(f"{part.label}: compute-sanitizer {tool}, {len(cases)} case(s), up to "
                     f"n={max(c.n for c in cases)}: done")
            return done

        self.sanitized.setdefault(part.label, []).append(self.sanitizing.submit(run))

    def racecheck_instead(self) -> None:
        """Where a task's file builds for the GPU but not for the emulator, only for a device
        function the emulator lacks (its gap: cross_checks.emulator_build_failed), the race
        check's cases run under compute-sanitizer's racecheck on the GPU build instead."""
        for part, futures in self.checks:
            race = self.race_builds.get(part.label)
            built = self.built.get(part.label)
            if (part.task is None or race is None or race.ok or self.session.sanitizer is None
                    or built is None or built.build.binary is None or self.setup is None
                    or not cross_checks.emulator_gaps(race.errors)):
                continue
            for cases in race_check_cases(self.rubric, self.drawn, part.task.driver_tasks, ""):
                self.sanitize(part, built.build.binary, self.setup, futures, "racecheck", cases)

    def take_exercise_builds(self) -> None:
        for exercise_future in as_completed(self.exercise_builds):
            exercise = self.exercise_builds[exercise_future]
            eb = self.exercise_built[exercise.exercise.file] = exercise_future.result()
            self.say(f"build {eb.label}: " + ("ok" if eb.ok else "FAILED"))

    def start_applications(self, exercises: Sequence[ExercisePlan], applications: Applications | None) -> None:
        """The applications, once the integration build's cases are done (none if one hung)."""
        integ = next((p for p in self.parts if p.task is None), None)
        integ_build = self.built.get(integ.label) if integ is not None else None
        integ_futures = [f for p, fs in self.checks if p.task is None for f in fs]

        def applications_after_cases(run_apps: Applications, binary: Path) -> list[AppResult]:
            of_exercises = {e.exercise.file: exercise_build(e, self.exercise_built.get(e.exercise.file))
                            for e in exercises}
            ready_builds = {f: b for f, b in of_exercises.items() if b is not None}
            cases = [c for f in integ_futures for c in f.result()]
            hung = [c for c in cases if c.status == "timeout" or c.summary.startswith(COULD_NOT_RUN)]
            # Hung in every case, or its hang allowance spent: the applications would hang too.
            if hung and (len(hung) == len(cases) or (
                    self.setup is not None and integ_build is not None
                    and self.setup.hang_allowance_spent(self.timeouts, integ_build.build.key))):
                return run_apps(binary, ready_builds, "not run: the integration build hung (in every "
                                                      "case, or past its hang allowance)")
            return run_apps(binary, ready_builds, self.budget.why if self.budget.spent else "")

        if applications is not None and integ_build is not None and integ_build.runs \
                and integ_build.build.binary is not None:
            self.apps = self.pool.submit(applications_after_cases, applications, integ_build.build.binary)

    def say_builds(self, phases: dict[str, float], phase_done: Say) -> None:
        phases["builds"] = time.monotonic() - self.start
        failed = sum(1 for o in self.built.values() if not o.build.ok)
        if self.built:
            phase_done(f"built: {len(self.built) - failed} of {len(self.built)} build(s) ok"
                       + (f", {failed} failed" if failed else "") + f" ({phases['builds']:.0f} s)")

    def take_cases(self, phase_done: Say) -> None:
        """The GPU cases first (then the race check's: take_cross_checks), in the rubric's order."""
        outcomes = self.outcomes
        for part, futures in self.checks:
            check = outcomes[part.label] = checked(part, self.built[part.label],
                                                   [r for f in futures for r in f.result()])
            self.say(f"{part.label}: {check.passed}/{check.total} cases passed")
        if self.checks:
            passed = sum(outcomes[p.label].passed for p, _ in self.checks)
            total = sum(outcomes[p.label].total for p, _ in self.checks)
            phase_done(f"cases: {passed}/{total} passed (" + ", ".join(
                f"{p.label} {outcomes[p.label].passed}/{outcomes[p.label].total}" for p, _ in self.checks)
                + f"; {time.monotonic() - self.start:.0f} s)")

    def take_cross_checks(self) -> None:
        """The race check's cases and compute-sanitizer's findings, into their part's outcome."""
        for label, futures in self.race_checks.items():
            done = [r for f in futures for r in f.result()]
            if label in self.outcomes:
                o = self.outcomes[label]
                self.outcomes[label] = dataclasses.replace(o, cases=(*o.cases, *done), race_note=(
                    f"race check: {sum(c.passed for c in done)}/{len(done)} "
                    "cases passed on the CPU emulator (lanes in random order)"))
        for label, sanitizer_futures in self.sanitized.items():
            self.outcomes[label] = cross_checks.say_sanitizer_findings(
                self.outcomes[label], [f.result() for f in sanitizer_futures])

    def applications(self) -> tuple[AppResult, ...]:
        return tuple(self.apps.result()) if self.apps is not None else ()

    def part_outcomes(self) -> dict[str, CheckOutcome]:
        """Every part's CheckOutcome, in the parts' order: a part not run (unbuilt, or its
        build refused) says why; a task's cross-checked."""
        for part in self.parts:
            check = self.outcomes.get(part.label) or (not_run(self.built[part.label]) if part.label in self.built
                                                      else unbuilt(part))
            if part.task is not None:
                check = cross_checked(self.session, part, check, self.race_builds.get(part.label),
                                      self.race_setup is not None)
            self.outcomes[part.label] = check
        return {p.label: self.outcomes[p.label] for p in self.parts}
