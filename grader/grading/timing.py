"""Performance: the submission timed against the reference on the same GPU.

For each [[task.perf]] case, while holding one GPU, the reference (A) and the
submission (B) each start one process, `run --time --warmup W --reps R --serve`, that
sets up once and then times a round (W untimed and R timed runs, their median) each
time it is asked: A B A B ... The cases' processes set up at once, side by side (as many
as the GPU's memory holds), and the rounds begin once all are ready (measure_all). The result of each side is the median
of its rounds' medians; the spread ((max - min) / median) says how noisy that was. A noisy
measurement gets more rounds, and is flagged if it stays noisy.

The timed inputs come from a seed drawn per grade (pipeline.py) that only the trusted side
knows: the harness draws every repetition's input (warm-ups included) from it on the
device and checks every repetition's input and output there, after the device is
synchronized (harness/host/timed_check.cuh); one wrong repetition fails the timing. The
harness is compiled without the student's files and linked first, so that check runs in
the submission's process as trusted code. The submission's JSON is used for its timing
only, checked for sense (finite, positive, min <= median <= max, the right case, seed
and repetitions), and its process also writes its last repetition's output at the end,
which the trusted reference verifies once more in a process of its own.
Baseline timings (the CPU, the placeholder, CUB...) come from a (trusted) reference
process too. They describe the machine, not a submission, so they are timed once per
machine and GPU model and kept in the cache (BaselineStore): by `grader prepare`, or
else by the first grade that needs them.
"""
from __future__ import annotations

import dataclasses
import math
import shutil
import statistics
import tempfile
import threading
import time
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable

from . import json_file, sandbox
from ..config.assignment import default_assignment
from ..config.cases import Case
from .correctness.check import RunSetup, read_json, verify
from ..results import PerfResult
from ..config.rubric import PerfCase, PerformanceRubric

PERF_SEED = 20240601   # the seed of measure() when none is given, and of the baselines


def spread(values: list[float]) -> float:
    if len(values) < 2:
        return 0.0
    mid = statistics.median(values)
    return (max(values) - min(values)) / mid if mid > 0 else math.inf


def parse_timing(data: dict | None, case: Case, seed: int, reps: int) -> tuple[float | None, str]:
    """The median ms of a timed run's JSON, or None and why it is unusable."""
    if data is None:
        return None, "no readable JSON report"
    if data.get("status") != "pass":
        return None, f"status {str(data.get('status'))[:40]!r}"
    expected = {"task": case.task, "op": case.op, "n": case.n, "block": case.block, "seed": seed}
    for key, value in expected.items():
        if data.get(key) != value:
            return None, f"the report is for another run ({key} = {str(data.get(key))[:40]!r})"
    timing = data.get("timing")
    if not isinstance(timing, dict):
        return None, "no timing in the report"
    values = {}
    for key in ("median_ms", "min_ms", "max_ms"):
        v = timing.get(key)
        if isinstance(v, bool) or not isinstance(v, (int, float)) or not math.isfinite(v) or v <= 0:
            return None, f"timing {key} is not a positive number"
        values[key] = float(v)
    if not values["min_ms"] <= values["median_ms"] <= values["max_ms"]:
        return None, "timing min <= median <= max does not hold"
    if timing.get("reps") != reps:
        return None, "timing has the wrong number of repetitions"
    return values["median_ms"], ""


class TimingReportError(Exception):
    """The trusted reference's timed report lacks what this grader reads (a driver built
    before it reported its repetitions): the grader's own fault, an internal error."""


@dataclass(frozen=True)
class Repetitions:
    """A timed round's repetitions as the driver reports them (timing.repetitions): numbered
    on across the rounds of its process, warm-ups included (`verify --rep` rebuilds one)."""

    first: int
    last: int
    warmup: int     # the first `warmup` of them untimed
    timed: int


