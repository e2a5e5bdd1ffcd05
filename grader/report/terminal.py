"""The terminal report: what the grader prints."""
from __future__ import annotations

from . import why
from . import application_lines, boundary_words, failure_texts, fmt_points, headline, perf_line, speedup_line
from ..results import SubmissionResult, TaskResult

MAX_FAILURES = 5      # failing visible cases shown in full per task
MAX_IGNORED = 12      # ignored files listed by name


def _indent(text: str, by: str = "    ") -> str:
    return "\n".join(by + line for line in text.splitlines())


def _task_block(tr: TaskResult, reveal_hidden: bool) -> list[str]:
    out = [f"Task {tr.number}: {tr.title} [{tr.file}]"]
    if tr.path and tr.path != f"student/{tr.file}":
        out.append(f"  file         {tr.path}")
    if tr.placeholder and tr.status != "not_attempted":
        out.append(f"  note         {tr.message or ('unchanged from' if tr.unchanged else 'still') + ' the handout (its placeholder)'}")
    elif tr.identical_to_reference:
        out.append("  note         identical to the reference solution")
    if tr.status == "missing":
        out.append(f"  NOT GRADED   {tr.message}")
    elif tr.status == "not_attempted":
        out.append(f"  bonus        {tr.message}")
    elif tr.status == "forbidden":
        out.append(f"  NOT GRADED   {tr.message}")
        out += [_indent(str(v), "    ") for v in tr.violations]
    elif tr.status == "build_failed":
        out.append(f"  NOT GRADED   {tr.path} does not compile "
                   "(built with the reference files for the other tasks):")
        out.append(_indent(tr.build.errors if tr.build else "", "    | "))
    hidden = sum(1 for c in tr.cases if c.case.hidden)
    if tr.status == "graded":
        out.append(f"  correctness  {tr.passed}/{tr.total} cases passed"
                   + (f" ({hidden} hidden)" if hidden else "")
                   + boundary_words(tr.cases)
                   + f"{'':8}{fmt_points(tr.correctness_points, tr.correctness_max)}")
    else:
        out.append(f"  correctness  {fmt_points(tr.correctness_points, tr.correctness_max)}")
    if tr.race_note:
        out.append(f"  race check   {tr.race_note.removeprefix('race check: ')}")
    out.append(f"  performance  {perf_line(tr)}")
    speed = speedup_line(tr)
    if speed:
        out.append(f"  speedup      {speed}")
    if tr.performance_points is not None:   # "not measured" is the performance line's word
        out.append(f"  points       {fmt_points(tr.performance_points, tr.performance_max)} (performance)")
    out += why.text_lines(tr)
    failures = [c for c in tr.cases if not c.passed]
    if failures:
        hidden_failed = sum(1 for c in failures if c.case.hidden and not reveal_hidden)
        out.append(f"  failures     {len(failures)}" + (f" ({hidden_failed} hidden)" if hidden_failed else ""))
        out += [_indent(text, "    ") for text in failure_texts(tr.cases, MAX_FAILURES, reveal_hidden)]
    return out


def _summary_table(result: SubmissionResult) -> list[str]:
    rows = [("task", "file", "cases", "time ms", "ref ms", "x ref", "GB/s", "points")]
    for tr in result.tasks:
        p = tr.perf[0] if tr.perf and tr.perf[0].status == "measured" else None
        rows.append((str(tr.number), tr.file,
                     f"{tr.passed}/{tr.total}" if tr.status == "graded" else tr.status.replace("_", " "),
                     f"{p.student_ms:.4f}" if p else "-", f"{p.reference_ms:.4f}" if p else "-",
                     f"{p.slowdown:.2f}" if p and p.slowdown else "-",
                     f"{p.gbps:.0f}" if p and p.gbps else "-",
                     (f"{tr.points:.2f}/{tr.correctness_max + tr.performance_max:g}"
                      if tr.performance_points is not None else
                      f"{tr.correctness_points:.2f}/{tr.correctness_max:g}+n/m")))
    widths = [max(len(r[i]) for r in rows) for i in range(len(rows[0]))]
    lines = ["  ".join(cell.ljust(w) for cell, w in zip(r, widths)).rstrip() for r in rows]
    lines.insert(1, "  ".join("-" * w for w in widths))
    return lines


