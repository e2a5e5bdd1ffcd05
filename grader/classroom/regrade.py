"""A regrade request: one submission of a graded class graded again as one of the class
(its seed and secret draw), with what it replaces kept (issue 59 item 7): the earlier
reports, the submission as it was handed in for the regrade, the old score and the
reason, in OUT/regrades/<folder>/<time>/ and a line of OUT/regrades.csv. The new grade's
results.json holds the old score in its history."""
from __future__ import annotations

import csv
import dataclasses
import json
import shutil
from dataclasses import dataclass
from datetime import datetime, timezone
from pathlib import Path

from ..report import jsonfile
from ..results import PastScore, SubmissionResult

LOG_FILE = "regrades.csv"
FOLDER = "regrades"
COLUMNS = ("submission", "requested_at", "reason", "old_score", "new_score", "max_score",
           "files_changed", "kept_in")


class RegradeError(Exception):
    """A regrade request that cannot be carried out (said before anything is graded)."""


@dataclass(frozen=True)
class Earlier:
    """The grade a regrade replaces: its report folder and its stored result."""
    folder: Path
    result: SubmissionResult


def earlier_grade(out: Path, name: str) -> Earlier:
    """The class's stored grade of submission `name` (OUT/submissions/*/results.json)."""
    for path in sorted((out / "submissions").glob("*/results.json")):
        try:
            result = jsonfile.read(path)
        except ValueError:
            continue
        if result.name == name:
            return Earlier(path.parent, result)
    raise RegradeError(f"no graded submission named {name!r} in {out / 'submissions'}: "
                       "a regrade replaces a grade of the class (grade it with batch first)")


def keep(out: Path, earlier: Earlier, submission: Path, when: datetime) -> Path:
    """The earlier reports and the submission as handed in now, copied where nothing
    overwrites them: the regrade's record folder."""
    record = out / FOLDER / earlier.folder.name / when.strftime("%Y%m%dT%H%M%SZ")
    record.mkdir(parents=True)
    shutil.copytree(earlier.folder, record / "previous-reports", symlinks=True)
    handed_in = record / "submission"
    if submission.is_dir():
        shutil.copytree(submission, handed_in, symlinks=True)
    else:
        handed_in.mkdir()
        shutil.copy2(submission, handed_in / submission.name, follow_symlinks=False)
    return record


def changed_files(before: SubmissionResult, after: SubmissionResult) -> list[str]:
    """The task files whose content differs between the two grades (their digests)."""
    old = {t.file: t.digest for t in before.tasks}
    return sorted(t.file for t in after.tasks if old.get(t.file, "") != t.digest)


def finish(out: Path, earlier: Earlier, record: Path, result: SubmissionResult, reason: str,
           when: datetime) -> SubmissionResult:
    """The new result with the old score in its history; the request written beside the
    record and as a line of OUT/regrades.csv."""
    old = earlier.result
    at = when.isoformat(timespec="seconds")
    kept_in = str(record.relative_to(out))
    past = PastScore(old.score, old.max_score, old.rubric, old.rubric_digest, at, reason, kept_in)
    new = dataclasses.replace(result, history=[*old.history, past])
    changed = changed_files(old, new)
    row = {"submission": new.name, "requested_at": at, "reason": reason,
           "old_score": f"{old.score:.4g}", "new_score": f"{new.score:.4g}",
           "max_score": f"{new.max_score:g}", "files_changed": " ".join(changed) or "none",
           "kept_in": kept_in}
    (record / "request.json").write_text(json.dumps(row, indent=2) + "\n", encoding="utf-8")
    log = out / LOG_FILE
    fresh = not log.exists()
    with log.open("a", newline="", encoding="utf-8") as f:
        writer = csv.DictWriter(f, fieldnames=COLUMNS)
        if fresh:
            writer.writeheader()
        writer.writerow(row)
    return new


def now() -> datetime:
    return datetime.now(timezone.utc)


@dataclass(frozen=True)
class Request:
    """One regrade request under way: what it replaces is kept before anything is graded."""
    out: Path
    earlier: Earlier
    record: Path
    reason: str
    when: datetime

    @staticmethod
    def start(out: Path, name: str, submission: Path, reason: str) -> Request:
        """The class's grade of `name` found and kept (RegradeError: none to replace)."""
        earlier, when = earlier_grade(out, name), now()
        return Request(out, earlier, keep(out, earlier, submission, when), reason, when)

    def finish(self, result: SubmissionResult) -> SubmissionResult:
        return finish(self.out, self.earlier, self.record, result, self.reason, self.when)

    def words(self, new: SubmissionResult, command: str) -> str:
        return (f"regrade: {self.earlier.result.score:.2f} before, {new.score:.2f} now; the earlier "
                f"grade and the submission kept in {self.record} ({self.out / LOG_FILE}). "
                f"The class's files: {command} rescore CLASS_FOLDER --out {self.out}")