def read_repetitions(data: dict | None) -> Repetitions | None:
    """The repetitions a timed round's report says it ran; None where it says none that
    hold together (a report of a driver that does not report them, or a malformed one)."""
    timing = data.get("timing") if isinstance(data, dict) else None
    said = timing.get("repetitions") if isinstance(timing, dict) else None
    if not isinstance(said, dict):
        return None
    values = [said.get(key) for key in ("first", "last", "warmup", "timed")]
    counts = [v for v in values if isinstance(v, int) and not isinstance(v, bool) and v >= 0]
    if len(counts) != len(values):
        return None
    reps = Repetitions(*counts)
    return reps if reps.last - reps.first + 1 == reps.warmup + reps.timed else None


def reference_repetitions(data: dict | None, rubric: PerformanceRubric) -> Repetitions:
    """The repetitions of the trusted reference's round: the ones the submission's round
    must have run too. A report without them, or with other counts than the rubric's, is
    the grader's own (a stale reference build): TimingReportError, never a guess."""
    reps = read_repetitions(data)
    if reps is None or (reps.warmup, reps.timed) != (rubric.warmup, rubric.reps):
        raise TimingReportError(
            f"the reference driver's timed report has no timing.repetitions for warmup="
            f"{rubric.warmup}, reps={rubric.reps} ({reps}): a driver built before it "
            "reported them? Rebuild the reference")
    return reps


def parse_baselines(data: dict | None) -> dict[str, float]:
    out: dict[str, float] = {}
    if not data or not isinstance(data.get("baselines"), list):
        return out
    for b in data["baselines"]:
        if isinstance(b, dict) and isinstance(b.get("name"), str) and \
                isinstance(b.get("median_ms"), (int, float)) and b["median_ms"] > 0:
            out[b["name"]] = float(b["median_ms"])
    return out


def measure_copy_bandwidth(setup: RunSetup) -> float | None:
    """The GPU's copy bandwidth (GB/s), from `info --json` of the trusted reference."""
    where = Path(tempfile.mkdtemp(prefix="info-", dir=setup.workdir))
    try:
        with setup.resources.gpu_alone() as gpu:
            r = sandbox.run([str(setup.reference), "info", "--json", str(where / "info.json")], where,
                            sandbox.Limits(wall_s=120), setup.env(where, 0, gpu),
                            sandbox.Identity(), sandboxed=False)
        data = read_json(where / "info.json") or {}
        gbps = data.get("copy_gbps")
        if r.returncode == 0 and isinstance(gbps, (int, float)) and gbps > 0:
            return float(gbps)
        return None
    finally:
        shutil.rmtree(where, ignore_errors=True)


class _Served:
    """One side's timed process, served (`run --time --serve`): started once, then
    timed a round at a time, when asked."""

    def __init__(self, setup: RunSetup, binary: Path, gpu: int, home: Path, case: Case,
                 seed: int, rubric: PerformanceRubric, extra: list[str]):
        self.report = home / "time.json"
        self.round = 0
        self.wait_s = setup.timeout_s   # for its setting up, and for each round
        argv = [str(binary), "run", *case.driver_args(seed), "--time", "--warmup",
                str(rubric.warmup), "--reps", str(rubric.reps), "--no-check", "--json",
                str(self.report), "--serve", *extra]
        # Both sides run under the same sandbox and limits, so neither is favoured; the
        # limits cover every round it may be asked for.
        one = setup.limits(case)
        lifetimes = rubric.max_rounds + 1
        limits = dataclasses.replace(one, wall_s=one.wall_s * lifetimes,
                                     cpu_s=(one.cpu_s or 0) * lifetimes or None)
        self.proc = sandbox.start(argv, home, limits, setup.env(home, seed, gpu), setup.identity)
        self.ended: sandbox.Result | None = None
        self.stopping = False
        self.early = False               # a round's report was there before it was asked for
        self.said: dict | None = None    # its last round's report

    def ready(self) -> bool:
        return self.proc.wait_for(self.report.with_name(self.report.name + ".ready"), self.wait_s)

    def time(self) -> dict | None:
        """The next round's report, or None (it ended, or did not answer in time)."""
        self.round += 1
        path = self.report.with_name(f"{self.report.name}.{self.round}")
        if path.exists():
            # Only the harness writes a round's report, and only once asked: one there
            # before is not a measurement.
            self.early = True
            return None
        if not self.proc.send("time") or not self.proc.wait_for(path, self.wait_s):
            return None
        self.said = read_json(path)
        return self.said

    def untimed_ms(self) -> float | None:
        """What its last round spent besides the timed launches, drawing the repetitions'
        inputs and checking them, as its report says (check_ms)."""
        ms = ((self.said or {}).get("timing") or {}).get("check_ms")
        return float(ms) if isinstance(ms, (int, float)) and not isinstance(ms, bool) else None

    def stop(self) -> None:
        """Asks it to stop (writing its output), without waiting."""
        if not self.stopping:
            self.stopping = True
            self.proc.send("end")

    def end(self) -> sandbox.Result:
        """Asks it to stop, and how it ended."""
        if self.ended is None:
            self.stop()
            self.ended = self.proc.finish(self.wait_s)
        return self.ended

    def why(self) -> str:
        """Why it gave no usable answer: how it ended, or what its report says."""
        r = self.end()
        if self.early:
            return f"wrote the report of round {self.round} before it was asked for (not a measurement)"
        said = read_json(self.report) or {}
        message = str(said.get("message") or "")[:200]
        return r.describe_end() + (f": {message}" if message else "")


