"""Grading one submission: the pipeline, one stage a function.

  collect -> plan (one Part per task: its file among the reference's files, checked for
  forbidden constructs; one integration Part of all the student's files) -> build and
  check (untrusted run, trusted verify; on a GPU also the race check on the emulator)
  -> time (GPU, correct tasks only) -> score.
Each stage reads and fills the same typed Parts; the SubmissionResult they fill is the
model every report is written from (grader/results.py).
"""
from __future__ import annotations

import dataclasses
import datetime
import shutil
import tempfile
import time
import traceback
from concurrent.futures import Future, ThreadPoolExecutor, as_completed
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable

from .. import __version__
from . import cross_checks
from .correctness.applications import ExerciseBuild, not_run, run_applications
from ..config.assignment import Exercise, default_assignment
from .budget import NO_BUDGET, Budget
from .build import BuildResult
from ..config.cases import Case
from .correctness.check import RunSetup, run_batch, run_case
from .collect import Submission, collect, source_digest, submission_name
from .checks.forbidden import same_code
from .checks.rules_engine import not_attempted
from .timing import PerfJob, TaskTiming, measure_all
from ..results import (AppResult, BuildInfo, CaseResult, IntegrationResult, MachineInfo,
                            SubmissionResult, TaskResult, Violation)
from ..config.rubric import PerfCase, Rubric, TaskRubric
from .score import score
from .session import GraderError, Session

Say = Callable[[str], None]


@dataclass
class Part:
    """One graded part of a submission: a task (the student's file for it built with the
    reference's other files) or the integration build (every student file together)."""

    label: str                               # "task 2", "integration"
    outcome: TaskResult | IntegrationResult  # what the reports show
    task: TaskRubric | None = None           # None: the integration build
    files: dict[str, bytes] | None = None    # None: not built (missing, forbidden, no submission)
    origins: dict[str, str] = field(default_factory=dict)
    build: BuildResult | None = None         # the driver it was built into
    race_build: BuildResult | None = None    # GPU grades: the same files for the emulator


@dataclass
class ExercisePart:
    """The integration build with the student's exercise file (handout/apps runs it). Apart
    from the integration build (which has the reference's), so an exercise that does not
    compile costs no case."""

    exercise: Exercise
    files: dict[str, bytes] | None = None    # None: not built (`problem` or the stub stands)
    origins: dict[str, str] = field(default_factory=dict)
    problem: str = ""                        # why the student's exercise cannot run
    unwritten: str = ""                      # not submitted, or the handout's stub
    build: BuildResult | None = None

    def outcome(self) -> ExerciseBuild | None:
        """What the applications run it with; None: not planned (no integration build)."""
        if self.unwritten:
            return ExerciseBuild(None, self.unwritten, not_implemented=True)
        if self.problem:
            return ExerciseBuild(None, self.problem)
        b = self.build
        if b is None:
            return None
        if b.violations:
            return ExerciseBuild(None, f"student/{self.exercise.file} breaks the rules: "
                                       + "; ".join(v.message for v in b.violations[:2]))
        if not b.ok or b.binary is None:
            return ExerciseBuild(None, f"student/{self.exercise.file} does not compile: "
                                       f"{cross_checks.first_error(b.errors)}")
        return ExerciseBuild(b.binary, "")


def grade(session: Session, path: Path, on_event: Say | None = None,
          on_phase: Say | None = None) -> SubmissionResult:
    """Grades the submission at `path` (a folder or an archive). Never raises for what
    the submission is or does; a grader bug becomes the result's error. `on_event` hears
    every step; `on_phase` one line as each phase ends (built, cases, timed)."""
    say = on_event or (lambda line: None)
    phase = on_phase or (lambda line: None)
    start = time.monotonic()
    where = Path(tempfile.mkdtemp(prefix="submission-", dir=session.workdir))
    # The reference and its probes get ready while the submission's builds run (they
    # need only the prebuilt harness); a setup problem still stops the grader.
    with ThreadPoolExecutor(max_workers=1, thread_name_prefix="prepare") as preparing:
        ready = preparing.submit(session.prepare)
        try:
            result = _grade(session, path, ready.result, where, say, phase)
        except GraderError:
            raise
        except Exception as e:  # a grader bug must not lose the other submissions of a batch
            failed = ready.exception()
            if failed is not None:
                raise failed from e
            result = new_result(session, path)
            result.error = f"internal grader error ({type(e).__name__}: {e}); please report it"
            result.notes.append(traceback.format_exc(limit=8))
            score(result, session.rubric)
        finally:
            shutil.rmtree(where, ignore_errors=True)
    result.machine = session.machine_info()
    result.seconds = time.monotonic() - start
    result.rubric_digest = session.rubric.digest
    result.source_digest = source_digest(path, session.rubric.submission.max_total_bytes)
    return result


