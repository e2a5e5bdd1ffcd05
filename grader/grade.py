"""Grading: the pipeline for one submission, and the session that several share.

  collect -> forbidden constructs -> builds (one per task: the student's file for it
  with the reference files for the others; one integration build of all the student's
  files) -> correctness cases (untrusted run, trusted verify) -> performance (GPU) ->
  score.
A Session holds what grading runs share: the machine, the trusted reference build,
the CPU and GPU slots, the seed and the temporary workspace.
"""
from __future__ import annotations

import dataclasses
import datetime
import os
import random
import shutil
import tempfile
import threading
import time
from concurrent.futures import Future, ThreadPoolExecutor, as_completed
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable

from grader import __version__, machine as machines
from grader import run as sandbox
from grader.build import Builder, BuildResult, Layout, Toolchain
from grader.cases import Case
from grader.check import Resources, RunSetup, TimeoutTracker, run_batch, run_case
from grader.collect import collect
from grader.forbidden import scan
from grader.perf import PerfResult, measure, measure_copy_bandwidth
from grader.results import BuildInfo, IntegrationResult, MachineInfo, SubmissionResult, TaskResult
from grader.rubric import Rubric, TaskRubric
from grader.score import correctness_points, performance_points


class GraderError(Exception):
    """The grader cannot grade on this machine (a setup problem, not the submission's)."""


def default_cache_dir() -> Path:
    base = os.environ.get("SCANLAB_CACHE") or os.environ.get("XDG_CACHE_HOME")
    if os.environ.get("SCANLAB_CACHE"):
        return Path(base)  # type: ignore[arg-type]
    return Path(base or Path.home() / ".cache") / "scanlab"


@dataclass
class Options:
    backend: str = "auto"                 # auto | cuda | emulator
    cache_dir: Path = field(default_factory=default_cache_dir)
    jobs: int = 0                         # parallel CPU work; 0: the machine's cores
    seed: int | None = None               # None: a fresh one
    perf: bool = True                     # measure performance (GPU only)
    sandbox_user: str = "nobody"          # when running as root
    cuda_arch: str = ""                   # "" : the GPU's
    workdir: Path | None = None           # parent of the temporary workspace
    keep_workdir: bool = False
    gpu_runs: int = 0                     # correctness runs per GPU at once; 0: the rubric's
    race_check: bool = True               # GPU grades: also run the rubric's race-check cases
                                          # on the CPU emulator


def _log_stderr(line: str) -> None:
    import sys
    print(line, file=sys.stderr, flush=True)


