"""Why a timed task is slow: its Nsight Compute figures beside the reference's and the
diagnosis (grader/grading/ncu.py, diagnosis.py), for the terminal report, Gradescope's
output and the HTML report (a table and a small bar chart, inline SVG: no matplotlib
needed). The JSON report carries the figures as they are (TaskResult.profile)."""
from __future__ import annotations

from dataclasses import dataclass
from html import escape
from typing import Callable

from ..grading.ncu import REFUSED_NOTE
from ..results import ProfileFigures, SubmissionResult, TaskProfile, TaskResult


def _pct(v: float | None) -> str:
    return "-" if v is None else f"{v:.0f}%"


def _num(v: float | None, digits: int = 1) -> str:
    return "-" if v is None else f"{v:.{digits}f}"


def _occupancy(f: ProfileFigures) -> str:
    if f.theoretical_occupancy_pct is None:
        return "-"
    shape = (f"{f.blocks_per_sm:.0f} x {f.threads_per_block or 0:.0f} threads an SM"
             if f.blocks_per_sm is not None else "")
    if f.occupancy_limiter and f.theoretical_occupancy_pct < 99.5:
        shape += f", limited by {f.occupancy_limiter}"
    if len(f.kernels) > 1 and f.main_kernel:
        # Of one kernel: several kernels' achieved beside one's theoretical would not compare.
        shape += f"; of {kernel_name(f.main_kernel)}, the longest of {len(f.kernels)} kernels"
    return (f"{_pct(f.achieved_occupancy_pct)} of {_pct(f.theoretical_occupancy_pct)} possible"
            + (f" ({shape})" if shape else ""))


def kernel_name(signature: str) -> str:
    """A kernel's name without its return type, template arguments and parameters."""
    head = signature.split("(")[0].split("<")[0].strip()
    return head.split()[-1] if head else signature


def _sectors(value: float | None, ideal: float | None) -> str:
    return "-" if value is None else f"{value:.1f}" + (f" (needed: {ideal:.1f})" if ideal is not None else "")


def _stalls(f: ProfileFigures) -> str:
    top = f.top_stalls(3)
    return ", ".join(f"{r.replace('_', ' ')} {v:.1f}" for r, v in top) or "-"


@dataclass(frozen=True)
class Row:
    label: str
    show: Callable[[ProfileFigures], str]


ROWS = (
    Row("DRAM throughput (of peak)", lambda f: _pct(f.dram_pct)),
    Row("occupancy", _occupancy),
    Row("registers a thread", lambda f: _num(f.registers_per_thread, 0)),
    Row("shared memory a block (bytes)", lambda f: _num(f.shared_bytes_per_block, 0)),
    Row("global load sectors a request", lambda f: _sectors(f.load_sectors_per_request, f.load_ideal_sectors_per_request)),
    Row("global store sectors a request", lambda f: _sectors(f.store_sectors_per_request, f.store_ideal_sectors_per_request)),
    Row("shared wavefronts a request (1: no bank conflicts)", lambda f: _num(f.shared_wavefronts_per_request, 2)),
    Row("L2 hit rate", lambda f: _pct(f.l2_hit_pct)),
    Row("top warp stalls (cycles an instruction)", _stalls),
)


def _size(n: int) -> str:
    return f"2^{n.bit_length() - 1}" if n > 0 and n & (n - 1) == 0 else str(n)


def heading(p: TaskProfile) -> str:
    return f"Nsight Compute, one run at n = {_size(p.n)} (never scored)"


def text_lines(tr: TaskResult, indent: str = "  ") -> list[str]:
    """The task's figures (yours | the reference's) and diagnosis, for a text report; []
    when it was not profiled, unless it says why."""
    p = tr.profile
    if p is None:
        return []
    if p.student is None:   # a refusal is said once, at the top (refusal_note)
        return [f"{indent}why         {p.message}"] if p.message and p.message != REFUSED_NOTE else []
    out = [f"{indent}why         {heading(p)}: yours | the reference's"]
    width = max(len(r.label) for r in ROWS)
    for r in ROWS:
        ref = r.show(p.reference) if p.reference else "(not measured)"
        out.append(f"{indent}  {r.label:<{width}}  {r.show(p.student)} | {ref}")
    out += [f"{indent}  diagnosis: {d}" for d in p.diagnoses]
    return out


