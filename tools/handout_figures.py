#!/usr/bin/env python3
"""handout/figures/: the reference's measured GPU figures that the handout ships, and how
far the emulator's performance estimate (`make profile`) is from them.

  handout_figures.py estimate [--build DIR] [NAME ...]   on any machine (no GPU): builds the
        emulator's profile driver of the reference, the handout and the fixtures of known
        speed (tools/gpu_figures.py KNOWN_SPEED), runs each graded task at PROFILE_N
        and writes handout/figures/estimates.json (the prediction at the graded size)
  handout_figures.py render                   writes handout/figures/README.md (the
        tables, the estimate against the measurement), the estimate table of
        handout/appendix/B-performance.md (B.2, "make profile") and sweep.png (needs matplotlib)

The measurements come from `tools/gpu_figures.py OUT` on the grading GPU (copy OUT's
files into handout/figures/ first).
"""
from __future__ import annotations

import argparse
import csv
import json
import shutil
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
FIGURES = ROOT / "handout" / "figures"
sys.path.insert(0, str(ROOT / "tools"))
from gpu_figures import GRADED_TASKS, KNOWN_SPEED, TABLE_BLOCKS, TABLE_OPS  # noqa: E402

PROFILE_N = "2^21"
README_BEGIN = "<!-- estimate table: tools/handout_figures.py render -->\n"
README_END = "<!-- end estimate table -->\n"
# What each fixture of known speed is known for: the tasks its row compares.
KNOWN_FOR = {"reference": GRADED_TASKS, "handout": ["warp-scan", "reduce", "lookback-scan"],
             "slow_scan": ["scan", "scan-exclusive"], "uncoalesced_reduce": ["reduce"],
             "lookback_chained": ["lookback-scan"]}


def profile_driver(name: str, build: Path) -> Path:
    """The emulator profile driver of a submission (the handout built over a copy with the
    fixture's student files; the reference's from the repository's build when it is there)."""
    built = ROOT / "build" / "scanlab-reference-emu-profile"
    if name == "reference" and built.exists():
        return built
    src = build / f"src-{name}"
    if not src.exists():
        shutil.copytree(ROOT / "handout", src, ignore=shutil.ignore_patterns("build", "build-*", "figures"))
        if name != "handout":
            from fixtures import compose  # noqa: E402
            composed = compose(name, build / "parts")
            for f in (composed / "student").glob("*.cuh"):
                shutil.copy(f, src / "student" / f.name)
    b = build / f"b-{name}"
    subprocess.run(["cmake", "-S", str(src), "-B", str(b), "-DSCANLAB_CUDA=OFF", "-DCMAKE_BUILD_TYPE=Release"],
                   check=True, capture_output=True)
    subprocess.run(["cmake", "--build", str(b), "-j2", "--target", "scanlab-emu-profile"], check=True,
                   capture_output=True)
    return b / "scanlab-emu-profile"


def estimate(build: Path, only: list[str]) -> None:
    """The estimates of `only` (default: all), replacing theirs in estimates.json."""
    names = only or ["reference", "handout", *KNOWN_SPEED]
    path = FIGURES / "estimates.json"
    rows = [r for r in json.loads(path.read_text()) if r["driver"] not in names] if path.exists() else []
    for name in names:
        driver = profile_driver(name, build)
        for task in KNOWN_FOR[name]:
            out = build / "estimate.json"
            subprocess.run([str(driver), "run", "--task", task, "--n", PROFILE_N, "--json", str(out)],
                           capture_output=True, timeout=1800)
            r = json.loads(out.read_text().splitlines()[0])
            rows.append({"driver": name, "task": task, "profiled_n": r["n"], "predicted_n": r.get("predicted_n"),
                         "predicted_ms": r.get("predicted_ms"), "limit": r.get("predicted_limit"),
                         "impossible": r.get("predicted_impossible")})
            print(f"estimate {name:20s} {task:16s} {r.get('predicted_ms')} ms ({r.get('predicted_limit')})",
                  flush=True)
    order = ["reference", "handout", *KNOWN_SPEED]
    rows.sort(key=lambda r: (order.index(r["driver"]), GRADED_TASKS.index(r["task"])))
    path.write_text(json.dumps(rows, indent=1) + "\n")


