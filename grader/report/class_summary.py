"""The class at a glance: class-summary.md, also printed at the end of a batch."""
from __future__ import annotations

import io
import math
import statistics

from . import crashed_cases, is_placeholder, leaderboard, problems
from .copies import Copies, markdown
from .gradebook import correctness_disagreement, flags, late_of, unmatched
from .late import penalised
from ..results import SubmissionResult
from ..classroom.roster import RosterCheck
from ..config.rubric import Rubric


def after_late(results: list[SubmissionResult], rubric: Rubric) -> str:
    """The class's figures after the late penalty (what the upload files carry), where it
    took anything; "" where it took nothing."""
    after = [penalised(r.score, r.max_score, late_of(r, rubric)) or 0.0 for r in results]
    if after == [r.score for r in results]:
        return ""
    return (f"; after the late penalty: mean {statistics.mean(after):.2f}, median "
            f"{statistics.median(after):.2f}, min {min(after):.2f}, max {max(after):.2f}")


def class_summary(results: list[SubmissionResult], rubric: Rubric, copies: Copies | None = None,
                  roster: RosterCheck | None = None, interrupted: str = "") -> str:
    """The class at a glance (Markdown, also printed). `copies`: what the files share;
    `roster`: what the roster and the class folder disagree on; `interrupted`: why the
    batch stopped early (what it says instead of a whole class)."""
    out = io.StringIO()
    n = len(results)
    scores = [r.score for r in results]
    max_score = results[0].max_score if results else rubric.max_correctness + rubric.max_performance
    out.write(f"# scanlab: class summary ({n} submission{'s' if n != 1 else ''})\n\n")
    if interrupted:
        out.write(f"**Interrupted**: {interrupted}\n\n")
    if roster is not None:
        out.write(roster_section(roster))
    if not results:
        return out.getvalue() + "No submissions.\n"
    measured = all(r.performance_measured for r in results)
    out.write(f"Scores out of {max_score:g}"
              + ("" if measured else " (correctness only: performance not measured without a GPU)")
              + f": mean {statistics.mean(scores):.2f}, median {statistics.median(scores):.2f}, "
              f"min {min(scores):.2f}, max {max(scores):.2f}"
              + after_late(results, rubric) + "\n\n")
    zeroed = rubric.correctness.zero_for_placeholders
    out.write("| task | all cases pass | the handout's placeholder"
              + (" (0 points)" if zeroed else "") + " | wrong (of them crashed) | timed out | not implemented | "
              "does not compile | forbidden | missing or not attempted | mean points |\n")
    out.write("| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |\n")
    for i, t in enumerate(rubric.tasks):
        trs = [r.tasks[i] for r in results]
        mean = statistics.mean(tr.points for tr in trs)
        most = t.max_points if measured else t.correctness_points
        # A placeholder is counted there alone: as "all cases pass" where the rubric lets it
        # run, as "not implemented" where it does no work in a grade (the default).
        placeholder = [is_placeholder(tr) for tr in trs]
        count = lambda verdict: sum(1 for tr, p in zip(trs, placeholder)  # noqa: E731
                                    if tr.verdict == verdict and not p)
        crashed = sum(1 for tr in trs if tr.verdict == "wrong" and crashed_cases(tr))
        out.write(f"| {t.number} `{t.file}` | {count('correct')} | {sum(placeholder)} | "
                  f"{count('wrong')}{f' ({crashed})' if crashed else ''} | {count('timed_out')} | "
                  f"{count('not_implemented')} | {count('build_failed')} | {count('forbidden')} | "
                  f"{count('missing') + count('not_attempted')} | {mean:.2f} / {most:g}"
                  f"{' (bonus)' if t.bonus else ''} |\n")
    out.write("\nScore distribution:\n\n```text\n")
    # Bins of 10% up to the maximum, and on past it as far as a bonus takes a score.
    top = max(scores + [max_score])
    nbins = 10 + (math.ceil(10 * (top - max_score) / max_score) if max_score and top > max_score else 0)
    bins = [0] * nbins
    for s in scores:
        at = (0 if not max_score else min(9, int(10 * s / max_score)) if s <= max_score
              else min(nbins - 1, 10 + int(10 * (s - max_score) / max_score)))
        bins[at] += 1
    for b, in_bin in enumerate(bins):
        bonus = "  (bonus)" if b >= 10 else ""
        out.write(f"{10 * b:3d}-{10 * b + 10:3d}%  {'#' * in_bin} {in_bin}{bonus}\n")
    out.write("```\n\n| submission | student(s) | score | problems |\n| --- | --- | --- | --- |\n")
    for r in sorted(results, key=lambda r: r.name):
        late = late_of(r, rubric).words()
        said = problems(r) + flags(r) + ([late] if late else []) + \
            (copies.words(r.name) if copies is not None else [])
        who = ", ".join(s.name or s.sid or s.email for s in r.identity.students) or "-"
        out.write(f"| {r.name} | {who.replace('|', '/')} | {r.score:.2f} | "
                  f"{'; '.join(p.replace('|', '/') for p in said) or '-'} |\n")
    out.write(disagreement_section(results))
    late_ones = [(r, late_of(r, rubric)) for r in sorted(results, key=lambda r: r.name)]
    late_ones = [(r, lt) for r, lt in late_ones if lt.late]
    if late_ones:
        out.write(f"\n## Late ({len(late_ones)})\n\n")
        for r, lt in late_ones:
            who = ", ".join(s.name or s.sid or s.email for s in r.identity.students) or r.name
            out.write(f"- {who.replace('|', '/')} ({r.name}): {lt.words()}\n")
    if any(r.identity.students for r in results):
        missing = unmatched(results)
        if missing:
            out.write(f"\nNot in the gradebook upload files (no SID, email or Canvas ID known): "
                      f"{', '.join(missing)}\n")
    if copies is not None:
        out.write(markdown(copies))
    out.write(leaderboard.markdown_section(results, rubric))
    return out.getvalue()