def _grade(session: Session, path: Path, ready: Callable[[], RunSetup], where: Path, say: Say,
           phase_done: Say) -> SubmissionResult:
    phase = time.monotonic()
    sub = collect(path, session.rubric.submitted_files, session.rubric.submission, where)
    result = new_result(session, path, sub)
    parts = plan(session, sub, result)
    integ = next(p for p in parts if p.task is None)
    exercises = plan_exercises(session, sub, integ) if session.rubric.integration.applications else []
    result.timings["collect"] = time.monotonic() - phase

    def applications(skip: str = "") -> list[AppResult]:
        """The applications on the integration build, once it and the exercises are built
        and its cases have run (beside the other builds' cases); `skip`: why none runs."""
        if not (integ.build is not None and integ.build.ok and integ.build.binary is not None
                and not integ.build.violations):
            return []
        started = time.monotonic()
        n = (session.rubric.integration.application_emulator_n if session.backend.reduced_sizes
             else session.rubric.integration.application_n)
        if skip:
            return not_run(ready(), n, skip)
        builds = {e.exercise.file: e.outcome() for e in exercises}
        done = run_applications(ready(), integ.build.binary, n,
                                {f: b for f, b in builds.items() if b is not None})
        result.timings["applications"] = time.monotonic() - started
        return done

    phase = time.monotonic()
    budget = Budget(phase + session.rubric.limits.budget_s, session.rubric.limits.budget_s)
    apps = build_and_check(session, ready, parts, {n: f.path for n, f in sub.files.items()}, say,
                           result.timings, phase_done, exercises,
                           applications if session.rubric.integration.applications else None, budget)
    result.timings["builds+cases"] = time.monotonic() - phase
    if apps:
        result.applications = apps
        phase_done("applications: " + ", ".join(f"{a.name} {a.status}" for a in result.applications))
    phase = time.monotonic()
    result.perf_seed = session.draw_perf_seed()
    timed = time_tasks(session, ready(), [(part.task, part.outcome, part.build) for part in parts
                                          if part.task is not None and isinstance(part.outcome, TaskResult)],
                       say, result.perf_seed, budget)
    for tr in result.tasks:
        if tr.number in timed:
            timed[tr.number].into(tr)
    result.timings["performance"] = time.monotonic() - phase
    measured = [tr for tr in result.tasks if tr.perf_status in ("measured", "failed")]
    if measured:
        phase_done("timed: " + ", ".join(
            f"task {tr.number} " + (f"{tr.perf[0].slowdown:.2f}x the reference"
                                    if tr.perf and tr.perf[0].slowdown else "failed")
            for tr in measured) + f" ({result.timings['performance']:.0f} s)")
    score(result, session.rubric)
    return result


# ---- the result before grading ---------------------------------------------------------------

