#!/usr/bin/env python3
"""Time grading one submission end to end, the way an instructor runs it.

  tools/bench_grade.py [--submission PATH] [--reps N] [--target 60] [grader options...]

First the reference driver is built into the cache (`grader prepare`, timed apart:
done once per machine). Then `python3 -m grader grade` runs on a submission whose
files all differ from the reference (the solution with a comment added to each file,
unless --submission is given), so every build really compiles: one per task and the
integration build. Reported: the wall time of each grade, its phases (from the
grader's results JSON), the number of cases, and whether it met the target. With
--trace, also every step the grader says, with the second it was said at (where the
time goes).
Options it does not know go to the grader (e.g. --backend emulator, --no-perf).
"""
from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def grader(args: list[str], trace: list[str] | None = None) -> tuple[float, subprocess.CompletedProcess]:
    """Runs the grader; with `trace`, its progress lines (stderr) go there as they come,
    each with the seconds since the start."""
    env = {**os.environ, "PYTHONPATH": str(ROOT), "PYTHONUNBUFFERED": "1"}
    start = time.monotonic()
    # Standard output to a file, so that a long report never blocks the pipe read here.
    with tempfile.TemporaryFile("w+") as out:
        proc = subprocess.Popen([sys.executable, "-m", "grader", *args], cwd=ROOT, env=env,
                                stdout=out, stderr=subprocess.PIPE, text=True)
        err: list[str] = []
        assert proc.stderr is not None
        for line in proc.stderr:
            err.append(line)
            if trace is not None:
                trace.append(f"{time.monotonic() - start:7.2f}  {line.rstrip()}")
        proc.wait()
        out.seek(0)
        said = out.read()
    return time.monotonic() - start, subprocess.CompletedProcess(proc.args, proc.returncode, said, "".join(err))


def make_submission(folder: Path) -> Path:
    sub = folder / "bench-submission" / "student"
    sub.mkdir(parents=True)
    for f in sorted((ROOT / "solution" / "student").glob("*.cuh")):
        # A trailing comment: same code, new bytes, so nothing comes from a cache.
        (sub / f.name).write_text(f.read_text() + f"\n// bench_grade {time.time_ns()}\n")
    return sub.parent


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--submission", type=Path, help="grade this instead of a fresh copy of the solution")
    parser.add_argument("--reps", type=int, default=1, help="grades to time (a fresh submission each)")
    parser.add_argument("--target", type=float, default=60.0, help="seconds a grade should take at most")
    parser.add_argument("--json", type=Path, help="write the measurements here")
    parser.add_argument("--trace", action="store_true",
                        help="print each grade's steps with the second each was said at")
    args, passthrough = parser.parse_known_args()

    prep_s, p = grader(["prepare", *[a for a in passthrough if a != "--no-perf"]])
    print(p.stdout.strip() or p.stderr.strip())
    if p.returncode != 0:
        print(p.stderr, file=sys.stderr)
        return p.returncode
    print(f"prepare (reference build or cache hit): {prep_s:.1f} s")

    runs = []
    with tempfile.TemporaryDirectory(prefix="bench-grade-") as tmp:
        for rep in range(args.reps):
            sub = args.submission or make_submission(Path(tmp) / f"rep{rep}")
            out = Path(tmp) / f"out{rep}"
            trace: list[str] | None = [] if args.trace else None
            seconds, p = grader(["grade", str(sub), "--out", str(out),
                                 *([] if args.trace else ["-q"]), *passthrough], trace)
            if trace:
                print("\n".join(trace))
            if p.returncode != 0:
                print(p.stdout[-3000:], p.stderr[-3000:], file=sys.stderr)
                return p.returncode
            result = json.loads((out / "results.json").read_text())
            cases = sum(len(t["cases"]) for t in result["tasks"]) + len(result["integration"]["cases"])
            builds = {t["build"]["label"]: round(t["build"]["seconds"], 1) for t in result["tasks"] if t["build"]}
            run = {"wall_s": round(seconds, 1), "grader_s": round(result["seconds"], 1),
                   "phases_s": {k: round(v, 1) for k, v in result["timings"].items()},
                   "builds_s": builds, "cases": cases, "backend": result["machine"]["backend"],
                   "gpu": result["machine"]["gpu"], "score": result["score"],
                   "max_score": result["max_score"],
                   "perf_rounds": [p["rounds"] for t in result["tasks"] for p in t["perf"]],
                   # The submission's time over the reference's, per timed task (the
                   # solution against itself: near 1).
                   "slowdowns": {t["name"]: round(p["student_ms"] / p["reference_ms"], 3)
                                 for t in result["tasks"] for p in t["perf"][:1]
                                 if p.get("student_ms") and p.get("reference_ms")}}
            runs.append(run)
            verdict = "OK" if seconds <= args.target else "OVER TARGET"
            print(f"grade {rep + 1}: {seconds:.1f} s wall ({verdict}, target {args.target:.0f} s); "
                  f"phases {run['phases_s']}; builds {builds}; {cases} cases; "
                  f"score {result['score']:.2f}/{result['max_score']:g}; slowdowns {run['slowdowns']}; "
                  f"backend {run['backend']} {run['gpu']}")
            if not args.submission:
                shutil.rmtree(sub, ignore_errors=True)
    if args.json:
        args.json.write_text(json.dumps({"prepare_s": round(prep_s, 1), "runs": runs}, indent=2) + "\n")
    worst = max(r["wall_s"] for r in runs)
    print(f"worst: {worst:.1f} s (target {args.target:.0f} s)")
    return 0 if worst <= args.target else 1


if __name__ == "__main__":
    sys.exit(main())
