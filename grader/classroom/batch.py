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
import os
import shutil
import sys
import threading
import time
from concurrent.futures import Future, ThreadPoolExecutor, as_completed
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable

from .. import COMMAND, exits
from ..grading.build_types import Layout
from .canvas import read_layout
from .submissions import class_folder, find_submissions, folder_names
from ..grading.collect import submission_name
from ..grading.pipeline import grade
from ..report import gradebook, html, problems
from ..report import leaderboard
from ..report.class_summary import class_summary
from ..report.copies import SimilarPair, find_copies
from ..report import feedback
from ..report.folder import write_reports
from ..printable import printable, printable_tree
from ..results import Identity, SubmissionResult
from .roster import (METADATA_FILE, RosterCheck, RosterError, canvas_assignment_column, check_roster,
                     identities, parse_due, read_gradescope_metadata, read_roster)
from ..config.measured import measured_parts
from ..config.rubric import Rubric
from ..grading.job import GradingJob
from ..grading.session import Session
from .batch_state import (STATE_FILE, BatchState, Stored, as_one_of_the_class, change_words, class_draw_seed,
                          graded_before, kept_by, replace_text, rubric_change, stale_reason, stored_result,
                          stored_results)

CLASS_PAGE = "class.html"
LEADERBOARD_FILE = "leaderboard.csv"
IN_PROGRESS = "in-progress"
# Submissions graded at once for each CPU slot: while one waits for the GPU or the disk,
# another builds.
SUBMISSIONS_PER_SLOT = 2


def parallelism(session: Session) -> str:
    """What runs at once, in words: the CPU slots (builds, emulator runs) and submissions."""
    return (f"{session.jobs} CPU slots (builds and emulator runs at once), up to "
            f"{SUBMISSIONS_PER_SLOT * session.jobs} submissions at once")


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
    roster_path: str = ""   # the --roster and --due given, kept in batch.json for `rescore`
    due: str = ""


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
    previous = BatchState.read(out)
    extras = extras or ClassExtras()
    # One draw of hidden cases for the whole class (the options' where given, else the
    # class's in batch.json, else a fresh one), kept in batch.json, never in a student's report.
    session.options.draw_seed = class_draw_seed(session.options.draw_seed, previous)
    state = BatchState(session.seed, rubric.digest, session.backend.name, measured_parts(rubric),
                       roster=extras.roster_path, due=extras.due, draw_seed=session.options.draw_seed)
    names = folder_names(entries)
    gpu = session.gpus[0].name if session.backend.on_gpu and session.gpus else ""
    stored = stored_results(entries, out, state, rubric, who, session.provenance, gpu) if resume else \
        Stored(todo=sorted(entries))
    results, todo, rescored = stored.kept, stored.todo, stored.rescored
    if resume:
        say(stored.words(len(entries), state.seed))
        for r in rescored:   # their reports say the new points
            write_reports(r, rubric, out / "submissions" / names[_entry_of(r, entries)])
    # A complete class's files stay whole until this run is: until then, the growing
    # grades.csv (and an interrupted run's class files) go to out/in-progress/.
    live = out / IN_PROGRESS if previous is not None and previous.complete else out
    live.mkdir(parents=True, exist_ok=True)
    state.complete = live is not out
    state.write(out)
    plain = live / gradebook.PLAIN
    plain.unlink(missing_ok=True)
    for r in results:
        gradebook.append_plain(r, rubric, plain)

    progress = _Progress(len(entries), done=len(results))
    busy_before = session.resources.gpus.busy_s() if session.resources.gpus is not None else {}
    if todo:
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

    # Submissions build in parallel; their GPU runs still take the GPU one at a time.
    workers = max(1, min(len(todo), SUBMISSIONS_PER_SLOT * session.jobs))
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
            finish_batch(results, rubric, entries, live, None, extras.roster, why, links_to=out)
            os._exit(exits.INTERRUPTED)   # the grading threads cannot be stopped otherwise
        interrupted = (f"interrupted by Ctrl-C: {len(results)} of {len(entries)} submission(s) graded "
                       f"({cancelled} not started); `batch --resume` grades the rest")
    finally:
        pool.shutdown(wait=True, cancel_futures=True)
    if progress.graded_now:
        say(throughput_line(progress.graded_now, time.monotonic() - progress.start, session, busy_before))
    pairs = None
    if extras.similarity is not None and not interrupted:
        pairs = similarity_pairs(extras.similarity, rubric, session.layout, out, say)
    if interrupted:
        if live is not out:
            interrupted += (f"; the complete class files of the batch before are kept in {out}, "
                            f"this run's are in {live}")
        finish_batch(results, rubric, entries, live, pairs, extras.roster, interrupted, links_to=out)
        raise BatchInterrupted(results, interrupted)
    finish_batch(results, rubric, entries, out, pairs, extras.roster)
    state.complete = True
    state.write(out)
    if live is not out:
        shutil.rmtree(live, ignore_errors=True)
    return results