def new_result(session: Session, path: Path, sub: Submission | None = None) -> SubmissionResult:
    """The result with every task not yet graded, and what collecting found."""
    rubric = session.rubric
    result = SubmissionResult(
        name=sub.name if sub else submission_name(path), origin=sub.origin if sub else str(path),
        kind=sub.kind if sub else ("folder" if path.is_dir() else "archive"),
        # The machine's description (its copy bandwidth measured on the GPU) is filled in
        # when the grading ends: nothing waits for it before.
        seed=session.seed, machine=MachineInfo(session.backend.name),
        graded_at=datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds"),
        grader_version=__version__, rubric=str(rubric.path),
        reproduce=session.reproduce_command(path))
    if sub is not None:
        result.files = {n: f.path for n, f in sub.files.items()}
        # A refused file is said by its reason; an exercise's or a bonus task's is optional.
        optional = session.rubric.optional_files
        result.missing = {n: c for n, c in sub.missing.items() if n not in sub.refused and n not in optional}
        result.ignored = list(sub.ignored)
        result.notes = list(sub.notes)
        result.error = sub.error
    status = "graded" if sub is not None else "not_graded"
    result.tasks = [TaskResult(t.number, t.name, t.title, t.file, status=status,
                               correctness_max=t.correctness_points,
                               performance_max=t.performance_points) for t in rubric.tasks]
    result.integration = IntegrationResult(max_points=rubric.integration.points)
    return result


# ---- plan: what is built, from which files --------------------------------------------------

def plan(session: Session, sub: Submission, result: SubmissionResult) -> list[Part]:
    """A Part for each task and one for the integration build. A task whose file is
    missing or uses forbidden constructs is not built (its outcome says why); the
    integration build needs every file."""
    rubric = session.rubric
    reference = session.builder.reference_files
    parts: list[Part] = []
    for t, tr in zip(rubric.tasks, result.tasks):
        part = Part(f"task {t.number}", tr, task=t)
        parts.append(part)
        found = sub.files.get(t.file)
        handout = session.handout_files.get(t.file)
        tr.digest = found.sha256 if found is not None else ""
        if t.bonus and t.file not in sub.refused and (
                found is None or found.data == handout or (handout is not None and same_code(
                    found.text, handout.decode("utf-8", errors="replace")))):
            # Most students leave the bonus alone: not built, no time spent on it.
            tr.status = "not_attempted"
            tr.placeholder = found is not None
            tr.path = found.path if found is not None else None
            why = f"no {t.file} in the submission" if found is None else \
                f"{t.file} is still the handout placeholder"
            tr.message = "not graded: see the submission's error above" if sub.error else \
                f"bonus not attempted: {why} (not built; worth nothing, costs nothing)"
            continue
        if found is None:
            tr.status = "missing"
            close = sub.missing.get(t.file, [])
            if t.file in sub.refused:
                tr.message = f"{t.file} was refused: {sub.refused[t.file]}"
            elif sub.error:
                # Said once, as the submission's error: the tasks only point at it.
                tr.message = "not graded: see the submission's error above"
            else:
                tr.message = f"no {t.file} in the submission" + \
                    (f" (found {', '.join(close)}: the file must be named exactly {t.file})" if close else "")
            continue
        tr.path = found.path
        tr.unchanged = found.data == handout
        tr.placeholder = tr.unchanged or (handout is not None and same_code(
            found.text, handout.decode("utf-8", errors="replace")))
        if tr.placeholder and rubric.correctness.zero_for_placeholders:
            tr.message = (f"{'unchanged from' if tr.unchanged else 'still'} the handout's placeholder"
                          f"{'' if tr.unchanged else ' (only comments or spacing changed)'}: "
                          "graded, but worth no points (rubric: [correctness] zero_for_placeholders)")
        tr.identical_to_reference = found.data == reference.get(t.file)
        # The code rules run in the build, on the unit as the compiler sees it
        # (grader/grading/build.py: _gate); a file that breaks them is not built.
        part.files = {**reference, t.file: found.data}
        part.origins = {n: "reference" for n in part.files}
        part.origins[t.file] = f"yours ({found.path})"

    integ = Part("integration", result.integration)
    blocked = [tr for tr in result.tasks if tr.status in ("missing", "forbidden")]
    if sub.error:
        integ.outcome.message = "not run: nothing to grade"
    elif blocked:
        integ.outcome.message = "not run: " + "; ".join(
            f"{tr.file} {'is missing' if tr.status == 'missing' else 'has forbidden constructs'}"
            for tr in blocked)
    else:
        # The exercises are the reference's here (the cases never call them): the builds
        # of a submission with one file of its own stay one build.
        # A bonus task not attempted keeps the reference's file, which the integration
        # cases do not run: so a submission with one file of its own still shares one
        # build between that task and the integration run.
        attempted = [t for t, tr in zip(rubric.tasks, result.tasks) if tr.status != "not_attempted"]
        integ.files = {**reference, **{t.file: sub.files[t.file].data for t in attempted}}
        integ.origins = {n: "reference" for n in integ.files}
        integ.origins.update({t.file: f"yours ({sub.files[t.file].path})" for t in attempted})
    parts.append(integ)
    return parts


