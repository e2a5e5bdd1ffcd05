"""Performance: the submission timed against the reference on the same GPU.

For each [[task.perf]] case, while holding one GPU, the reference (A) and the
submission (B) run `run --time --warmup W --reps R` alternately, A B A B ..., each
process reporting the median of its R timed runs. The result of each side is the
median of its processes' medians; the spread ((max - min) / median) says how noisy
that was. A noisy measurement gets more rounds, and is flagged if it stays noisy.

The submission's JSON is untrusted: it is used for its timing only, checked for sense
(finite, positive, min <= median <= max, the right case and repetitions), and its
first timed process also writes its output, which the trusted reference verifies.
Baseline timings come from the (trusted) reference process.
"""
from __future__ import annotations

import math
import shutil
import statistics
import tempfile
from pathlib import Path

from grader import run as sandbox
from grader.assignment import default_assignment
from grader.cases import Case
from grader.check import RunSetup, read_json, verify
from grader.results import PerfResult
from grader.rubric import PerfCase, PerformanceRubric

PERF_SEED = 20240601


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


class _Timer:
    """Runs timed processes of one side (reference or submission) on a fixed GPU."""

    def __init__(self, setup: RunSetup, binary: Path, trusted: bool, gpu: int, where: Path):
        self.setup = setup
        self.binary = binary
        self.trusted = trusted
        self.gpu = gpu
        self.where = where

    def run(self, case: Case, seed: int, rubric: PerformanceRubric, extra: list[str],
            tag: str) -> tuple[dict | None, sandbox.Result, Path]:
        home = sandbox.make_private_dir(self.where / tag, self.setup.identity)
        report = home / "time.json"
        argv = [str(self.binary), "run", *case.driver_args(seed), "--time", "--warmup",
                str(rubric.warmup), "--reps", str(rubric.reps), "--no-check", "--json",
                str(report), *extra]
        # Both sides run under the same sandbox, so neither is favoured.
        limits = self.setup.limits(case)
        r = sandbox.run(argv, home, limits, self.setup.env(home, seed, self.gpu), self.setup.identity)
        return read_json(report), r, home


def measure(setup: RunSetup, student_binary: Path, reference_binary: Path, perf: PerfCase,
            rubric: PerformanceRubric, copy_gbps: float | None) -> PerfResult:
    """Times one perf case; holds one GPU for the whole interleaved sequence."""
    case = perf.as_case()
    seed = PERF_SEED
    result = PerfResult(perf, "failed", copy_gbps=copy_gbps)
    where = Path(tempfile.mkdtemp(prefix="perf-", dir=setup.workdir))
    where.chmod(0o711)
    try:
        with setup.resources.gpu_alone() as gpu:
            ref = _Timer(setup, reference_binary, True, gpu, where)
            stu = _Timer(setup, student_binary, False, gpu, where)
            rounds = 0
            while True:
                # A: the reference (its first process also times the baselines).
                extra = ["--baselines"] if rounds == 0 and rubric.baselines else []
                data, r, _ = ref.run(case, seed, rubric, extra, f"a{rounds}")
                ms, why = parse_timing(data, case, seed, rubric.reps)
                if ms is None:
                    result.message = f"the reference's timed run failed ({why}; {r.describe_end()})"
                    return result
                result.reference_runs.append(ms)
                if rounds == 0:
                    result.baselines = parse_baselines(data)
                # B: the submission (its first process also writes its output).
                extra = ["--output", "out.bin"] if rounds == 0 else []
                data, r, home = stu.run(case, seed, rubric, extra, f"b{rounds}")
                if r.timed_out or r.returncode != 0:
                    result.message = f"the timed run {r.describe_end()}"
                    return result
                ms, why = parse_timing(data, case, seed, rubric.reps)
                if ms is None:
                    result.message = f"the timed run's report is unusable: {why}"
                    return result
                if rounds == 0:
                    vdir = where / "verify"
                    vdir.mkdir()
                    # The output is the last timed repetition's, on that repetition's input.
                    v = verify(setup, case, seed, home / "out.bin", vdir,
                               perturb_rep=rubric.warmup + rubric.reps - 1)
                    (home / "out.bin").unlink(missing_ok=True)
                    if v.get("status") != "pass":
                        result.message = "the output of the timed run is wrong (trusted check)"
                        return result
                result.student_runs.append(ms)
                rounds += 1
                result.reference_spread = spread(result.reference_runs)
                result.student_spread = spread(result.student_runs)
                noisy = max(result.reference_spread, result.student_spread) > rubric.max_spread
                if rounds >= rubric.rounds and (not noisy or rounds >= rubric.max_rounds):
                    break
        result.rounds = rounds
        result.noisy = noisy
        result.reference_ms = statistics.median(result.reference_runs)
        result.student_ms = statistics.median(result.student_runs)
        moved = default_assignment().bytes_moved(case.task, case.op, case.n)
        result.gbps = moved / (result.student_ms * 1e6)
        if copy_gbps and moved >= rubric.plausible_min_mb * (1 << 20) and \
                result.gbps > rubric.max_copy_multiple * copy_gbps:
            result.implausible = True
            result.message = (f"implausible timing: {result.gbps:.0f} GB/s is "
                              f"{result.gbps / copy_gbps:.1f}x the copy bandwidth this GPU measured "
                              f"({copy_gbps:.0f} GB/s), more than its memory can deliver; not scored "
                              "(does a timed run skip, remember or mistime its work?)")
            return result
        result.status = "measured"
        if noisy:
            result.message = (f"noisy: the medians of {rounds} rounds spread by "
                              f"{100 * result.reference_spread:.0f}% (reference) and "
                              f"{100 * result.student_spread:.0f}% (submission)")
        return result
    finally:
        shutil.rmtree(where, ignore_errors=True)
