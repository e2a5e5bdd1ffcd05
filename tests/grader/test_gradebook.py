"""The round trip to the gradebook: a Gradescope-style export of five fixture
submissions graded by `batch` into grades.csv, gradescope-scores.csv and
canvas-grades.csv, each re-read with the csv module; and a batch killed after two
submissions that resumes and ends with the same grades as one never interrupted."""
from __future__ import annotations

import csv
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from conftest import REPO, TEST_RUBRIC, TEST_SEED, cache_dir, reference_score
from fixtures import EXPORT_OF_FIVE, compose_gradescope_export
from grader.classroom.batch import find_submissions, read_identities, run_batch
from grader.report import gradebook

EXPORT = EXPORT_OF_FIVE


def gradescope_export(dest: Path, parts: Path) -> Path:
    compose_gradescope_export(dest, parts)
    return dest


def _numeric_columns(rubric) -> list[str]:
    return [c for c in gradebook.columns(rubric) if c not in gradebook.WORDS]


def check_gradebook_files(out: Path, rubric) -> dict[str, dict[str, str]]:
    """Re-reads the three files; checks their types and totals. Returns grades.csv by SID."""
    plain = list(csv.DictReader((out / gradebook.PLAIN).open(newline="")))
    assert len(plain) == 6                                 # the pair has a row each
    for row in plain:
        for col in _numeric_columns(rubric):
            if row[col] != "":
                float(row[col])                            # a number, or empty
        for t in rubric.tasks:
            assert row[f"task{t.number}_passed"].isdigit() and row[f"task{t.number}_total"].isdigit()
            assert int(row[f"task{t.number}_passed"]) <= int(row[f"task{t.number}_total"])
        tasks = sum(float(row[f"task{t.number}_correctness"]) for t in rubric.tasks)
        assert float(row["correctness"]) == pytest.approx(tasks, abs=0.011)
        assert float(row["score"]) == pytest.approx(float(row["correctness"]), abs=0.011)
        assert row["performance"] == "" and row["performance_measured"] == "0"
        assert row["name"] and row["sid"] and row["email"] and row["submission_id"]
        assert not any("/" in row[c] for c in _numeric_columns(rubric))  # nothing a date
    by_sid = {row["sid"]: row for row in plain}
    assert set(by_sid) == {sid for _, _, people in EXPORT for _, sid, _ in people}

    with (out / gradebook.GRADESCOPE).open(newline="") as f:
        gs = list(csv.reader(f))
    # Gradescope's four columns, then the score before the late penalty and the lateness
    # (no penalty in this rubric: the same score).
    assert gs[0] == ["Name", "SID", "Email", "Total Score", "Score Before Late Penalty", "Late"]
    assert len(gs) == 7
    for name, sid, email, total, raw, late in gs[1:]:
        assert by_sid[sid]["name"] == name and by_sid[sid]["email"] == email
        assert float(total) == pytest.approx(float(by_sid[sid]["score"])) == float(raw)
        assert (late != "") == (by_sid[sid]["late"] == "1")

    with (out / gradebook.CANVAS).open(newline="") as f:
        canvas = list(csv.reader(f))
    assert canvas[0] == ["Student", "ID", "SIS User ID", "SIS Login ID", "Section", rubric.gradebook.assignment]
    assert canvas[1][0] == "Points Possible" and float(canvas[1][5]) == rubric.max_correctness
    assert len(canvas) == 8
    for student, _, sis_id, login, _, score in canvas[2:]:
        assert by_sid[sis_id]["name"] == student and login == by_sid[sis_id]["email"]
        assert float(score) == pytest.approx(float(by_sid[sis_id]["score"]))
    return by_sid


def test_a_gradescope_export_reaches_three_gradebooks(emu_session, tmp_path):
    export = gradescope_export(tmp_path / "export", tmp_path / "parts")
    folder = export / "assignment_4242_export"
    entries, skipped = find_submissions(folder)
    assert len(entries) == 5 and not skipped              # the metadata file is not "skipped"
    who = read_identities(folder, entries, None, "2026-11-22T00:00:00Z")
    out = tmp_path / "out"
    lines: list[str] = []
    run_batch(emu_session, entries, out, lines.append, who)
    by_sid = check_gradebook_files(out, emu_session.rubric)
    assert float(by_sid["1815"]["score"]) == reference_score(emu_session.rubric)   # with the bonus
    assert float(by_sid["1906"]["score"]) == float(by_sid["1912"]["score"]) == 0  # untouched handout
    assert by_sid["1906"]["task1_placeholder"] == "1" and by_sid["1906"]["submission_id"] == "9002"
    assert by_sid["1815"]["late"] == "0" and by_sid["1938"]["late"] == "1"
    assert by_sid["1815"]["submitted_at"] == "2026-11-20T12:00:00+00:00"
    summary = (out / "class-summary.md").read_text()
    assert "| submission_9002 | Grace Hopper, Alan Turing | 0.00 |" in summary


