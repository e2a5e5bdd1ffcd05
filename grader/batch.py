"""`grade` and `batch`: grading with a session, and writing every report."""
from __future__ import annotations

import argparse
import re
import sys
import threading
from concurrent.futures import ThreadPoolExecutor, as_completed
from pathlib import Path
from typing import Callable

from grader.build import Layout
from grader.collect import is_archive, submission_name
from grader.grade import Options, Session
from grader.report import csvfile, gradescope, jsonfile, junit, markdown, terminal
from grader.results import SubmissionResult
from grader.rubric import Rubric

REPORT_FILES = {"results.json": "the grader's complete results (hidden cases included)",
                "gradescope-results.json": "Gradescope's results.json",
                "junit.xml": "JUnit XML", "summary.md": "Markdown summary",
                "report.txt": "the terminal report"}


def safe_name(name: str) -> str:
    return re.sub(r"[^A-Za-z0-9._-]+", "_", name).strip("._") or "submission"


def write_reports(result: SubmissionResult, rubric: Rubric, out: Path,
                  gradescope_path: Path | None = None, reveal_hidden: bool = False) -> None:
    out.mkdir(parents=True, exist_ok=True)
    jsonfile.write(result, out / "results.json")
    gradescope.write(result, out / "gradescope-results.json", rubric.gradescope.visibility,
                     rubric.gradescope.stdout_visibility)
    if gradescope_path is not None:
        gradescope_path.parent.mkdir(parents=True, exist_ok=True)
        gradescope.write(result, gradescope_path, rubric.gradescope.visibility,
                         rubric.gradescope.stdout_visibility)
    junit.write(result, out / "junit.xml")
    markdown.write(result, out / "summary.md")
    (out / "report.txt").write_text(terminal.render(result, reveal_hidden), encoding="utf-8")


def grade_one(args: argparse.Namespace, rubric: Rubric, layout: Layout, options: Options,
              log: Callable[[str], None]) -> int:
    with Session(rubric, layout, options, log) as session:
        log(f"seed {session.seed}; backend {session.backend}; {session.jobs} parallel jobs")
        result = session.grade(args.submission, on_event=log)
    out = args.out or Path("grader-out") / safe_name(result.name)
    write_reports(result, rubric, out, args.gradescope, args.show_hidden)
    sys.stdout.write(terminal.render(result, args.show_hidden))
    print(f"reports: {out}/ ({', '.join(REPORT_FILES)})")
    if args.gradescope:
        print(f"Gradescope results: {args.gradescope}")
    return 0


def find_submissions(folder: Path) -> tuple[list[Path], list[str]]:
    """The submissions in a batch folder, and what was skipped there."""
    entries: list[Path] = []
    skipped: list[str] = []
    for p in sorted(folder.iterdir()):
        if p.name.startswith("."):
            continue
        if p.is_symlink():
            skipped.append(f"{p.name}: a symbolic link")
        elif p.is_dir() or is_archive(p):
            entries.append(p)
        else:
            skipped.append(f"{p.name}: neither a folder nor an archive")
    return entries, skipped


def _progress_line(i: int, total: int, result: SubmissionResult) -> str:
    problems = []
    if result.error:
        problems.append(result.error if len(result.error) <= 90 else result.error[:87] + "...")
    for tr in result.tasks if not result.error else []:
        if tr.verdict == "wrong":
            problems.append(f"task {tr.number}: {tr.passed}/{tr.total}")
        elif tr.verdict != "correct":
            problems.append(f"task {tr.number}: {tr.verdict.replace('_', ' ')}")
    score = f"{result.score:6.2f} / {result.max_score:g}"
    return (f"[{i:>{len(str(total))}}/{total}] {result.name[:28]:<28} {score:<14} "
            f"{'; '.join(problems) or 'all cases pass'}  ({result.seconds:.0f} s)")


def run_batch(session: Session, entries: list[Path], out: Path,
              say: Callable[[str], None] = print) -> list[SubmissionResult]:
    """Grades `entries` with `session`, writing each one's reports under out/submissions/,
    then grades.csv and class-summary.md in out/. Returns the results by name."""
    rubric = session.rubric
    out.mkdir(parents=True, exist_ok=True)
    results: list[SubmissionResult] = []
    done = 0
    lock = threading.Lock()
    names: dict[str, int] = {}
    session.prepare()
    # Submissions build in parallel; their GPU runs still take the GPU one at a time.
    workers = max(1, min(len(entries), 2 * session.jobs))
    with ThreadPoolExecutor(max_workers=workers, thread_name_prefix="submission") as pool:
        futures = {pool.submit(session.grade, e): e for e in entries}
        for future in as_completed(futures):
            result = future.result()
            with lock:
                done += 1
                base = safe_name(result.name)
                names[base] = names.get(base, 0) + 1
                folder_name = base if names[base] == 1 else f"{base}-{names[base]}"
                write_reports(result, rubric, out / "submissions" / folder_name)
                results.append(result)
                say(_progress_line(done, len(entries), result))
    results.sort(key=lambda r: r.name)
    csvfile.write_grades(results, rubric, out / "grades.csv")
    (out / "class-summary.md").write_text(csvfile.class_summary(results, rubric), encoding="utf-8")
    return results


def grade_batch(args: argparse.Namespace, rubric: Rubric, layout: Layout, options: Options,
                log: Callable[[str], None]) -> int:
    folder: Path = args.folder
    if not folder.is_dir():
        print(f"grader: {folder} is not a folder", file=sys.stderr)
        return 2
    entries, skipped = find_submissions(folder)
    for s in skipped:
        print(f"skipped {s}", file=sys.stderr)
    out: Path = args.out or Path("grader-out") / "batch"
    with Session(rubric, layout, options, log) as session:
        print(f"grading {len(entries)} submission(s) from {folder}: seed {session.seed}, backend "
              f"{session.backend}, {session.jobs} parallel jobs", flush=True)
        run_batch(session, entries, out, lambda line: print(line, flush=True))
    print()
    print((out / "class-summary.md").read_text(encoding="utf-8"))
    print(f"grades: {out / 'grades.csv'}; class summary: {out / 'class-summary.md'}; "
          f"reports: {out / 'submissions'}/")
    return 0


__all__ = ["grade_one", "grade_batch", "run_batch", "write_reports", "find_submissions",
           "submission_name"]
