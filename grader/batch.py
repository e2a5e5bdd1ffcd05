"""`batch`: a class folder graded with one session.

Each submission gets a report folder under out/submissions/ (results.json written last,
so a folder holding it is complete), its rows appended to grades.csv as it finishes,
and a progress line as each of its phases ends, with the batch's ETA. At the end the
three gradebook files (grader/report/gradebook.py) and class-summary.md are written
whole. out/batch.json records the seed, rubric digest and backend, so `--resume` goes on
with an interrupted batch: a submission whose results.json has the same seed, rubric
digest and source digest is kept, not regraded.
"""
from __future__ import annotations

import argparse
import json
import sys
import threading
import time
from concurrent.futures import ThreadPoolExecutor, as_completed
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable

from grader.build import Layout
from grader.collect import is_archive, source_digest, submission_name
from grader.grade import grade
from grader.report import gradebook, html, jsonfile, problems
from grader.report import leaderboard
from grader.report.class_summary import class_summary
from grader.report.folder import safe_name, write_reports
from grader.results import Identity, SubmissionResult
from grader.roster import (METADATA_FILE, RosterError, export_root, identities, parse_due,
                           read_gradescope_metadata, read_roster)
from grader.rubric import Rubric
from grader.session import Options, Session

STATE_FILE = "batch.json"
CLASS_PAGE = "class.html"
LEADERBOARD_FILE = "leaderboard.csv"
STATE_FORMAT = "scanlab-batch"


def find_submissions(folder: Path) -> tuple[list[Path], list[str]]:
    """The submissions in a batch folder, and what was skipped there."""
    entries: list[Path] = []
    skipped: list[str] = []
    for p in sorted(folder.iterdir()):
        if p.name.startswith(".") or p.name == "__MACOSX" or p.name == METADATA_FILE:
            continue
        if p.is_symlink():
            skipped.append(f"{p.name}: a symbolic link")
        elif p.is_dir() or is_archive(p):
            entries.append(p)
        else:
            skipped.append(f"{p.name}: neither a folder nor an archive")
    return entries, skipped


def folder_names(entries: list[Path]) -> dict[Path, str]:
    """Each submission's report folder name: its name made safe, -2, -3... where two
    collide (in the order of the sorted entries, so a resumed batch finds the same)."""
    seen: dict[str, int] = {}
    out: dict[Path, str] = {}
    for e in sorted(entries):
        base = safe_name(submission_name(e))
        seen[base] = seen.get(base, 0) + 1
        out[e] = base if seen[base] == 1 else f"{base}-{seen[base]}"
    return out


@dataclass
class BatchState:
    """out/batch.json: what a resumed batch must match."""
    seed: int
    rubric_digest: str
    backend: str

    @staticmethod
    def read(out: Path) -> BatchState | None:
        try:
            data = json.loads((out / STATE_FILE).read_text(encoding="utf-8"))
            if data.get("format") != STATE_FORMAT:
                return None
            return BatchState(int(data["seed"]), str(data["rubric_digest"]), str(data["backend"]))
        except (OSError, ValueError, KeyError, TypeError):
            return None

    def write(self, out: Path) -> None:
        (out / STATE_FILE).write_text(json.dumps(
            {"format": STATE_FORMAT, "seed": self.seed, "rubric_digest": self.rubric_digest,
             "backend": self.backend}, indent=2) + "\n", encoding="utf-8")


def graded_before(folder: Path, entry: Path, state: BatchState, limit: int) -> SubmissionResult | None:
    """The result in `folder` if it was graded with this state and these bytes."""
    try:
        result = jsonfile.read(folder / "results.json")
    except ValueError:
        return None
    if (result.seed != state.seed or result.rubric_digest != state.rubric_digest
            or result.machine.backend != state.backend
            or result.source_digest != source_digest(entry, limit)):
        return None
    return result


def _duration(seconds: float) -> str:
    if seconds < 60:
        return f"{seconds:.0f} s"
    minutes, secs = divmod(int(seconds + 0.5), 60)
    return f"{minutes} min {secs:02d} s" if minutes < 60 else f"{minutes // 60} h {minutes % 60:02d} min"