def plan_exercises(session: Session, sub: Submission, integ: Part) -> list[ExercisePart]:
    """A build for each exercise the submission changed from the handout's stub, on top
    of the integration build's files. One not submitted, or still the stub, is not run:
    the integration build holds the reference's."""
    parts = []
    for e in session.rubric.assignment.exercises:
        found = sub.files.get(e.file)
        if integ.files is None:
            continue
        part = ExercisePart(e)
        if found is None or found.data == session.handout_files.get(e.file):
            part.unwritten = (f"needs the exercise {e.name} (student/{e.file}): "
                              + ("its TODO stub is still in place" if found else "not in the submission"))
            parts.append(part)
            continue
        part.files = {**integ.files, e.file: found.data}
        part.origins = {**integ.origins, e.file: f"yours ({found.path})"}
        parts.append(part)
    return parts


def cases_of(rubric: Rubric, part: Part, emulator: bool) -> list[Case]:
    if part.task is not None:
        return rubric.cases_for(part.task.driver_tasks, emulator)
    return rubric.cases_for(rubric.integration_tasks, emulator, rubric.integration.groups)


# ---- build and check: every build at once, each one's cases as soon as it is built -------------

CaseFutures = list["Future[list[CaseResult]]"]


def build_and_check(session: Session, ready: Callable[[], RunSetup], parts: list[Part], paths: dict[str, str],
                    say: Say, timings: dict[str, float], phase_done: Say = lambda line: None,
                    exercises: list[ExercisePart] | None = None,
                    applications: Callable[[str], list[AppResult]] | None = None,
                    budget: Budget = NO_BUDGET) -> list[AppResult]:
    """Builds every Part that has files and runs its cases (the GPU's in one batch
    process per build, the emulator's one process each). On a GPU, each task's files
    are also built for the emulator, whose cases there run with lanes in random order
    (the race check). A build compiles only the driver tasks it runs. `applications`
    runs once everything is built, beside the cases; what it returns is returned.
    `ready` gives the run setup (the builds start before it is there).

    On the emulator a build's smallest case runs first, alone: a build that hangs there
    costs one time limit, and its other cases (and, for the integration build, the
    applications) are not started ([limits] max_timeouts_per_task). Nothing starts once
    the submission's `budget` is spent."""
    rubric = session.rubric
    start = time.monotonic()
    race_builder = session.race_builder
    workers = session.jobs + len(session.gpus) + 2
    checks: list[tuple[Part, CaseFutures]] = []
    race_checks: list[tuple[Part, CaseFutures]] = []
    sanitized: list[tuple[Part, list[Future[CaseResult]]]] = []
    # compute-sanitizer's runs wait for their build's cases: threads of their own.
    sanitizing = ThreadPoolExecutor(max_workers=4 * len(parts), thread_name_prefix="sanitize")
    with sanitizing, ThreadPoolExecutor(max_workers=workers, thread_name_prefix="grade") as pool:
        builds: dict[Future[BuildResult], tuple[Part, bool]] = {}
        for part in parts:
            if part.files is None:
                continue
            say(f"build {part.label}")
            only = part.task.driver_tasks if part.task is not None else None  # None: integration's
            builds[pool.submit(session.build, session.builder, part.label, part.files, part.origins,
                               paths, only)] = (part, False)
            if race_builder is not None and part.task is not None:
                builds[pool.submit(race_builder.build, f"{part.label} (emulator)",
                                   part.files, part.origins, paths, part.task.driver_tasks)] = (part, True)

        # The exercises build beside the parts; the applications run them later.
        exercise_builds = {pool.submit(session.build, session.builder, f"exercise {e.exercise.name}",
                                       e.files, e.origins, paths, None): e
                           for e in exercises or [] if e.files is not None}

        def one(binary: Path, key: str, run: RunSetup, case: Case) -> list[CaseResult]:
            if budget.spent:
                return [CaseResult(case, case.seed(session.seed), "not_run", budget.why)]
            return [run_case(run, binary, key, case, session.seed, session.timeouts)]

        def probe_then_rest(binary: Path, key: str, run: RunSetup, cases: list[Case]) -> list[CaseResult]:
            if not cases:
                return []
            first = min(range(len(cases)), key=lambda i: (cases[i].n, i))
            done = {first: one(binary, key, run, cases[first])[0]}
            rest = [i for i in range(len(cases)) if i != first]
            with ThreadPoolExecutor(max_workers=max(1, session.jobs), thread_name_prefix="cases") as inner:
                for i, r in zip(rest, inner.map(lambda i: one(binary, key, run, cases[i])[0], rest)):
                    done[i] = r
            return [done[i] for i in range(len(cases))]

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
                part.race_build = b
                if b.ok and b.binary is not None and race_setup is not None and not b.violations:
                    race = [dataclasses.replace(c, backend=race_setup.backend.name)
                            for c in rubric.cases_for(part.task.driver_tasks, True, rubric.race_check_groups)]
                    race_checks.append((part, [pool.submit(one, b.binary, b.key, race_setup, c)
                                               for c in race]))
                continue
            part.build = b
            if not (b.violations and b.binary is None):   # refused before the build: none
                part.outcome.build = BuildInfo(b.label, b.ok, b.seconds, b.cached, b.errors, b.origins)
            if b.violations:
                _forbid(part, b.violations, "in the compiled code: not run" if b.binary
                        else "as the compiler sees it: not built")
                continue
            if not b.ok or b.binary is None:
                part.outcome.status = "build_failed"
                part.outcome.message = "does not compile"
                continue
            if isinstance(part.outcome, TaskResult) and part.task is not None \
                    and not_attempted(part.outcome, part.task.bonus, b.placeholders):
                continue
            cases = cases_of(rubric, part, session.backend.reduced_sizes)
            if session.backend.batched_runs:
                # One process (one CUDA context) for all of this build's cases.
                futures = [pool.submit(run_batch, setup, b.binary, b.key, cases, session.seed,
                                       session.timeouts)]
            else:
                futures = [pool.submit(probe_then_rest, b.binary, b.key, setup, cases)]
            checks.append((part, futures))
            if session.sanitizer is not None and part.task is not None:
                # The task's own GPU build under compute-sanitizer, beside its cases.
                shown = {n: paths.get(n, f"student/{n}") for n, origin in part.origins.items()
                         if origin.startswith("yours")}
                sanitized.append((part, [
                    sanitizing.submit(cross_checks.sanitize_after, futures, setup, session.sanitizer, tool,
                                      b.binary, tool_cases, session.seed, shown)
                    for tool, tool_cases in rubric.sanitize_for(part.task.driver_tasks).items()]))
        for exercise_future in as_completed(exercise_builds):
            exercise = exercise_builds[exercise_future]
            exercise.build = exercise_future.result()
            say(f"build {exercise.build.label}: " + ("ok" if exercise.build.ok else "FAILED"))
        def applications_after_cases(run_apps: Callable[[str], list[AppResult]]) -> list[AppResult]:
            """The applications after the integration build's cases: none if one hung."""
            integ_done = [c for part, fs in checks if part.task is None for f in fs for c in f.result()]
            if any(c.status == "timeout" for c in integ_done):
                return run_apps("not run: the integration build hung (a case timed out)")
            return run_apps(budget.why if budget.spent else "")

        apps = pool.submit(applications_after_cases, applications) if applications is not None else None
        timings["builds"] = time.monotonic() - start
        built = [p for p in parts if p.build is not None]
        failed = sum(1 for p in built if not p.build or not p.build.ok)
        if built:
            phase_done(f"built: {len(built) - failed} of {len(built)} build(s) ok"
                       + (f", {failed} failed" if failed else "") + f" ({timings['builds']:.0f} s)")

        # The GPU cases first, then the race check's, in the rubric's order.
        for part, futures in checks:
            part.outcome.cases = [r for f in futures for r in f.result()]
            part.outcome.status = "graded"
            if isinstance(part.outcome, TaskResult):
                _say_what_is_not_implemented(part.outcome)
                _say_when_only_order_matters(part.outcome)
            say(f"{part.label}: {part.outcome.passed}/{part.outcome.total} cases passed")
        if checks:
            passed = sum(p.outcome.passed for p, _ in checks)
            total = sum(p.outcome.total for p, _ in checks)
            phase_done(f"cases: {passed}/{total} passed (" + ", ".join(
                f"{p.label} {p.outcome.passed}/{p.outcome.total}" for p, _ in checks)
                + f"; {time.monotonic() - start:.0f} s)")
        for part, futures in race_checks:
            done = [r for f in futures for r in f.result()]
            if isinstance(part.outcome, TaskResult) and part.outcome.status == "graded":
                part.outcome.cases.extend(done)
                part.outcome.race_note = (f"race check: {sum(c.passed for c in done)}/{len(done)} "
                                          "cases passed on the CPU emulator (lanes in random order)")
        for part, sanitizer_futures in sanitized:
            done = [f.result() for f in sanitizer_futures]
            if isinstance(part.outcome, TaskResult) and part.outcome.status == "graded":
                part.outcome.cases.extend(done)
                cross_checks.say_sanitizer_findings(part.outcome, done)
        apps_done = apps.result() if apps is not None else []
    for part in parts:
        if not isinstance(part.outcome, TaskResult):
            continue
        tr, race_build = part.outcome, part.race_build
        if race_build is not None and race_build.violations and tr.status != "forbidden":
            # The same files break the rules as the emulator's compiler sees them (code
            # behind #ifdef __CUDACC__ is checked on both sides).
            tr.cases = []
            _forbid(part, race_build.violations, "in the emulator build: not counted")
        # Only where the emulator's own harness and reference are there (race_setup): a
        # machine that cannot build the emulator at all is no finding against the student.
        elif race_build is not None and not race_build.ok and tr.status == "graded" \
                and part.task is not None and race_setup is not None:
            cross_checks.emulator_build_failed(tr, race_build, rubric.cases_for(
                part.task.driver_tasks, True, rubric.race_check_groups), session.seed)
        elif race_build is not None and not race_build.ok and race_setup is None:
            tr.race_note = session.race_note or "race check not run"
        elif race_build is not None and not race_build.ok:
            tr.race_note = ("race check not run: the file does not build for the CPU emulator "
                            f"({cross_checks.first_error(race_build.errors)})")
        elif tr.status != "graded":
            continue
        elif race_setup is not None and not tr.race_note:
            tr.race_note = "race check not run"
        elif race_setup is None and session.race_note:
            tr.race_note = session.race_note
        if tr.status == "graded":
            cross_checks.say_where_they_disagree(tr)
            if session.sanitizer_note:
                tr.race_note = "; ".join(x for x in (tr.race_note, session.sanitizer_note) if x)
    return apps_done


