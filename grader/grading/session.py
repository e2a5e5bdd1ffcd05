"""A grading session: what the grading of several submissions shares.

The machine and the backend chosen for it, the trusted reference build (built once,
then cached) and its probe in the sandbox, the CPU and GPU slots, the seed, the
temporary workspace, and the machine's description (copy bandwidth included) that
every report carries. grader/grading/pipeline.py grades one submission with a session.
"""
from __future__ import annotations

import dataclasses
import os
import random
import shutil
import sys
import tempfile
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable

from ..machine import detect as machines
from .job import Options, default_cache_dir
from ..machine.backend import BACKENDS, EMULATOR, Backend, BackendError, choose as choose_backend
from .. import COMMAND
from . import sandbox
from .checks import sanitizer as sanitizers
from . import ncu
from .build import Builder
from .provenance import provenance
from .build_types import BuildResult, Layout, Toolchain
from ..config.cases import Case
from .correctness.check import RunSetup, huge_at_once
from .timing import BaselineStore, measure_copy_bandwidth
from ..results import NOT_CONTAINED, MachineInfo, PerfResult
from ..config.rubric import PerfCase, Rubric
from ..machine.slots import Resources
from .correctness.applications import list_applications


class GraderError(Exception):
    """The grader cannot grade on this machine (a setup problem, not the submission's)."""