@dataclass(frozen=True)
class TaskTiming:
    """What the timing stage says of one task (assemble.py puts it into the task's result)."""

    status: str                          # measured | not_measured | not_eligible | failed
    message: str = ""
    perf: tuple[PerfResult, ...] = ()    # measured or failed: one per perf case


@dataclass(frozen=True)
class PerfJob:
    """One perf case to time: a submission's build against the reference."""

    student_binary: Path
    reference_binary: Path
    perf: PerfCase
    baselines: dict[str, float] = field(default_factory=dict)   # the reference's (BaselineStore)


def measure(setup: RunSetup, student_binary: Path, reference_binary: Path, perf: PerfCase,
            rubric: PerformanceRubric, copy_gbps: float | None,
            say: Callable[[str], None] = lambda line: None,
            baselines: dict[str, float] | None = None, seed: int = PERF_SEED) -> PerfResult:
    """Times one perf case (see measure_all)."""
    job = PerfJob(student_binary, reference_binary, perf, dict(baselines or {}))
    return measure_all(setup, [job], rubric, copy_gbps, say, seed)[0]


# GPU memory one timed process holds besides a case's buffers (its CUDA context and the
# harness's own), and how many copies of the case's input and output it keeps (the input and
# output, the timed check's regenerated input and expected output): what set_up_together
# counts so that the processes that set up at once fit in half the GPU's memory.
PROCESS_MIB = 768
COPIES_PER_PROCESS = 4


def set_up_together(jobs: list[PerfJob], gpu_memory_mib: int | None) -> list[list[int]]:
    """The jobs in groups, in order, each group's processes set up at once: as many as fit
    in half the GPU's memory by the count above (all of them where it is unknown: the
    emulator's device memory is the host's)."""
    groups: list[list[int]] = []
    held = 0.0
    for k, job in enumerate(jobs):
        case = job.perf
        bytes_ = default_assignment().bytes_moved(case.task, case.op, case.n)
        mib = 2 * (PROCESS_MIB + COPIES_PER_PROCESS * bytes_ / (1 << 20))
        if groups and (not gpu_memory_mib or held + mib <= gpu_memory_mib / 2):
            groups[-1].append(k)
            held += mib
        else:
            groups.append([k])
            held = mib
    return groups