def _forbid(part: Part, violations: list[Violation], fate: str) -> None:
    """A Part whose files break the rules (as written, or as compiled) is `fate`:
    "forbidden", 0 points."""
    part.outcome.status = "forbidden"
    files = ", ".join(sorted({v.file for v in violations}))
    if isinstance(part.outcome, TaskResult):
        part.outcome.violations = violations
        part.outcome.message = f"{files}: {len(violations)} forbidden construct(s) {fate}, 0 points"
    else:
        part.outcome.message = f"not run: {files} break(s) the rules (see the tasks)"


def _say_what_is_not_implemented(tr: TaskResult) -> None:
    """A task some of whose driver tasks still have the handout's stub while others run
    says which ones ("only scan-exclusive is not implemented")."""
    by_task: dict[str, list[bool]] = {}
    for c in tr.cases:
        by_task.setdefault(c.case.task, []).append(c.status == "not_implemented")
    stubbed = sorted(t for t, flags in by_task.items() if all(flags))
    if stubbed and len(stubbed) < len(by_task):
        verb = "is" if len(stubbed) == 1 else "are"
        tr.message = (f"only {', '.join(stubbed)} {verb} not implemented (the handout's TODO stub "
                      f"is still in place there); {', '.join(sorted(set(by_task) - set(stubbed)))} "
                      "ran")


