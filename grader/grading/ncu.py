"""Nsight Compute in a GPU grade: why a timed task is slow, beside the reference.

Once the timing's last rounds are over (beside the CPU's check of the last timed output:
pipeline.time_and_profile), one `ncu` process profiles one plain run (`--task T --op OP --n N
--block B --no-check`) of each timed task in the task's own build (the one timed), every
kernel it launches (a plain run launches the student's kernels only: its input is made on
the host and its scratch is poisoned with cudaMemset), with a fixed, small metric set
(METRICS). ncu's cost is mostly per profiled process (about 1 s each on an H100) and per
profiled launch (about 0.25 s), not per metric. So every task build runs in one process:
the unit loader of the prebuilt harness (harness/host/unit_loader.cu) over each build's
student unit linked as a shared object (BuildResult.unit_library), its `batch` over every
case (loader_run), the launches cut into cases by the kernels each case's JSON line says
it launched (kernels_per_case, split_by_counts). Where a build has no unit library (it did
not link) or the kit no loader, each distinct build runs its tasks as the cases of one
`batch` process of its own driver (case_files), the processes side by side under one
shell (ncu profiles one kernel at a time; their start-up overlaps), told apart by ncu's
"Connected to process" lines (process_order), and a process of several cases has the
driver launch an empty marker kernel (MARKER) before each, the launches cut at the markers
(cases_of). ncu runs in the sandbox, as the student's programs do (jailed, as the sandbox
user). The reference's build is profiled the same way once per GPU and rubric,
by `prepare` (profile_reference; else by the first grade that lacks it), and kept in the
cache beside its build (ProfileStore). The figures are information, never points: they
are read from ncu's log and the process's JSON, which the profiled program could write
to as well, so nothing is scored from them.

parse_raw_csv() reads `ncu --csv --page raw --print-units base` (one header row of
metric names, one row of units, one row per kernel launch); task_figures() makes one
task's figures from its kernels (grader/results.py: ProfileFigures); diagnosis.py says
what the pair of figures means. tests/grader/data/ncu/ holds ncu output in its raw-CSV
form for the tests.
"""
from __future__ import annotations

import csv
import dataclasses
import hashlib
import io
import json
import os
import re
import shutil
import tempfile
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable

from . import json_file, sandbox
from ..config.rubric import PerfCase, ProfileRubric
from .correctness.check import RunSetup
from ..results import KernelTime, ProfileFigures

# Nsight Compute's names of what the reports show.
STALL_PREFIX = "smsp__average_warps_issue_stalled_"
STALL_SUFFIX = "_per_issue_active.ratio"
STALL_REASONS = ("long_scoreboard", "barrier", "membar", "short_scoreboard", "mio_throttle",
                 "lg_throttle", "wait", "math_pipe_throttle", "branch_resolving", "no_instruction",
                 "drain", "sleeping")
METRIC = {
    "time": "gpu__time_duration.sum",
    "dram": "dram__throughput.avg.pct_of_peak_sustained_elapsed",
    "achieved": "sm__warps_active.avg.pct_of_peak_sustained_active",
    "theoretical": "sm__maximum_warps_per_active_cycle_pct",
    "limit_registers": "launch__occupancy_limit_registers",
    "limit_shared": "launch__occupancy_limit_shared_mem",
    "limit_warps": "launch__occupancy_limit_warps",
    "limit_blocks": "launch__occupancy_limit_blocks",
    "registers": "launch__registers_per_thread",
    "shared_static": "launch__shared_mem_per_block_static",
    "shared_dynamic": "launch__shared_mem_per_block_dynamic",
    "block": "launch__block_size",
    "load_sectors": "l1tex__t_sectors_pipe_lsu_mem_global_op_ld.sum",
    "load_requests": "l1tex__t_requests_pipe_lsu_mem_global_op_ld.sum",
    "load_used": "smsp__sass_average_data_bytes_per_sector_mem_global_op_ld.pct",
    "store_sectors": "l1tex__t_sectors_pipe_lsu_mem_global_op_st.sum",
    "store_requests": "l1tex__t_requests_pipe_lsu_mem_global_op_st.sum",
    "store_used": "smsp__sass_average_data_bytes_per_sector_mem_global_op_st.pct",
    "shared_load_conflicts": "l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_ld.sum",
    "shared_store_conflicts": "l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_st.sum",
    "shared_loads": "smsp__inst_executed_op_shared_ld.sum",
    "shared_stores": "smsp__inst_executed_op_shared_st.sum",
    "l2_hit": "lts__t_sector_hit_rate.pct",
    **{f"stall_{r}": f"{STALL_PREFIX}{r}{STALL_SUFFIX}" for r in STALL_REASONS},
}
METRICS = tuple(METRIC.values())
# What a refusal of the performance counters looks like in ncu's output.
REFUSED = "ERR_NVGPUCTRPERM"
REFUSED_NOTE = ("Nsight Compute figures not measured: this machine does not let the sandbox user "
                "read the GPU's performance counters (ERR_NVGPUCTRPERM)")