def measure_all(setup: RunSetup, jobs: list[PerfJob], rubric: PerformanceRubric,
                copy_gbps: float | None,
                say: Callable[[str], None] = lambda line: None,
                seed: int = PERF_SEED, after_rounds: Callable[[], None] | None = None) -> list[PerfResult]:
    """Times each job, holding one GPU for all of them, on the timed inputs of `seed`
    (a grade draws a secret one). The jobs' processes set up at once, side by side, as
    many as the GPU's memory holds (set_up_together: all of a grade's, on a GPU of 80 GB);
    their start, context and inputs are most of a job's time, and none of it is timed.
    Once a group is ready, and the group before has wound down, each of its jobs times a
    round a side in turn, A B A B ..., each round `warmup` untimed and `reps` timed runs,
    on a GPU where nothing else runs (the other processes wait, idle, as a job's other
    side does between its rounds). A group winds down (its processes end, its outputs
    are verified on the CPU) while the next sets up; after the last group's rounds the GPU
    is let go, and `after_rounds` (the grade's Nsight Compute profile, which takes the GPU
    for itself) runs while that group winds down. `say` hears how long each step took."""
    tallies = [_Tally() for _ in jobs]
    where = Path(tempfile.mkdtemp(prefix="perf-", dir=setup.workdir))
    where.chmod(0o711)
    pool = ThreadPoolExecutor(max_workers=max(1, len(jobs)), thread_name_prefix="perf")
    verified: dict[int, Future[bool]] = {}
    try:
        with setup.resources.gpu_alone() as gpu:
            for group in set_up_together(jobs, setup.gpu_memory_mib):
                before = list(verified.values())
                timed = _time_group(setup, [jobs[k] for k in group], [tallies[k] for k in group],
                                    gpu, [where / f"job{k}" for k in group], rubric, say, seed, before)
                for k, (sides, ok) in zip(group, timed):
                    verified[k] = pool.submit(_wind_down, setup, sides, ok, tallies[k], jobs[k], rubric,
                                              where / f"job{k}", say, seed)
        if after_rounds is not None:
            after_rounds()
        done = [verified[k].result() for k in range(len(jobs))]
    finally:
        pool.shutdown(wait=True)
        shutil.rmtree(where, ignore_errors=True)
    return [_conclude(job, tally, ok, rubric, copy_gbps) for job, tally, ok in zip(jobs, tallies, done)]


def _time_group(setup: RunSetup, jobs: list[PerfJob], tallies: list["_Tally"], gpu: int, folders: list[Path],
                rubric: PerformanceRubric, say: Callable[[str], None], seed: int,
                before: list["Future[bool]"]) -> list[tuple[tuple["_Served", "_Served"], bool]]:
    """Sets up every job's two processes at once, waits for them and for quiet (`before`:
    the wind-downs of the group before), then times each job's rounds; each job's
    processes, and whether its rounds all went well."""
    started: list[tuple[_Served, _Served]] = []
    try:
        for job, folder in zip(jobs, folders):
            folder.mkdir()
            started.append(_start(setup, job, gpu, folder, rubric, seed))
        ready = _all_ready(started, tallies, say)
        for f in before:
            f.result()
        return [(sides, ok and _rounds(sides, tally, job, rubric, say, seed))
                for sides, tally, job, ok in zip(started, tallies, jobs, ready)]
    except BaseException:
        for side in (side for sides in started for side in sides):
            side.end()
        raise


def _all_ready(started: list[tuple["_Served", "_Served"]], tallies: list["_Tally"],
               say: Callable[[str], None]) -> list[bool]:
    """Waits for every process to set up; whether each job's two did (else its tally says
    why)."""
    began = time.monotonic()
    ready = []
    for (ref, stu), tally in zip(started, tallies):
        ref_ready, stu_ready = ref.ready(), stu.ready()
        if not ref_ready:
            tally.message = f"the reference's timed run failed ({ref.why()})"
        elif not stu_ready:
            tally.message = f"the timed run {stu.why()}"
        ready.append(ref_ready and stu_ready)
    say(f"{len(started)} job(s): {2 * len(started)} timed processes set up side by side in "
        f"{time.monotonic() - began:.2f} s")
    return ready


@dataclass
class _Tally:
    """One job's rounds so far: the timing stage's own notes while it times, made into a
    frozen PerfResult once, at the end (_conclude)."""

    reference_runs: list[float] = field(default_factory=list)
    student_runs: list[float] = field(default_factory=list)
    message: str = ""                    # why the rounds or their check failed
    last_repetition: int = -1            # of the last round, as both sides reported it

    @property
    def rounds(self) -> int:
        """The rounds completed (both sides timed)."""
        return len(self.student_runs)

    def spreads(self) -> tuple[float, float]:
        """The spread of each side's completed rounds (reference, submission)."""
        return spread(self.reference_runs[:self.rounds]), spread(self.student_runs)

    def noisy(self, rubric: PerformanceRubric) -> bool:
        return self.rounds > 0 and max(self.spreads()) > rubric.max_spread


