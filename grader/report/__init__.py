"""Reports of a SubmissionResult (and of a batch): terminal text, the grader's JSON,
Gradescope's results.json, JUnit XML, a Markdown summary, the batch's gradebook files
and class summary.

What every report shares lives here: how a case is named (hidden cases are named by
number only) and how a task's numbers read.
"""
from __future__ import annotations

from ..results import CaseResult
from ..results import SubmissionResult, TaskResult

STATUS_WORDS = {"pass": "PASS", "fail": "FAIL", "error": "ERROR", "crash": "CRASH",
                "timeout": "TIMEOUT", "not_implemented": "NOT IMPLEMENTED", "not_run": "NOT RUN"}


def case_names(cases: list[CaseResult]) -> list[str]:
    """Names of cases as the student sees them: hidden ones by number only."""
    names = []
    hidden = 0
    for c in cases:
        if c.case.hidden:
            hidden += 1
            names.append(f"hidden case {hidden}")
        else:
            names.append(c.case.label)
    return names


# The group of the boundary family (grader/config/boundary.py): reports name it apart.
BOUNDARY_GROUP = "boundary"


def boundary_words(cases: list[CaseResult]) -> str:
    """", boundary family 60/62" of a task's cases ("" without any)."""
    family = [c for c in cases if c.case.group == BOUNDARY_GROUP]
    if not family:
        return ""
    return f"; boundary family {sum(c.passed for c in family)}/{len(family)}"


def case_text(c: CaseResult, name: str, reveal: bool = False) -> str:
    """One case's outcome, in full for visible cases, pass/fail only for hidden ones."""
    word = STATUS_WORDS.get(c.status, c.status.upper())
    if c.case.hidden and not reveal:
        return f"{word} {name}"
    lines = [f"{word} {name} (seed {c.seed}): {c.summary}"]
    if c.details:
        lines += [f"    {line}" for line in c.details.splitlines()]
    if not c.passed and c.reproduce:
        lines.append(f"    reproduce: {c.reproduce}")
    if c.case.hidden:
        lines[0] = "[hidden] " + lines[0]
    elif c.case.group == BOUNDARY_GROUP:
        lines[0] = "[boundary] " + lines[0]
    return "\n".join(lines)


def failure_texts(cases: list[CaseResult], limit: int, reveal: bool = False) -> list[str]:
    """The failing cases as case_text shows them: the visible ones (and, with `reveal`,
    the hidden ones) in full, but a diagnostic repeated word for word in several cases
    once, with a count; at most `limit` distinct ones, then how many more. Hidden
    failures follow as pass/fail lines."""
    failures = [(c, n) for c, n in zip(cases, case_names(cases)) if not c.passed]
    # A hang first: it is why the cases after it were not run.
    failures.sort(key=lambda cn: cn[0].status != "timeout")
    groups: dict[tuple[str, str, str], list[tuple[CaseResult, str]]] = {}
    for c, n in failures:
        if c.case.hidden and not reveal:
            continue
        groups.setdefault((c.status, c.summary, c.details), []).append((c, n))
    out = []
    for same in list(groups.values())[:limit]:
        c, n = same[0]
        text = case_text(c, n, reveal)
        if len(same) > 1:
            shown = [c.case.label if reveal else name for c, name in same[1:4]]
            others = ", ".join(shown) + (", ..." if len(same) > 4 else "")
            text += f"\n    (the same in {len(same) - 1} more case(s): {others})"
        out.append(text)
    rest = sum(len(g) for g in list(groups.values())[limit:])
    if rest:
        out.append(f"... and {rest} more failing case(s) (all in the JSON report)")
    out += [case_text(c, n) for c, n in failures if c.case.hidden and not reveal]
    return out


def fmt_points(value: float | None, maximum: float) -> str:
    if value is None:
        return f"not measured / {maximum:g}"
    return f"{value:.2f} / {maximum:g}"


