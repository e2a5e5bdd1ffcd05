#!/usr/bin/env python3
"""Time grading a class on one GPU against several: submissions per hour, same scores.

  tools/bench_batch.py [--fixtures N] [--gpus 0 --gpus 0,1] [--seed S] [grader options...]

The class is the first N fixture submissions (tests/fixtures/submissions: right, wrong,
slow, crashing, hanging, cheating ones); each batch is a grader process of its own, so
none reuses another's builds or timings. `grader prepare` runs first (once per
machine, timed apart). Then `python3 -m grader batch` grades the class once per
--gpus set, with the same seed; reported: each batch's wall time, submissions per
hour, its speed against the first set's, and whether the scores agree: correctness
exactly, performance within --tolerance points (timing noise).
Options it does not know go to the grader.
"""
from __future__ import annotations

import argparse
import json
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from bench_grade import grader  # noqa: E402
from fixtures import compose_class, fixture_names  # noqa: E402


def scores(out: Path) -> dict[str, tuple[float, float]]:
    """Each submission's (correctness, performance) points."""
    found = {}
    for path in sorted((out / "submissions").glob("*/results.json")):
        r = json.loads(path.read_text())
        found[r["name"]] = (float(r["correctness_score"]), float(r.get("performance_score") or 0.0))
    return found


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--fixtures", type=int, default=20, help="class size (first N fixtures)")
    parser.add_argument("--gpus", action="append", help="a GPU set to grade on (repeatable); "
                        "default: 0, then all")
    parser.add_argument("--seed", type=int, default=20261124)
    parser.add_argument("--tolerance", type=float, default=2.0,
                        help="performance points two batches may differ by (timing noise)")
    parser.add_argument("--json", type=Path, help="write the measurements here")
    args, passthrough = parser.parse_known_args()
    sets = args.gpus or ["0", "all"]

    prep_s, p = grader(["prepare", *passthrough])
    if p.returncode != 0:
        print(p.stdout, p.stderr, file=sys.stderr)
        return p.returncode
    print(f"prepare: {prep_s:.1f} s")
    runs = []
    names = fixture_names()[:args.fixtures]
    with tempfile.TemporaryDirectory(prefix="bench-batch-") as tmp:
        folder = Path(tmp) / "class"
        compose_class(names, folder, Path(tmp) / "parts")
        for k, gpus in enumerate(sets):
            out = Path(tmp) / f"out{k}"
            seconds, p = grader(["batch", str(folder), "--out", str(out), "--seed", str(args.seed),
                                 "--gpus", gpus, *passthrough])
            if p.returncode != 0:
                print(p.stdout[-3000:], p.stderr[-3000:], file=sys.stderr)
                return p.returncode
            said = [line for line in p.stdout.splitlines() if line.startswith("graded ")]
            run = {"gpus": gpus, "submissions": len(names), "wall_s": round(seconds, 1),
                   "per_hour": round(3600 * len(names) / seconds), "grader_says": said[-1] if said else "",
                   "scores": scores(out)}
            runs.append(run)
            print(f"--gpus {gpus}: {len(names)} submissions in {seconds:.1f} s, "
                  f"{run['per_hour']} per hour; {run['grader_says']}")
    first = runs[0]
    ok = True
    for run in runs[1:]:
        speedup = first["wall_s"] / run["wall_s"]
        same = set(run["scores"]) == set(first["scores"])
        correctness = same and all(run["scores"][n][0] == first["scores"][n][0] for n in first["scores"])
        worst = max((abs(run["scores"][n][1] - first["scores"][n][1]) for n in first["scores"]),
                    default=0.0) if same else float("inf")
        agree = correctness and worst <= args.tolerance
        ok = ok and agree
        print(f"--gpus {run['gpus']} against --gpus {first['gpus']}: {speedup:.2f}x the throughput; "
              f"correctness scores {'equal' if correctness else 'DIFFER'}; performance points differ "
              f"by at most {worst:.2f} ({'within' if agree else 'beyond'} {args.tolerance:g})")
        run["speedup"] = round(speedup, 2)
    if args.json:
        args.json.write_text(json.dumps(runs, indent=2) + "\n")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