LOG_LIMIT = 4 * 1024 * 1024
# The empty folder ncu is given for its section files (_head).
NO_SECTIONS = "ncu-no-sections"
# The part of a CSV row before the metrics.
_FIXED = ("ID", "Process ID", "Process Name", "Host Name", "Kernel Name", "Context", "Stream",
          "Block Size", "Grid Size", "Device", "CC")
# ncu 2025.3 writes times in "ns" under --print-units base (older ones "nsecond").
_SCALE = {"": 1.0, "byte": 1.0, "Kbyte": 1e3, "Mbyte": 1e6, "Gbyte": 1e9, "KB": 1024.0,
          "MB": 1024.0 ** 2, "nsecond": 1e-6, "usecond": 1e-3, "msecond": 1.0, "second": 1e3,
          "ns": 1e-6, "us": 1e-3, "ms": 1.0, "s": 1e3}


class NcuOutputError(ValueError):
    """ncu's output cannot be read as its raw CSV page."""


@dataclass
class KernelRow:
    """One kernel launch of ncu's raw page: its process, name and metric values (times in
    ms, sizes in bytes; None where ncu printed n/a)."""

    process: str
    name: str
    values: dict[str, float | None] = field(default_factory=dict)

    def get(self, key: str) -> float | None:
        return self.values.get(METRIC[key])


def _number(text: str, unit: str) -> float | None:
    text = text.strip().replace(",", "")
    if not text or text.lower() in ("n/a", "nan"):
        return None
    try:
        value = float(text)
    except ValueError:
        return None
    return value * _SCALE.get(unit.strip(), 1.0)


def parse_raw_csv(text: str) -> list[KernelRow]:
    """The kernel launches of `ncu --csv --page raw` output, in launch order. Lines that
    are not its CSV (==PROF== lines, the program's own output) are skipped; a header without
    the metrics asked for, or no header at all, is an NcuOutputError."""
    lines = text.splitlines()
    start = next((k for k, line in enumerate(lines) if line.startswith('"ID","Process ID"')), None)
    if start is None:
        raise NcuOutputError("no raw CSV page in ncu's output")
    table = [line for line in lines[start:] if line.startswith('"')]
    rows = list(csv.reader(io.StringIO("\n".join(table))))
    header = rows[0]
    if tuple(header[:len(_FIXED)]) != _FIXED:
        raise NcuOutputError(f"unexpected columns in ncu's raw page: {header[:len(_FIXED)]}")
    missing = [m for m in METRICS if m not in header]
    if missing:
        raise NcuOutputError(f"ncu's raw page lacks {len(missing)} metrics asked for ({missing[0]}, ...)")
    body = rows[1:]
    units = [""] * len(header)
    if body and not body[0][0].strip():      # the units row: no ID
        units, body = body[0], body[1:]
    out = []
    for row in body:
        if len(row) != len(header) or not row[0].strip().isdigit():
            continue
        name = "".join(ch for ch in row[4] if ch.isprintable())[:200]   # the log is the program's to write too
        out.append(KernelRow(row[1], name, {name: _number(value, unit) for name, value, unit
                                              in zip(header[len(_FIXED):], row[len(_FIXED):],
                                                     units[len(_FIXED):])}))
    return out


def by_process(rows: list[KernelRow]) -> list[list[KernelRow]]:
    """The launches grouped by process, in the order the processes first launched."""
    groups: dict[str, list[KernelRow]] = {}
    for row in rows:
        groups.setdefault(row.process, []).append(row)
    return list(groups.values())


