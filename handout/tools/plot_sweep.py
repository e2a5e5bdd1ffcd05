#!/usr/bin/env python3
"""Draws what `scanlab sweep --csv` wrote: for each task, bandwidth against n (log
scale), one line per kernel (yours, the baselines, and any other sweep given, such as
the reference's or your own earlier one), with the device copy as the ceiling.

    python3 tools/plot_sweep.py build/sweep-*.csv --out build/sweep.png

A sweep on the CPU emulator is drawn in elements per second, and says it is not GPU
performance. Needs matplotlib (Debian: python3-matplotlib; pip install matplotlib).
"""
from __future__ import annotations

import argparse
import csv
import sys
from dataclasses import dataclass, field
from pathlib import Path

EXIT_NO_MATPLOTLIB = 3
COLUMNS = ["series", "kind", "backend", "device", "task", "op", "block", "n", "status",
           "median_ms", "gbps", "elements_per_s"]


@dataclass
class Series:
    name: str
    kind: str                                   # kernel | baseline | copy
    points: dict[int, float] = field(default_factory=dict)     # n -> GB/s or elements/s
    untimed: dict[int, str] = field(default_factory=dict)      # n -> why (not_implemented, fail)


@dataclass
class Panel:
    """One task (and operator) on one backend: what one picture shows."""
    task: str
    op: str
    backend: str
    devices: set[str] = field(default_factory=set)
    series: dict[str, Series] = field(default_factory=dict)
    origin: dict[str, Path] = field(default_factory=dict)     # series name -> the file it came from

    @property
    def emulated(self) -> bool:
        return self.backend == "emulator"

    @property
    def unit(self) -> str:
        return "elements/s" if self.emulated else "GB/s"


class SweepError(Exception):
    pass


def read_sweeps(paths: list[Path]) -> list[Panel]:
    panels: dict[tuple[str, str, str], Panel] = {}
    for path in paths:
        try:
            with path.open(newline="", encoding="utf-8") as f:
                rows = list(csv.DictReader(f))
                header = rows[0].keys() if rows else []
        except OSError as e:
            raise SweepError(f"cannot read {path}: {e.strerror}") from e
        if not rows or list(header) != COLUMNS:
            raise SweepError(f"{path} is not a sweep CSV (write one with: scanlab sweep --task T --csv FILE)")
        for row in rows:
            key = (row["task"], row["op"], row["backend"])
            panel = panels.setdefault(key, Panel(*key))
            panel.devices.add(row["device"])
            name = row["series"]
            first = panel.origin.setdefault(name, path)
            if first != path:
                # A second sweep of the same task: its kernel beside the first one's (named
                # by its file), its baselines and copy already drawn.
                if row["kind"] != "kernel":
                    continue
                name = f"{name} ({path.stem})"
            s = panel.series.setdefault(name, Series(name, row["kind"]))
            value = row["elements_per_s" if panel.emulated else "gbps"]
            if value:
                s.points[int(row["n"])] = float(value)
            else:
                s.untimed[int(row["n"])] = row["status"]
    return list(panels.values())


def ceiling(panel: Panel) -> float | None:
    copies = [v for s in panel.series.values() if s.kind == "copy" for v in s.points.values()]
    return max(copies) if copies and not panel.emulated else None


def summary(panel: Panel) -> list[str]:
    """At the largest n each series reached: its figure, and on a GPU its share of copy."""
    top = ceiling(panel)
    lines = [f"{panel.task} ({panel.op}) on {', '.join(sorted(panel.devices))}"
             + (" [CPU emulator: not GPU performance]" if panel.emulated else "")]
    for s in panel.series.values():
        if s.points:
            n = max(s.points)
            share = f" ({100 * s.points[n] / top:.0f}% of copy)" if top else ""
            lines.append(f"  {s.name:<24} n=2^{n.bit_length() - 1:<3} {s.points[n]:12.4g} {panel.unit}{share}")
        else:
            lines.append(f"  {s.name:<24} not timed: {', '.join(sorted(set(s.untimed.values())))}")
    return lines


def draw(panels: list[Panel], out: Path) -> None:
    import matplotlib
    matplotlib.use("Agg")  # files only: no display needed
    import matplotlib.pyplot as plt
    figure, axes_list = plt.subplots(len(panels), 1, figsize=(8, 4.2 * len(panels)), squeeze=False)
    for axes, panel in zip((a[0] for a in axes_list), panels):
        styles = {"kernel": dict(marker="o", lw=2.2), "baseline": dict(marker=".", lw=1, ls="--"),
                  "copy": dict(marker="", lw=1, color="0.6")}
        for s in panel.series.values():
            if s.points:
                n = sorted(s.points)
                axes.plot(n, [s.points[k] for k in n], label=s.name, **styles.get(s.kind, {}))
            elif s.kind == "kernel":
                axes.plot([], [], label=f"{s.name}: {', '.join(sorted(set(s.untimed.values())))}")
        top = ceiling(panel)
        if top:
            axes.axhline(top, color="black", ls=":", lw=1, label=f"copy ceiling ({top:.0f} GB/s)")
        axes.set_xscale("log", base=2)
        if panel.emulated:
            axes.set_yscale("log")
        axes.set_xlabel("n (elements)")
        axes.set_ylabel(panel.unit)
        where = ", ".join(sorted(panel.devices))
        axes.set_title(f"{panel.task} ({panel.op}) on {where}"
                       + ("\nCPU emulator: elements/s of the emulator, not GPU performance"
                          if panel.emulated else ""), fontsize=10)
        axes.grid(alpha=0.3, which="both")
        axes.legend(fontsize=8, loc="best")
    figure.tight_layout()
    out.parent.mkdir(parents=True, exist_ok=True)
    figure.savefig(out, dpi=110)


def have_matplotlib() -> bool:
    try:
        import matplotlib  # noqa: F401
    except ImportError:
        return False
    return True


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="plot_sweep.py", description=__doc__.split("\n\n")[0])
    parser.add_argument("csv", nargs="+", type=Path, help="sweep CSV files (scanlab sweep --csv)")
    parser.add_argument("--out", type=Path, default=Path("build/sweep.png"),
                        help="the picture: .png, .svg or .pdf (default build/sweep.png)")
    args = parser.parse_args(argv)
    try:
        panels = read_sweeps(args.csv)
    except SweepError as e:
        print(f"plot_sweep: {e}", file=sys.stderr)
        return 2
    for panel in panels:
        print("\n".join(summary(panel)))
    if not have_matplotlib():
        print("plot_sweep: matplotlib is not installed, so no picture was drawn (the figures are "
              f"above and in the CSV), not in {sys.executable}. Install it there: sh tools/setup.sh "
              "(Debian/Ubuntu; PYTHON=... for another Python).", file=sys.stderr)
        return EXIT_NO_MATPLOTLIB
    draw(panels, args.out)
    print(f"picture: {args.out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