def _say_when_only_order_matters(tr: TaskResult) -> None:
    """A task that passes every case of the commutative operators and fails only with
    the others (mssp, the segmented sum) puts operands in the wrong order somewhere:
    the message says so, in the word the lectures use."""
    assignment = default_assignment()
    failing = {c.case.op for c in tr.cases if not c.passed and c.status != "not_implemented"}
    if not failing or tr.message:
        return
    commutative = {o.name for o in assignment.operators if o.commutative}
    if failing & commutative or not any(c.passed for c in tr.cases if c.case.op in commutative):
        return
    tr.message = (f"fails only with {', '.join(sorted(failing))}, whose operator is not commutative: "
                  "somewhere the operands are combined out of order (keep apply(earlier, later) "
                  "in the shuffles, across warps, across tiles and blocks)")


# ---- time: a correct task's build against the reference, on the GPU ---------------------------

def time_tasks(session: Session, setup: RunSetup,
               tasks: list[tuple[TaskRubric, TaskResult, BuildResult | None]], say: Say,
               perf_seed: int, budget: Budget = NO_BUDGET) -> dict[int, TaskTiming]:
    """Times the eligible tasks' builds against the reference, all in one go on one GPU
    (timing.measure_all), on the timed inputs of `perf_seed`; the same build on the same
    perf case is timed once a session. Nothing is timed once the submission's budget is
    spent (0 points, said so). Each task's timing, by task number."""
    timed = {t.number: why for t, tr, build in tasks if (why := _not_timed(session, t, tr, build))}
    eligible = [(t, tr, build) for t, tr, build in tasks if t.number not in timed]
    if eligible and budget.spent:
        spent = TaskTiming("failed", "0: " + budget.why.replace("not run", "not timed"))
        return {**timed, **{t.number: spent for t, _, _ in eligible}}
    jobs: dict[tuple[str, PerfCase], PerfJob] = {}
    for t, tr, build in eligible:
        assert build is not None and build.binary is not None and session.run_reference is not None
        for perf_case in t.perf:
            key = (build.key, perf_case)
            if session.perf_memo.get(key) is None and key not in jobs:
                say(f"task {t.number}: timing {perf_case.task} {perf_case.op} n={perf_case.n}")
                jobs[key] = PerfJob(build.binary, session.run_reference, perf_case,
                                    session.baselines_of(perf_case))
    if jobs:
        measured = measure_all(setup, list(jobs.values()), session.rubric.performance,
                               session.machine_info().copy_gbps, say, perf_seed)
        for key, known in zip(jobs, measured):
            session.perf_memo.put(key, known)
    for t, tr, build in eligible:
        assert build is not None
        perf = tuple(p for p in (session.perf_memo.get((build.key, pc)) for pc in t.perf) if p is not None)
        failed = [p for p in perf if p.status != "measured"]
        timed[t.number] = TaskTiming("failed", "0: " + failed[0].message, perf) if failed else \
            TaskTiming("measured", "; ".join(p.message for p in perf if p.noisy), perf)
    return timed


def _not_timed(session: Session, t: TaskRubric, tr: TaskResult, build: BuildResult | None) -> TaskTiming | None:
    """Why the task is not timed (its timing says so); None: it is timed."""
    if t.performance_points <= 0 or not t.perf:
        return TaskTiming("not_eligible", "no performance points in the rubric")
    if not session.backend.times:
        return TaskTiming("not_measured", "not measured (no GPU)")
    if not session.options.perf:
        return TaskTiming("not_measured", "not measured (--no-perf)")
    if tr.placeholder and session.rubric.correctness.zero_for_placeholders:
        return TaskTiming("not_eligible", "0: the handout's placeholder earns no points")
    if not tr.all_passed or build is None or not build.ok or build.binary is None:
        return TaskTiming("not_eligible", "0: performance counts only when every case of the task passes")
    return None