# The driver's empty kernel before each case of `batch --mark-cases` (harness/host/driver.cu).
MARKER = "scanlabCaseMarker"


def _is_marker(row: KernelRow) -> bool:
    return MARKER in row.name


def cases_of(rows: list[KernelRow], processes: list[str] | None = None) -> list[list[KernelRow]]:
    """The launches of each case, in order: each process's launches cut at its case
    markers (the markers left out); a process without markers is one case. `processes`:
    the process IDs in the order their cases come (processes that ran side by side
    launch in any order); None: the order they first launched in."""
    groups = by_process(rows)
    if processes is not None:
        mine = {g[0].process: g for g in groups}
        groups = [mine.get(pid, []) for pid in processes]
    cases: list[list[KernelRow]] = []
    for launches in groups:
        if not any(_is_marker(r) for r in launches):
            cases.append(launches)
            continue
        for row in launches:
            if _is_marker(row):
                cases.append([])
            elif cases:
                cases[-1].append(row)
    return cases


_CONNECTED = re.compile(r"^==PROF== Connected to process (\d+) \((.*)\)\s*$", re.M)


def process_order(log: str, binaries: list[Path]) -> list[str] | None:
    """The process ID of each binary's run, in the order of `binaries`, from ncu's
    "Connected to process PID (PATH)" lines; None where they do not name each binary once
    (ncu's own lines: the profiled program's output does not go to the log)."""
    found: dict[str, list[str]] = {}
    for pid, path in _CONNECTED.findall(log):
        found.setdefault(os.path.realpath(path), []).append(pid)
    order = [found.get(os.path.realpath(b), []) for b in binaries]
    return [pids[0] for pids in order] if all(len(pids) == 1 for pids in order) else None


def _weighted(rows: list[KernelRow], key: str) -> float | None:
    """The time-weighted mean of a per-launch figure (launches without it left out)."""
    pairs = [(r.get("time") or 0.0, v) for r in rows if (v := r.get(key)) is not None]
    weight = sum(w for w, _ in pairs)
    if not pairs:
        return None
    if weight <= 0:
        return sum(v for _, v in pairs) / len(pairs)
    return sum(w * v for w, v in pairs) / weight


def _total(rows: list[KernelRow], key: str) -> float:
    return sum(r.get(key) or 0.0 for r in rows)


def _per_request(rows: list[KernelRow], sectors: str, requests: str, used: str) -> tuple[float | None, float | None]:
    """Sectors per request over all launches, and what they would be with every byte of a
    sector used (ncu's share of used bytes, per launch)."""
    asked = _total(rows, requests)
    if asked <= 0:
        return None, None
    touched = _total(rows, sectors)
    # A request needs one sector at least (one lane's store of a block's result).
    needed = sum(max(r.get(requests) or 0.0, (r.get(sectors) or 0.0) * min(100.0, r.get(used) or 100.0) / 100.0)
                 for r in rows)
    return touched / asked, needed / asked


LIMITERS = {"limit_registers": "registers", "limit_shared": "shared memory",
            "limit_warps": "the block size", "limit_blocks": "the most blocks an SM holds (small blocks)"}


