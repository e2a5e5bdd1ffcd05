"""Correctness: run a case with the submission's driver, decide it with the reference.

The submission's driver runs `run ... --output FILE --json FILE` in the sandbox. The
verdict comes from the TRUSTED reference driver, `verify ... --output FILE`, which
regenerates the input from the seed and checks the output file on the CPU (on a GPU,
outputs from DEVICE_VERIFY_MIN_N elements on the GPU, `--on-device`). Nothing the
submission prints or writes can make a case pass: a case passes only when the
submission exited 0 AND the trusted verify passed. The submission's own JSON is read
(defensively) only for its error message and race hint.
"""
from __future__ import annotations

import contextlib
import dataclasses
import json
import shutil
import tempfile
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from contextlib import AbstractContextManager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable

from .. import sandbox
from ...config.assignment import default_assignment
from ...config.cases import Case
from ...results import CaseResult
from ...machine.backend import Backend
from ...machine.slots import Resources
from .timeouts import TimeoutTracker

JSON_LIMIT = 256 * 1024
COULD_NOT_RUN = "could not run"   # how a case not run for its build's hangs begins (checking.py)
VERIFY_TIMEOUT_S = 600.0
# Cases from this size (the drawn n >= 2^31 ones, grader/config/draw.py) run outside the GPU
# batch, as many at once as the GPU's memory holds (huge_at_once), with time and memory for
# their size: HUGE_S_PER_GIB seconds more a GiB of input and output.
HUGE_N = 1 << 30
# On the emulator, a case above this many elements gets its time limit once more for each
# this many elements (the drawn race size in (2^21, 2^22]: 2 to 3 times the limit).
EMULATOR_BASE_N = 1 << 21
HUGE_S_PER_GIB = 4.0
# GPU memory one huge case holds at most: its run's input and output (16 GiB for 2^31 + k
# int32 elements; the harness's guards and scratch) and the verify's copy of the output.
HUGE_GPU_MIB = 32 << 10


