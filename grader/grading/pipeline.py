"""Grading one submission: the pipeline, one stage a function, each returning what it
found (grader/grading/outcomes.py) to the next:

  collect (collect.Submission) -> plan (plan.Plan: one PartPlan per task, its file among the
  reference's; one for the integration build of all the student's files) -> build and check
  (checking.Checked: a BuildOutcome and a CheckOutcome per part: untrusted run, trusted
  verify; on a GPU also the race check on the emulator) -> time (timing.TaskTiming per task:
  GPU, correct tasks only; the Nsight Compute profile beside the check of its last output:
  TaskProfile per task) -> assemble (assemble.py: the SubmissionResult, scored, made once).
The SubmissionResult is the model every report is written from (grader/results.py).
"""
from __future__ import annotations

import datetime
import shutil
import tempfile
import time
import traceback
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Callable

from .assemble import assemble
from .budget import NO_BUDGET, Budget
from .build import Builder
from .build_types import BuildResult
from .checking import Checked, build_and_check
from .collect import Submission, collect, source_digest
from .correctness.applications import ExerciseBuild, not_run, run_applications
from .correctness.check import RunSetup, TimeoutTracker, run_batch
from . import fault
from .outcomes import CheckOutcome, Graded
from .plan import Plan, plan
from ..config.rubric import PerfCase, ProfileRubric, TaskRubric
from ..results import AppResult, SubmissionResult, TaskProfile
from .session import GraderError, Session
from .timing import PerfJob, TaskTiming, measure_all
from . import ncu
from .diagnosis import diagnose

Say = Callable[[str], None]


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
            graded = _grade(session, path, ready.result, where, say, phase)
        except GraderError:
            raise
        except Exception as e:  # a grader bug must not lose the other submissions of a batch
            failed = ready.exception()
            if failed is not None:
                raise failed from e
            graded = Graded(None, _now(), error=f"internal grader error ({type(e).__name__}: {e}); "
                                                "please report it", notes=(traceback.format_exc(limit=8),))
        finally:
            shutil.rmtree(where, ignore_errors=True)
    # The machine's description (its copy bandwidth measured on the GPU) is asked for
    # when the grading ends: nothing waits for it before.
    return assemble(session, path, graded, session.machine_info(), time.monotonic() - start,
                    source_digest(path, session.rubric.submission.max_total_bytes))


def _now() -> str:
    return datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds")


def _grade(session: Session, path: Path, ready: Callable[[], RunSetup], where: Path, say: Say,
           phase_done: Say) -> Graded:
    """The stages, each one's outcome handed to the next; what they found, for assemble."""
    rubric = session.rubric
    phases: dict[str, float] = {}
    phase = time.monotonic()
    sub = collect(path, rubric.submitted_files, rubric.submission, where)
    graded_at = _now()
    planned = plan(session, sub)
    phases["collect"] = time.monotonic() - phase

    n = (rubric.integration.application_emulator_n if session.backend.reduced_sizes
         else rubric.integration.application_n)

    def applications(binary: Path, exercises: dict[str, ExerciseBuild], skip: str) -> list[AppResult]:
        """The applications on the integration build, once it and the exercises are built
        and its cases have run (beside the other builds' cases); `skip`: why none runs."""
        started = time.monotonic()
        if skip:
            return not_run(ready(), n, skip)
        done = run_applications(ready(), binary, n, exercises)
        phases["applications"] = time.monotonic() - started
        return done

    phase = time.monotonic()
    # The hidden cases drawn over the legal space, from a secret seed of this grade.
    draw_seed = session.draw_cases_seed()
    drawn = rubric.draw(draw_seed, session.backend.on_gpu)
    budget = Budget(phase + rubric.limits.budget_s, rubric.limits.budget_s)
    checked: Checked = build_and_check(
        session, ready, planned.parts, {n: f.path for n, f in sub.files.items()}, say, phases,
        phase_done, planned.exercises, applications if rubric.integration.applications else None, budget, drawn)
    phases["builds+cases"] = time.monotonic() - phase
    if checked.applications:
        phase_done("applications: " + ", ".join(f"{a.name} {a.status}" for a in checked.applications))
    faults = find_faults(session, ready, planned, checked, sub, n, budget, say)
    if faults.seconds:
        phases["task at fault"] = faults.seconds
        phase_done(f"task at fault: {faults.builds} build(s) ({faults.seconds:.0f} s)")
    phase = time.monotonic()
    perf_seed = session.draw_perf_seed()
    timed, profiles = time_and_profile(session, ready(), [
        (p.task, checked.checks[p.label], b.build if (b := checked.builds.get(p.label)) else None)
        for p in planned.parts if p.task is not None], say, perf_seed, budget, phases)
    phases["performance"] = time.monotonic() - phase - phases.get("profile", 0.0)
    if profiles:
        phase_done("profiled: " + ", ".join(f"task {k} {p.status}" for k, p in profiles.items())
                   + f" ({phases['profile']:.1f} s)")
    measured = [(t.number, timed[t.number]) for t in rubric.tasks
                if t.number in timed and timed[t.number].status in ("measured", "failed")]
    if measured:
        phase_done("timed: " + ", ".join(
            f"task {number} " + (f"{timing.perf[0].slowdown:.2f}x the reference"
                                 if timing.perf and timing.perf[0].slowdown else "failed")
            for number, timing in measured) + f" ({phases['performance']:.0f} s)")
    return Graded(sub, graded_at, planned.parts, checked.builds, checked.checks, checked.applications,
                  timed, perf_seed, phases, profiles=profiles,
                  draw_seed=draw_seed if drawn.grade else 0, faults=faults)


