"""The command line, as instructors use it: grade, batch, doctor, gradescope-zip."""
from __future__ import annotations

import csv
import json
import os
import shutil
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

from conftest import REPO, TEST_RUBRIC, cache_dir, compose
from grader.config.rubric import Rubric, load_rubric


def emulator_grade_of_the_reference(rubric: Rubric) -> tuple[float, float]:
    """What the reference earns where performance is not measured: every task's correctness
    points, the bonus tasks' on top of the maximum; and of it, the bonus."""
    bonus = sum(t.correctness_points for t in rubric.tasks if t.bonus)
    return rubric.max_correctness + bonus, bonus


def grader(*args: str, cwd: Path | None = None, timeout: float = 900) -> subprocess.CompletedProcess:
    env = {**os.environ, "PYTHONPATH": str(REPO)}
    return subprocess.run([sys.executable, "-m", "grader", *args], cwd=cwd or REPO, env=env,
                          capture_output=True, text=True, timeout=timeout)


@pytest.mark.task_list
def test_help_and_version():
    r = grader("--help")
    assert r.returncode == 0 and "grade SUBMISSION" in r.stdout and "doctor" in r.stdout
    assert grader("--version").stdout.startswith("scanlab grader")


@pytest.mark.task_list
def test_every_command_and_argument_is_described_and_every_exit_status_documented():
    import argparse
    from grader import cli
    from grader import exits
    parser = cli.build_parser()
    commands = next(a for a in parser._actions if isinstance(a, argparse._SubParsersAction))
    helped = {c.dest for c in commands._choices_actions if c.help}
    assert helped == set(commands.choices), set(commands.choices) - helped
    for name, sub in commands.choices.items():
        assert sub.description, f"{name} has no description in --help"
        for action in sub._actions:
            if not isinstance(action, argparse._HelpAction):
                assert action.help, f"{name} {action.option_strings or action.dest}: no help"
    # One table of exit statuses: --help prints it, grader/README.md holds it as generated.
    assert exits.text() in cli.build_parser().format_help()
    assert exits.markdown() in (REPO / "grader" / "README.md").read_text(encoding="utf-8")
    statuses = {status for status, _, _ in exits.TABLE}
    assert statuses == {exits.OK, exits.MISSING, exits.GRADER, exits.INTERRUPTED}


@pytest.mark.task_list
def test_bad_rubric_exits_2(tmp_path):
    bad = tmp_path / "r.toml"
    bad.write_text("[rubric\n")
    r = grader("grade", str(tmp_path), "--rubric", str(bad))
    assert r.returncode == 2 and "not valid TOML" in r.stderr


@pytest.mark.task_list
def test_doctor_speaks_plainly():
    r = grader("doctor", timeout=300)
    assert r.returncode in (0, 1)
    for word in ("GPU", "nvcc", "cmake", "g++", "Boost.Context"):
        assert word in r.stdout
    assert "This machine can" in r.stdout or "cannot grade" in r.stdout


@pytest.mark.task_list
def test_gradescope_zip(tmp_path):
    out = tmp_path / "ag.zip"
    r = grader("gradescope-zip", "--out", str(out))
    assert r.returncode == 0, r.stderr
    with zipfile.ZipFile(out) as z:
        names = set(z.namelist())
        assert {"setup.sh", "run_autograder"} <= names
        for name in ("setup.sh", "run_autograder"):
            assert (z.getinfo(name).external_attr >> 16) & 0o111, f"{name} is not executable"
        assert {"grader/cli.py", "grader/__main__.py", "handout/harness/host/driver.cu",
                "handout/emulator/cuda_emu.h", "solution/student/scan.cuh", "data/rubric.toml",
                "data/cases.toml"} <= names
        assert not any("__pycache__" in n or n.startswith("handout/build/") for n in names)
        # Every module of the grader, in every subfolder (the zip skips build*/ folders).
        modules = {p.relative_to(REPO).as_posix() for p in (REPO / "grader").rglob("*.py")
                   if "__pycache__" not in p.parts}
        assert len(modules) > 40 and modules <= names, sorted(modules - names)
        run = z.read("run_autograder").decode()
        assert "--backend emulator" in run and "/autograder/results/results.json" in run