class Session:
    def __init__(self, rubric: Rubric, layout: Layout, options: Options,
                 log: Callable[[str], None] = _log_stderr,
                 machine: machines.Machine | None = None):
        self.rubric = rubric
        self.layout = layout
        self.options = options
        self.log = log
        self.machine = machine or machines.detect(check_boost=False)
        m = self.machine
        backend = options.backend
        if backend == "auto":
            backend = "cuda" if m.has_gpu and m.can_build_cuda else "emulator"
        if backend == "cuda":
            if not m.has_gpu:
                raise GraderError(f"--backend cuda: no GPU ({m.gpu_problem})")
            if not m.can_build_cuda:
                missing = [t.name for t in (m.nvcc, m.cmake, m.gxx) if not t.ok]
                raise GraderError(f"--backend cuda: cannot build CUDA drivers: {', '.join(missing)} missing")
        elif backend == "emulator":
            missing = [t.name for t in (m.cmake, m.gxx) if not t.ok]
            if missing:
                raise GraderError(f"cannot build the CPU emulator driver: {', '.join(missing)} missing "
                                  "(run `python3 -m grader doctor`)")
        else:
            raise GraderError(f"unknown backend {backend!r}")
        self.backend = backend
        self.gpus = m.gpus if backend == "cuda" else []
        self.jobs = options.jobs or m.cores
        arch = options.cuda_arch
        if backend == "cuda" and not arch:
            arch = ";".join(sorted({g.arch for g in self.gpus})) or "native"
        self.identity = sandbox.sandbox_identity(options.sandbox_user)
        parent = (options.workdir or Path(tempfile.gettempdir())).resolve()
        parent.mkdir(parents=True, exist_ok=True)
        if self.identity.drops:
            for folder in (parent, *parent.parents):
                if not folder.stat().st_mode & 0o001:
                    raise GraderError(f"the sandbox user {self.identity.name} cannot reach the "
                                      f"workspace under {parent} ({folder} is closed to others): "
                                      "choose another --workdir")
        self.workdir = Path(tempfile.mkdtemp(prefix="scanlab-grade-", dir=parent))
        self.workdir.chmod(0o711)
        sandbox.open_path_for(self.workdir, self.identity, self.workdir)
        (self.workdir / "builds").mkdir()
        (self.workdir / "builds").chmod(0o711)
        self.resources = Resources.create(self.jobs, [g.index for g in self.gpus],
                                          options.gpu_runs or rubric.limits.gpu_runs_at_once)
        self.builder = self._builder(backend, arch)
        # Race check: on a GPU, some cases also run on the CPU emulator.
        self.race_note = ""
        self.race_builder: Builder | None = None
        if backend == "cuda" and options.race_check and rubric.race_check_groups:
            if m.boost_context.path is None or m.boost_context.path == "unchecked":
                m.boost_context = machines.check_boost_context(m.gxx.path)
            if m.can_build_emulator:
                self.race_builder = self._builder("emulator", "")
            else:
                problems = [t.problem for t in (m.cmake, m.gxx, m.boost_context) if not t.ok]
                self.race_note = ("race check on the CPU emulator not run: the emulator cannot be "
                                  f"built here ({'; '.join(problems)})")
        self.seed = options.seed if options.seed is not None else random.SystemRandom().randrange(1, 2**31)
        self.timeouts = TimeoutTracker()
        self._prepare_lock = threading.Lock()
        self._setup: RunSetup | None = None
        self._run_reference: Path | None = None
        self._race_setup: RunSetup | None = None
        self._copy_gbps: float | None = None
        self._device: dict = {}
        self._copy_lock = threading.Lock()
        self._copy_measured = False
        self.sandbox_note = ""
        self._perf_lock = threading.Lock()
        self._perf_memo: dict[tuple[str, object], PerfResult] = {}
        self.handout_files = {t.file: (layout.handout_student(t.file).read_bytes()
                                       if layout.handout_student(t.file).is_file() else None)
                              for t in rubric.tasks}

    # ---- shared preparation ------------------------------------------------------------------

    def prepare(self) -> RunSetup:
        """Builds (or finds in the cache) the trusted reference; idempotent."""
        with self._prepare_lock:
            if self._setup is not None:
                return self._setup
            setup, self._run_reference = self._prepare_backend(self.builder, self.backend)
            if self.race_builder is not None:
                try:
                    self._race_setup, _ = self._prepare_backend(self.race_builder, "emulator")
                except GraderError as e:
                    self.race_builder = None
                    self.race_note = f"race check on the CPU emulator not run: {str(e)[:300]}"
            if self.race_note:
                self.log(f"note: {self.race_note}")
            self._setup = setup
            return self._setup

    def _builder(self, backend: str, arch: str) -> Builder:
        m = self.machine
        tools = Toolchain(backend=backend, cmake=m.cmake.path or "cmake",
                          nvcc=m.nvcc.path if backend == "cuda" else None,
                          cuda_arch=arch if backend == "cuda" else "",
                          compiler_id=f"nvcc {m.nvcc.version}" if backend == "cuda" else f"g++ {m.gxx.version}",
                          # nvcc builds one file; an emulator build compiles three.
                          jobs=1 if backend == "cuda" else 2,
                          build_type="Release" if backend == "cuda"
                          else self.rubric.limits.emulator_build_type)
        return Builder(self.layout, tools, self.options.cache_dir, self.workdir / "builds",
                       self.identity, self.rubric.limits.build_timeout_s, self.rubric.limits.memory_mb,
                       slot=self.resources.cpu_slot)

    def _prepare_backend(self, builder: Builder, backend: str) -> tuple[RunSetup, Path]:
        """The trusted reference of one backend (built or cached), its copy student-side
        runs use, and how runs go, checked by a probe."""
        start = time.monotonic()
        ref = builder.reference()
        if not ref.ok or ref.binary is None:
            raise GraderError(ref.errors or "the reference does not build")
        self.log(f"reference driver ({backend}): "
                 + ("cached" if ref.cached else f"built in {time.monotonic() - start:.0f} s")
                 + f" [{ref.binary}]")
        run_copy = builder.build("reference", dict(builder.reference_files), {}, {})
        if not run_copy.ok or run_copy.binary is None:
            raise GraderError(run_copy.errors)
        limits = self.rubric.limits
        setup = RunSetup(
            backend=backend, reference=ref.binary, workdir=self.workdir,
            identity=self.identity, resources=self.resources,
            timeout_s=limits.run_timeout_s if backend == "cuda" else limits.emulator_run_timeout_s,
            memory_mb=limits.memory_mb, max_timeouts=limits.max_timeouts_per_task)
        self._probe_sandbox(setup, run_copy.binary)
        return setup, run_copy.binary

    def _probe_sandbox(self, setup: RunSetup, run_reference: Path) -> None:
        """Runs the reference as student programs will run (sandbox, limits, user) on a
        small case. If only the memory limit stops it (some CUDA drivers reserve memory
        the data-segment limit counts), grading goes on without that limit, and says so;
        if nothing helps, grading stops here rather than failing every student."""
        a = self.rubric.assignment
        case = Case(a.driver_tasks[0].name, a.operator_names[0], 1000, a.limits.default_block,
                    a.distributions[0], False, "probe")

        def attempt(memory_mb: int | None) -> sandbox.Result:
            where = Path(tempfile.mkdtemp(prefix="probe-", dir=self.workdir))
            where.chmod(0o711)
            home = sandbox.make_private_dir(where / "home", self.identity)
            argv = [str(run_reference), "run", *case.driver_args(1), "--json", str(home / "probe.json")]
            limits = dataclasses.replace(setup.limits(case), memory_mb=memory_mb)
            try:
                slot = self.resources.gpu() if setup.backend == "cuda" else self.resources.cpu_slot()
                with slot as gpu:
                    return sandbox.run(argv, home, limits, setup.env(home, 1, gpu), self.identity)
            finally:
                shutil.rmtree(where, ignore_errors=True)

        first = attempt(setup.memory_mb)
        if first.ok:
            return
        if setup.memory_mb is not None and attempt(None).ok:
            setup.memory_mb = None
            self.sandbox_note = (f"the {self.rubric.limits.memory_mb} MiB memory limit stopped the "
                                 "reference driver here, so student programs run without it")
            self.log(f"warning: {self.sandbox_note}")
            return
        output = (first.stdout + first.stderr).strip().splitlines()[-5:]
        hint = ""
        if self.rubric.assignment.exit_meaning(first.returncode) == "no_gpu":
            hint = (f" As {self.identity.name} the driver sees no GPU: check that /dev/nvidia* are "
                    "open to all users, or pass --sandbox-user '' to run student code as yourself.")
        raise GraderError(f"the reference driver does not run in the sandbox (as {self.identity.name}): "
                          f"{first.describe_end()}: {' | '.join(output)}.{hint}")

    def copy_bandwidth(self) -> float | None:
        with self._copy_lock:
            if not self._copy_measured and self.backend == "cuda":
                self._copy_gbps, self._device = measure_copy_bandwidth(self.prepare())
                self._copy_measured = True
            return self._copy_gbps

    def machine_info(self) -> MachineInfo:
        user = self.identity.name
        if not self.identity.drops and os.geteuid() == 0:
            user += (" (--sandbox-user '': not dropped)" if not self.options.sandbox_user
                     else f" (no user {self.options.sandbox_user!r} to drop to)")
        if self.sandbox_note:
            user += f"; {self.sandbox_note}"
        if self.backend == "cuda":
            g = self.gpus[0]
            return MachineInfo("cuda", g.name, g.compute_capability, self._copy_gbps, user)
        note = ("no GPU: correctness is graded with the CPU emulator; performance is not measured"
                if not self.machine.has_gpu else
                "emulator backend chosen: correctness is graded with the CPU emulator; "
                "performance is not measured")
        return MachineInfo("emulator", "", "", None, user, note)

    def close(self) -> None:
        if not self.options.keep_workdir:
            shutil.rmtree(self.workdir, ignore_errors=True)

    def __enter__(self) -> "Session":
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    # ---- one submission ------------------------------------------------------------------------

    def grade(self, path: Path, on_event: Callable[[str], None] | None = None) -> SubmissionResult:
        say = on_event or (lambda line: None)
        start = time.monotonic()
        setup = self.prepare()
        where = Path(tempfile.mkdtemp(prefix="submission-", dir=self.workdir))
        try:
            return self._grade(path, setup, where, say, start)
        except Exception as e:  # a grader bug must not lose the other submissions of a batch
            import traceback
            result = self._empty_result(path)
            result.error = f"internal grader error ({type(e).__name__}: {e}); please report it"
            result.notes.append(traceback.format_exc(limit=8))
            self._score(result)
            result.seconds = time.monotonic() - start
            return result
        finally:
            shutil.rmtree(where, ignore_errors=True)

    def _empty_result(self, path: Path) -> SubmissionResult:
        from grader.collect import submission_name
        result = SubmissionResult(
            name=submission_name(path), origin=str(path), kind="folder" if path.is_dir() else "archive",
            seed=self.seed, machine=self.machine_info(),
            graded_at=datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds"),
            grader_version=__version__, rubric=str(self.rubric.path),
            reproduce=self.reproduce_command(path))
        result.tasks = [TaskResult(t.number, t.name, t.title, t.file, status="not_graded",
                                   correctness_max=t.correctness_points,
                                   performance_max=t.performance_points) for t in self.rubric.tasks]
        result.integration = IntegrationResult(max_points=self.rubric.integration.points)
        return result

    def _grade(self, path: Path, setup: RunSetup, where: Path, say: Callable[[str], None],
               start: float) -> SubmissionResult:
        rubric = self.rubric
        sub = collect(path, rubric.student_files, rubric.submission, where)
        result = SubmissionResult(
            name=sub.name, origin=sub.origin, kind=sub.kind, seed=self.seed,
            machine=self.machine_info(),
            graded_at=datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds"),
            grader_version=__version__, rubric=str(rubric.path),
            files={n: f.path for n, f in sub.files.items()}, missing=dict(sub.missing),
            ignored=list(sub.ignored), notes=list(sub.notes), error=sub.error,
            reproduce=self.reproduce_command(path))
        tasks = [TaskResult(t.number, t.name, t.title, t.file, correctness_max=t.correctness_points,
                            performance_max=t.performance_points) for t in rubric.tasks]
        result.tasks = tasks
        result.integration = IntegrationResult(max_points=rubric.integration.points)

        # Which builds: each task in isolation, and everything together.
        builds: list[tuple[str, dict[str, bytes], dict[str, str], object]] = []
        paths = {n: f.path for n, f in sub.files.items()}
        reference = self.builder.reference_files
        for t, tr in zip(rubric.tasks, tasks):
            found = sub.files.get(t.file)
            if found is None:
                tr.status = "missing"
                close = sub.missing.get(t.file, [])
                tr.message = f"no {t.file} in the submission" + \
                    (f" (found {', '.join(close)}: the file must be named exactly {t.file})" if close else "")
                continue
            tr.path = found.path
            tr.unchanged = found.data == self.handout_files.get(t.file)
            tr.identical_to_reference = found.data == reference.get(t.file)
            tr.violations = scan(found.text, found.path, rubric.forbidden)
            if tr.violations:
                tr.status = "forbidden"
                tr.message = f"{found.path} uses {len(tr.violations)} forbidden construct(s): not built, 0 points"
                continue
            files = dict(reference)
            files[t.file] = found.data
            origins = {n: "reference" for n in files}
            origins[t.file] = f"yours ({found.path})"
            builds.append((f"task {t.number}", files, origins, tr))
        integ = result.integration
        blocked = [tr for tr in tasks if tr.status in ("missing", "forbidden")]
        if sub.error:
            integ.message = "not run: nothing to grade"
        elif blocked:
            integ.message = "not run: " + "; ".join(
                f"{tr.file} {'is missing' if tr.status == 'missing' else 'has forbidden constructs'}"
                for tr in blocked)
        else:
            files = dict(reference)
            files.update({t.file: sub.files[t.file].data for t in rubric.tasks})
            origins = {n: "reference" for n in files}
            origins.update({t.file: f"yours ({sub.files[t.file].path})" for t in rubric.tasks})
            builds.append(("integration", files, origins, integ))

        result.timings["collect"] = time.monotonic() - start
        phase = time.monotonic()
        emulator = self.backend == "emulator"
        workers = self.jobs + len(self.gpus) + 2
        race_groups = self.rubric.race_check_groups
        race = self.race_builder is not None and self._race_setup is not None
        with ThreadPoolExecutor(max_workers=workers, thread_name_prefix="grade") as pool:
            pending: list[tuple[object, Future[BuildResult], bool]] = []
            for label, files, origins, target in builds:
                say(f"build {label}")
                pending.append((target, pool.submit(self._build, label, files, origins, paths), False))
                if race and isinstance(target, TaskResult):
                    assert self.race_builder is not None
                    pending.append((target, pool.submit(self.race_builder.build, f"{label} (emulator)",
                                                        files, origins, paths), True))
            case_futures: list[tuple[object, list[Future], bool]] = []
            targets = {future: (target, is_race) for target, future, is_race in pending}
            for future in as_completed(targets):
                target, is_race = targets[future]
                b = future.result()
                say(f"build {b.label}: " + ("ok" if b.ok else "FAILED")
                    + (" (cached)" if b.cached else f" ({b.seconds:.0f} s)"))
                if is_race:
                    assert isinstance(target, TaskResult) and self._race_setup is not None
                    if not b.ok or b.binary is None:
                        first = next((line for line in b.errors.splitlines() if "error" in line), "")
                        target.race_note = ("race check not run: the file does not build for the CPU "
                                            f"emulator ({first.strip()[:200]})")
                        continue
                    t = next(x for x in rubric.tasks if x.number == target.number)
                    cases = [dataclasses.replace(c, backend="emulator")
                             for c in rubric.cases_for(t.driver_tasks, True, race_groups)]
                    futures = [pool.submit(run_case, self._race_setup, b.binary, b.key, c, self.seed,
                                           self.timeouts) for c in cases]
                    case_futures.append((target, futures, True))
                    continue
                info = BuildInfo(b.label, b.ok, b.seconds, b.cached, b.errors, b.origins)
                target.build = info  # type: ignore[attr-defined]
                if not b.ok or b.binary is None:
                    target.status = "build_failed"  # type: ignore[attr-defined]
                    target.message = "does not compile"  # type: ignore[attr-defined]
                    continue
                if isinstance(target, TaskResult):
                    t = next(x for x in rubric.tasks if x.number == target.number)
                    cases = rubric.cases_for(t.driver_tasks, emulator)
                else:
                    cases = rubric.cases_for(rubric.integration_tasks, emulator, rubric.integration.groups)
                if setup.backend == "cuda":
                    # One process (one CUDA context) for all of this build's cases.
                    futures = [pool.submit(run_batch, setup, b.binary, b.key, cases, self.seed,
                                           self.timeouts)]
                else:
                    futures = [pool.submit(run_case, setup, b.binary, b.key, c, self.seed,
                                           self.timeouts) for c in cases]
                case_futures.append((target, futures, False))
            result.timings["builds"] = time.monotonic() - phase
            # The GPU cases first, then the race check's, in the rubric's order.
            for target, futures, is_race in sorted(case_futures, key=lambda x: x[2]):
                done = [r for f in futures
                        for r in (f.result() if isinstance(f.result(), list) else [f.result()])]
                if is_race:
                    if target.status == "graded":  # type: ignore[attr-defined]
                        target.cases.extend(done)  # type: ignore[attr-defined]
                        passed = sum(c.passed for c in done)
                        target.race_note = (f"race check: {passed}/{len(done)} cases passed on the CPU "  # type: ignore[attr-defined]
                                            "emulator (lanes in random order)")
                    continue
                target.cases = done  # type: ignore[attr-defined]
                if isinstance(target, IntegrationResult):
                    target.status = "graded"
                tr_label = f"task {target.number}" if isinstance(target, TaskResult) else "integration"
                say(f"{tr_label}: {sum(c.passed for c in target.cases)}/{len(target.cases)} cases passed")  # type: ignore[attr-defined]
            for tr in tasks:
                if race and tr.status == "graded" and not tr.race_note:
                    tr.race_note = "race check not run"
                if not race and self.race_note and tr.status == "graded":
                    tr.race_note = self.race_note

        result.timings["builds+cases"] = time.monotonic() - phase
        phase = time.monotonic()
        # Performance: correct tasks only, on the GPU, one measurement at a time.
        task_builds: dict[int, BuildResult] = {}
        for target, future, is_race in pending:
            b = future.result()
            if isinstance(target, TaskResult) and b.ok and not is_race:
                task_builds[id(target)] = b
        for t, tr in zip(rubric.tasks, tasks):
            self._performance(t, tr, task_builds.get(id(tr)), setup, say)
        result.timings["performance"] = time.monotonic() - phase
        self._score(result)
        result.machine = self.machine_info()
        result.seconds = time.monotonic() - start
        return result

    def _build(self, label: str, files: dict[str, bytes], origins: dict[str, str],
               paths: dict[str, str]) -> BuildResult:
        return self.builder.build(label, files, origins, paths)

    def _performance(self, t: TaskRubric, tr: TaskResult, build: BuildResult | None,
                     setup: RunSetup, say: Callable[[str], None]) -> None:
        if t.performance_points <= 0 or not t.perf:
            tr.perf_status = "not_eligible"
            tr.perf_message = "no performance points in the rubric"
            return
        if self.backend != "cuda":
            tr.perf_status = "not_measured"
            tr.perf_message = "not measured (no GPU)"
            return
        if not self.options.perf:
            tr.perf_status = "not_measured"
            tr.perf_message = "not measured (--no-perf)"
            return
        if not tr.all_passed or build is None or build.binary is None:
            tr.perf_status = "not_eligible"
            tr.perf_message = "0: performance counts only when every case of the task passes"
            return
        copy_gbps = self.copy_bandwidth()
        assert self._run_reference is not None
        for perf_case in t.perf:
            # The same build timed on the same case is measured once per session.
            key = (build.key, perf_case)
            with self._perf_lock:
                known = self._perf_memo.get(key)
            if known is None:
                say(f"task {t.number}: timing {perf_case.task} {perf_case.op} n={perf_case.n}")
                known = measure(setup, build.binary, self._run_reference, perf_case,
                                self.rubric.performance, copy_gbps)
                with self._perf_lock:
                    self._perf_memo[key] = known
            tr.perf.append(known)
        failed = [p for p in tr.perf if p.status != "measured"]
        if failed:
            tr.perf_status = "failed"
            tr.perf_message = "0: " + failed[0].message
        else:
            tr.perf_status = "measured"
            noisy = [p.message for p in tr.perf if p.noisy]
            tr.perf_message = "; ".join(noisy)

    def _score(self, result: SubmissionResult) -> None:
        rubric = self.rubric
        scoring = rubric.correctness_scoring
        for t, tr in zip(rubric.tasks, result.tasks):
            tr.correctness_points = correctness_points(tr.passed, tr.total, t.correctness_points, scoring) \
                if tr.status == "graded" else 0.0
            if tr.perf_status == "not_measured":
                tr.performance_points = None
            elif tr.perf_status == "measured":
                slowdowns = [p.slowdown for p in tr.perf if p.slowdown is not None]
                tr.performance_points = performance_points(
                    slowdowns, t.performance_points, rubric.performance.full_credit_slowdown)
            else:
                tr.performance_points = 0.0
        integ = result.integration
        integ.points = correctness_points(integ.passed, integ.total, integ.max_points, "proportional") \
            if integ.status == "graded" else 0.0
        result.correctness_score = sum(tr.correctness_points for tr in result.tasks) + integ.points
        result.correctness_max = rubric.max_correctness
        result.performance_max = rubric.max_performance
        measured = all(tr.performance_points is not None for tr in result.tasks)
        if measured:
            result.performance_score = sum(tr.performance_points or 0.0 for tr in result.tasks)
            result.score = result.correctness_score + result.performance_score
            result.max_score = result.correctness_max + result.performance_max
        else:
            # Without a GPU the score is out of the correctness points only.
            result.performance_score = None
            result.score = result.correctness_score
            result.max_score = result.correctness_max

    def reproduce_command(self, path: Path) -> str:
        extra = f" --backend {self.options.backend}" if self.options.backend != "auto" else ""
        rubric = "" if self.rubric.path == (self.layout.data / "rubric.toml").resolve() \
            else f" --rubric {self.rubric.path}"
        return f"python3 -m grader grade {path} --seed {self.seed}{extra}{rubric}"