def estimate_table(measured: dict, estimates: list[dict]) -> list[str]:
    times = {(r["driver"], r["task"]): r.get("median_ms") for r in measured["rows"]}
    lines = ["| submission | task | measured (ms) | estimated (ms) | estimate / measured | limited by |",
             "| --- | --- | --- | --- | --- | --- |"]
    for e in estimates:
        ms = times.get((e["driver"], e["task"]))
        if not ms or not e.get("predicted_ms"):
            continue
        ratio = e["predicted_ms"] / ms
        flag = "" if 1 / 1.5 <= ratio <= 1.5 else " (outside 1.5x)"
        lines.append(f"| {e['driver']} | {e['task']} | {ms:.4f} | {e['predicted_ms']:.4f} | "
                     f"{ratio:.2f}{flag} | {e['limit']}{' (impossible)' if e.get('impossible') else ''} |")
    return lines


def block_tables(tables: list[dict]) -> list[str]:
    out: list[str] = []
    for op in TABLE_OPS:
        for task in GRADED_TASKS:
            rows = [r for r in tables if r["op"] == op and r["task"] == task and r.get("timing")]
            if not rows:
                continue
            names = [b["name"] for b in rows[0].get("baselines", [])]
            out += [f"**{task}, {op}, n = 2^24**", "",
                    "| block | median (ms) | GB/s | " + " | ".join(f"vs {n}" for n in names) + " |",
                    "| --- | --- | --- | " + " | ".join("---" for _ in names) + " |"]
            for r in sorted(rows, key=lambda r: r["block"]):
                speed = {b["name"]: b["speedup"] for b in r.get("baselines", [])}
                out.append(f"| {r['block']} | {r['timing']['median_ms']:.4f} | {r['timing']['gbps']:.0f} | " +
                           " | ".join(f"{speed.get(n, 0):.1f}x" for n in names) + " |")
            out.append("")
    return out


def sweep_summary() -> list[str]:
    out = ["| task | reference at 2^28 | share of the copy |", "| --- | --- | --- |"]
    for task in GRADED_TASKS:
        path = FIGURES / f"sweep-{task}.csv"
        if not path.exists():
            continue
        rows = list(csv.DictReader(path.open()))
        top = max(int(r["n"]) for r in rows)
        at = {r["series"]: float(r["gbps"] or 0) for r in rows if int(r["n"]) == top}
        if at.get("reference") and at.get("device copy"):
            out.append(f"| {task} (n = {top}) | {at['reference']:.0f} GB/s | "
                       f"{at['reference'] / at['device copy']:.2f} |")
    return out


def render() -> None:
    measured = json.loads((FIGURES / "measured.json").read_text())
    tables = json.loads((FIGURES / "tables.json").read_text())
    est_path = FIGURES / "estimates.json"
    estimates = json.loads(est_path.read_text()) if est_path.exists() else []
    text = [
        "# The reference's measured figures (generated: tools/handout_figures.py render)",
        "",
        f"Measured on an {measured['device']} (copy bandwidth {measured['copy_gbps']:.0f} GB/s) on "
        f"{measured['date']} by `tools/gpu_figures.py`; regenerate them on a GPU (see the top of "
        "that file). Use them to complete the write-up without a GPU (handout appendix B, "
        "\"The write-up\"): they are the reference's, not yours.",
        "",
        "## The emulator's estimate against the measurement",
        "",
        f"`make profile` at n = {PROFILE_N} (the estimate is made at the graded size, n = 2^26, add-i32, "
        "block 256) against the median time measured on the GPU at that size:",
        "",
        *estimate_table(measured, estimates),
        "",
        "## The sweep (`make plot` on the GPU): sweep.png, sweep-*.csv",
        "",
        *sweep_summary(),
        "",
        "## Every block size at n = 2^24 (the write-up's tables)",
        "",
        *block_tables(tables),
    ]
    (FIGURES / "README.md").write_text("\n".join(text).rstrip() + "\n")
    readme = ROOT / "handout" / "appendix" / "B-performance.md"
    body = readme.read_text()
    begin, end = body.index(README_BEGIN) + len(README_BEGIN), body.index(README_END)
    table = "\n".join(estimate_table(measured, estimates)) + "\n"
    readme.write_text(body[:begin] + table + body[end:])
    csvs = sorted(str(p) for p in FIGURES.glob("sweep-*.csv"))
    subprocess.run([sys.executable, str(ROOT / "handout" / "tools" / "plot_sweep.py"), *csvs,
                    "--out", str(FIGURES / "sweep.png")], check=False)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    sub = parser.add_subparsers(dest="command", required=True)
    e = sub.add_parser("estimate")
    e.add_argument("--build", type=Path, default=ROOT / "build" / "handout-figures")
    e.add_argument("only", nargs="*", help="these submissions only (their rows are replaced)")
    sub.add_parser("render")
    args = parser.parse_args()
    if args.command == "estimate":
        args.build.mkdir(parents=True, exist_ok=True)
        estimate(args.build, args.only)
    else:
        render()
    return 0


if __name__ == "__main__":
    sys.exit(main())