def _start(setup: RunSetup, job: PerfJob, gpu: int, folder: Path,
           rubric: PerformanceRubric, seed: int) -> tuple[_Served, _Served]:
    case = job.perf.as_case()
    ref = _Served(setup, job.reference_binary, gpu, sandbox.make_private_dir(folder / "a", setup.identity),
                  case, seed, rubric, [])
    try:
        stu = _Served(setup, job.student_binary, gpu, sandbox.make_private_dir(folder / "b", setup.identity),
                      case, seed, rubric, ["--output", "out.bin"])
    except BaseException:
        ref.end()
        raise
    return ref, stu


def _rounds(sides: tuple[_Served, _Served], tally: _Tally, job: PerfJob,
            rubric: PerformanceRubric, say: Callable[[str], None], seed: int) -> bool:
    """Times the rounds of a job whose processes are ready into `tally`; whether they all
    went well (else tally.message says why)."""
    ref, stu = sides
    case = job.perf.as_case()
    while True:
        started = time.monotonic()
        if not _one_round(ref, stu, tally, case, rubric, seed):
            return False
        untimed = ref.untimed_ms()
        say(f"{case.task}: round {tally.rounds} took {time.monotonic() - started:.2f} s"
            + (f" (the reference's process: {untimed:.0f} ms of it drawing and checking inputs)"
               if untimed is not None else ""))
        if tally.rounds >= rubric.rounds and (not tally.noisy(rubric) or tally.rounds >= rubric.max_rounds):
            return True


def _one_round(ref: _Served, stu: _Served, tally: _Tally, case: Case, rubric: PerformanceRubric,
               seed: int) -> bool:
    """Times one round, A (the reference) then B (the submission), into `tally`; whether
    both gave a usable timing (else tally.message says why)."""
    said = ref.time()
    ms, why = parse_timing(said, case, seed, rubric.reps)
    if ms is None:
        tally.message = f"the reference's timed run failed ({why}; {ref.why()})"
        return False
    repetitions = reference_repetitions(said, rubric)
    tally.reference_runs.append(ms)
    data = stu.time()
    if data is None:
        tally.message = f"the timed run {stu.why()}"
        return False
    if data.get("status") == "fail" and isinstance(data.get("message"), str):
        # The harness's check of a repetition (trusted code in its process) failed.
        tally.message = f"the timed run is wrong: {data['message'][:400]}"
        return False
    ms, why = parse_timing(data, case, seed, rubric.reps)
    if ms is None or read_repetitions(data) != repetitions:
        why = why or f"its repetitions are not the reference's ({repetitions})"
        tally.message = f"the timed run's report is unusable: {why}"
        return False
    tally.student_runs.append(ms)
    tally.last_repetition = repetitions.last
    return True


def _wind_down(setup: RunSetup, sides: tuple[_Served, _Served], timed: bool, tally: _Tally,
               job: PerfJob, rubric: PerformanceRubric, folder: Path,
               say: Callable[[str], None], seed: int) -> bool:
    """Ends both processes; after good rounds, has the trusted reference check the
    submission's output once more, in a process of its own: the last timed repetition's
    (of the last round), on that repetition's input. Whether the rounds stand (else
    tally.message says why)."""
    ref, stu = sides
    ref.stop()   # both wind down at once
    ended = stu.end()
    ref.end()
    if not timed:
        return False
    if not ended.ok:
        tally.message = f"the timed run {ended.describe_end()} after its last round"
        return False
    started = time.monotonic()
    vdir = folder / "verify"
    vdir.mkdir()
    # The last round's last repetition, as both drivers reported it.
    v = verify(setup, job.perf.as_case(), seed, stu.report.parent / "out.bin", vdir,
               timed_rep=tally.last_repetition, on_gpu=False)
    say(f"{job.perf.task}: verifying the timed output took {time.monotonic() - started:.2f} s")
    if v.get("status") != "pass":
        tally.message = "the output of the timed run is wrong (trusted check)"
        return False
    return True