def roster_section(check: RosterCheck) -> str:
    """The roster's disagreements with the class folder (also said on stderr)."""
    lines = check.lines()
    if not lines:
        return "Roster: every row matches a submission, every submission a row.\n\n"
    return ("## Roster problems\n\n" + "\n".join(f"- {line}" for line in lines)
            + f"\n\n{len(check.mismatched)} roster row(s) name no submission here, {len(check.absent)} "
            f"student(s) submitted nothing ({len(check.zeros)} rows of 0 in the upload files), "
            f"{len(check.unclaimed)} submission(s) match no row.\n\n")


def disagreement_section(results: list[SubmissionResult]) -> str:
    """Every submission whose GPU grade's correctness differs from the emulator half's
    (Gradescope's autograder score in the export): the GPU half's upload corrects a lower
    one (grader/README.md, the round trip)."""
    rows = [(r, correctness_disagreement(r)) for r in sorted(results, key=lambda r: r.name)]
    known = [(r, d) for r, d in rows if d is not None]
    if not known:
        return ""
    differ = [(r, d) for r, d in known if abs(d) > 0.005]
    out = [f"\n## GPU and emulator correctness ({len(differ)} of {len(known)} differ)\n\n"]
    for r, d in differ:
        who = ", ".join(s.name or s.sid or s.email for s in r.identity.students) or r.name
        why = "; ".join(p for p in problems(r) if p.startswith("task")) or "-"
        out.append(f"- {who} ({r.name}): emulator (Gradescope) {r.identity.autograder_score:.2f}, GPU "
                   f"{r.correctness_score:.2f}: "
                   + (f"corrected by {d:.2f} in the upload" if d < 0 else "the emulator's lower score stands")
                   + f" ({why})\n")
    if not differ:
        out.append("The GPU grade's correctness is the emulator half's for every submission.\n")
    return "".join(out)
