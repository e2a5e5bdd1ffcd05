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
import os
import sys
import threading
import time
from concurrent.futures import Future, ThreadPoolExecutor, as_completed
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable

from .. import exits
from ..grading.build import Layout
from .canvas import read_layout
from .submissions import class_folder, find_submissions, folder_names
from ..grading.collect import source_digest, submission_name
from ..grading.pipeline import grade
from ..report import gradebook, html, jsonfile, problems
from ..report import leaderboard
from ..report.class_summary import class_summary
from ..report.copies import SimilarPair, find_copies
from ..report.folder import write_reports
from ..printable import printable, printable_tree
from ..results import Identity, SubmissionResult
from .roster import (METADATA_FILE, RosterCheck, RosterError, check_roster, identities, parse_due,
                     read_gradescope_metadata, read_roster)
from ..config.rubric import Rubric
from ..grading.job import GradingJob
from ..grading.session import Session

STATE_FILE = "batch.json"
CLASS_PAGE = "class.html"
LEADERBOARD_FILE = "leaderboard.csv"
STATE_FORMAT = "scanlab-batch"


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


class BatchInterrupted(Exception):
    """Ctrl-C stopped a batch; what finished is in `results` and written to the outputs."""

    def __init__(self, results: list[SubmissionResult], why: str):
        super().__init__(why)
        self.results = results
        self.why = why


@dataclass
class ClassExtras:
    """What the class files say beside the grades: the roster's disagreements with the
    class folder, and the folder to compare with `--similarity` (None: not compared)."""
    roster: RosterCheck | None = None
    similarity: Path | None = None


def run_batch(session: Session, entries: list[Path], out: Path,
              say: Callable[[str], None] = print,
              who: dict[str, Identity] | None = None, resume: bool = False,
              extras: ClassExtras | None = None) -> list[SubmissionResult]:
    """Grades `entries` with `session` into `out` (see the module doc). `who` gives each
    submission name's identity. Returns the results, sorted by name.

    Ctrl-C (KeyboardInterrupt) stops it: no submission not yet started starts (they are
    cancelled), the ones being graded finish and are written, the class's files are
    written from what finished (marked interrupted), and BatchInterrupted is raised. A
    second Ctrl-C while they finish quits the process at once (exit 130), with the class
    files written from what had finished by then."""
    rubric = session.rubric
    out.mkdir(parents=True, exist_ok=True)
    state = BatchState(session.seed, rubric.digest, session.backend.name)
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

    handled: set[Future[SubmissionResult]] = set()

    def done(future: Future[SubmissionResult]) -> None:
        handled.add(future)
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

    extras = extras or ClassExtras()
    # Submissions build in parallel; their GPU runs still take the GPU one at a time.
    workers = max(1, min(len(todo), 2 * session.jobs))
    pool = ThreadPoolExecutor(max_workers=workers, thread_name_prefix="submission")
    futures = {pool.submit(grade_one, e): e for e in todo}
    interrupted = ""
    try:
        for future in as_completed(futures):
            done(future)
    except KeyboardInterrupt:
        cancelled = sum(1 for f in futures if f.cancel())
        running = [f for f in futures if f not in handled and not f.cancelled()]
        say(f"interrupted: {cancelled} submission(s) not started are cancelled; the {len(running)} being "
            "graded finish and are kept (Ctrl-C again to quit at once and lose them)")
        try:
            for future in as_completed(running):
                done(future)
        except KeyboardInterrupt:
            why = (f"interrupted twice: {len(results)} of {len(entries)} submission(s) graded, the ones "
                   "being graded lost; `batch --resume` grades the rest")
            say(why)
            finish_batch(results, rubric, entries, out, None, extras.roster, why)
            os._exit(exits.INTERRUPTED)   # the grading threads cannot be stopped otherwise
        interrupted = (f"interrupted by Ctrl-C: {len(results)} of {len(entries)} submission(s) graded "
                       f"({cancelled} not started); `batch --resume` grades the rest")
    finally:
        pool.shutdown(wait=True, cancel_futures=True)
    if progress.graded_now:
        say(throughput_line(progress.graded_now, time.monotonic() - progress.start, session))
    pairs = None
    if extras.similarity is not None and not interrupted:
        pairs = similarity_pairs(extras.similarity, rubric, session.layout, out, say)
    finish_batch(results, rubric, entries, out, pairs, extras.roster, interrupted)
    if interrupted:
        raise BatchInterrupted(results, interrupted)
    return results


def throughput_line(graded: int, seconds: float, session: Session) -> str:
    """How fast the batch went, and on which GPUs: submissions per hour, and how many
    timed turns each GPU took (each submission is timed alone on one GPU)."""
    line = (f"graded {graded} submission(s) in {_duration(seconds)}: "
            f"{3600 * graded / max(seconds, 1e-9):.0f} per hour")
    slots = session.resources.gpus
    if slots is None:
        return line + f" ({session.backend.name}, {session.jobs} parallel jobs)"
    turns = ", ".join(f"GPU {i}: {t['alone']} timed, {t['shared']} correctness runs"
                      for i, t in slots.turns.items())
    return line + f" on {len(slots.turns)} GPU(s) ({turns})"