def find_faults(session: Session, ready: Callable[[], RunSetup], planned: Plan, checked: Checked,
                sub: Submission, app_n: int, budget: Budget, say: Say) -> fault.Faults:
    """The task at fault of the failing integration cases and applications (fault.locate:
    builds with one of the student's tasks each, the others the grader's stand-ins);
    nothing is built or run when none fails."""
    integ = planned.integration
    check = checked.checks.get(integ.label)
    failing = [c for c in check.cases if not c.passed] if check is not None and check.status == "graded" else []
    failed_apps = [a for a in checked.applications if a.status == "fail"]
    if integ.files is None or not (failing or failed_apps):
        return fault.Faults()
    setup = ready()
    timeouts = TimeoutTracker()   # the search's builds' own (a grade's never count here)
    search = fault.Search(
        build=lambda label, files, origins, paths, tasks: session.build(session.builder, label, files, origins,
                                                                        paths, tasks),
        run_cases=lambda binary, key, cases: run_batch(setup, binary, key, cases, session.seed, timeouts,
                                                       lambda line: say(f"task at fault: {line}")),
        setup=setup, app_n=app_n, files={name: f.data for name, f in sub.files.items()},
        paths={name: f.path for name, f in sub.files.items()}, origins=integ.origins,
        reference=session.builder.reference_files, root=session.builder.layout.root)
    return fault.locate(search, session.rubric.assignment, failing, failed_apps, budget, say)


def time_and_profile(session: Session, setup: RunSetup,
                     tasks: list[tuple[TaskRubric, CheckOutcome, BuildResult | None]], say: Say,
                     perf_seed: int, budget: Budget, phases: dict[str, float]
                     ) -> tuple[dict[int, TaskTiming], dict[int, TaskProfile]]:
    """The timing, then the profile of the tasks it measured. The profile runs as soon as
    the GPU's last timing rounds are over, beside the CPU's check of the last timed output
    (timing.measure_all's after_rounds), on every task being timed; a task whose timing
    then fails keeps no figures. Where nothing was timed now (all known this session),
    it runs after, on the measured tasks. phases["profile"]: its seconds."""
    early: dict[int, TaskProfile] | None = None

    def profile(chosen: list[tuple[TaskRubric, BuildResult]]) -> dict[int, TaskProfile]:
        started = time.monotonic()
        got = profile_tasks(session, setup, chosen, say, budget)
        if got:
            phases["profile"] = time.monotonic() - started
        return got

    def after_rounds(eligible: list[tuple[TaskRubric, BuildResult]]) -> None:
        nonlocal early
        early = profile(eligible)

    timed = time_tasks(session, setup, tasks, say, perf_seed, budget, after_rounds)
    measured = {n for n, t in timed.items() if t.status == "measured"}
    if early is None:
        return timed, profile([(t, b) for t, _, b in tasks if t.number in measured and b is not None])
    return timed, {n: p for n, p in early.items() if n in measured}


# ---- time: a correct task's build against the reference, on the GPU ---------------------------

def time_tasks(session: Session, setup: RunSetup,
               tasks: list[tuple[TaskRubric, CheckOutcome, BuildResult | None]], say: Say,
               perf_seed: int, budget: Budget = NO_BUDGET,
               after_rounds: Callable[[list[tuple[TaskRubric, BuildResult]]], None] | None = None
               ) -> dict[int, TaskTiming]:
    """Times the eligible tasks' builds against the reference, all in one go on one GPU
    (timing.measure_all), on the timed inputs of `perf_seed`; the same build on the same
    perf case is timed once a session. Nothing is timed once the submission's budget is
    spent (0 points, said so). `after_rounds` gets the eligible tasks and their builds
    once the GPU's rounds are over (only where something is timed now). Each task's
    timing, by task number."""
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
        builds = [(t, build) for t, _, build in eligible if build is not None]
        measured = measure_all(setup, list(jobs.values()), session.rubric.performance,
                               session.machine_info().copy_gbps, say, perf_seed,
                               (lambda: after_rounds(builds)) if after_rounds else None)
        for key, known in zip(jobs, measured):
            session.perf_memo.put(key, known)
    for t, tr, build in eligible:
        assert build is not None
        perf = tuple(p for p in (session.perf_memo.get((build.key, pc)) for pc in t.perf) if p is not None)
        failed = [p for p in perf if p.status != "measured"]
        timed[t.number] = TaskTiming("failed", "0: " + failed[0].message, perf) if failed else \
            TaskTiming("measured", "; ".join(p.message for p in perf if p.noisy), perf)
    return timed