def _progress_line(i: int, total: int, result: SubmissionResult, eta: str) -> str:
    said = [p if len(p) <= 90 else p[:87] + "..." for p in problems(result)]
    score = f"{result.score:6.2f} / {result.max_score:g}" + \
        (f" ({result.bonus_score:.2f} of it bonus)" if result.bonus_score > 0 else "")
    return (f"[{i:>{len(str(total))}}/{total}] {result.name[:28]:<28} {score:<14} "
            f"{'; '.join(said) or 'all cases pass'}  ({_duration(result.seconds)}){eta}")


@dataclass
class _Progress:
    """Counts, the clock and the ETA of a running batch (its lines come from threads)."""
    total: int
    done: int = 0
    graded_now: int = 0
    start: float = field(default_factory=time.monotonic)
    lock: threading.Lock = field(default_factory=threading.Lock)

    def eta(self) -> str:
        left = self.total - self.done
        if left <= 0 or self.graded_now == 0:
            return ""
        per = (time.monotonic() - self.start) / self.graded_now
        return f"  ETA {_duration(per * left)}"


def run_batch(session: Session, entries: list[Path], out: Path,
              say: Callable[[str], None] = print,
              who: dict[str, Identity] | None = None, resume: bool = False) -> list[SubmissionResult]:
    """Grades `entries` with `session` into `out` (see the module doc). `who` gives each
    submission name's identity. Returns the results, sorted by name."""
    rubric = session.rubric
    out.mkdir(parents=True, exist_ok=True)
    state = BatchState(session.seed, rubric.digest, session.backend)
    names = folder_names(entries)
    limit = rubric.submission.max_total_bytes
    results: list[SubmissionResult] = []
    todo: list[Path] = []
    for e in sorted(entries):
        before = graded_before(out / "submissions" / names[e], e, state, limit) if resume else None
        if before is not None:
            results.append(before)
        else:
            todo.append(e)
    if resume:
        say(f"resuming: {len(results)} of {len(entries)} submission(s) already graded with seed "
            f"{state.seed} and this rubric; grading {len(todo)}")
    state.write(out)
    plain = out / gradebook.PLAIN
    plain.unlink(missing_ok=True)
    for r in results:
        r.identity = (who or {}).get(r.name, r.identity)
        gradebook.append_plain(r, rubric, plain)

    progress = _Progress(len(entries), done=len(results))
    session.prepare()

    def grade_one(entry: Path) -> SubmissionResult:
        name = submission_name(entry)
        tag = name[:28]
        return grade(session, entry, on_phase=lambda text: say(f"    {tag}: {text}"))

    # Submissions build in parallel; their GPU runs still take the GPU one at a time.
    workers = max(1, min(len(todo), 2 * session.jobs))
    with ThreadPoolExecutor(max_workers=workers, thread_name_prefix="submission") as pool:
        futures = {pool.submit(grade_one, e): e for e in todo}
        for future in as_completed(futures):
            entry = futures[future]
            result = future.result()
            result.identity = (who or {}).get(submission_name(entry), Identity())
            with progress.lock:
                write_reports(result, rubric, out / "submissions" / names[entry])
                gradebook.append_plain(result, rubric, plain)
                results.append(result)
                progress.done += 1
                progress.graded_now += 1
                say(_progress_line(progress.done, progress.total, result, progress.eta()))
    if progress.graded_now:
        say(throughput_line(progress.graded_now, time.monotonic() - progress.start, session))
    return finish_batch(results, rubric, entries, out)


def throughput_line(graded: int, seconds: float, session: Session) -> str:
    """How fast the batch went, and on which GPUs: submissions per hour, and how many
    timed turns each GPU took (each submission is timed alone on one GPU)."""
    line = (f"graded {graded} submission(s) in {_duration(seconds)}: "
            f"{3600 * graded / max(seconds, 1e-9):.0f} per hour")
    slots = session.resources.gpus
    if slots is None:
        return line + f" ({session.backend}, {session.jobs} parallel jobs)"
    turns = ", ".join(f"GPU {i}: {t['alone']} timed, {t['shared']} correctness runs"
                      for i, t in slots.turns.items())
    return line + f" on {len(slots.turns)} GPU(s) ({turns})"


