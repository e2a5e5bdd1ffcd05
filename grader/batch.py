"""`batch`: a class folder graded with one session: a report folder per submission,
progress lines, grades.csv and the class summary."""
from __future__ import annotations

import argparse
import sys
import threading
from concurrent.futures import ThreadPoolExecutor, as_completed
from pathlib import Path
from typing import Callable

from grader.build import Layout
from grader.collect import is_archive, submission_name
from grader.grade import grade
from grader.report import csvfile
from grader.report.folder import safe_name, write_reports
from grader.session import Options, Session
from grader.results import SubmissionResult
from grader.rubric import Rubric

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
        futures = {pool.submit(grade, session, e): e for e in entries}
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


__all__ = ["grade_batch", "run_batch", "find_submissions", "submission_name"]
