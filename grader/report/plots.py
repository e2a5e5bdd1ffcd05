"""The pictures of the HTML reports, drawn with matplotlib where it is installed (the
grader's core needs the standard library only: without matplotlib the pages say so
and show their tables). Each picture is an SVG as a data: URI, for an <img> element:
a page that needs no JavaScript and no file beside it.
"""
from __future__ import annotations

import base64
import io
import math
from typing import Any

from ..results import SubmissionResult

MISSING = "pictures need matplotlib, which is not installed here (pip install matplotlib)"


def _pyplot() -> Any | None:
    try:
        import matplotlib
        matplotlib.use("Agg")  # no display: files only
        import matplotlib.pyplot as plt
    except ImportError:
        return None
    return plt


def available() -> bool:
    return _pyplot() is not None


def _data_uri(plt: Any, figure: Any) -> str:
    buffer = io.StringIO()
    figure.savefig(buffer, format="svg", bbox_inches="tight")
    plt.close(figure)
    return "data:image/svg+xml;base64," + base64.b64encode(buffer.getvalue().encode()).decode()


def performance(result: SubmissionResult) -> str | None:
    """GB/s of each timed case: yours, the reference's and the baselines' (same bytes
    counted, from the same run), with the device copy as the ceiling. A bar group per
    case: the grade times few sizes, so bars read better than lines. None when nothing
    was measured or matplotlib is missing."""
    plt = _pyplot()
    timed = [(tr, p) for tr in result.tasks for p in tr.perf
             if p.status == "measured" and p.gbps and p.student_ms and p.reference_ms]
    if plt is None or not timed:
        return None
    groups = []
    for tr, p in timed:
        gbps = p.gbps or 0.0
        bytes_ms = gbps * (p.student_ms or 0.0)          # GB/s x ms: the same for every kernel
        bars = [("yours", gbps), ("reference", bytes_ms / (p.reference_ms or 1.0))]
        bars += [(name, bytes_ms / ms) for name, ms in sorted(p.baselines.items(), key=lambda b: b[1]) if ms > 0]
        n = p.case.n
        size = f"2^{n.bit_length() - 1}" if n & (n - 1) == 0 else str(n)
        groups.append((f"task {tr.number} {p.case.task}\n{p.case.op} n={size}", bars))
    height = sum(len(bars) for _, bars in groups) * 0.32 + 0.6 * len(groups) + 0.8
    figure, axes = plt.subplots(figsize=(7.5, height))
    colors = {"yours": "#1f77b4", "reference": "#2ca02c"}
    y, ticks, labels = 0.0, [], []
    for label, bars in groups:
        first = y
        for name, value in bars:
            color = colors.get(name, "#bbbbbb")
            axes.barh(y, value, color=color, height=0.8)
            axes.text(value, y, f" {name} {value:,.0f}" if value >= 10 else f" {name} {value:.2g}",
                      va="center", fontsize=7)
            y += 1
        ticks.append((first + y - 1) / 2)
        labels.append(label)
        y += 0.8
    copies = [p.copy_gbps for _, p in timed if p.copy_gbps]
    if copies:
        axes.axvline(max(copies), color="black", lw=1, ls=":")
        axes.text(max(copies), -0.9, "device copy (the ceiling)", ha="right", fontsize=7)
    axes.set_yticks(ticks, labels, fontsize=8)
    axes.invert_yaxis()
    axes.set_xscale("log")
    axes.set_xlabel("GB/s (log scale; the bytes a perfect kernel moves / median time)")
    axes.set_title(f"{result.machine.gpu or 'GPU'}: bandwidth of each timed case", fontsize=10)
    axes.grid(alpha=0.3, axis="x", which="both")
    return _data_uri(plt, figure)


# Each verdict's colour, the same on every class page: green only for all cases passing,
# reds for what fails, greys for what was not there to grade (an optional bonus left alone).
VERDICT_COLORS = {"correct": "#2e7d32", "wrong": "#c62828", "timed_out": "#ef6c00",
                  "not_implemented": "#f9a825", "build_failed": "#6a1b9a", "forbidden": "#4e342e",
                  "missing": "#757575", "not_attempted": "#bdbdbd"}


def _integer_ticks() -> Any:
    from matplotlib.ticker import MaxNLocator
    return MaxNLocator(integer=True)


def class_pictures(results: list[SubmissionResult], task_names: list[str]) -> dict[str, str]:
    """The class page's pictures: the score histogram, the verdicts per task and the
    GB/s of each task across the class (a strip plot). Empty without matplotlib."""
    plt = _pyplot()
    if plt is None or not results:
        return {}
    pictures: dict[str, str] = {}
    figure, axes = plt.subplots(figsize=(6, 3))
    top = max(r.max_score for r in results) or 1.0
    # A bonus takes a score past the maximum: the range goes as far as the best score.
    high = max([top, *(r.score for r in results)])
    bins = 10 + (math.ceil(10 * (high - top) / top) if high > top else 0)
    axes.hist([r.score for r in results], bins=bins, range=(0, top * bins / 10), color="#4c72b0",
              edgecolor="white")
    if high > top:
        axes.axvline(top, color="#888", linestyle="--", linewidth=1)
    axes.set_xlabel(f"score (of {top:g}" + (", beyond it the bonus)" if high > top else ")"))
    axes.set_ylabel("submissions")
    axes.yaxis.set_major_locator(_integer_ticks())   # counts: no 0.5 of a submission
    axes.set_title("Scores")
    pictures["scores"] = _data_uri(plt, figure)

    verdicts = list(VERDICT_COLORS)
    figure, axes = plt.subplots(figsize=(7, 3))
    bottom = [0] * len(task_names)
    for v in verdicts:
        counts = [sum(1 for r in results if i < len(r.tasks) and r.tasks[i].verdict == v)
                  for i in range(len(task_names))]
        if any(counts):
            axes.bar(task_names, counts, bottom=bottom, label=v.replace("_", " "), color=VERDICT_COLORS[v])
            bottom = [b + c for b, c in zip(bottom, counts)]
    axes.set_ylabel("submissions")
    axes.yaxis.set_major_locator(_integer_ticks())
    axes.set_title("Verdicts per task")
    # Beside the bars, not over them (a legend inside covered the tallest bar).
    axes.legend(fontsize=7, loc="upper left", bbox_to_anchor=(1.01, 1.0), borderaxespad=0)
    figure.tight_layout()
    pictures["verdicts"] = _data_uri(plt, figure)

    strips = [[p.gbps for r in results if i < len(r.tasks) for p in r.tasks[i].perf[:1]
               if p.status == "measured" and p.gbps] for i in range(len(task_names))]
    if any(strips):
        figure, axes = plt.subplots(figsize=(6, 3))
        for i, values in enumerate(strips):
            jitter = [i + 0.25 * ((k * 0.618) % 1 - 0.5) for k in range(len(values))]
            axes.plot(jitter, values, "o", alpha=0.7)
        axes.set_xticks(range(len(task_names)), task_names)
        axes.set_ylabel("GB/s (first timed case)")
        axes.set_ylim(bottom=0)
        axes.set_title("Bandwidth per task across the class")
        pictures["bandwidth"] = _data_uri(plt, figure)
    return pictures