def task_figures(rows: list[KernelRow]) -> ProfileFigures:
    """One task's figures from its launches: time-weighted means of DRAM, L2 and stalls,
    sums of the counts, and occupancy (achieved and theoretical) with the launch geometry
    (registers, shared memory) of the launch that took longest (main_kernel): a mean of
    several kernels' achieved occupancy beside one kernel's theoretical could exceed it."""
    if not rows:
        raise NcuOutputError("no kernel was profiled")
    main = max(rows, key=lambda r: r.get("time") or 0.0)
    limits = {k: v for k in LIMITERS if (v := main.get(k)) is not None}
    limiter_key = min(limits, key=lambda k: (limits[k], list(LIMITERS).index(k))) if limits else ""
    load, load_ideal = _per_request(rows, "load_sectors", "load_requests", "load_used")
    store, store_ideal = _per_request(rows, "store_sectors", "store_requests", "store_used")
    shared_requests = _total(rows, "shared_loads") + _total(rows, "shared_stores")
    conflicts = _total(rows, "shared_load_conflicts") + _total(rows, "shared_store_conflicts")
    stalls = {r: v for r in STALL_REASONS if (v := _weighted(rows, f"stall_{r}")) is not None}
    shared = [main.get("shared_static"), main.get("shared_dynamic")]
    return ProfileFigures(
        kernels=[KernelTime(r.name[:120], (r.get("time") or 0.0)) for r in rows],
        main_kernel=main.name[:120],
        dram_pct=_weighted(rows, "dram"),
        achieved_occupancy_pct=main.get("achieved"),
        theoretical_occupancy_pct=main.get("theoretical"),
        blocks_per_sm=limits[limiter_key] if limiter_key else None,
        threads_per_block=main.get("block"),
        occupancy_limiter=LIMITERS.get(limiter_key, ""),
        registers_per_thread=main.get("registers"),
        shared_bytes_per_block=sum(s for s in shared if s is not None) if any(s is not None for s in shared) else None,
        load_sectors_per_request=load, load_ideal_sectors_per_request=load_ideal,
        store_sectors_per_request=store, store_ideal_sectors_per_request=store_ideal,
        shared_wavefronts_per_request=1.0 + conflicts / shared_requests if shared_requests > 0 else None,
        l2_hit_pct=_weighted(rows, "l2_hit"),
        stalls=dict(sorted(stalls.items(), key=lambda kv: -kv[1])))


def refused(text: str) -> bool:
    return REFUSED in text


def find(nvcc: str | None) -> str | None:
    """ncu: beside nvcc, else on PATH."""
    if nvcc:
        beside = Path(nvcc).parent / "ncu"
        if beside.is_file():
            return str(beside)
    return shutil.which("ncu")


def command(ncu: str, runs: list[tuple[Path, Path, int]], cases: int, log: Path,
            max_kernels: int) -> list[str]:
    """ncu over one `batch --mark-cases` process per (binary, case file), one after
    another; the raw CSV page into `log`. `cases`: how many in all (each profiles at most
    max_kernels launches, and its marker). One process is ncu's own child (about 1 s less
    than under a shell, on an H100); several run side by side under a shell (ncu profiles
    one kernel at a time, whatever the process; what overlaps is their start-up, about
    1 s each), each one's output into its case file's `.out`."""
    head = _head(ncu, (max_kernels + 1) * cases, log)
    if len(runs) == 1:
        binary, case_file, count = runs[0]
        return [*head, str(binary), *_batch(case_file, count)]
    script = " ".join(" ".join([f"'{binary}'", *(f"'{a}'" for a in _batch(case_file, count))])
                      + f" > '{case_file}.out' 2>&1 &" for binary, case_file, count in runs) + " wait"
    return [*head[:6], "--target-processes", "all", *head[6:], "/bin/sh", "-c", script,
            # Named once each, so that the jail lets them be read (sandbox.Jail.wrap).
            *dict.fromkeys(str(binary) for binary, _, _ in runs)]


def _head(ncu: str, launches: int, log: Path) -> list[str]:
    """ncu with the raw CSV page of METRICS into `log`, at most `launches` launches. Without
    its rules and its section files (an empty folder beside the log, made by `profile`):
    the raw page is the metrics asked for either way, and ncu spends about 0.4 s a process
    loading the sections and applying their rules (an H200, tools/gpu_unit_loader.sh)."""
    return [ncu, "--csv", "--page", "raw", "--print-units", "base", "--launch-count", str(launches),
            "--log-file", str(log), "--apply-rules", "no", "--section-folder", str(log.with_name(NO_SECTIONS)),
            "--metrics", ",".join(METRICS)]


def _batch(case_file: Path, cases: int) -> list[str]:
    """The batch over a case file of `cases` cases, marked where it has several (ncu
    profiles a marker as it does any launch: about 0.25 s each on an H100)."""
    return ["batch", "--cases", str(case_file), "--json", f"{case_file}.json",
            *(["--mark-cases"] if cases > 1 else [])]