def _not_timed(session: Session, t: TaskRubric, check: CheckOutcome, build: BuildResult | None) -> TaskTiming | None:
    """Why the task is not timed (its timing says so); None: it is timed."""
    # Without a GPU nothing is measured, a task of no performance points included: its
    # performance is "not measured" (None) like every other task's, not a measured 0 of 0
    # in the result, its JSON and the reports.
    if not session.backend.times:
        return TaskTiming("not_measured", "not measured (no GPU)")
    if not session.options.perf:
        return TaskTiming("not_measured", "not measured (--no-perf)")
    if t.performance_points <= 0 or not t.perf:
        return TaskTiming("not_eligible", "no performance points in the rubric")
    if check.placeholder and session.rubric.correctness.zero_for_placeholders:
        return TaskTiming("not_eligible", "0: the handout's placeholder earns no points")
    if check.verdict != "correct" or build is None or not build.ok or build.binary is None:
        return TaskTiming("not_eligible", "0: performance counts only when every case of the task passes")
    return None


# ---- profile: a timed task's figures under Nsight Compute, beside the reference's ------------

def profile_tasks(session: Session, setup: RunSetup, timed: list[tuple[TaskRubric, BuildResult]],
                  say: Say, budget: Budget = NO_BUDGET) -> dict[int, TaskProfile]:
    """One ncu process over the timed tasks' builds (ncu.profile: the unit loader over their
    unit libraries, else one profiled process a distinct build), and the reference's figures of the same cases (from the cache, else
    profiled now, once per GPU); each task's figures, the reference's and the diagnosis,
    by task number. Never scored. Each task runs in its own task build, the one that was
    timed (the integration build would put the student's reduce inside the scan, and the
    figures would then explain a time that was not measured)."""
    rubric = session.rubric.profile
    timed = [(t, b) for t, b in timed if t.perf and b.binary is not None]
    if not timed or not rubric.run or not session.backend.times:
        return {}
    cases = [t.perf[0] for t, _ in timed]
    sizes = [rubric.n or c.n for c in cases]
    def each(message: str) -> dict[int, TaskProfile]:
        return {t.number: TaskProfile("not_profiled", message, n) for (t, _), n in zip(timed, sizes)}
    if session.ncu is None or session.profiles is None or session.run_reference is None:
        return each(session.profile_note or "Nsight Compute figures not measured: no GPU")
    if budget.spent:
        return each("Nsight Compute figures not measured: " + budget.why)
    gpu = session.gpus[0].name if session.gpus else "GPU"
    # Done by `prepare` on a grading machine; here only where the cache lacks them.
    if not ncu.profile_reference(session.profiles, setup, session.ncu, session.run_reference, gpu,
                                 cases, rubric, say):
        return each(ncu.REFUSED_NOTE)
    # A task whose file is the reference's runs the reference's build: its figures are the
    # reference's, cached above. The others are profiled in one ncu process.
    mine = [k for k, (_, b) in enumerate(timed) if not b.is_reference]
    got = _profile_builds(session.builder, setup, session.ncu, [timed[k] for k in mine], [cases[k] for k in mine],
                          rubric, say) if mine else ncu.Profiled([])
    if got.refused:
        return each(ncu.REFUSED_NOTE)
    measured = dict(zip(mine, got.figures))
    out = {}
    for k, ((t, _), c, n) in enumerate(zip(timed, cases, sizes)):
        reference = session.profiles.known(gpu, c, rubric.n)
        figures = measured[k] if k in measured else reference
        out[t.number] = TaskProfile(
            "profiled" if figures is not None else "not_profiled", got.message if figures is None else "",
            n, figures, reference,
            diagnose(figures, reference) if figures is not None else [], round(got.seconds, 2))
    return out


def _profile_builds(builder: Builder, setup: RunSetup, tool: str, timed: list[tuple[TaskRubric, BuildResult]],
                    cases: list[PerfCase], rubric: ProfileRubric, say: Say) -> ncu.Profiled:
    """One ncu process over these builds: the unit loader over their unit libraries where
    each has one (every build in one process), else one process a distinct build."""
    loader, units = builder.unit_loader(), [b.unit_library for _, b in timed]
    say("profiling under Nsight Compute" + (" (one process: the unit loader)" if ncu.one_process(loader, units, cases)
                                            else "") + ": " + ", ".join(c.task for c in cases))
    return ncu.profile(setup, tool, [b.binary for _, b in timed if b.binary is not None], cases, rubric,
                       loader=loader, units=units)