def perf_line(tr: TaskResult) -> str:
    """The performance of a task in one line (the first perf case; others follow)."""
    if tr.perf_status != "measured":
        return tr.perf_message or tr.perf_status.replace("_", " ")
    parts = []
    for p in tr.perf:
        text = (f"{p.case.task} {p.case.op} n={p.case.n}: {p.student_ms:.4f} ms vs reference "
                f"{p.reference_ms:.4f} ms ({p.slowdown:.2f}x the reference time)")
        if p.gbps is not None:
            text += f", {p.gbps:.0f} GB/s"
            if p.copy_fraction is not None:
                text += f" = {100 * p.copy_fraction:.0f}% of copy bandwidth"
        if p.noisy:
            text += f" [NOISY: {p.message}]"
        parts.append(text)
    return "; ".join(parts)


def speedup_line(tr: TaskResult) -> str:
    items = []
    for p in tr.perf:
        for name, s in p.speedups().items():
            items.append(f"{s:.1f}x vs {name}")
    return ", ".join(items)


def headline(result: SubmissionResult) -> str:
    bonus = f", {result.bonus_score:.2f} of it bonus" if result.bonus_score > 0 else ""
    if result.performance_measured:
        return f"{result.score:.2f} / {result.max_score:g}" + (f" ({bonus[2:]})" if bonus else "")
    return (f"{result.score:.2f} / {result.max_score:g} (correctness; performance, "
            f"{result.performance_max:g} points, not measured{bonus})")


def timed_out_words(tr: TaskResult) -> str:
    """A hang in words: 'timed out (1 case past the time limit, 61 not run, 1 passed)'."""
    hung = sum(1 for c in tr.cases if c.status == "timeout")
    not_run = sum(1 for c in tr.cases if c.status == "not_run")
    parts = [f"{hung} case{'s' if hung != 1 else ''} past the time limit"]
    if not_run:
        parts.append(f"{not_run} not run")
    parts.append(f"{tr.passed} of {tr.total} passed")
    return f"timed out ({', '.join(parts)})"


def is_placeholder(tr: TaskResult) -> bool:
    """Whether the task is the handout's placeholder at work: passing where the rubric
    lets it run, or reaching it in a grade, where it does no work (a task left as the
    handout's TODO stub is "not implemented")."""
    return tr.placeholder and (tr.verdict == "correct" or (
        tr.verdict == "not_implemented" and any(c.placeholder for c in tr.cases)))


def crashed_cases(tr: TaskResult) -> int:
    """The task's cases that ended by a signal or a CUDA or runtime error, not with an
    answer: said apart from wrong answers (the verdict stays "wrong")."""
    return sum(1 for c in tr.cases if c.status in ("crash", "error"))


def problems(result: SubmissionResult) -> list[str]:
    """What keeps a submission from full marks, in words, task by task (the batch's
    progress lines, the CSV's comment and the class summary say it alike)."""
    if result.error:
        return [result.error]
    out = []
    for tr in result.tasks:
        if tr.verdict == "not_attempted":
            continue  # a bonus left alone is no problem
        if is_placeholder(tr):
            out.append(f"task {tr.number}: the handout's placeholder")
        elif tr.verdict == "wrong":
            crashed = crashed_cases(tr)
            out.append(f"task {tr.number}: {tr.total - tr.passed} of {tr.total} cases fail"
                       + (f" ({crashed} of them crashed)" if crashed else ""))
        elif tr.verdict == "timed_out":
            out.append(f"task {tr.number}: {timed_out_words(tr)}")
        elif tr.verdict != "correct":
            out.append(f"task {tr.number}: {tr.verdict.replace('_', ' ')}")
    return out


def application_lines(result: SubmissionResult) -> list[str]:
    """The applications (reported, no points), a line each, with the figures of a pass
    and the task at fault of a failure."""
    if not result.applications:
        return []
    out = ["Applications on all your files (reported, no points):"]
    for a in result.applications:
        word = {"pass": "PASS", "fail": "FAIL", "not_implemented": "TODO"}.get(a.status, "ERROR")
        detail = "; ".join(a.figures[:2]) if a.status == "pass" else a.message
        out.append(f"  {a.name:<12} {word}: {detail}" if detail else f"  {a.name:<12} {word}")
        if a.status in ("fail", "error"):
            out.append(f"  {'':<12} reproduce: {a.reproduce}")
    return out