def _last_words(r: sandbox.Result, runs: list[tuple[Path, Path, int]]) -> str:
    """What the profiled programs said last (why one stopped early): ncu's own last line,
    then each process's, where it said something ("process 2 of 3: ...")."""
    def last(text: str) -> str:
        lines = [line.strip() for line in text.splitlines()
                 if line.strip() and not line.startswith("==PROF==") and not line.startswith('"')]
        return "".join(ch for ch in lines[-1] if ch.isprintable())[:300] if lines else ""
    said = [last(r.stdout + "\n" + r.stderr)]
    for k, (_, case_file, _) in enumerate(runs, 1):
        out = Path(f"{case_file}.out")
        if out.is_file() and not out.is_symlink():
            with open(out, "rb") as f:
                words = last(f.read(LOG_LIMIT).decode("utf-8", errors="replace"))
            said.append(f"process {k} of {len(runs)}: {words}" if words and len(runs) > 1 else words)
    return "; ".join(w for w in said if w)


def case_line(case: PerfCase, n: int) -> str:
    """A plain run of the case at the profiled size: a line of a --cases file (the options
    of Case.driver_args). No --output: such a run draws its input on the host and launches
    the student's kernels only (with --output it draws on the GPU, and ncu would profile
    the harness's generator)."""
    return " ".join([*dataclasses.replace(case.as_case(), n=n or case.n).driver_args(1), "--no-check"])


def case_files(home: Path, binaries: list[Path], cases: list[PerfCase], n: int) -> tuple[list[tuple[Path, Path, int]], list[int]]:
    """One --cases file per distinct binary (in the order first named), and the index in
    `cases` of each case in the order the processes run them."""
    by_binary: dict[Path, list[int]] = {}
    for k, binary in enumerate(binaries):
        by_binary.setdefault(binary, []).append(k)
    runs = []
    for j, (binary, indices) in enumerate(by_binary.items()):
        case_file = home / f"ncu-cases-{j}.txt"
        case_file.write_text("".join(case_line(cases[k], n) + "\n" for k in indices))
        runs.append((binary, case_file, len(indices)))
    return runs, [k for indices in by_binary.values() for k in indices]


@dataclass(frozen=True)
class LoaderRun:
    """The one process over every task build (the unit loader, harness/host/unit_loader.cu):
    the loader, its case file, and what SCANLAB_UNITS names for each case's driver task."""

    loader: Path
    case_file: Path
    units: str


def one_process(loader: Path | None, units: list[Path | None] | None, cases: list[PerfCase]) -> bool:
    """Whether the unit loader runs every case in one process: there is a loader, each case's
    build has its unit library, and no two cases run the same driver task (SCANLAB_UNITS
    names one unit a driver task)."""
    return (loader is not None and units is not None and len(units) == len(cases)
            and all(u is not None for u in units) and len({c.task for c in cases}) == len(cases))


def loader_run(home: Path, loader: Path, units: list[Path], cases: list[PerfCase], n: int) -> LoaderRun:
    """The loader and each build's unit library copied into `home` (the sandbox user can
    read them there: the prebuilt harness's folder is the grader's), and one case file of
    every case, in order (where one_process holds)."""
    program = home / loader.name
    shutil.copyfile(loader, program)
    program.chmod(0o755)
    copies: dict[Path, Path] = {}
    for unit in units:
        if unit not in copies:
            copies[unit] = home / f"unit-{len(copies)}.so"
            shutil.copyfile(unit, copies[unit])
    case_file = home / "ncu-cases.txt"
    case_file.write_text("".join(case_line(c, n) + "\n" for c in cases))
    return LoaderRun(program, case_file, ";".join(f"{c.task}={copies[u]}" for c, u in zip(cases, units)))


def kernels_per_case(json_lines: str, cases: int) -> list[int] | None:
    """The kernels each case launched, from the batch's JSON lines ("case", "kernels"); None
    where a case has no line or no count (the process stopped early, or is not the loader)."""
    counts: dict[int, int] = {}
    for line in json_lines.splitlines():
        try:
            j = json.loads(line)
        except ValueError:
            continue
        case, kernels = (j.get("case"), j.get("kernels")) if isinstance(j, dict) else (None, None)
        if isinstance(case, int) and isinstance(kernels, int) and 0 <= case < cases and kernels >= 0:
            counts.setdefault(case, kernels)
    return [counts[k] for k in range(cases)] if len(counts) == cases else None