# Not marked task_list (pyproject.toml): it builds the reference, minutes in a fresh copy.
@pytest.mark.usefixtures("emu_session")   # skips without an emulator; builds the reference
def test_grade_reference_from_the_command_line(tmp_path):
    submission = compose("reference", tmp_path)
    out = tmp_path / "reports"
    gs = tmp_path / "gs" / "results.json"
    r = grader("grade", str(submission), "--backend", "emulator", "--rubric", str(TEST_RUBRIC),
               "--cache", str(cache_dir()), "--seed", "11", "--out", str(out), "--gradescope", str(gs))
    assert r.returncode == 0, r.stderr
    # The reference earns the bonus too: its correctness points on top of the maximum.
    rubric = load_rubric(TEST_RUBRIC)
    score, bonus = emulator_grade_of_the_reference(rubric)
    assert bonus > 0
    assert (f"TOTAL  {score:.2f} / {rubric.max_correctness:g} (correctness; performance, "
            f"{rubric.max_performance:g} points, not measured, {bonus:.2f} of it bonus)") in r.stdout
    assert "seed 11" in r.stdout
    # The printed report (which Gradescope may show students) keeps the drawn cases' seed
    # secret; the instructor's report.txt has it.
    assert "--draw-seed" not in r.stdout and "--draw-seed" in (out / "report.txt").read_text()
    # The one-line note: "No GPU: ..." here, "Emulator backend chosen: ..." on a GPU machine.
    assert "correctness is graded with the CPU emulator; performance is not measured" in r.stdout
    for name in ("results.json", "gradescope-results.json", "junit.xml", "summary.md", "report.txt"):
        assert (out / name).is_file(), name
    assert json.loads(gs.read_text())["score"] == score


@pytest.mark.task_list
def test_batch_from_the_command_line(tmp_path):
    # Submissions that need no build: the CLI's batch plumbing, progress and files.
    folder = tmp_path / "class"
    (folder / "empty").mkdir(parents=True)
    shutil.copy(compose("broken_archive", tmp_path), folder / "broken.zip")
    (folder / "notes.txt").write_text("not a submission")
    out = tmp_path / "out"
    r = grader("batch", str(folder), "--backend", "emulator", "--rubric", str(TEST_RUBRIC),
               "--cache", str(cache_dir()), "--out", str(out), "-q")
    if r.returncode == 2 and "cannot build" in r.stderr:
        pytest.skip(r.stderr)
    assert r.returncode == 0, r.stderr
    assert "[1/2]" in r.stdout and "[2/2]" in r.stdout
    assert "skipped notes.txt" in r.stderr
    rows = list(csv.DictReader((out / "grades.csv").open()))
    assert sorted(row["submission"] for row in rows) == ["broken", "empty"]
    assert all(float(row["score"]) == 0 for row in rows)
    assert "class summary (2 submissions)" in (out / "class-summary.md").read_text()


@pytest.mark.usefixtures("emu_session")   # skips without an emulator (and builds the reference)
def test_gradescope_autograder_runs(tmp_path):
    rubric = load_rubric(REPO / "data" / "rubric.toml")
    zip_says = grader("gradescope-zip", "--out", str(tmp_path / "said.zip")).stdout
    assert f"set the assignment's autograder points to {rubric.max_correctness:g}" in zip_says
    # The zip as Gradescope uses it: unpacked into <root>/source, the submission in
    # <root>/submission, run_autograder writes <root>/results/results.json.
    out = tmp_path / "ag.zip"
    assert grader("gradescope-zip", "--out", str(out)).returncode == 0
    root = tmp_path / "autograder"
    with zipfile.ZipFile(out) as z:
        z.extractall(root / "source")
    for name in ("setup.sh", "run_autograder"):
        (root / "source" / name).chmod(0o755)
    (root / "submission").mkdir()
    for f in (REPO / "solution" / "student").glob("*.cuh"):
        shutil.copy(f, root / "submission" / f.name)
    (root / "submission" / "notes.txt").write_text("ignored")
    # The same folder layout everywhere: /tmp is open to the sandbox user.
    env = {**os.environ, "AUTOGRADER_ROOT": str(root), "SCANLAB_CACHE": str(cache_dir())}
    p = subprocess.run(["bash", str(root / "source" / "run_autograder")], env=env,
                       capture_output=True, text=True, timeout=900)
    assert p.returncode == 0, p.stderr
    data = json.loads((root / "results" / "results.json").read_text())
    score, _ = emulator_grade_of_the_reference(rubric)   # the maximum + the bonus's correctness
    assert data["score"] == score, p.stdout[-2000:] + p.stderr[-2000:]
    # No GPU on Gradescope: said once at the top, and no performance test shown as passed.
    assert f"Performance ({rubric.max_performance:g} points) is not measured here" in data["output"]
    assert not any("performance" in t["name"] for t in data["tests"])
    assert "notes.txt" in json.dumps(data)
