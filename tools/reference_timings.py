#!/usr/bin/env python3
"""Measures the reference's times on the perf cases of data/rubric.toml and writes
data/reference_timings.toml: what the handout's `scanlab grade` estimates performance
points against (then run tools/make_handout.py). Run it on the grading GPU:

  python3 tools/reference_timings.py build/scanlab-reference [--out FILE]

Each perf case is timed as the grader times it (warm-up and repetitions of [performance]),
`rounds` times; the median of the medians is kept, beside the copy bandwidth that
`scanlab info` measures on the same GPU in the same run.
"""
from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys
import tempfile
from datetime import date
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
from grader.config.rubric import load_rubric  # noqa: E402


def driver_json(binary: Path, args: list[str]) -> dict:
    with tempfile.NamedTemporaryFile(suffix=".json") as f:
        subprocess.run([str(binary), *args, "--json", f.name], check=True, capture_output=True,
                       text=True, timeout=600)
        return json.loads(Path(f.name).read_text())


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("driver", type=Path, help="the reference's CUDA driver (scanlab-reference)")
    parser.add_argument("--out", type=Path, default=ROOT / "data" / "reference_timings.toml")
    parser.add_argument("--rounds", type=int, default=3)
    args = parser.parse_args()
    rubric = load_rubric(ROOT / "data" / "rubric.toml")
    perf = rubric.performance
    info = driver_json(args.driver, ["info"])
    lines = [
        "# The reference's times on the grading GPU: what the handout's `scanlab grade`",
        "# estimates performance points against (scaled by the copy bandwidth of the GPU it",
        "# runs on). Written by tools/reference_timings.py; tools/make_handout.py copies it",
        "# into handout/harness/generated/grading.h.",
        f'device = "{info["name"]}"',
        f'copy_gbps = {info["copy_gbps"]:.1f}',
        f'measured = "{date.today().isoformat()}"',
    ]
    for task in rubric.tasks:
        for p in task.perf:
            medians = []
            for _ in range(args.rounds):
                r = driver_json(args.driver, ["run", "--task", p.task, "--op", p.op, "--n", str(p.n),
                                              "--block", str(p.block), "--time", "--warmup",
                                              str(perf.warmup), "--reps", str(perf.reps)])
                if r["status"] != "pass":
                    raise SystemExit(f"{p.task}: the reference {r['status']}: {r['message']}")
                medians.append(r["timing"]["median_ms"])
            lines += ["", "[[timing]]", f'task = "{p.task}"', f'op = "{p.op}"', f"n = {p.n}",
                      f"block = {p.block}", f"ms = {statistics.median(medians):.5f}"]
            print(f"{p.task} {p.op} n={p.n}: {statistics.median(medians):.4f} ms", file=sys.stderr)
    args.out.write_text("\n".join(lines) + "\n")
    print(f"wrote {args.out}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