def split_by_counts(rows: list[KernelRow], counts: list[int]) -> list[list[KernelRow]]:
    """ncu's launches cut into cases, in order, `counts` of them each (an NcuOutputError
    where ncu saw another number of launches than the cases made)."""
    if sum(counts) != len(rows):
        raise NcuOutputError(f"ncu profiled {len(rows)} launches where the cases launched {sum(counts)}")
    cut, at = [], 0
    for count in counts:
        cut.append(rows[at:at + count])
        at += count
    return cut


@dataclass
class Profiled:
    """What one ncu process found: per case, its figures (None: none), or why none."""

    figures: list[ProfileFigures | None]
    message: str = ""          # why there are none ("" when there are)
    refused: bool = False      # the machine refused the performance counters
    seconds: float = 0.0


def profile(setup: RunSetup, ncu: str, binaries: list[Path], cases: list[PerfCase],
            rubric: ProfileRubric, sandboxed: bool = True, loader: Path | None = None,
            units: list[Path | None] | None = None) -> Profiled:
    """One ncu process over one plain run of each case, holding a GPU alone (see the module
    doc): the unit `loader` over every case's unit library (`units`, in the order of
    `cases`) where each case has one, else each case on its binary."""
    started = time.monotonic()
    where = Path(tempfile.mkdtemp(prefix="ncu-", dir=setup.workdir))
    try:
        where.chmod(0o711)
        home = sandbox.make_private_dir(where / "sandbox", setup.identity)
        log = home / "ncu.csv"
        (home / NO_SECTIONS).mkdir(mode=0o755)
        one: LoaderRun | None = None
        runs: list[tuple[Path, Path, int]] = []
        if loader is not None and units is not None and one_process(loader, units, cases):
            one = loader_run(home, loader, [u for u in units if u is not None], cases, rubric.n)
            argv = [*_head(ncu, rubric.max_kernels * len(cases), log), str(one.loader),
                    "batch", "--cases", str(one.case_file), "--json", f"{one.case_file}.json"]
            order = list(range(len(cases)))
        else:
            runs, order = case_files(home, binaries, cases, rubric.n)
            argv = command(ncu, runs, len(cases), log, rubric.max_kernels)
        limits = sandbox.Limits(wall_s=rubric.timeout_s, cpu_s=rubric.timeout_s * 4 + 5,
                                memory_mb=setup.memory_mb, memory_kind="data", file_mb=256,
                                open_files=1024)
        with setup.resources.gpu_alone() as gpu:
            env = setup.env(home, 0, gpu) | ({"SCANLAB_UNITS": one.units} if one else {})
            r = sandbox.run(argv, home, limits, env, setup.identity, sandboxed=sandboxed)
        text = _read_capped(log)
        seconds = time.monotonic() - started
        _keep_log(text, cases)
        if refused(text + r.stdout + r.stderr):
            return Profiled([None] * len(cases), REFUSED_NOTE, True, seconds)
        try:
            rows = parse_raw_csv(text)
            groups = _cases_of_loader(rows, one, len(cases)) if one else _cases_of_runs(rows, text, runs)
        except NcuOutputError as e:
            end = "" if r.ok else f"; ncu {r.describe_end()}"
            said = _last_words(r, runs)
            return Profiled([None] * len(cases), f"Nsight Compute figures not measured: {e}{end}"
                            + (f"; the profiled run said: {said}" if said else ""), seconds=seconds)
        if len(groups) != len(cases):
            said = _last_words(r, runs)
            return Profiled([None] * len(cases), "Nsight Compute figures not measured: "
                            f"{len(groups)} profiled cases for {len(cases)} tasks"
                            + (f"; the profiled run said: {said}" if said else ""), seconds=seconds)
        figures: list[ProfileFigures | None] = [None] * len(cases)
        for k, launches in zip(order, groups):
            figures[k] = task_figures(launches) if launches else None
        return Profiled(figures, "" if all(figures) else "Nsight Compute saw no kernel of "
                        + ", ".join(c.task for c, f in zip(cases, figures) if f is None), seconds=seconds)
    finally:
        shutil.rmtree(where, ignore_errors=True)