def _entry_of(result: SubmissionResult, entries: list[Path]) -> Path:
    return next(e for e in entries if str(e) == result.origin or submission_name(e) == result.name)


def throughput_line(graded: int, seconds: float, session: Session,
                    busy_before: dict[int, float] | None = None) -> str:
    """How fast the batch went, and on which GPUs: submissions per hour, how many timed
    turns each GPU took (each submission is timed alone on one GPU), and the share of the
    batch's time each GPU was held by a run (`busy_before`: each GPU's held seconds when
    the batch started): what is left is the GPU waiting on the CPU stages."""
    line = (f"graded {graded} submission(s) in {_duration(seconds)}: "
            f"{3600 * graded / max(seconds, 1e-9):.0f} per hour")
    slots = session.resources.gpus
    if slots is None:
        return line + f" ({session.backend.name}, {parallelism(session)})"
    busy = slots.busy_s()
    turns = ", ".join(f"GPU {i}: {t['alone']} timed, {t['shared']} correctness runs, busy "
                      f"{100 * (busy[i] - (busy_before or {}).get(i, 0.0)) / max(seconds, 1e-9):.0f}%"
                      for i, t in slots.turns.items())
    return line + f" on {len(slots.turns)} GPU(s) ({turns})"


def finish_batch(results: list[SubmissionResult], rubric: Rubric, entries: list[Path],
                 out: Path, pairs: list[SimilarPair] | None = None, roster: RosterCheck | None = None,
                 interrupted: str = "", links_to: Path | None = None) -> list[SubmissionResult]:
    """The class's files from every submission's result: the gradebook files (with a 0
    row for each roster student who submitted nothing), the class summary, the
    leaderboard and the class page (a local batch, `merge` after a Slurm one, `rescore`).
    Each file is replaced whole (written beside, then renamed): an interrupted run never
    leaves one half written. `pairs`: the similarity found (None: not compared, and a
    similarity report of an earlier run is removed, so none contradicts the summary);
    `links_to`: the batch folder holding submissions/ (default `out`)."""
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
    gradebook.write_all(results, rubric, out, copies, absent, roster.canvas_column if roster else "")
    replace_text(out / "class-summary.md", class_summary(results, rubric, copies, roster, interrupted))
    leaderboard.write_csv(results, rubric, out / LEADERBOARD_FILE)
    base = os.path.relpath(links_to or out, out)
    prefix = "" if base == "." else base + "/"
    links = {str(e): f"{prefix}submissions/{names[e]}/report.html" for e in entries}
    feedback.write_comments(results, rubric, out / feedback.COMMENTS,
                            {r.name: links.get(r.origin, "").removesuffix("/report.html") for r in results})
    late = {r.name: gradebook.late_of(r, rubric).words() for r in results}
    replace_text(out / CLASS_PAGE, html.class_page(results, links, [t.name for t in rubric.tasks], copies,
                                                    roster, interrupted, late))
    if pairs is None and not interrupted:
        for stale in ("similarity.html", "similarity.csv"):
            (out / stale).unlink(missing_ok=True)
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
               due: str | None, assignment: str = "") -> tuple[dict[str, Identity], RosterCheck | None]:
    """Whose each submission is (a Gradescope export's metadata, Canvas's file names, the
    roster), and what the roster and the folder disagree on (None without a roster), with
    the Canvas assignment column of a gradebook export named like `assignment`."""
    metadata = folder / METADATA_FILE
    rows = read_roster(roster) if roster is not None else []
    names = [submission_name(e) for e in entries]
    who = identities(names, read_gradescope_metadata(metadata) if metadata.is_file() else {},
                     rows, parse_due(due) if due else None, read_layout(folder))
    if roster is None:
        return who, None
    check = check_roster(names, rows, who)
    check.canvas_column, check.canvas_columns = canvas_assignment_column(roster, assignment)
    return who, check


def read_identities(folder: Path, entries: list[Path], roster: Path | None,
                    due: str | None) -> dict[str, Identity]:
    return read_class(folder, entries, roster, due)[0]


def _line_printer() -> Callable[[str], None]:
    """Prints whole lines from any thread (print() writes a line and its end apart, so two
    grading threads' progress lines could run together), control characters escaped."""
    lock = threading.Lock()

    def say(line: str) -> None:
        with lock:
            sys.stdout.write(printable(line) + "\n")
            sys.stdout.flush()
    return say


