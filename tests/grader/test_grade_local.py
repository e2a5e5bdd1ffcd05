"""`scanlab grade` (the handout's `make grade-local`) against the grader: the same
visible cases pass and fail, and the points it prints are the grader's where the hidden
cases cannot move them, and bound them otherwise. On the CPU emulator (skipped, never
passed, where it cannot be built)."""
from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest

from conftest import REPO, cache_dir, compose, students_own_builds
from grader.machine import detect as machines
from grader.grading.build import Layout
from grader.grading.pipeline import grade
from grader.config.rubric import load_rubric
from grader.grading.session import Options, Session

# The seed whose case seeds harness/generated/grading.h holds: with it the grader runs the very
# inputs `scanlab grade` runs.
from make_handout import LOCAL_GRADE_SEED  # noqa: E402  (tools/make_handout.py)


@pytest.fixture(scope="module")
def real_rubric_session(tmp_path_factory: pytest.TempPathFactory):
    """A grading session with data/rubric.toml itself (what grading.h is made from),
    its emulator builds unoptimized to save time."""
    if not machines.detect(check_boost=True).can_build_emulator:
        pytest.skip("the CPU emulator cannot be built here")
    folder = tmp_path_factory.mktemp("rubric")
    rubric_file = folder / "rubric.toml"
    rubric_file.write_text(f'base = "{REPO / "data" / "rubric.toml"}"\n\n[emulator]\nbuild_type = ""\n')
    options = Options(backend="emulator", cache_dir=cache_dir(), seed=LOCAL_GRADE_SEED, perf=False)
    session = Session(load_rubric(rubric_file), Layout(REPO), options, log=lambda line: None)
    session.prepare()
    yield session
    session.close()


def local_grade(session: Session, submission: Path, tmp: Path) -> tuple[dict[int, dict], str]:
    """The submission's files built together (as in the student's own build), then
    `grade --json`: one object per task, and what it printed."""
    files = dict(session.builder.reference_files)
    for name in list(files):
        # student/<name> first: a copy of the whole handout has
        # harness/isolation/*/student/<name> too.
        found = sorted(submission.rglob(name), key=lambda p: p.parent.name != "student")
        if found:
            files[name] = found[0].read_bytes()
    with students_own_builds(session.builder) as builder:   # make grade-local's: placeholders run
        build = builder.build(f"local grade of {submission.name}", files, {}, {})
    assert build.ok and build.binary is not None, (build.errors, [str(v) for v in build.violations])
    out = tmp / f"{submission.name}.jsonl"
    # --student: the submission's files, for the grader's rule on placeholders (make
    # grade-local passes the handout folder).
    run = subprocess.run([str(build.binary), "grade", "--student", str(submission), "--json", str(out)],
                         capture_output=True, text=True, timeout=900)
    return {j["task"]: j for j in map(json.loads, out.read_text().splitlines())}, run.stdout


@pytest.mark.parametrize("fixture", ["handout", "reference", "large_scan_bug"])
def test_local_grade_agrees_with_the_grader(real_rubric_session, fixture, tmp_path):
    submission = compose(fixture, tmp_path / "submissions")
    graded = grade(real_rubric_session, submission)
    local, printed = local_grade(real_rubric_session, submission, tmp_path)
    assert sorted(local) == [t.number for t in graded.tasks]
    for task in graded.tasks:
        mine = local[task.number]
        if task.verdict == "not_attempted":
            # A bonus left as the handout's (or left out): the grader runs none of its
            # cases, the harness runs the placeholder's; neither gives it a point.
            assert task.correctness_points == 0 and not task.cases, task.name
            continue
        visible = [c for c in task.cases if not c.case.hidden]
        hidden = [c for c in task.cases if c.case.hidden]
        # The same visible cases (same inputs: the same seed), the boundary family included.
        assert mine["cases"] == len(visible), task.name
        assert mine["hidden_cases"] == len(hidden), task.name
        assert mine["correctness_max"] == task.correctness_max
        if task.placeholder:
            # Still the handout's placeholder: the grader and the local grade both give 0 (in
            # the grade it does no work; in the student's own build it runs and passes).
            assert task.correctness_points == 0 and mine["correctness"] == 0, task.name
            assert mine["placeholder"] and mine["correctness_high"] == 0, task.name
            assert "still the handout's placeholder: the grader gives 0" in printed
            continue
        # ... with the same outcome.
        assert mine["passed"] == sum(c.passed for c in visible), task.name
        # The grader's points lie in the range printed for the hidden cases ...
        assert mine["correctness_low"] - 1e-9 <= task.correctness_points <= mine["correctness_high"] + 1e-9
        # ... and are the printed points when the hidden cases go as the visible ones.
        if all(c.passed for c in task.cases) or not any(c.passed for c in task.cases):
            assert mine["correctness"] == pytest.approx(task.correctness_points), task.name
    if fixture == "handout":
        assert local[3]["not_implemented"] and local[3]["correctness"] == 0
        # Task 1's placeholder passes every case, and earns the grader's 0.
        assert local[1]["passed"] == local[1]["cases"] > 0 and local[1]["correctness"] == 0
    if fixture == "large_scan_bug":
        assert 0 < local[3]["passed"] < local[3]["cases"]


@pytest.mark.parametrize("fixture,fails", [("reference", False), ("large_scan_bug", True)])
def test_local_grade_draws_random_configurations(real_rubric_session, fixture, fails, tmp_path):
    """`grade --random N` (make grade-local ARGS="--random N"): N configurations a task over
    the legal space, each failure with its `run` command; a seed repeats them."""
    submission = compose(fixture, tmp_path / "submissions")
    files = dict(real_rubric_session.builder.reference_files)
    files["scan.cuh"] = (submission / "student" / "scan.cuh").read_bytes()
    build = real_rubric_session.builder.build(f"random {fixture}", files, {}, {})
    assert build.ok and build.binary is not None
    argv = [str(build.binary), "grade", "--tasks", "scan", "--random", "12", "--random-seed", "3",
            "--random-max-n", "20000", "--no-isolation"]
    run = subprocess.run(argv, capture_output=True, text=True, timeout=900)
    assert "--random-seed 3 repeats them" in run.stdout
    assert ("FAIL random: " in run.stdout) == fails, run.stdout[-3000:]
    assert ("reproduce: " in run.stdout) == fails
    assert (run.returncode != 0) == fails
    if fails:
        again = subprocess.run(argv, capture_output=True, text=True, timeout=900)
        first = [line for line in run.stdout.splitlines() if line.startswith("FAIL random")]
        assert first == [line for line in again.stdout.splitlines() if line.startswith("FAIL random")]