def _read_capped(path: Path) -> str:
    """A file the profiled process could write too: LOG_LIMIT of it, not through a link."""
    if not path.is_file() or path.is_symlink():
        return ""
    with open(path, "rb") as f:
        return f.read(LOG_LIMIT).decode("utf-8", errors="replace")


def _cases_of_loader(rows: list[KernelRow], one: LoaderRun, cases: int) -> list[list[KernelRow]]:
    """The loader's launches cut into its cases by the kernels each launched (its JSON)."""
    counts = kernels_per_case(_read_capped(Path(f"{one.case_file}.json")), cases)
    if counts is None:
        raise NcuOutputError("the profiled run stopped before every case said how many kernels it launched")
    return split_by_counts(rows, counts)


def _cases_of_runs(rows: list[KernelRow], text: str, runs: list[tuple[Path, Path, int]]) -> list[list[KernelRow]]:
    """The launches of one process a build cut into cases (process_order, cases_of)."""
    pids = process_order(text, [b for b, _, _ in runs]) if len(runs) > 1 else None
    if len(runs) > 1 and pids is None:
        raise NcuOutputError("ncu's log does not say which process ran which build")
    return cases_of(rows, pids)


def profile_reference(store: "ProfileStore", setup: RunSetup, tool: str, reference: Path, gpu: str,
                      cases: list[PerfCase], rubric: ProfileRubric,
                      say: Callable[[str], None]) -> bool:
    """The reference's figures of `cases` into `store`, in one ncu process over those not
    there yet: `prepare` does it once per machine, so that no grade pays for it (a grade
    does only where the cache lacks them). False where the machine refuses the counters."""
    with store.lock:
        missing = [c for c in dict.fromkeys(cases) if store.known(gpu, c, rubric.n) is None]
        if not missing:
            return True
        say(f"profiling the reference under Nsight Compute: {', '.join(c.task for c in missing)}")
        got = profile(setup, tool, [reference] * len(missing), missing, rubric)
        if got.refused:
            return False
        for c, f in zip(missing, got.figures):
            if f is not None:
                store.put(gpu, c, rubric.n, f)
        say(f"the reference profiled in {got.seconds:.1f} s" + (f" ({got.message})" if got.message else ""))
        return True


def _keep_log(text: str, cases: list[PerfCase]) -> None:
    """With SCANLAB_KEEP_NCU_LOGS=DIR (maintainers: recording ncu's real output for
    tests/grader/data/ncu), the raw page goes there."""
    keep = os.environ.get("SCANLAB_KEEP_NCU_LOGS")
    if not keep:
        return
    stem = "-".join(c.task for c in cases) + "-" + hashlib.sha256(text.encode()).hexdigest()[:8]
    Path(keep).mkdir(parents=True, exist_ok=True)
    (Path(keep) / f"{stem}.csv").write_text(text)


class ProfileStore:
    """The reference's figures, by GPU model, perf case and profiled size, in a JSON file of
    the cache beside the reference build (as timing.BaselineStore keeps its baselines)."""

    def __init__(self, path: Path):
        self.path = path
        self._lock = threading.Lock()
        self.lock = threading.Lock()     # held while the reference is profiled (once, not per thread)

    @staticmethod
    def key(gpu: str, perf: PerfCase, n: int) -> str:
        metrics = hashlib.sha256(",".join(METRICS).encode()).hexdigest()[:8]
        return f"{gpu} | {perf.task} {perf.op} n={n or perf.n} block={perf.block} | {metrics}"

    def known(self, gpu: str, perf: PerfCase, n: int) -> ProfileFigures | None:
        from ..results import from_jsonable
        data = self._read().get(self.key(gpu, perf, n))
        if not isinstance(data, dict):
            return None
        try:
            figures: ProfileFigures = from_jsonable(ProfileFigures, data)
            return figures
        except (TypeError, ValueError, KeyError):
            return None

    def put(self, gpu: str, perf: PerfCase, n: int, figures: ProfileFigures) -> None:
        from ..results import to_jsonable
        with self._lock:
            data = self._read()
            data[self.key(gpu, perf, n)] = to_jsonable(figures)
            json_file.replace_object(self.path, data, ".ncu-")  # unwritten: profiled again next time

    def _read(self) -> dict:
        return json_file.read_object(self.path)
