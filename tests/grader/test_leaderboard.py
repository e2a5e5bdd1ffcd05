"""The class leaderboard (grader/report/leaderboard.py) and the bonus in the reports."""
from __future__ import annotations

import csv
import dataclasses
import json

from conftest import REPO
from grader.classroom.batch import LEADERBOARD_FILE, finish_batch
from grader.report import gradescope, leaderboard, terminal
from grader.results import MachineInfo, PerfResult, SubmissionResult, TaskResult
from grader.config.rubric import PerfCase, load_rubric

RUBRIC = load_rubric(REPO / "data" / "rubric.toml")
COPY = 3000.0


def graded(name: str, scan_ms: float | None, lookback_ms: float | None, bonus: float = 0.0) -> SubmissionResult:
    """A measured grade: tasks 3 and 4 timed at 2^26 add-i32 (8 bytes an element moved),
    the reference taking 0.3 ms and 0.25 ms; None: the task did not pass."""
    tasks = []
    for t in RUBRIC.tasks:
        tr = TaskResult(t.number, t.name, t.title, t.file, correctness_max=t.correctness_points,
                        performance_max=t.performance_points)
        ms = {"scan": scan_ms, "lookback-scan": lookback_ms}.get(t.name)
        reference = {"scan": 0.3, "lookback-scan": 0.25}.get(t.name)
        if ms is not None and reference is not None:
            tr.perf = [PerfResult(PerfCase(t.name, "add-i32", 1 << 26, 256), "measured",
                                  reference_ms=reference, student_ms=ms,
                                  gbps=8 * (1 << 26) / (ms * 1e6), copy_gbps=COPY,
                                  baselines={"cub": 0.22} if t.name == "lookback-scan" else {})]
            tr.perf_status = "measured"
        tasks.append(tr)
    r = SubmissionResult(name=name, origin=name, kind="folder", seed=1,
                         machine=MachineInfo("cuda", "NVIDIA H100", "9.0", COPY), graded_at="",
                         grader_version="1", rubric="data/rubric.toml", tasks=tasks)
    r.score, r.max_score, r.bonus_score = 90.0 + bonus, 100.0, bonus
    r.performance_score = 30.0
    return r


CLASS = [graded("slow", 0.6, None), graded("fast", 0.28, 0.2, bonus=15.0), graded("mid", 0.35, 0.5, bonus=8.0),
         graded("broken", None, None)]


def test_rows_rank_by_gbps_with_the_reference_and_copy_as_markers():
    rows = leaderboard.rows(CLASS, "scan")
    assert [r.label for r in rows] == ["device-to-device copy", "fast", "reference", "mid", "slow"]
    assert [r.marker for r in rows] == [True, False, True, False, False]
    reference = next(r for r in rows if r.label == "reference")
    assert abs(reference.gbps - 8 * (1 << 26) / 0.3e6) < 0.01    # from the reference's own time
    assert abs(next(r for r in rows if r.label == "fast").slowdown - 0.28 / 0.3) < 1e-9
    # A submission whose task was not measured (it failed) is not ranked.
    assert "broken" not in [r.label for r in rows]
    bonus_rows = leaderboard.rows(CLASS, "lookback-scan")
    assert [r.label for r in bonus_rows if not r.marker] == ["fast", "mid"]
    # Task 4 times CUB as a baseline: its row sits between "fast" (0.2 ms) and the
    # reference (0.25 ms); task 3 has none.
    assert [r.label for r in bonus_rows] == ["device-to-device copy", "fast", "cub::DeviceScan",
                                             "reference", "mid"]
    assert "cub::DeviceScan" not in [r.label for r in rows]


def test_the_csv_ranks_every_task_of_the_rubric(tmp_path):
    path = tmp_path / "leaderboard.csv"
    leaderboard.write_csv(CLASS, RUBRIC, path)
    rows = list(csv.DictReader(path.open()))
    assert {r["task"] for r in rows} == set(RUBRIC.leaderboard.tasks) == {"scan", "lookback-scan"}
    scan = [r for r in rows if r["task"] == "scan"]
    assert [(r["rank"], r["submission"]) for r in scan] == [
        ("", "device-to-device copy"), ("1", "fast"), ("", "reference"), ("2", "mid"), ("3", "slow")]
    assert float(next(r for r in scan if r["submission"] == "fast")["gbps"]) > 1900


def test_gradescope_gets_the_leaderboard_only_where_the_rubric_shows_it(tmp_path):
    fast = CLASS[1]
    assert leaderboard.entries(fast, RUBRIC) == []            # show = false: students see nothing
    assert "leaderboard" not in gradescope.document(fast, leaderboard=leaderboard.entries(fast, RUBRIC))
    shown = dataclasses.replace(RUBRIC, leaderboard=dataclasses.replace(RUBRIC.leaderboard, show=True))
    for r in CLASS:
        doc = gradescope.document(r, leaderboard=leaderboard.entries(r, shown))
        board = json.loads(json.dumps(doc))["leaderboard"]
        # Gradescope's documented format: a list of {name, value[, order]}, order asc or desc.
        assert isinstance(board, list) and len(board) == 2
        for entry in board:
            assert set(entry) <= {"name", "value", "order"} and isinstance(entry["name"], str)
            assert isinstance(entry["value"], (int, float, str)) and entry["order"] in ("asc", "desc")
        names = [e["name"] for e in board]
        assert names == ["Task 3 scan GB/s", "Task 4 lookback-scan GB/s"]
    values = {r.name: [e["value"] for e in leaderboard.entries(r, shown)] for r in CLASS}
    assert values["broken"] == [0.0, 0.0] and values["fast"][1] > values["mid"][1] > 0


def test_a_batch_writes_the_leaderboard_and_its_section(tmp_path):
    results = finish_batch(list(CLASS), RUBRIC, [tmp_path / r.name for r in CLASS], tmp_path)
    assert len(results) == 4
    assert (tmp_path / LEADERBOARD_FILE).is_file()
    summary = (tmp_path / "class-summary.md").read_text()
    section = summary[summary.index("## Leaderboard"):]
    assert "students do not see it" in section
    assert section.index("| 1 | fast |") < section.index("| *reference* |") < section.index("| 2 | mid |")
    assert "### Task 4: bonus" in section
    # The bonus is a column of grades.csv.
    grades = {r["submission"]: r for r in csv.DictReader((tmp_path / "grades.csv").open())}
    assert float(grades["fast"]["bonus"]) == 15.0 and float(grades["slow"]["bonus"]) == 0.0


def test_the_score_line_says_how_much_is_bonus():
    text = terminal.render(CLASS[1])
    assert "105.00 / 100 (15.00 of it bonus)" in text
    assert "of it bonus" not in terminal.render(CLASS[0])