def instructor_reproduce(result: SubmissionResult) -> str:
    """The command that grades the submission again the same way, with the secret draw seed
    of its hidden cases: the instructor's reports only (result.reproduce, which the student's
    may show, leaves it out)."""
    if not result.draw_seed or not result.reproduce or "--draw-seed" in result.reproduce:
        return result.reproduce
    return f"{result.reproduce} --draw-seed {result.draw_seed}"


def _secrets(result: SubmissionResult) -> list[str]:
    """The instructor's lines on the secret seeds (the timed inputs', the drawn cases')."""
    out = []
    if result.perf_seed and any(tr.perf for tr in result.tasks):
        out.append(f"timed inputs: --perf-seed {result.perf_seed} (secret: not in the "
                   "student's Gradescope report)")
    if result.draw_seed:
        drawn = [c.case for tr in result.tasks for c in tr.cases if c.case.group.startswith("drawn")]
        largest = max((c.n for c in drawn), default=0)
        out.append(f"drawn hidden cases: --draw-seed {result.draw_seed} (secret: not in the "
                   f"student's Gradescope report); {len(drawn)} case(s), "
                   f"{len({c.block for c in drawn})} block sizes, n up to {largest}")
    return out


def render(result: SubmissionResult, reveal_hidden: bool = False, instructor: bool = True) -> str:
    """The terminal report; `instructor=False` (the output a Gradescope student may be shown,
    [gradescope] stdout_visibility) leaves out the secret seeds of the timed inputs and the
    drawn cases."""
    m = result.machine
    out = [f"scanlab grader {result.grader_version}: {result.name} ({result.kind} {result.origin})",
           f"seed {result.seed}; reproduce this grade: "
           + (instructor_reproduce(result) if instructor else result.reproduce)]
    if instructor:
        out += _secrets(result)
    if m.on_gpu:
        copy = f", copy bandwidth {m.copy_gbps:.0f} GB/s" if m.copy_gbps else ""
        out.append(f"GPU: {m.gpu} (compute capability {m.compute_capability}){copy}; "
                   f"student code ran as {m.sandbox_user}")
        if why.refusal_note(result):
            out.append(why.refusal_note(result))
    else:
        out.append(f"{m.note[0].upper() + m.note[1:]}. Student code ran as {m.sandbox_user}.")
    if m.sandbox:
        out.append(f"sandbox: {m.sandbox}" if m.contained else f"WARNING: student code was {m.sandbox}")
    if result.error:
        out += ["", f"NOT GRADABLE: {result.error}"]
    if result.files:
        out.append("files: " + ", ".join(f"{path}" for path in result.files.values()))
    for name, close in result.missing.items():
        out.append(f"missing: {name}" + (f" (found {', '.join(close)}: names must match exactly)" if close else ""))
    if result.ignored:
        shown = result.ignored[:MAX_IGNORED]
        more = len(result.ignored) - len(shown)
        out.append(f"ignored ({len(result.ignored)} other file(s), only the student files are graded): "
                   + ", ".join(shown) + (f", ... and {more} more" if more else ""))
    for note in result.notes:
        out.append(f"note: {note}")
    for tr in result.tasks:
        out.append("")
        out += _task_block(tr, reveal_hidden)
    integ = result.integration
    out.append("")
    scored = f"{integ.points:.2f} / {integ.max_points:g}" if integ.max_points else "not scored"
    if integ.status == "graded":
        out.append(f"Integration (all your files built together): {integ.passed}/{integ.total} "
                   f"cases passed ({scored})")
        if integ.message:   # the task at fault (grading/fault.py)
            out.append(f"    {integ.message}")
        out += [_indent(text, "    ") for text in failure_texts(integ.cases, 1, reveal_hidden)[:1]]
    elif integ.status == "build_failed":
        out.append(f"Integration (all your files built together): does not compile ({scored})")
        out.append(_indent(integ.build.errors if integ.build else "", "    | "))
    else:
        out.append(f"Integration: {integ.message}")
    if result.applications:
        out += ["", *application_lines(result)]
    out += ["", *_summary_table(result), "", f"TOTAL  {headline(result)}"]
    if not result.performance_measured and not result.machine.on_gpu:
        out.append("Performance is graded on the course's GPU machine.")
    out.append(f"graded in {result.seconds:.0f} s")
    return "\n".join(out) + "\n"