def huge_at_once(gpu_memory_mib: int) -> int:
    """How many huge cases a GPU of this much memory runs at once (at least one)."""
    return max(1, gpu_memory_mib // HUGE_GPU_MIB)
# On a GPU, outputs of cases from this size are verified there (`verify --on-device`: the
# input drawn again and the output checked on the GPU, exactly as the CPU would for integer
# operators and MSSP; the driver leaves floats to the CPU), in one process holding a GPU
# turn: n >= 2^31 in seconds, not a minute of one CPU core.
DEVICE_VERIFY_MIN_N = 1 << 22


@dataclass
class RunSetup:
    """How submission drivers are run in this grading session."""

    backend: Backend
    reference: Path                  # the trusted driver (verify)
    workdir: Path
    identity: sandbox.Identity
    resources: Resources
    timeout_s: float
    memory_mb: int | None
    max_timeouts: int
    emulator_threads: int = 1
    # After max_timeouts timeouts of a build, its other cases run with this fraction of their
    # limit; once they cost hang_budget limits and number hang_case_share of its cases, none.
    hung_fraction: float = 0.25
    hang_budget: float = 3.0
    hang_case_share: float = 0.0
    display_binary: str = ""         # how reproduce commands name the driver
    memo: dict[tuple[str, str, int], CaseResult] = field(default_factory=dict)
    memo_lock: threading.Lock = field(default_factory=threading.Lock)
    # The huge cases that may run at once (huge_at_once; one where the GPU's memory is unknown).
    huge_slots: threading.Semaphore = field(default_factory=lambda: threading.Semaphore(1))
    gpu_memory_mib: int | None = None   # the smallest GPU's (timing.set_up_together); None: unknown

    @property
    def binary_name(self) -> str:
        return self.display_binary or f"build/{self.backend.binary}"

    def limits(self, case: Case) -> sandbox.Limits:
        file_mb = max(64, case.output_bytes() // (1 << 20) + 16)
        threads = self.emulator_threads if self.backend.seeded_scheduler else 2
        wall_s, memory_mb = self.timeout_s, self.memory_mb
        if self.backend.reduced_sizes and case.n > EMULATOR_BASE_N:
            # The emulator's drawn race size above 2^21 takes seconds a million elements.
            wall_s *= 1 + case.n / EMULATOR_BASE_N
        if case.n >= HUGE_N:
            # The input and output live in host memory too: room for both, and time to
            # generate and write them.
            gib = (default_assignment().bytes_moved(case.task, case.op, case.n) + (1 << 30) - 1) >> 30
            wall_s += HUGE_S_PER_GIB * gib
            # Room for a second host copy of each (staging), and the CUDA context.
            memory_mb = None if memory_mb is None else max(memory_mb, (2 * gib + 4) << 10)
        return sandbox.Limits(wall_s=wall_s, cpu_s=wall_s * threads + 5,
                              memory_mb=memory_mb,
                              memory_kind="as" if self.backend.address_space_limit else "data",
                              file_mb=file_mb)

    def case_limits(self, case: Case, timeouts: TimeoutTracker, key: str) -> sandbox.Limits | None:
        """The case's limits in a build that timed out so far as `timeouts` says: its own,
        or (after max_timeouts timeouts) hung_fraction of its time; None where the build's
        timeouts have cost hang_budget time limits already (it is not run)."""
        if self.hang_allowance_spent(timeouts, key):
            return None
        hung, _ = timeouts.of(key)
        limits = self.limits(case)
        if hung < self.max_timeouts:
            return limits
        wall_s = limits.wall_s * self.hung_fraction
        return dataclasses.replace(limits, wall_s=wall_s, cpu_s=(limits.cpu_s or 0) * self.hung_fraction + 5)

    def hang_allowance_spent(self, timeouts: TimeoutTracker, key: str) -> bool:
        """Whether the build's timeouts cost hang_budget time limits and number hang_case_share
        of its cases (a hang at one block size costs its own cases): nothing more starts."""
        hung, lost = timeouts.of(key)
        return (lost >= self.hang_budget * self.timeout_s
                and hung >= self.hang_case_share * timeouts.planned(key))

    def not_run_words(self, key: str, timeouts: TimeoutTracker) -> str:
        hung, lost = timeouts.of(key)
        share = (f" and {self.hang_case_share:.0%} of its {timeouts.planned(key)} cases, "
                 "[limits] hang_budget_case_share" if self.hang_case_share and timeouts.planned(key) else "")
        return (f"{COULD_NOT_RUN}: this build's {hung} timeout(s) have cost {lost:.0f} s, its hang allowance "
                f"({self.hang_budget:g} time limits, [limits] hang_budget_limits{share})")

    def timeout_words(self, limits: sandbox.Limits, case: Case) -> str:
        shortened = limits.wall_s < self.limits(case).wall_s
        return (f"killed after {limits.wall_s:.0f} s ("
                + (f"the time limit shortened after {self.max_timeouts} timeout(s) of this build, "
                   "[limits] hung_limit_fraction" if shortened else "time limit")
                + "): an endless loop or a deadlock?")

    def run_slot(self) -> AbstractContextManager[int | None]:
        """What a student process holds while it runs: a GPU's turn (its index), or on
        the emulator a CPU slot."""
        return self.resources.gpu() if self.backend.on_gpu else self.resources.cpu_slot()

    def env(self, home: Path, seed: int, gpu: int | None) -> dict[str, str]:
        env = sandbox.base_env(home)
        if gpu is not None:
            env["CUDA_DEVICE_ORDER"] = "PCI_BUS_ID"
            env["CUDA_VISIBLE_DEVICES"] = str(gpu)
        if self.backend.seeded_scheduler:
            env["SCANLAB_EMU_SEED"] = str(seed)
            env["SCANLAB_EMU_THREADS"] = str(self.emulator_threads)
        return env

    def reproduce(self, case: Case, seed: int) -> str:
        prefix = self.backend.seed_prefix(seed, self.emulator_threads)
        return f"{prefix}{self.binary_name} run " + " ".join(case.driver_args(seed))


def read_json(path: Path) -> dict | None:
    """A JSON object from a file an untrusted program wrote, or None."""
    try:
        if not path.is_file() or path.is_symlink() or path.stat().st_size > JSON_LIMIT:
            return None
        value = json.loads(path.read_text(encoding="utf-8", errors="replace"))
    except (OSError, ValueError, RecursionError):
        return None
    return value if isinstance(value, dict) else None


def _text(value: object, limit: int = 600) -> str:
    return value[:limit] if isinstance(value, str) else ""


def _error_line(stdout: str, stderr: str) -> str:
    for line in (stdout + "\n" + stderr).splitlines():
        s = line.strip()
        if s.startswith(("ERROR", "scanlab: error:", "scanlab:")):
            return s[:600]
    return ""


def verify(setup: RunSetup, case: Case, seed: int, output: Path, where: Path,
           timed_rep: int | None = None, on_gpu: bool = True) -> dict:
    """The trusted verdict on an output file: the reference driver's JSON. With
    `timed_rep`, against the input that repetition of a timed run saw. `on_gpu=False`:
    on the CPU whatever its size (the timing's, which holds the GPU alone)."""
    vjson = where / "verify.json"
    argv = [str(setup.reference), "verify", *case.driver_args(seed), "--output", str(output),
            "--json", str(vjson)]
    if timed_rep is not None:
        argv += ["--rep", str(timed_rep)]
    with _verify_slot(setup, [case] if on_gpu else []) as (extra, env):
        r = sandbox.run(argv + extra, where, sandbox.Limits(wall_s=VERIFY_TIMEOUT_S), env(where),
                        sandbox.Identity(), sandboxed=False)
    data = read_json(vjson) or {}
    ended = default_assignment().exit_meaning(r.returncode)
    if ended not in ("pass", "fail") or data.get("status") not in ("pass", "fail"):
        message = _text(data.get("message")) or _error_line(r.stdout, r.stderr) or r.describe_end()
        return {"status": "error", "message": message}
    # Only a clean "pass" exit with a "pass" JSON is a pass.
    if ended != "pass" or data.get("status") != "pass":
        data["status"] = "fail"
    return data


def _checked_on_gpu(setup: RunSetup, case: Case) -> bool:
    """Whether the trusted verify of this case's output runs on the GPU (`--on-device`)."""
    return setup.backend.on_gpu and setup.resources.gpus is not None and case.n >= DEVICE_VERIFY_MIN_N


@contextlib.contextmanager
def _verify_slot(setup: RunSetup, cases: list[Case]):
    """What a verify process of these cases holds: a GPU turn where they are checked on
    the GPU (a GPU backend, DEVICE_VERIFY_MIN_N elements or more), else (no cases: on the
    CPU) a CPU slot. Yields
    its extra options and its environment (a function of its folder)."""
    if cases and all(_checked_on_gpu(setup, c) for c in cases):
        with setup.resources.gpu() as gpu:
            yield ["--on-device"], lambda where: {**sandbox.base_env(where), "CUDA_DEVICE_ORDER": "PCI_BUS_ID",
                                                  "CUDA_VISIBLE_DEVICES": str(gpu)}
    else:
        with setup.resources.cpu_slot():
            yield [], sandbox.base_env


def verify_many(setup: RunSetup, items: list[tuple[Case, int, Path]], where: Path) -> list[dict]:
    """verify() of many output files, `(case, seed, output)` each: one reference process
    a CPU slot (`verify --cases`) instead of one a file, and one on the GPU for the large
    ones (_verify_slot). A file its process left without a line (it crashed or timed out)
    is verified alone."""
    large = [i for i, item in enumerate(items) if _checked_on_gpu(setup, item[0])]
    rest = [i for i in range(len(items)) if i not in set(large)]
    chunks = max(1, min(setup.resources.cores, len(rest)))
    parts = [rest[k::chunks] for k in range(chunks) if rest[k::chunks]] + ([large] if large else [])
    found: dict[int, dict] = {}

    def one_process(k: int, indices: list[int]) -> None:
        # A folder each: a process's captured output (.stdout, .stderr) lives in its folder.
        folder = where / f"verify-{k}"
        folder.mkdir()
        cases, report = folder / "cases.txt", folder / "verify.jsonl"
        cases.write_text("".join(" ".join([*items[i][0].driver_args(items[i][1]), "--output",
                                           str(items[i][2])]) + "\n" for i in indices))
        argv = [str(setup.reference), "verify", "--cases", str(cases), "--json", str(report)]
        with _verify_slot(setup, [items[i][0] for i in indices]) as (extra, env):
            sandbox.run(argv + extra, folder, sandbox.Limits(wall_s=VERIFY_TIMEOUT_S * len(indices)),
                        env(folder), sandbox.Identity(), sandboxed=False)
        lines = report.read_text(encoding="utf-8", errors="replace").splitlines() \
            if report.is_file() else []
        for line in lines:   # the reference's own output: trusted, but a process killed at
            try:             # its time limit may leave its last line half written
                data = json.loads(line)
            except ValueError:
                continue     # verified alone below
            if data.get("status") in ("pass", "fail"):
                found[indices[data["case"]]] = data
            else:
                found[indices[data["case"]]] = {"status": "error", "message": _text(data.get("message"))}

    with ThreadPoolExecutor(max_workers=max(1, len(parts)), thread_name_prefix="verify") as pool:
        list(pool.map(lambda kv: one_process(*kv), enumerate(parts)))
    out = []
    for i, (case, seed, output) in enumerate(items):
        if i not in found:
            alone = where / f"alone-{i}"
            alone.mkdir()
            found[i] = verify(setup, case, seed, output, alone)
        out.append(found[i])
    return out


def mismatch_text(v: dict, case: Case) -> str:
    count = default_assignment().driver_task(case.task).output_count(case.n)
    first = v.get("first_mismatch") if isinstance(v.get("first_mismatch"), dict) else None
    if v.get("message") and not first:
        return str(v["message"])
    if not first:
        return "the output is wrong"
    return (f"{v.get('mismatches', '?')} of {count} element(s) differ; first at index "
            f"{first.get('index')}: expected {first.get('expected')}, got {first.get('got')}")


def _memo_key(build_key: str, case: Case, seed: int) -> tuple[str, str, int]:
    return build_key, case.id, seed


def remembered(setup: RunSetup, build_key: str, case: Case, seed: int) -> CaseResult | None:
    """This build's result for the same run (same case id and seed) earlier in the session,
    as the result of `case`: a drawn hidden case may be the very run of a visible one (or of
    another grade's), and keeps its own visibility and group."""
    with setup.memo_lock:
        known = setup.memo.get(_memo_key(build_key, case, seed))
    return None if known is None else dataclasses.replace(known, case=case)


def remember(setup: RunSetup, build_key: str, case: Case, seed: int, result: CaseResult) -> None:
    """`result` kept for remembered(): the run of this build, case id and seed."""
    with setup.memo_lock:
        setup.memo[_memo_key(build_key, case, seed)] = result


def run_case(setup: RunSetup, binary: Path, build_key: str, case: Case, run_seed: int,
             timeouts: TimeoutTracker) -> CaseResult:
    seed = case.seed(run_seed)
    if (known := remembered(setup, build_key, case, seed)) is not None:
        return known
    reproduce = setup.reproduce(case, seed)
    track = build_key
    if setup.case_limits(case, timeouts, track) is None:
        return CaseResult(case, seed, "not_run", setup.not_run_words(track, timeouts), reproduce=reproduce)
    huge = setup.huge_slots if case.n >= HUGE_N else contextlib.nullcontext()
    with huge, setup.resources.disk.reserve(case.output_bytes()):
        where = Path(tempfile.mkdtemp(prefix="run-", dir=setup.workdir))
        try:
            result = _run_case(setup, binary, case, seed, reproduce, where, timeouts, track)
        finally:
            shutil.rmtree(where, ignore_errors=True)
    if result.status != "timeout":
        remember(setup, build_key, case, seed, result)
    return result


def _run_case(setup: RunSetup, binary: Path, case: Case, seed: int, reproduce: str,
              where: Path, timeouts: TimeoutTracker, track: str) -> CaseResult:
    where.chmod(0o711)
    home = sandbox.make_private_dir(where / "sandbox", setup.identity)
    output = home / "out.bin"
    report = home / "run.json"
    argv = [str(binary), "run", *case.driver_args(seed), "--output", str(output), "--json", str(report)]
    limit = setup.backend.self_check_up_to
    if limit is not None and case.n >= limit:
        # The program's own CPU check only adds a hint; on big inputs it would hold the GPU.
        argv.append("--no-check")
    # The timeouts are read and counted while holding the slot, so cases waiting for it
    # see the timeouts of the ones before them.
    with setup.run_slot() as gpu:
        limits = setup.case_limits(case, timeouts, track)
        if limits is None:
            return CaseResult(case, seed, "not_run", setup.not_run_words(track, timeouts), reproduce=reproduce)
        r = sandbox.run(argv, home, limits, setup.env(home, seed, gpu), setup.identity)
        if r.timed_out:
            timeouts.add(track, limits.wall_s)
    result = _judge(setup, case, seed, reproduce, r, read_json(report) or {}, output, where)
    if result.status == "timeout":
        result.summary = setup.timeout_words(limits, case)
    return result


def _judge(setup: RunSetup, case: Case, seed: int, reproduce: str, r: sandbox.Result,
           claimed: dict, output: Path, where: Path) -> CaseResult:
    """The verdict on one case (_before_verify, then the trusted verify of its output)."""
    base = _before_verify(setup, case, seed, reproduce, r, claimed, output)
    if base.status != VERIFY:
        return _flooded(base, r)
    vdir = where / "verify"
    vdir.mkdir()
    return _flooded(_verified(base, r, claimed, verify(setup, case, seed, output, vdir)), r)


def _flooded(result: CaseResult, r: sandbox.Result) -> CaseResult:
    """A word on a flood of output (which only the failing hear of)."""
    if r.flooded and not result.passed:
        flood = (f"it printed {r.output_bytes / 1e6:.1f} MB (a printf in a kernel?); the report "
                 f"keeps the start and the end, {sandbox.OUTPUT_KEEP // 1024} KiB of each stream")
        result.details = "\n".join(x for x in (result.details, flood) if x)
    return result


VERIFY = "verify"   # _before_verify's status of a case whose output file decides
# A case whose run reached the handout's placeholder (the driver's exit status `placeholder`).
PLACEHOLDER_REACHED = "calls the handout's placeholder (harness/baselines.cuh), which does no work in a grade"


def _before_verify(setup: RunSetup, case: Case, seed: int, reproduce: str, r: sandbox.Result,
                   claimed: dict, output: Path) -> CaseResult:
    """The verdict on one case from how the program ended and what it claimed (used only
    for messages); status VERIFY where its output file, verified, decides."""
    said = _text(claimed.get("message")) or _error_line(r.stdout, r.stderr)
    base = CaseResult(case, seed, "fail", reproduce=reproduce, seconds=r.seconds)

    if r.timed_out:
        base.status = "timeout"
        base.summary = setup.timeout_words(setup.limits(case), case)
        return base
    if r.signal is not None:
        base.status = "crash"
        base.summary = f"the program {r.describe_end()}"
        base.details = said
        return base
    ended = default_assignment().exit_meaning(r.returncode)  # the driver's exit codes
    if ended == "not_implemented":
        base.status = "not_implemented"
        base.summary = f"{case.task}: not implemented (the handout's TODO stub is still in place)"
        return base
    if ended == "placeholder":
        # The student unit of a grading build reached a placeholder of harness/baselines.cuh,
        # however (a call, a pointer in a table, a virtual or volatile call): it did no work.
        base.status = "not_implemented"
        base.placeholder = True
        base.summary = f"{case.task}: {PLACEHOLDER_REACHED}"
        base.details = said
        return base
    if ended == "no_gpu":
        base.status = "error"
        base.summary = "the driver found no GPU (a problem of the grading machine)"
        return base
    if ended == "error":
        base.status = "error"
        base.summary = "CUDA or runtime error" + (f": {said}" if said else "")
        return base
    if ended not in ("pass", "fail"):
        base.status = "error"
        base.summary = f"the program ended with {r.describe_end()}" + (f": {said}" if said else "")
        return base
    if not output.is_file() or output.is_symlink():
        base.summary = (f"the program wrote no output file, and ended with {r.describe_end()}"
                        + ("" if claimed else " before writing its report either: an exit() "
                           "or _Exit() in the student code?"))
        return base
    base.status = VERIFY
    return base


def _verified(base: CaseResult, r: sandbox.Result, claimed: dict, v: dict) -> CaseResult:
    """A VERIFY case's verdict from the trusted verify's JSON `v`."""
    ended = default_assignment().exit_meaning(r.returncode)
    base.status = "fail"
    if v["status"] == "error":
        base.summary = f"the output file is unusable: {v.get('message', '')}"
        return base
    if ended == "pass" and v["status"] == "pass":
        base.status = "pass"
        base.summary = "pass"
        return base
    base.summary = mismatch_text(v, base.case) if v["status"] == "fail" else \
        "the program's own check failed"
    notes = []
    if ended == "pass" and v["status"] == "fail":
        notes.append("the program reported success, but the trusted check of its output failed")
    if hint := _text(claimed.get("hint")):
        notes.append(f"hint: {hint}")
    base.details = "\n".join(notes)
    return base


# How a batch's JSON line stands for a `run` exit status (driver.cu exitCodeFor).
BATCH_STATUSES = ("pass", "fail", "not_implemented", "placeholder", "error")  # a batch case's claimed status
BATCH_CASE_S = 2.0   # wall-clock allowance per case of a batch, on top of the time limit


def run_batch(setup: RunSetup, binary: Path, build_key: str, cases: list[Case], run_seed: int,
              timeouts: TimeoutTracker, say: Callable[[str], None] = lambda line: None) -> list[CaseResult]:
    """The cases of one build: one `batch` process (on a GPU one CUDA context; on the
    emulator each case under the schedule seed a process of its own would get) runs
    them all, one at a time; each output is then judged like a single run's. Where the
    batch ends before its last case (a crash, a hang, a CUDA error that ends the batch),
    the case it stopped at runs again alone (which pins the crash or hang on it) and the
    cases after it in a fresh batch: a hang costs its own case, not the build's others
    (RunSetup.case_limits bounds what a build that hangs everywhere costs)."""
    seeds = [c.seed(run_seed) for c in cases]
    timeouts.plan(build_key, len(cases))
    results: dict[int, CaseResult] = {}
    for i, (case, seed) in enumerate(zip(cases, seeds)):
        if (known := remembered(setup, build_key, case, seed)) is not None:
            results[i] = known
    def alone(i: int) -> CaseResult:
        started = time.monotonic()
        result = run_case(setup, binary, build_key, cases[i], run_seed, timeouts)
        say(f"case n={cases[i].n} ({cases[i].task} {cases[i].op}) alone: {time.monotonic() - started:.1f} s")
        return result

    # Huge cases run alone (run_case), each in a process of its own, beside the batch: they
    # wait for GPU memory (huge_slots), not for the batch and its verify (on an H100 the
    # batch of a scan's 164 cases and its verify took 7 s before its huge case began).
    huge = [i for i in range(len(cases)) if i not in results and cases[i].n >= HUGE_N]
    todo = [i for i in range(len(cases)) if i not in results and cases[i].n < HUGE_N]
    with ThreadPoolExecutor(max_workers=max(1, len(huge)), thread_name_prefix="huge") as pool:
        beside = {i: pool.submit(alone, i) for i in huge}
        while len(todo) > 1 and setup.case_limits(cases[todo[0]], timeouts, build_key) is not None:
            # Its output files stay until the batch is verified: reserved on the disk first.
            with setup.resources.disk.reserve(sum(cases[i].output_bytes() for i in todo)):
                where = Path(tempfile.mkdtemp(prefix="batch-", dir=setup.workdir))
                try:
                    results.update(_run_batch(setup, binary, build_key, cases, seeds, todo, where, say,
                                              timeouts))
                finally:
                    shutil.rmtree(where, ignore_errors=True)
            left = [i for i in todo if i not in results]
            if left and not any(results[i].status == "timeout" for i in todo if i in results):
                # The case it stopped at alone (a batch's cases never time out, but the one
                # it stopped at under a shortened limit); the ones after it in a fresh batch.
                results[left[0]] = alone(left[0])
                left = left[1:]
            todo = left
        for i, future in beside.items():
            results[i] = future.result()
    for i in range(len(cases)):
        if i not in results:
            results[i] = alone(i)
    return [results[i] for i in range(len(cases))]


def _watch(proc: sandbox.Running, report: Path, per_case_s: float,
           poll_s: float = 0.05) -> tuple[sandbox.Result, bool]:
    """Waits for a batch process, ending it as soon as no case has ended for a case's
    time limit (a hang holds the GPU a time limit, not the batch's whole allowance), and
    says whether it did; the case it stopped at then runs alone (which pins the hang on
    it), or, where the limit was already shortened, is the hang (_run_batch)."""
    size, progress = -1, time.monotonic()
    while proc.alive() and time.monotonic() < proc.deadline:
        now = report.stat().st_size if report.exists() else 0
        if now != size:
            size, progress = now, time.monotonic()
        elif time.monotonic() - progress > per_case_s:
            return proc.finish(timeout=0), True
        time.sleep(poll_s)
    return proc.finish(), False


def _run_batch(setup: RunSetup, binary: Path, build_key: str, cases: list[Case],
               seeds: list[int], todo: list[int], where: Path,
               say: Callable[[str], None], timeouts: TimeoutTracker) -> dict[int, CaseResult]:
    where.chmod(0o711)
    home = sandbox.make_private_dir(where / "sandbox", setup.identity)
    lines = []
    for k, i in enumerate(todo):
        args = [*cases[i].driver_args(seeds[i]), "--output", str(home / f"out.{k}.bin")]
        limit = setup.backend.self_check_up_to
        if limit is not None and cases[i].n >= limit:
            args.append("--no-check")
        if setup.backend.seeded_scheduler:
            args += ["--schedule-seed", str(seeds[i])]   # its reproduce command's SCANLAB_EMU_SEED
        lines.append(" ".join(args))
    case_file = where / "cases.txt"
    case_file.write_text("\n".join(lines) + "\n")
    case_file.chmod(0o644)
    report = home / "batch.jsonl"
    one = [setup.case_limits(cases[i], timeouts, build_key) or setup.limits(cases[i]) for i in todo]
    # A case's allowance past the time limit: BATCH_CASE_S, and what a large case's own
    # limit adds (the emulator's race sizes).
    longest = max(x.wall_s for x in one)
    plain = setup.timeout_s * one[0].wall_s / setup.limits(cases[todo[0]]).wall_s   # shortened or not
    limits = dataclasses.replace(
        one[0], wall_s=longest + sum(BATCH_CASE_S + max(0.0, x.wall_s - plain) for x in one),
        cpu_s=sum(x.cpu_s or 0 for x in one) or None,
        file_mb=sum(x.file_mb for x in one))
    started = time.monotonic()
    with setup.run_slot() as gpu:
        waited = time.monotonic() - started
        r, stalled = _watch(sandbox.start([str(binary), "batch", "--cases", str(case_file), "--json", str(report)],
                                 home, limits, setup.env(home, seeds[0], gpu), setup.identity,
                                 interactive=False), report, longest)
    ran = time.monotonic() - started - waited
    claims: dict[int, dict] = {}
    try:
        if report.is_file() and not report.is_symlink() and \
                report.stat().st_size <= JSON_LIMIT * len(todo):
            for line in report.read_text(encoding="utf-8", errors="replace").splitlines():
                try:
                    value = json.loads(line)
                except (ValueError, RecursionError):
                    continue
                if not isinstance(value, dict):
                    continue
                index, status = value.get("case"), value.get("status")
                if isinstance(index, int) and 0 <= index < len(todo) and index not in claims and \
                        status in BATCH_STATUSES:
                    claims[index] = value
    except OSError:
        pass
    ended = {k: sandbox.Result(r.argv, returncode=default_assignment().exit_code(claimed["status"]))
             for k, claimed in claims.items()}
    judged = {k: _before_verify(setup, cases[todo[k]], seeds[todo[k]],
                                setup.reproduce(cases[todo[k]], seeds[todo[k]]), ended[k], claimed,
                                home / f"out.{k}.bin")
              for k, claimed in claims.items()}
    pending = [k for k, result in judged.items() if result.status == VERIFY]
    started = time.monotonic()
    verdicts = verify_many(setup, [(cases[todo[k]], seeds[todo[k]], home / f"out.{k}.bin")
                                   for k in pending], where)
    say(f"batch of {len(todo)} cases: waited {waited:.1f} s for its turn, ran {ran:.1f} s, "
        f"verified in {time.monotonic() - started:.1f} s")
    for k, v in zip(pending, verdicts):
        judged[k] = _verified(judged[k], ended[k], claims[k], v)
    results = {}
    for k, result in judged.items():
        i = todo[k]
        remember(setup, build_key, cases[i], seeds[i], result)
        results[i] = result
    stuck = next((k for k in range(len(todo)) if k not in judged), None)
    if stalled and stuck is not None and one[stuck].wall_s < setup.limits(cases[todo[stuck]]).wall_s:
        # Stopped at a case under the shortened limit: that case is the hang (no run alone).
        i = todo[stuck]
        timeouts.add(build_key, one[stuck].wall_s)
        results[i] = CaseResult(cases[i], seeds[i], "timeout", setup.timeout_words(one[stuck], cases[i]),
                                reproduce=setup.reproduce(cases[i], seeds[i]))
    return results