def _rows_without_timing(path: Path) -> list[dict[str, str]]:
    rows = list(csv.DictReader(path.open(newline="")))
    for row in rows:
        row.pop("seconds")
    return rows


def _distinct_submissions(path: Path) -> int:
    try:
        return len({row["submission"] for row in csv.DictReader(path.open(newline=""))
                    if row.get("comment") is not None})
    except (OSError, csv.Error, KeyError):
        return 0


@pytest.mark.usefixtures("emu_session")   # skips where the emulator cannot build
def test_an_interrupted_batch_resumes_to_the_same_grades(emu_session, tmp_path):
    export = gradescope_export(tmp_path / "export", tmp_path / "parts")
    folder = export / "assignment_4242_export"
    # Uninterrupted: the same export, seed and rubric in this process.
    entries, _ = find_submissions(folder)
    whole = tmp_path / "whole"
    run_batch(emu_session, entries, whole, lambda line: None, read_identities(folder, entries, None, None))

    out = tmp_path / "out"
    cmd = [sys.executable, "-m", "grader", "batch", str(export), "--backend", "emulator",
           "--rubric", str(TEST_RUBRIC), "--cache", str(cache_dir()), "--out", str(out), "-q"]
    env = {**os.environ, "PYTHONPATH": str(REPO)}
    proc = subprocess.Popen(cmd + ["--seed", str(TEST_SEED)], cwd=REPO, env=env, start_new_session=True,
                            stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    deadline = time.monotonic() + 900
    try:
        while _distinct_submissions(out / "grades.csv") < 2:
            assert proc.poll() is None, f"the batch ended before it could be interrupted:\n{proc.stdout.read()}"
            assert time.monotonic() < deadline, "no two submissions graded in 15 minutes"
            time.sleep(0.5)
    finally:
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGKILL)
        proc.wait()
    killed_at = _distinct_submissions(out / "grades.csv")
    assert 2 <= killed_at < 5, "the batch was not interrupted midway"
    assert not (out / gradebook.GRADESCOPE).exists()       # written only at the end

    r = subprocess.run(cmd + ["--resume"], cwd=REPO, env=env, capture_output=True, text=True, timeout=1200)
    assert r.returncode == 0, r.stdout + r.stderr
    assert f"resuming: {killed_at} of 5 submission(s) already graded with seed {TEST_SEED}" in r.stdout
    assert _rows_without_timing(out / "grades.csv") == _rows_without_timing(whole / "grades.csv")
    for name in (gradebook.GRADESCOPE, gradebook.CANVAS):
        assert (out / name).read_text() == (whole / name).read_text(), name
    check_gradebook_files(out, emu_session.rubric)

    # Resuming a finished batch grades nothing again.
    again = subprocess.run(cmd + ["--resume"], cwd=REPO, env=env, capture_output=True, text=True,
                           timeout=600)
    assert "resuming: 5 of 5" in again.stdout and "grading 0" in again.stdout


def test_resume_without_a_batch_and_a_missing_submission_exit_2(tmp_path):
    env = {**os.environ, "PYTHONPATH": str(REPO)}
    (tmp_path / "class").mkdir()
    r = subprocess.run([sys.executable, "-m", "grader", "batch", str(tmp_path / "class"), "--resume",
                        "--out", str(tmp_path / "nothing")], cwd=REPO, env=env, capture_output=True,
                       text=True, timeout=120)
    assert r.returncode == 2 and "no batch to resume" in r.stderr
    r = subprocess.run([sys.executable, "-m", "grader", "grade", str(tmp_path / "nonexistent"),
                        "--out", str(tmp_path / "report")], cwd=REPO, env=env, capture_output=True,
                       text=True, timeout=120)
    assert r.returncode == 2 and "no such file or folder" in r.stderr
    assert not (tmp_path / "report").exists()
