#!/usr/bin/env python3
"""The GPU figures the handout ships, for a maintainer on the grading GPU (CI has none).

  python3 tools/gpu_figures.py OUT [--deadline SECONDS] [--no-sweep] [--no-tables]

builds (CUDA only, in BUILD, default build/gpu-figures) the reference, the untouched
handout and the fixtures of known speed (KNOWN_SPEED), then writes into OUT:

  measured.json   each driver's median time on every task's graded case (n = 2^26,
                  add-i32, block 256, the grader's warm-up and repetitions), with the
                  GPU and its copy bandwidth: what the handout text (appendix B) compares the
                  emulator's estimate with (tools/profile_vs_measured.py makes the table)
  tables.json     the reference at n = 2^24, add-i32 and mssp, every block size, with
                  its baselines: the write-up's tables, measured
  sweep-*.csv     the reference's `scanlab sweep` of every task (2^10 .. 2^28)

then copy OUT's files into handout/figures/ and run
`python3 tools/gpu_figures.py --render handout/figures` (here or anywhere with
matplotlib) to regenerate handout/figures/README.md and sweep.png. Each step stops
when --deadline (seconds from the start) would be passed, and says what it left out.
"""
from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
from grader.config.rubric import load_rubric  # noqa: E402

KNOWN_SPEED = ["slow_scan", "uncoalesced_reduce", "lookback_chained"]
GRADED_TASKS = ["warp-scan", "reduce", "scan", "scan-exclusive", "lookback-scan"]
TABLE_BLOCKS = [32, 64, 128, 256, 512, 1024]
TABLE_OPS = ["add-i32", "mssp"]


@dataclass
class Clock:
    start: float
    deadline: float

    def left(self) -> float:
        return self.deadline - (time.monotonic() - self.start)


def log(message: str) -> None:
    print(message, flush=True)


def build_drivers(build: Path, arch: str) -> dict[str, Path]:
    """The CUDA drivers: name -> binary. The fixtures are composed by tools/fixtures.py
    and built as the handout builds (handout/CMakeLists.txt over a copy of handout/)."""
    build.mkdir(parents=True, exist_ok=True)
    parts = build / "parts"
    shutil.rmtree(parts, ignore_errors=True)
    sources: dict[str, Path] = {}
    sys.path.insert(0, str(ROOT / "tools"))
    from fixtures import compose  # noqa: E402
    for name in KNOWN_SPEED:
        composed = compose(name, parts)
        src = build / f"src-{name}"
        shutil.rmtree(src, ignore_errors=True)
        shutil.copytree(ROOT / "handout", src, ignore=shutil.ignore_patterns("build", "build-*"))
        for f in (composed / "student").glob("*.cuh"):
            shutil.copy(f, src / "student" / f.name)
        sources[name] = src
    jobs = []
    cuda = [f"-DCMAKE_CUDA_ARCHITECTURES={arch}", "-DCMAKE_BUILD_TYPE=Release", "-DSCANLAB_EMULATOR=OFF"]
    root_build = build / "root"
    jobs.append(["sh", "-c", f"cmake -S {ROOT} -B {root_build} {' '.join(cuda)} >{build}/root.log 2>&1 && "
                 f"cmake --build {root_build} -j8 --target scanlab-reference scanlab-handout "
                 f">>{build}/root.log 2>&1"])
    for name, src in sources.items():
        b = build / f"b-{name}"
        jobs.append(["sh", "-c", f"cmake -S {src} -B {b} {' '.join(cuda)} >{build}/{name}.log 2>&1 && "
                     f"cmake --build {b} -j4 --target scanlab >>{build}/{name}.log 2>&1"])
    procs = [subprocess.Popen(j) for j in jobs]
    codes = [p.wait() for p in procs]
    drivers = {"reference": root_build / "scanlab-reference", "handout": root_build / "scanlab-handout"}
    drivers.update({name: build / f"b-{name}" / "scanlab" for name in sources})
    for code, job in zip(codes, jobs):
        if code != 0:
            log(f"build failed ({code}): {job[-1][:160]}")
    return {k: v for k, v in drivers.items() if v.exists()}