def finish_batch(results: list[SubmissionResult], rubric: Rubric, entries: list[Path],
                 out: Path) -> list[SubmissionResult]:
    """The class's files from every submission's result: the gradebook files, the class
    summary, the leaderboard and the class page (a local batch, and `merge` after a
    Slurm one)."""
    names = folder_names(entries)
    results.sort(key=lambda r: (r.name, r.origin))
    gradebook.write_all(results, rubric, out)
    (out / "class-summary.md").write_text(class_summary(results, rubric), encoding="utf-8")
    leaderboard.write_csv(results, rubric, out / LEADERBOARD_FILE)
    links = {str(e): f"submissions/{names[e]}/report.html" for e in entries}
    (out / CLASS_PAGE).write_text(html.class_page(results, links, [t.name for t in rubric.tasks]),
                                  encoding="utf-8")
    return results


def read_identities(folder: Path, entries: list[Path], roster: Path | None,
                    due: str | None) -> dict[str, Identity]:
    metadata = folder / METADATA_FILE
    return identities([submission_name(e) for e in entries],
                      read_gradescope_metadata(metadata) if metadata.is_file() else {},
                      read_roster(roster) if roster is not None else [],
                      parse_due(due) if due else None)


def grade_batch(args: argparse.Namespace, rubric: Rubric, layout: Layout, options: Options,
                log: Callable[[str], None]) -> int:
    folder: Path = args.folder
    if not folder.is_dir():
        print(f"grader: {folder} is not a folder", file=sys.stderr)
        return 2
    folder = export_root(folder)
    entries, skipped = find_submissions(folder)
    for s in skipped:
        print(f"skipped {s}", file=sys.stderr)
    try:
        who = read_identities(folder, entries, args.roster, args.due)
    except RosterError as e:
        print(f"grader: {e}", file=sys.stderr)
        return 2
    out: Path = args.out or Path("grader-out") / "batch"
    if args.resume:
        before = BatchState.read(out)
        if before is None:
            print(f"grader: --resume: no batch to resume in {out} (no {STATE_FILE})", file=sys.stderr)
            return 2
        if options.seed is None:
            options.seed = before.seed
        elif options.seed != before.seed:
            print(f"note: --seed {options.seed} differs from the batch's {before.seed}: "
                  "every submission is graded again", file=sys.stderr)
    with Session(rubric, layout, options, log) as session:
        known = sum(1 for i in who.values() if i.students)
        print(f"grading {len(entries)} submission(s) from {folder}: seed {session.seed}, backend "
              f"{session.backend}, {session.jobs} parallel jobs"
              + (f"; {known} with their students' names" if known else ""), flush=True)
        run_batch(session, entries, out, lambda line: print(line, flush=True), who, args.resume)
    if getattr(args, "similarity", False):
        _similarity_section(folder, rubric, layout, out)
    print()
    print((out / "class-summary.md").read_text(encoding="utf-8"))
    print(f"gradebook: {', '.join(str(out / f) for f in gradebook.FILES)}")
    print(f"class summary: {out / 'class-summary.md'} and {out / CLASS_PAGE}; reports: "
          f"{out / 'submissions'}/")
    return 0


def _similarity_section(folder: Path, rubric: Rubric, layout: Layout, out: Path) -> None:
    """similarity.html and .csv beside the grades, the closest pairs in class-summary.md."""
    from grader.similarity import HTML_FILE, SimilarityError, similarity_report, summary_lines
    try:
        lines = summary_lines(similarity_report(folder, rubric, layout, out))
        lines.append(f"\nThe code side by side: {HTML_FILE}; every pair: similarity.csv. A lead for "
                     "a person to read, never a verdict: no grade depends on it.")
    except SimilarityError as e:
        lines = [f"not compared: {e}"]
    with open(out / "class-summary.md", "a", encoding="utf-8") as f:
        f.write("\n## Similarity (copydetect; the handout and the solution are boilerplate)\n\n```text\n"
                + "\n".join(lines) + "\n```\n")


__all__ = ["grade_batch", "run_batch", "find_submissions", "submission_name"]