def grade_batch(args: argparse.Namespace, job: GradingJob, rubric: Rubric, layout: Layout,
                log: Callable[[str], None]) -> int:
    """`batch FOLDER`: the job's options over the class's submissions (args: the class's
    own arguments: folder, out, roster, due, resume, similarity)."""
    options = job.options
    folder: Path = args.folder
    if not folder.is_dir():
        print(f"grader: {folder} is not a folder", file=sys.stderr)
        return exits.GRADER
    if getattr(args, "similarity", False):
        from .similarity import missing
        why = missing()
        if why:   # before hours of grading, not after
            print(f"grader: --similarity: {why}", file=sys.stderr)
            return exits.GRADER
    out: Path = args.out or Path("grader-out") / "batch"
    folder = class_folder(folder, rubric, out, lambda line: print(printable(line), file=sys.stderr))
    entries, skipped = find_submissions(folder)
    job.submissions = entries
    for s in skipped:
        print(printable(f"skipped {s}"), file=sys.stderr)
    try:
        who, check = read_class(folder, entries, args.roster, args.due, rubric.gradebook.assignment)
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
        if options.draw_seed is not None and before.draw_seed and options.draw_seed != before.draw_seed:
            print("note: --draw-seed differs from the class's draw (batch.json): every submission "
                  "is graded again", file=sys.stderr)
        print(change_words(before, rubric), file=sys.stderr, flush=True)
    if not entries:
        print(f"grader: {args.folder}: no submissions to grade (a batch folder holds one subfolder, "
              ".zip, .tar.gz, .tgz or .tar per submission, a Gradescope export, or Canvas's bulk "
              "download)", file=sys.stderr)
        return exits.GRADER
    with Session(rubric, layout, options, log) as session:
        known = sum(1 for i in who.values() if i.students)
        print(f"grading {len(entries)} submission(s) from {folder}: seed {session.seed}, backend "
              f"{session.backend.name}, {parallelism(session)}, one secret draw of hidden cases "
              f"for the class (kept in {out / STATE_FILE})"
              + (f"; {known} with their students' names" if known else ""), flush=True)
        extras = ClassExtras(check, folder if getattr(args, "similarity", False) else None,
                             str(args.roster.resolve()) if args.roster else "", args.due or "")
        status = exits.OK
        try:
            run_batch(session, entries, out, _line_printer(), who, args.resume, extras)
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


def rescore_class(args: argparse.Namespace, rubric: Rubric) -> int:
    """`rescore FOLDER`: the stored measurements of the batch in --out scored by `rubric`
    (points, thresholds, the late policy, the gradebook's names): every submission's
    reports and the class's files written again, nothing built or run. Refused (exit 2,
    before anything is written) where the rubric changes what is measured, or where a
    submission has no stored result of the batch: `batch --resume` grades those."""
    out: Path = args.out or Path("grader-out") / "batch"
    state = BatchState.read(out)
    if state is None:
        print(f"grader: rescore: no batch in {out} (no {STATE_FILE}): grade it with batch first",
              file=sys.stderr)
        return exits.GRADER
    if not args.folder.is_dir():
        print(f"grader: {args.folder} is not a folder", file=sys.stderr)
        return exits.GRADER
    start = time.monotonic()
    roster = args.roster or (Path(state.roster) if state.roster else None)
    due = args.due or state.due or None
    resume = (f"{COMMAND} batch {args.folder} --out {out} --resume "
              f"--rubric {args.rubric}")
    print(change_words(state, rubric), file=sys.stderr, flush=True)
    kind, _ = rubric_change(state, rubric)
    if kind == "measured":
        print(f"grader: rescore: this rubric changes what is measured; grade again with: {resume}",
              file=sys.stderr)
        return exits.GRADER
    folder = class_folder(args.folder, rubric, out, lambda line: print(line, file=sys.stderr))
    entries, _ = find_submissions(folder)
    try:
        who, check = read_class(folder, entries, roster, due, rubric.gradebook.assignment)
    except RosterError as e:
        print(f"grader: {e}", file=sys.stderr)
        return exits.GRADER
    stored = stored_results(entries, out, state, rubric, who)
    results, todo, rescored = stored.kept, stored.todo, stored.rescored
    if todo:
        print(f"grader: rescore: {len(todo)} of {len(entries)} submission(s) have no stored result of "
              f"this batch measured as this rubric measures ({', '.join(submission_name(e) for e in todo[:10])}"
              f"{' ...' if len(todo) > 10 else ''}); nothing written. Grade them with: {resume}",
              file=sys.stderr)
        return exits.GRADER
    names = folder_names(entries)
    for r in results:   # every report: the points, and the identity (lateness) of this run
        write_reports(r, rubric, out / "submissions" / names[_entry_of(r, entries)])
    from .similarity import read_pairs
    finish_batch(results, rubric, entries, out, read_pairs(out), check)
    BatchState(state.seed, rubric.digest, state.backend, measured_parts(rubric), True,
               str(roster.resolve()) if roster else "", due or "", state.draw_seed).write(out)
    print(f"rescored {len(results)} submission(s) ({len(rescored)} with new points) by {args.rubric} "
          f"in {time.monotonic() - start:.1f} s: nothing built or run")
    print(f"gradebook: {', '.join(str(out / f) for f in gradebook.FILES)}; class summary: "
          f"{out / 'class-summary.md'} and {out / CLASS_PAGE}")
    return exits.OK


__all__ = ["grade_batch", "run_batch", "find_submissions", "submission_name", "BatchInterrupted", "BatchState",
           "STATE_FILE", "Stored", "as_one_of_the_class", "change_words", "class_draw_seed", "graded_before",
           "kept_by", "rubric_change", "stale_reason", "stored_result", "stored_results"]