def driver_json(binary: Path, args: list[str], timeout: float) -> list[dict[str, object]]:
    out = Path(f"/tmp/gpu-figures-{os.getpid()}.json")
    out.unlink(missing_ok=True)
    subprocess.run([str(binary), *args, "--json", str(out)], capture_output=True, text=True,
                   timeout=max(5.0, timeout))
    if not out.exists():
        return []
    return [json.loads(line) for line in out.read_text().splitlines() if line.strip()]


def measure(drivers: dict[str, Path], clock: Clock) -> dict[str, object]:
    perf = load_rubric(ROOT / "data" / "rubric.toml").performance
    info = driver_json(drivers["reference"], ["info"], 60)
    rows = []
    for name, binary in drivers.items():
        for task in GRADED_TASKS:
            if clock.left() < 20:
                log(f"measure: out of time before {name} {task}")
                break
            t0 = time.monotonic()
            r = driver_json(binary, ["run", "--task", task, "--n", "2^26", "--block", "256",
                                     "--time", "--warmup", str(perf.warmup), "--reps", str(perf.reps)],
                            min(120.0, clock.left() - 10))
            row = {"driver": name, "task": task, "n": 1 << 26, "op": "add-i32", "block": 256}
            if r:
                timing = r[0].get("timing") or {}
                row.update(status=r[0].get("status"),
                           median_ms=timing.get("median_ms") if isinstance(timing, dict) else None)
            else:
                row.update(status="no result")
            rows.append(row)
            log(f"measure {name:20s} {task:16s} {row.get('status')} {row.get('median_ms')} ms "
                f"({time.monotonic() - t0:.0f} s)")
    return {"device": info[0].get("name") if info else "", "copy_gbps": info[0].get("copy_gbps") if info else 0,
            "date": time.strftime("%Y-%m-%d"), "rows": rows}


def tables(reference: Path, clock: Clock) -> list[dict[str, object]]:
    rows: list[dict[str, object]] = []
    for op in TABLE_OPS:
        for task in GRADED_TASKS:
            for block in TABLE_BLOCKS:
                if clock.left() < 15:
                    log(f"tables: out of time before {task} {op} {block}")
                    return rows
                r = driver_json(reference, ["run", "--task", task, "--op", op, "--n", "2^24",
                                            "--block", str(block), "--time", "--baselines",
                                            "--warmup", "2", "--reps", "10"], min(60.0, clock.left() - 5))
                if r:
                    rows.append(r[0])
                    log(f"table {task} {op} block {block}: {r[0].get('status')}")
    return rows


def sweeps(reference: Path, out: Path, clock: Clock) -> None:
    for task in GRADED_TASKS:
        if clock.left() < 30:
            log(f"sweep: out of time before {task}")
            return
        csv = out / f"sweep-{task}.csv"
        try:
            subprocess.run([str(reference), "sweep", "--task", task, "--label", "reference",
                            "--csv", str(csv)], capture_output=True, timeout=max(5.0, clock.left() - 10))
        except subprocess.TimeoutExpired:
            log(f"sweep {task}: stopped at the deadline (the CSV keeps the sizes it finished)")
        log(f"sweep {task}: {csv.exists() and len(csv.read_text().splitlines()) - 1} rows")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("out", type=Path)
    parser.add_argument("--build", type=Path, default=ROOT / "build" / "gpu-figures")
    parser.add_argument("--arch", default="90")
    parser.add_argument("--deadline", type=float, default=3600)
    parser.add_argument("--no-sweep", action="store_true")
    parser.add_argument("--no-tables", action="store_true")
    args = parser.parse_args()
    clock = Clock(time.monotonic(), args.deadline)
    args.out.mkdir(parents=True, exist_ok=True)
    drivers = build_drivers(args.build, args.arch)
    log(f"built in {time.monotonic() - clock.start:.0f} s: {', '.join(drivers)}")
    if "reference" not in drivers:
        return 1
    (args.out / "measured.json").write_text(json.dumps(measure(drivers, clock), indent=1) + "\n")
    if not args.no_tables:
        (args.out / "tables.json").write_text(json.dumps(tables(drivers["reference"], clock), indent=1) + "\n")
    if not args.no_sweep:
        sweeps(drivers["reference"], args.out, clock)
    return 0


if __name__ == "__main__":
    sys.exit(main())