def refusal_note(result: SubmissionResult) -> str:
    """The one line a machine that refused ncu its counters gets (else "")."""
    messages = {tr.profile.message for tr in result.tasks if tr.profile and tr.profile.student is None}
    return REFUSED_NOTE if REFUSED_NOTE in messages else ""


# The bars of the chart: each a share in [0, 1], higher is better.
BARS: tuple[tuple[str, Callable[[ProfileFigures], float | None]], ...] = (
    ("DRAM throughput", lambda f: f.dram_pct / 100 if f.dram_pct is not None else None),
    ("achieved occupancy", lambda f: f.achieved_occupancy_pct / 100 if f.achieved_occupancy_pct is not None else None),
    ("load coalescing", lambda f: f.load_ideal_sectors_per_request / f.load_sectors_per_request
     if f.load_sectors_per_request and f.load_ideal_sectors_per_request else None),
    ("store coalescing", lambda f: f.store_ideal_sectors_per_request / f.store_sectors_per_request
     if f.store_sectors_per_request and f.store_ideal_sectors_per_request else None),
    ("shared memory without conflicts", lambda f: 1 / f.shared_wavefronts_per_request
     if f.shared_wavefronts_per_request else None),
)


def bar_chart(student: ProfileFigures, reference: ProfileFigures | None) -> str:
    """A small inline SVG: each figure of BARS as a bar, yours above the reference's."""
    label_w, bar_w, row_h = 220, 300, 34
    rows = [(name, get(student), get(reference) if reference else None) for name, get in BARS]
    rows = [r for r in rows if r[1] is not None or r[2] is not None]
    height = row_h * len(rows) + 24
    parts = [f'<svg xmlns="http://www.w3.org/2000/svg" width="{label_w + bar_w + 60}" height="{height}" '
             'role="img" aria-label="yours against the reference, higher is better" font-size="12">',
             f'<text x="{label_w}" y="12" fill="#1565c0">yours</text>'
             f'<text x="{label_w + 60}" y="12" fill="#9e9e9e">the reference</text>']
    for k, (name, yours, ref) in enumerate(rows):
        y = 20 + k * row_h
        parts.append(f'<text x="0" y="{y + 14}">{escape(name)}</text>')
        for dy, value, colour in ((0, yours, "#1565c0"), (14, ref, "#9e9e9e")):
            if value is None:
                continue
            w = max(1.0, min(1.0, value) * bar_w)
            parts.append(f'<rect x="{label_w}" y="{y + dy}" width="{w:.0f}" height="12" fill="{colour}"/>'
                         f'<text x="{label_w + w + 4:.0f}" y="{y + dy + 10}">{100 * value:.0f}%</text>')
    parts.append("</svg>")
    return "".join(parts)


def html_section(result: SubmissionResult) -> list[str]:
    """"Why": per profiled task, the table of figures, the chart and the diagnosis; the
    one line of a refusal; nothing where no task was profiled."""
    profiled = [tr for tr in result.tasks if tr.profile and tr.profile.student is not None]
    refusal = refusal_note(result)
    if not profiled:
        return [f'<p class="note">{escape(refusal)}</p>'] if refusal else []
    body = ["<h2>Why: Nsight Compute</h2>"]
    for tr in profiled:
        p = tr.profile
        assert p is not None and p.student is not None
        body += [f"<h3>Task {tr.number}: {escape(tr.name)}</h3>",
                 f'<p class="note">{escape(heading(p))}</p>',
                 "<table><tr><th>figure</th><th>yours</th><th>the reference's</th></tr>"]
        body += [f"<tr><td>{escape(r.label)}</td><td>{escape(r.show(p.student))}</td>"
                 f"<td>{escape(r.show(p.reference) if p.reference else '(not measured)')}</td></tr>"
                 for r in ROWS]
        body.append("</table>")
        body.append(bar_chart(p.student, p.reference))
        body += ["<ul>"] + [f"<li>{escape(d)}</li>" for d in p.diagnoses] + ["</ul>"]
    return body
