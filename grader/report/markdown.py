"""A Markdown summary, for CI job pages (e.g. $GITHUB_STEP_SUMMARY)."""
from __future__ import annotations

from pathlib import Path

from . import application_lines, failure_texts, fmt_points, headline, perf_line
from ..results import SubmissionResult

MAX_FAILURES = 3


def _cell(text: str) -> str:
    return text.replace("|", "\\|").replace("\n", " ")


def document(result: SubmissionResult) -> str:
    m = result.machine
    where = (f"GPU {m.gpu} (cc {m.compute_capability})" if m.on_gpu
             else "CPU emulator (no GPU): performance not measured")
    out = [f"## scanlab grade: {_cell(result.name)}", "",
           f"**Score: {headline(result)}**  ", f"{where}; seed `{result.seed}`", ""]
    if m.sandbox and not m.contained:
        out += [f"> **Warning: student code was {_cell(m.sandbox)}**", ""]
    if result.error:
        out += [f"> **Not gradable:** {_cell(result.error)}", ""]
    out += ["| task | file | cases | performance | points |", "| --- | --- | --- | --- | --- |"]
    for tr in result.tasks:
        cases = f"{tr.passed}/{tr.total}" if tr.status == "graded" else tr.status.replace("_", " ")
        points = f"{tr.correctness_points:.2f} + {fmt_points(tr.performance_points, tr.performance_max)}"
        out.append(f"| {tr.number} | `{tr.file}` | {cases} | {_cell(perf_line(tr))} | {points} |")
    integ = result.integration
    integ_text = f"{integ.passed}/{integ.total} cases passed" + (f": {integ.message}" if integ.message else "") \
        if integ.status == "graded" else (integ.message or integ.status.replace("_", " "))
    out += ["", f"Integration (all files together): {_cell(integ_text)}", ""]
    if result.applications:
        out += ["```text", *application_lines(result), "```", ""]
    for tr in result.tasks:
        problems: list[str] = []
        if tr.status == "not_attempted":
            pass
        elif tr.status in ("missing", "forbidden") or (tr.placeholder and tr.message):
            problems.append(tr.message)
            problems += [str(v) for v in tr.violations]
        elif tr.status == "build_failed" and tr.build:
            problems.append("does not compile:\n" + tr.build.errors)
        problems += failure_texts(tr.cases, MAX_FAILURES)
        if problems:
            out += [f"<details><summary>Task {tr.number}: problems</summary>", "", "```text",
                    *[p.replace("```", "'''") for p in problems], "```", "</details>", ""]
    return "\n".join(out) + "\n"


def write(result: SubmissionResult, path: Path) -> None:
    path.write_text(document(result), encoding="utf-8")