def _conclude(job: PerfJob, tally: _Tally, verified: bool, rubric: PerformanceRubric,
              copy_gbps: float | None) -> PerfResult:
    """The job's PerfResult: failed unless verified; a verified one's figures, unless they
    are beyond what the GPU can do."""
    reference_spread, student_spread = tally.spreads()
    noisy = tally.noisy(rubric)
    failed = PerfResult(job.perf, "failed", tally.message,
                        reference_runs=tuple(tally.reference_runs), student_runs=tuple(tally.student_runs),
                        reference_spread=reference_spread, student_spread=student_spread,
                        rounds=tally.rounds, noisy=noisy, copy_gbps=copy_gbps,
                        baselines=dict(job.baselines))
    if not verified:
        return failed
    student_ms = statistics.median(tally.student_runs)
    case = job.perf.as_case()
    moved = default_assignment().bytes_moved(case.task, case.op, case.n)
    gbps = moved / (student_ms * 1e6)
    figures = dataclasses.replace(failed, reference_ms=statistics.median(tally.reference_runs),
                                  student_ms=student_ms, gbps=gbps)
    if copy_gbps and moved >= rubric.plausible_min_mb * (1 << 20) and \
            gbps > rubric.max_copy_multiple * copy_gbps:
        return dataclasses.replace(
            figures, implausible=True,
            message=(f"implausible timing: {gbps:.0f} GB/s is "
                     f"{gbps / copy_gbps:.1f}x the copy bandwidth this GPU measured "
                     f"({copy_gbps:.0f} GB/s), more than its memory can deliver; not scored "
                     "(does a timed run skip, remember or mistime its work?)"))
    noise = (f"noisy: the medians of {tally.rounds} rounds spread by "
             f"{100 * reference_spread:.0f}% (reference) and "
             f"{100 * student_spread:.0f}% (submission)") if noisy else tally.message
    return dataclasses.replace(figures, status="measured", message=noise)


def measure_baselines(setup: RunSetup, reference_binary: Path, perf: PerfCase,
                      rubric: PerformanceRubric) -> dict[str, float]:
    """The baselines of a perf case, timed by one reference process alone on a GPU
    after one round of its own ({} when that fails: the reports then show none)."""
    where = Path(tempfile.mkdtemp(prefix="baselines-", dir=setup.workdir))
    where.chmod(0o711)
    try:
        with setup.resources.gpu_alone() as gpu:
            ref = _Served(setup, reference_binary, gpu, sandbox.make_private_dir(where / "a", setup.identity),
                          perf.as_case(), PERF_SEED, rubric, ["--baselines"])
            if ref.ready():
                ref.time()
            ref.end()   # the baselines are timed after the last round, into its report
        return parse_baselines(read_json(ref.report))
    finally:
        shutil.rmtree(where, ignore_errors=True)


class BaselineStore:
    """The reference's baseline timings, by GPU model and perf case, in a JSON file of
    the cache (next to the reference build it belongs to). Shared by the processes of a
    class (a batch's workers, Slurm's tasks): written whole and renamed into place, so a
    reader never sees half a file; a lost race only times a baseline twice."""

    def __init__(self, path: Path):
        self.path = path
        self._lock = threading.Lock()

    @staticmethod
    def key(gpu: str, perf: PerfCase, rubric: PerformanceRubric) -> str:
        return f"{gpu} | {perf.task} {perf.op} n={perf.n} block={perf.block} reps={rubric.reps}"

    def get(self, setup: RunSetup, reference_binary: Path, gpu: str, perf: PerfCase,
            rubric: PerformanceRubric) -> tuple[dict[str, float], bool]:
        """The baselines, and whether they were timed just now."""
        key = self.key(gpu, perf, rubric)
        with self._lock:
            known = self._read().get(key)
            if isinstance(known, dict):
                return {k: float(v) for k, v in known.items() if isinstance(v, (int, float))}, False
            values = measure_baselines(setup, reference_binary, perf, rubric)
            if values:
                data = self._read()
                data[key] = values
                self._write(data)
            return values, True

    def _read(self) -> dict:
        return json_file.read_object(self.path)

    def _write(self, data: dict) -> None:
        json_file.replace_object(self.path, data, ".baselines-")  # unwritten: timed again next time