def _log_stderr(line: str) -> None:
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
        try:
            backend = choose_backend(options.backend, m)
        except BackendError as e:
            raise GraderError(str(e)) from None
        self.backend = backend
        try:
            self.gpus = machines.select_gpus(m.gpus, options.gpus) if backend.on_gpu else []
        except ValueError as e:
            raise GraderError(str(e)) from None
        self.jobs = options.jobs or m.cores
        arch = options.cuda_arch
        if backend.on_gpu and not arch:
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
        # The jail hides the grader's own folders: its checkout (the reference solution),
        # its cache, and the workspace (other submissions' builds).
        self.cache_dir = options.cache_dir or default_cache_dir()
        hidden = tuple(str(p) for p in (self.layout.root.resolve(), self.cache_dir.resolve(),
                                        self.workdir))
        devices = sandbox.gpu_devices() if backend.on_gpu else ()
        jail, self.jail_problem = sandbox.find_jail(hidden, devices, self.identity)
        self.identity = dataclasses.replace(self.identity, jail=jail)
        if jail is None:
            log(f"WARNING: student code is NOT CONTAINED: {self.jail_problem}")
        sandbox.open_path_for(self.workdir, self.identity, self.workdir)
        (self.workdir / "builds").mkdir()
        (self.workdir / "builds").chmod(0o711)
        # Output files in flight: at most 70% of the workspace's free disk.
        self.resources = Resources.create(self.jobs, [g.index for g in self.gpus],
                                          options.gpu_runs or rubric.limits.gpu_runs_at_once,
                                          int(0.7 * shutil.disk_usage(self.workdir).free))
        self.builder = self._builder(backend, arch)
        # Race check: on a GPU, some cases also run on the CPU emulator.
        self.race_note = ""
        self.race_builder: Builder | None = None
        if backend.cross_checks and options.race_check and rubric.race_check_groups:
            race = self._builder(EMULATOR, "") if m.cmake.ok and m.gxx.ok else None
            # Built here before: Boost.Context is there, no need to compile a probe for it.
            if race is not None and not race.cached() and \
                    (m.boost_context.path is None or m.boost_context.path == "unchecked"):
                m.boost_context = machines.check_boost_context(m.gxx.path)
            if race is not None and (race.cached() or m.can_build_emulator):
                self.race_builder = race
            else:
                problems = [t.problem for t in (m.cmake, m.gxx, m.boost_context) if not t.ok]
                self.race_note = ("race check on the CPU emulator not run: the emulator cannot be "
                                  f"built here ({'; '.join(problems)})")
        # On a GPU, each task's own build also runs under compute-sanitizer.
        self.sanitizer: sanitizers.Sanitizer | None = None
        self.sanitizer_note = ""
        if backend.cross_checks and options.sanitize and rubric.sanitizer.run and rubric.sanitize:
            found = sanitizers.find(m.nvcc.path)
            if found is None:
                self.sanitizer_note = ("compute-sanitizer not run: it is not installed beside nvcc "
                                       "nor on PATH")
                log(f"note: {self.sanitizer_note}")
            else:
                self.sanitizer = sanitizers.Sanitizer(found, rubric.sanitizer.run_timeout_s)
        # On a GPU, Nsight Compute profiles each timed task (grader/grading/ncu.py).
        self.ncu: str | None = None
        self.profile_note = ""
        if backend.times and options.perf and rubric.profile.run:
            self.ncu = ncu.find(m.nvcc.path)
            if self.ncu is None:
                self.profile_note = ("Nsight Compute figures not measured: ncu is not installed "
                                     "beside nvcc nor on PATH")
                log(f"note: {self.profile_note}")
        self.profiles: ncu.ProfileStore | None = None   # the reference's figures, once the reference is there
        self.seed = options.seed if options.seed is not None else random.SystemRandom().randrange(1, 2**31)
        self.provenance = provenance(self.layout)   # what each result records it was graded with
        self.run_reference: Path | None = None     # the reference copy student-side runs use
        self.race_setup: RunSetup | None = None
        self.sandbox_note = ""
        self.perf_memo = PerfMemo()
        self.baselines: BaselineStore | None = None   # on a GPU, once the reference is there
        self.handout_files = {file: (layout.handout_student(file).read_bytes()
                                     if layout.handout_student(file).is_file() else None)
                              for file in rubric.submitted_files}
        self._setup: RunSetup | None = None
        self._prepare_lock = threading.Lock()
        self._machine_info: MachineInfo | None = None
        self._machine_lock = threading.Lock()
        self._integration_tasks: tuple[str, ...] | None = None
        self._integration_lock = threading.Lock()

    # ---- shared preparation ------------------------------------------------------------------

    def prepare(self) -> RunSetup:
        """Builds (or finds in the cache) the trusted reference and the prebuilt harness
        of each backend, all at once; idempotent."""
        with self._prepare_lock:
            if self._setup is not None:
                return self._setup
            builders = [b for b in (self.builder, self.race_builder) if b is not None]
            with ThreadPoolExecutor(max_workers=2 * len(builders)) as pool:
                # Both backends' references and prebuilt harnesses are made side by side.
                kits = [pool.submit(b.kit) for b in builders]
                for b in builders:
                    pool.submit(b.reference)
                setup, self.run_reference = self._prepare_backend(self.builder)
                if self.race_builder is not None:
                    try:
                        self.race_setup, _ = self._prepare_backend(self.race_builder)
                    except GraderError as e:
                        self.race_builder = None
                        self.race_note = f"race check on the CPU emulator not run: {str(e)[:300]}"
                for b, kit in zip(builders, kits):
                    made = kit.result()
                    if not isinstance(made, str):
                        self.log(f"prebuilt harness ({b.tools.backend.name}): ready [{made[1]}]")
                    elif b is self.builder:
                        raise GraderError(made)
                    else:
                        self.race_builder = None
                        self.race_note = f"race check on the CPU emulator not run: {made[:300]}"
            if self.race_note:
                self.log(f"note: {self.race_note}")
            self._setup = setup
            return self._setup

    def integration_tasks(self) -> tuple[str, ...]:
        """The driver tasks the integration build (and an exercise's) must run: its cases'
        and the applications' (as the reference driver lists them); the build compiles
        only those. Waits for the reference."""
        with self._integration_lock:
            if self._integration_tasks is None:
                tasks = set(self.rubric.integration_tasks)
                if self.rubric.integration.applications:
                    reference = self.prepare().reference
                    tasks |= {app.driver_task for app in list_applications(reference)}
                self._integration_tasks = tuple(sorted(tasks))
            return self._integration_tasks

    def build(self, builder: Builder, label: str, files: dict[str, bytes], origins: dict[str, str],
              paths: dict[str, str], tasks: tuple[str, ...] | None) -> BuildResult:
        """builder.build with `tasks` (None: integration_tasks(), known once the reference is)."""
        return builder.build(label, files, origins, paths,
                             self.integration_tasks() if tasks is None else tasks)

    def prepare_machine(self) -> None:
        """`prepare` (and a Slurm batch's prepare job): the reference and the prebuilt
        harness, and on a GPU timing the reference's baselines and profiling it under
        Nsight Compute, once per machine, so that no grade spends its time on them."""
        setup = self.prepare()
        if self.backend.times and self.options.perf:
            for task in self.rubric.tasks:
                for perf in task.perf:
                    self.baselines_of(perf)
            # The reference's Nsight Compute figures of every case a grade profiles (each
            # timed task's first perf case: pipeline.profile_tasks), so no grade pays for them.
            if self.ncu is not None and self.profiles is not None and self.run_reference is not None:
                cases = [task.perf[0] for task in self.rubric.tasks if task.perf]
                gpu = self.gpus[0].name if self.gpus else "GPU"
                if cases and not ncu.profile_reference(self.profiles, setup, self.ncu, self.run_reference,
                                                       gpu, cases, self.rubric.profile, self.log):
                    self.log(f"note: {ncu.REFUSED_NOTE}")

    def baselines_of(self, perf: PerfCase) -> dict[str, float]:
        """The reference's baselines of a perf case on this machine's GPU: from the
        cache, else timed now ({} where the rubric times none)."""
        setup = self.prepare()
        if self.baselines is None or not self.rubric.performance.baselines or not self.gpus:
            return {}
        assert self.run_reference is not None
        values, fresh = self.baselines.get(setup, self.run_reference, self.gpus[0].name, perf,
                                           self.rubric.performance)
        if fresh:
            self.log(f"baselines of {perf.task} timed on the {self.gpus[0].name}: "
                     + (", ".join(f"{k} {v:.3g} ms" for k, v in sorted(values.items())) or "none")
                     + f" (kept in {self.baselines.path})")
        return values

    def _builder(self, backend: Backend, arch: str) -> Builder:
        m = self.machine
        compiler = backend.compiler(m)
        tools = Toolchain(backend=backend, cmake=m.cmake.path or "cmake",
                          nvcc=m.nvcc.path if backend.on_gpu else None,
                          cuda_arch=arch if backend.on_gpu else "",
                          compiler_id=f"{compiler.name} {compiler.version}",
                          # The CMake builds (the reference and the prebuilt harness, once
                          # per machine) have the machine; a submission's compiles one file.
                          jobs=self.jobs,
                          build_type="Release" if backend.release_build
                          else self.rubric.limits.emulator_build_type)
        return Builder(self.layout, tools, self.cache_dir, self.workdir / "builds",
                       self.identity, self.rubric.limits.build_timeout_s, self.rubric.limits.memory_mb,
                       self.rubric.forbidden, slot=self.resources.cpu_slot,
                       placeholders_do_nothing=self.rubric.correctness.zero_for_placeholders)

    def _prepare_backend(self, builder: Builder) -> tuple[RunSetup, Path]:
        """The trusted reference of one backend (built or cached), its copy student-side
        runs use, and how runs go, checked by a probe."""
        backend = builder.tools.backend
        start = time.monotonic()
        ref = builder.reference()
        if not ref.ok or ref.binary is None:
            raise GraderError(ref.errors or "the reference does not build")
        self.log(f"reference driver ({backend.name}): "
                 + ("cached" if ref.cached else f"built in {time.monotonic() - start:.0f} s")
                 + f" [{ref.binary}]")
        run_copy = builder.build("reference", dict(builder.reference_files), {}, {})
        if not run_copy.ok or run_copy.binary is None:
            raise GraderError(run_copy.errors)
        limits = self.rubric.limits
        setup = RunSetup(
            backend=backend, reference=ref.binary, workdir=self.workdir,
            identity=self.identity, resources=self.resources,
            timeout_s=backend.run_timeout_s(limits.run_timeout_s, limits.emulator_run_timeout_s),
            memory_mb=limits.memory_mb, max_timeouts=limits.max_timeouts_per_task,
            hung_fraction=limits.hung_limit_fraction, hang_budget=limits.hang_budget_limits,
            hang_case_share=limits.hang_budget_case_share)
        if backend.on_gpu and self.gpus:
            setup.gpu_memory_mib = min(g.memory_mib for g in self.gpus)
            setup.huge_slots = threading.Semaphore(huge_at_once(setup.gpu_memory_mib))
        self._probe_sandbox(setup, run_copy.binary)
        if backend.times and builder is self.builder:
            self.baselines = BaselineStore(self.cache_dir / f"baselines-{ref.key[:20]}.json")
            self.profiles = ncu.ProfileStore(self.cache_dir / f"ncu-{ref.key[:20]}.json")
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
                slot = self.resources.gpu() if setup.backend.on_gpu else self.resources.cpu_slot()
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

    def machine_info(self) -> MachineInfo:
        """The machine as every report of this session describes it; worked out once (on
        a GPU with performance on, that measures the copy bandwidth)."""
        with self._machine_lock:
            if self._machine_info is None:
                self._machine_info = self._describe_machine()
            return self._machine_info

    def _describe_machine(self) -> MachineInfo:
        user = self.identity.name
        if not self.identity.drops and os.geteuid() == 0:
            user += (" (--sandbox-user '': not dropped)" if not self.options.sandbox_user
                     else f" (no user {self.options.sandbox_user!r} to drop to)")
        if self.sandbox_note:
            user += f"; {self.sandbox_note}"
        jail = self.identity.jail
        contained = jail.describe() if jail else f"{NOT_CONTAINED}: {self.jail_problem}"
        if self.backend.on_gpu:
            copy_gbps = measure_copy_bandwidth(self.prepare()) if self.options.perf else None
            g = self.gpus[0]
            return MachineInfo(self.backend.name, g.name, g.compute_capability, copy_gbps, user,
                               sandbox=contained)
        note = (f"no GPU: correctness is graded with the CPU emulator; {self.backend.cannot}"
                if not self.machine.has_gpu else
                f"emulator backend chosen: correctness is graded with the CPU emulator; "
                f"{self.backend.cannot}")
        return MachineInfo(self.backend.name, "", "", None, user, note, contained)

    def draw_perf_seed(self) -> int:
        """The seed of a grade's timed inputs: fresh and secret (never derived from the
        grade's seed, which students see), unless the options fix it."""
        if self.options.perf_seed is not None:
            return self.options.perf_seed
        return random.SystemRandom().randrange(1, 2**63)

    def draw_cases_seed(self) -> int:
        """The seed of a grade's drawn hidden cases (grader/config/draw.py): fresh and
        secret like the timed inputs' seed, unless the options fix it."""
        if self.options.draw_seed is not None:
            return self.options.draw_seed
        return random.SystemRandom().randrange(1, 2**63)

    def reproduce_command(self, path: Path) -> str:
        named = BACKENDS.get(self.options.backend)       # None: auto, chosen again there
        extra = f" --backend {named.name}" if named else ""
        rubric = "" if self.rubric.path == (self.layout.data / "rubric.toml").resolve() \
            else f" --rubric {self.rubric.path}"
        return f"{COMMAND} grade {path} --seed {self.seed}{extra}{rubric}"

    def close(self) -> None:
        if not self.options.keep_workdir:
            shutil.rmtree(self.workdir, ignore_errors=True)

    def __enter__(self) -> "Session":
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


class PerfMemo:
    """Timings by (build, perf case): the same build timed on the same case is measured
    once per session (a class's identical files share builds)."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._known: dict[tuple[str, PerfCase], PerfResult] = {}

    def get(self, key: tuple[str, PerfCase]) -> PerfResult | None:
        with self._lock:
            return self._known.get(key)

    def put(self, key: tuple[str, PerfCase], value: PerfResult) -> None:
        with self._lock:
            self._known[key] = value