def finish_batch(results: list[SubmissionResult], rubric: Rubric, entries: list[Path],
                 out: Path, pairs: list[SimilarPair] | None = None, roster: RosterCheck | None = None,
                 interrupted: str = "") -> list[SubmissionResult]:
    """The class's files from every submission's result: the gradebook files (with a 0
    row for each roster student who submitted nothing), the class summary, the
    leaderboard and the class page (a local batch, and `merge` after a Slurm one).
    `pairs`: the similarity found (None: not compared)."""
    names = folder_names(entries)
    results.sort(key=lambda r: (r.name, r.origin))
    # (What the class's files are written from, printable: a roster's names are
    # untrusted text too.)
    shown = printable_tree(results)
    copies = printable_tree(find_copies(results, pairs))
    roster = printable_tree(roster)
    interrupted = printable(interrupted)
    results = shown
    absent = roster.zeros if roster is not None else []
    gradebook.write_all(results, rubric, out, copies, absent)
    (out / "class-summary.md").write_text(class_summary(results, rubric, copies, roster, interrupted),
                                          encoding="utf-8")
    leaderboard.write_csv(results, rubric, out / LEADERBOARD_FILE)
    links = {str(e): f"submissions/{names[e]}/report.html" for e in entries}
    (out / CLASS_PAGE).write_text(html.class_page(results, links, [t.name for t in rubric.tasks], copies,
                                                  roster, interrupted), encoding="utf-8")
    return results


def similarity_pairs(folder: Path, rubric: Rubric, layout: Layout, out: Path,
                     say: Callable[[str], None]) -> list[SimilarPair] | None:
    """similarity.html and .csv beside the grades; the pairs (None where it cannot run)."""
    from .similarity import SimilarityError, similarity_report
    try:
        return similarity_report(folder, rubric, layout, out)
    except SimilarityError as e:
        say(f"similarity not compared: {e}")
        return None


def read_class(folder: Path, entries: list[Path], roster: Path | None,
               due: str | None) -> tuple[dict[str, Identity], RosterCheck | None]:
    """Whose each submission is (a Gradescope export's metadata, Canvas's file names, the
    roster), and what the roster and the folder disagree on (None without a roster)."""
    metadata = folder / METADATA_FILE
    rows = read_roster(roster) if roster is not None else []
    names = [submission_name(e) for e in entries]
    who = identities(names, read_gradescope_metadata(metadata) if metadata.is_file() else {},
                     rows, parse_due(due) if due else None, read_layout(folder))
    return who, (check_roster(names, rows, who) if roster is not None else None)


def read_identities(folder: Path, entries: list[Path], roster: Path | None,
                    due: str | None) -> dict[str, Identity]:
    return read_class(folder, entries, roster, due)[0]


def grade_batch(args: argparse.Namespace, job: GradingJob, rubric: Rubric, layout: Layout,
                log: Callable[[str], None]) -> int:
    """`batch FOLDER`: the job's options over the class's submissions (args: the class's
    own arguments: folder, out, roster, due, resume, similarity)."""
    options = job.options
    folder: Path = args.folder
    if not folder.is_dir():
        print(f"grader: {folder} is not a folder", file=sys.stderr)
        return exits.GRADER
    out: Path = args.out or Path("grader-out") / "batch"
    folder = class_folder(folder, rubric, out, lambda line: print(printable(line), file=sys.stderr))
    entries, skipped = find_submissions(folder)
    job.submissions = entries
    for s in skipped:
        print(printable(f"skipped {s}"), file=sys.stderr)
    try:
        who, check = read_class(folder, entries, args.roster, args.due)
    except RosterError as e:
        print(f"grader: {e}", file=sys.stderr)
        return exits.GRADER
    for line in check.lines() if check is not None else []:
        print(printable(f"roster: {line}"), file=sys.stderr)
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
    if not entries:
        print(f"grader: {args.folder}: no submissions to grade (a batch folder holds one subfolder, "
              ".zip, .tar.gz, .tgz or .tar per submission, a Gradescope export, or Canvas's bulk "
              "download)", file=sys.stderr)
        return exits.GRADER
    with Session(rubric, layout, options, log) as session:
        known = sum(1 for i in who.values() if i.students)
        print(f"grading {len(entries)} submission(s) from {folder}: seed {session.seed}, backend "
              f"{session.backend.name}, {session.jobs} parallel jobs"
              + (f"; {known} with their students' names" if known else ""), flush=True)
        extras = ClassExtras(check, folder if getattr(args, "similarity", False) else None)
        status = exits.OK
        try:
            run_batch(session, entries, out, lambda line: print(printable(line), flush=True), who, args.resume, extras)
        except BatchInterrupted as e:
            print(f"grader: {e.why}", file=sys.stderr)
            status = exits.INTERRUPTED
    print()
    print(printable((out / "class-summary.md").read_text(encoding="utf-8")))
    if extras.similarity is not None and (out / "similarity.csv").is_file():
        print(f"similarity: {out / 'similarity.html'}, {out / 'similarity.csv'}")
    print(f"gradebook: {', '.join(str(out / f) for f in gradebook.FILES)}")
    print(f"class summary: {out / 'class-summary.md'} and {out / CLASS_PAGE}; reports: "
          f"{out / 'submissions'}/")
    return status


__all__ = ["grade_batch", "run_batch", "find_submissions", "submission_name", "BatchInterrupted"]
