"""A regrade request (issue 59 item 7): `grade SUBMISSION --class OUT --regrade REASON`
replaces the class's grade of that submission and keeps what it replaces: the earlier
reports, the submission as handed in, the old score and the reason."""
from __future__ import annotations

import csv
import json
from pathlib import Path

import pytest

from grader import cli
from grader.classroom.batch import BatchState
from grader.classroom import regrade
from grader.report import jsonfile
from grader.results import MachineInfo, SubmissionResult, TaskResult


def graded(name: str, score: float, digest: str) -> SubmissionResult:
    task = TaskResult(number=2, name="reduce", title="reduce", file="reduce.cuh", digest=digest)
    return SubmissionResult(name=name, origin=name, kind="folder", seed=7, machine=MachineInfo("emulator"),
                            graded_at="2026-11-28T10:00:00+00:00", grader_version="test", rubric="r.toml",
                            tasks=[task], score=score, max_score=60.0)


def a_class(out: Path) -> Path:
    """A graded class of two, as a batch leaves it: a report folder each with results.json."""
    for name, score in (("alice", 41.0), ("bob", 60.0)):
        folder = out / "submissions" / name
        folder.mkdir(parents=True)
        jsonfile.write(graded(name, score, "old"), folder / "results.json")
        (folder / "summary.md").write_text(f"{name}: {score}\n")
    return out


def test_a_regrade_keeps_the_earlier_grade_the_submission_and_the_reason(tmp_path):
    out = a_class(tmp_path / "out")
    submission = tmp_path / "alice"
    submission.mkdir()
    (submission / "reduce.cuh").write_text("// the file as handed in for the regrade\n")
    request = regrade.Request.start(out, "alice", submission, "task 2 timed out under load")
    earlier, record = request.earlier, request.record
    assert earlier.folder == out / "submissions" / "alice" and earlier.result.score == 41.0
    new = request.finish(graded("alice", 52.5, "new"))
    assert "41.00 before, 52.50 now" in request.words(new, "scanlab-grade")
    # The earlier reports and the submission, where nothing overwrites them.
    assert (record / "previous-reports" / "summary.md").read_text() == "alice: 41.0\n"
    assert jsonfile.read(record / "previous-reports" / "results.json").score == 41.0
    assert (record / "submission" / "reduce.cuh").read_text().startswith("// the file as handed in")
    # The new result's history holds the old score and the reason; it survives a round trip.
    path = tmp_path / "results.json"
    jsonfile.write(new, path)
    past = jsonfile.read(path).history
    assert [(p.score, p.reason, p.kept_in) for p in past] == \
        [(41.0, "task 2 timed out under load", str(record.relative_to(out)))]
    # One line a request in OUT/regrades.csv, and the request beside the record.
    rows = list(csv.DictReader((out / regrade.LOG_FILE).open()))
    assert [(r["submission"], r["old_score"], r["new_score"], r["files_changed"]) for r in rows] == \
        [("alice", "41", "52.5", "reduce.cuh")]
    assert json.loads((record / "request.json").read_text())["reason"] == "task 2 timed out under load"


def test_a_regrade_of_a_submission_the_class_does_not_have_is_refused(tmp_path):
    out = a_class(tmp_path / "out")
    with pytest.raises(regrade.RegradeError, match="no graded submission named 'carol'"):
        regrade.earlier_grade(out, "carol")


def test_regrade_needs_a_class_and_a_graded_submission(tmp_path, capsys):
    submission = tmp_path / "carol"
    submission.mkdir()
    assert cli.main(["grade", str(submission), "--regrade", "why"]) == 2
    assert "--regrade needs --class" in capsys.readouterr().err
    out = a_class(tmp_path / "out")
    BatchState(7, "", "emulator", draw_seed=11).write(out)
    code = cli.main(["grade", str(submission), "--class", str(out), "--regrade", "why"])
    err = capsys.readouterr().err
    assert code == 2 and "no graded submission named 'carol'" in err, err
    assert not (out / regrade.FOLDER).exists()      # nothing kept, nothing graded
