"""The instructor's term (issue 46), on a Gradescope export of four submissions graded
once on the CPU emulator: a rubric that changes only points, the late policy or the
gradebook's names is rescored from the stored measurements (no build: the grading is
replaced by a function that fails the test), one that changes a timed size grades again;
an interrupted run keeps the complete class files; the late policy and a hang are said
in every view; the Canvas column of a real-shaped gradebook export round-trips; the GPU
half's upload corrects the emulator half's correctness; copydetect missing stops
`--similarity` before grading; Slurm's commands; and the grader installs into a fresh
virtual environment as a user who is not root, without apt."""
from __future__ import annotations

import csv
import dataclasses
import json
import os
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import pytest

from conftest import REPO, TEST_RUBRIC, TEST_SEED, cache_dir, reference_score, task_numbers
from fixtures import compose_gradescope_export
from grader import cli
from grader.classroom import batch as batch_module
from grader.classroom.batch import BatchState, stored_results
from grader.classroom.roster import canvas_assignment_column
from grader.classroom.slurm import Jobs, node_local
from grader.config.rubric import load_rubric
from grader.grading.assemble import rescore
from grader.report import gradebook, jsonfile
from grader.report.class_summary import class_summary

# The reference (Ada, on time), the untouched handout (a pair, 12 h late), a warp scan
# that hangs (1 d 12 h late), and a second copy of the reference (Katherine, 2 d 12 h late).
EXPORT = [("reference", "9001", [("Ada Lovelace", "1815", "ada@example.edu")]),
          ("handout", "9002", [("Grace Hopper", "1906", "grace@example.edu"),
                               ("Alan Turing", "1912", "alan@example.edu")]),
          ("hang", "9003", [("Barbara Liskov", "1939", "barbara@example.edu")])]
COPY = """submission_9006:
  :submitters:
  - :name: Katherine Johnson
    :sid: '1918'
    :email: kj@example.edu
  :created_at: 2026-11-23 12:00:00.000000000 Z
  :score: 0.0
"""
DUE = "2026-11-21T00:00:00Z"   # the export's times are the 20th, 21st, 22nd (and 23rd) at noon


def _rubric(path: Path, extra: str) -> Path:
    path.write_text(f'base = "{TEST_RUBRIC}"\n{extra}')
    return path


# A rubric that changes only points (task 3's correctness: 40), the late policy and the
# gradebook's name; the tasks of data/ beyond the first four keep the base rubric's points.
POINTS_ONLY = """
[[task]]
number = 1
correctness_points = 10
performance_points = 5
[[task.perf]]
task = "warp-scan"
op = "add-i32"
n = "2^26"
block = 256
[[task]]
number = 2
correctness_points = 20
performance_points = 15
[[task.perf]]
task = "reduce"
op = "add-i32"
n = "2^26"
block = 256
[[task]]
number = 3
correctness_points = 40
performance_points = 20
[[task.perf]]
task = "scan"
op = "add-i32"
n = "2^26"
block = 256
[[task]]
number = 4
correctness_points = 5
performance_points = 10
[[task.perf]]
task = "lookback-scan"
op = "add-i32"
n = "2^26"
block = 256

[late]
per = "day"
penalty_percent = 10
cap_percent = 25

[gradebook]
assignment = "scanlab"
"""
BASE = load_rubric(TEST_RUBRIC)
POINTS_ONLY += "".join(
    f"\n[[task]]\nnumber = {t.number}\ncorrectness_points = {t.correctness_points}\n"
    f"performance_points = {t.performance_points}\n"
    + "".join(f'[[task.perf]]\ntask = "{c.task}"\nop = "{c.op}"\nn = {c.n}\nblock = {c.block}\n' for c in t.perf)
    for t in BASE.tasks if t.number > 4)
REF0 = reference_score(BASE)     # the reference's score as graded (no GPU): 60 and the bonus 5 today


@pytest.fixture(scope="module")
def term(emu_session, tmp_path_factory):
    """The export graded once (a subprocess, as an instructor runs it), with --due."""
    tmp = tmp_path_factory.mktemp("term")
    export = compose_gradescope_export(tmp / "export", tmp / "parts", EXPORT)
    shutil.copytree(export / "submission_9001", export / "submission_9006")
    with (export / "submission_metadata.yml").open("a") as metadata:
        metadata.write(COPY)
    out = tmp / "out"
    r = subprocess.run([sys.executable, "-m", "grader", "batch", str(export), "--backend", "emulator",
                        "--rubric", str(TEST_RUBRIC), "--cache", str(cache_dir()), "--out", str(out),
                        "--seed", str(TEST_SEED), "--due", DUE, "-q"],
                       cwd=REPO, env={**os.environ, "PYTHONPATH": str(REPO)}, capture_output=True,
                       text=True, timeout=1500)
    assert r.returncode == 0, r.stdout[-3000:] + r.stderr[-3000:]
    return export, out, tmp


def _no_grading(monkeypatch):
    """Any build or grade from here on fails the test."""
    def refuse(*args, **kwargs):
        raise AssertionError("graded again: the rubric changed only what scores")
    monkeypatch.setattr(batch_module, "grade", refuse)
    monkeypatch.setattr(batch_module.Session, "prepare", refuse)


def _copy(out: Path, tmp: Path, name: str) -> Path:
    dest = tmp / name
    shutil.rmtree(dest, ignore_errors=True)
    shutil.copytree(out, dest)
    return dest


def _rows(path: Path) -> list[dict[str, str]]:
    return list(csv.DictReader(path.open(newline="", encoding="utf-8")))


def _reference_under(rubric: Path) -> tuple[float, float]:
    """The reference's score and the maximum under the rubric at `rubric` (no GPU)."""
    loaded = load_rubric(rubric)
    return reference_score(loaded), loaded.max_correctness


def _results(out: Path) -> dict[str, dict]:
    return {p.parent.name: json.loads(p.read_text()) for p in (out / "submissions").glob("*/results.json")}


def test_a_point_change_is_rescored_without_grading(term, monkeypatch, capsys):
    export, graded, tmp = term
    out = _copy(graded, tmp, "rescored")
    before = _results(out)
    assert before["submission_9001"]["score"] == REF0
    rubric = _rubric(tmp / "points.toml", POINTS_ONLY)
    ref1, max1 = _reference_under(rubric)
    _no_grading(monkeypatch)
    assert cli.main(["rescore", str(export), "--out", str(out), "--rubric", str(rubric)]) == 0
    said = capsys.readouterr()
    assert "changed only in what scores" in said.err and "nothing built or run" in said.out
    after = _results(out)
    assert after["submission_9001"]["score"] == ref1             # task 3 is worth 40 now
    assert after["submission_9001"]["graded_at"] == before["submission_9001"]["graded_at"]
    assert after["submission_9001"]["tasks"][2]["correctness_max"] == 40
    assert "40" in (out / "submissions" / "submission_9001" / "report.txt").read_text()
    assert BatchState.read(out).rubric_digest == load_rubric(rubric).digest
    # The class files say the new points (the late penalty: the next test).
    rows = {r["sid"]: r for r in _rows(out / gradebook.PLAIN)}
    assert float(rows["1815"]["score"]) == ref1 and float(rows["1815"]["max_score"]) == max1


def test_resume_under_a_point_change_grades_nothing(term, monkeypatch, capsys):
    export, graded, tmp = term
    out = _copy(graded, tmp, "resumed")
    rubric = _rubric(tmp / "points.toml", POINTS_ONLY)
    _no_grading(monkeypatch)
    assert cli.main(["batch", str(export), "--resume", "--backend", "emulator", "--rubric", str(rubric),
                     "--cache", str(cache_dir()), "--out", str(out), "-q"]) == 0
    said = capsys.readouterr()
    assert "changed only in what scores" in said.err
    assert "resuming: 4 of 4 submission(s) already graded" in said.out and "4 of them rescored" in said.out
    assert "grading 0" in said.out
    assert _results(out)["submission_9001"]["score"] == _reference_under(rubric)[0]


def test_a_timed_size_change_grades_again_and_an_interrupted_run_keeps_the_class_files(term, monkeypatch, capsys):
    export, graded, tmp = term
    out = _copy(graded, tmp, "regraded")
    rubric = _rubric(tmp / "timed.toml", POINTS_ONLY.replace('n = "2^26"', 'n = "2^24"', 1))
    # rescore refuses, before writing anything, and says why and what to run.
    summary = (out / "class-summary.md").read_bytes()
    assert cli.main(["rescore", str(export), "--out", str(out), "--rubric", str(rubric)]) == 2
    said = capsys.readouterr().err
    assert "changes what is measured (timed sizes)" in said and "--resume" in said
    assert (out / "class-summary.md").read_bytes() == summary
    # A resume grades every submission again: the first grade is interrupted (Ctrl-C), the
    # others finish; the complete class files of the batch before stay whole.
    state = BatchState.read(out)
    entries = sorted(p for p in export.iterdir() if p.is_dir())
    stored = stored_results(entries, out, state, load_rubric(rubric), None)
    kept, todo = stored.kept, stored.todo
    assert not kept and todo == entries
    stored = {p.parent.name: jsonfile.read(p) for p in (out / "submissions").glob("*/results.json")}
    calls: list[str] = []

    def grade_again(session, entry, **kwargs):
        calls.append(entry.name)
        if len(calls) == 1:
            raise KeyboardInterrupt
        return dataclasses.replace(stored[entry.name], measured_digest="regraded")
    monkeypatch.setattr(batch_module, "grade", grade_again)
    monkeypatch.setattr(batch_module.Session, "prepare", lambda self: None)
    status = cli.main(["batch", str(export), "--resume", "--backend", "emulator", "--rubric", str(rubric),
                       "--cache", str(cache_dir()), "--out", str(out), "-j", "1", "-q"])
    said = capsys.readouterr()
    assert "changes what is measured (timed sizes)" in said.err
    assert status == 130 and calls
    assert (out / "class-summary.md").read_bytes() == summary          # whole, untouched
    partial = (out / batch_module.IN_PROGRESS / "class-summary.md").read_text()
    assert "**Interrupted**" in partial and "complete class files of the batch before are kept" in partial


def test_the_late_policy_in_every_output(term, monkeypatch):
    export, graded, tmp = term
    out = _copy(graded, tmp, "late")
    rubric = _rubric(tmp / "points.toml", POINTS_ONLY)
    ref1, max1 = _reference_under(rubric)
    _no_grading(monkeypatch)
    assert cli.main(["rescore", str(export), "--out", str(out), "--rubric", str(rubric)]) == 0
    rows = {r["sid"]: r for r in _rows(out / gradebook.PLAIN)}
    assert rows["1815"]["late"] == "0" and rows["1815"]["late_penalty"] == "0.00"
    kj = rows["1918"]             # the reference, 2 d 12 h late: three days, 30%, capped at 25% of the maximum
    late = ref1 - 0.25 * max1
    assert kj["late"] == "1" and float(kj["late_hours"]) == 60
    assert float(kj["score"]) == ref1 and float(kj["late_penalty"]) == 0.25 * max1
    assert float(kj["score_after_late"]) == late
    bl = rows["1939"]             # 1 d 12 h: two days, 20% of the maximum
    assert float(bl["score_after_late"]) == pytest.approx(max(0.0, float(bl["score"]) - 0.2 * max1), abs=0.011)
    assert "late by 12 h 00 min" in rows["1906"]["comment"] and float(rows["1906"]["score_after_late"]) == 0
    gs = {r["SID"]: r for r in _rows(out / gradebook.GRADESCOPE)}
    assert float(gs["1918"]["Total Score"]) == late and float(gs["1918"]["Score Before Late Penalty"]) == ref1
    assert "late by 2 d 12 h" in gs["1918"]["Late"] and gs["1815"]["Late"] == ""
    with (out / gradebook.CANVAS).open(newline="") as f:
        canvas = {row[2]: row for row in csv.reader(f)}
    assert float(canvas["1918"][5]) == late and float(canvas["1815"][5]) == ref1
    summary = (out / "class-summary.md").read_text()
    assert "## Late (3)" in summary
    assert "Katherine Johnson (submission_9006): late by 2 d 12 h (-25% late penalty)" in summary
    assert "Grace Hopper, Alan Turing (submission_9002): late by 12 h 00 min (-10% late penalty)" in summary
    assert "late by 2 d 12 h" in (out / "class.html").read_text()
    report = (out / "submissions" / "submission_9006" / "report.txt").read_text()
    assert report.endswith(f"Late work: late by 2 d 12 h (-25% late penalty); score after it {late:.2f} / {max1:g}\n")


def test_a_hang_is_timed_out_in_every_view(term):
    _, out, _ = term
    rows = {r["sid"]: r for r in _rows(out / gradebook.PLAIN)}
    assert re.search(r"task 1: timed out \(\d+ cases? past the time limit", rows["1939"]["comment"])
    assert "cases fail" not in rows["1939"]["comment"].split(";")[0]
    summary = (out / "class-summary.md").read_text()
    assert "| timed out |" in summary and "task 1: timed out" in summary
    assert "task 1: timed out" in (out / "class.html").read_text()
    folder = out / "submissions" / "submission_9003"
    tests = json.loads((folder / "gradescope-results.json").read_text())["tests"]
    assert re.match(r"Timed out \(\d+ cases? past the time limit", tests[0]["output"].splitlines()[0])
    report = (folder / "report.txt").read_text()
    task1 = report[report.index("failures"):]
    assert task1.splitlines()[1].strip().startswith("TIMEOUT")     # first, before the NOT RUN ones
    assert json.loads((folder / "results.json").read_text())["tasks"][0]["status"] == "graded"


CANVAS_EXPORT = """Student,ID,SIS User ID,SIS Login ID,Section,HW2: histogram (55400),HW3: scanlab (55501),Current Score,Unposted Current Score,Final Score
    Points Possible,,,,,100.00,100.00,(read only),(read only),(read only)
"Lovelace, Ada",201,1815,ada,CS 149 A,90.00,,90.00,90.00,45.00
"Johnson, Katherine",202,1918,kj,CS 149 A,80.00,,80.00,80.00,40.00
"Hopper, Grace",203,1906,grace,CS 149 B,70.00,,70.00,70.00,35.00
"Turing, Alan",204,1912,alan,CS 149 B,70.00,,70.00,70.00,35.00
"Liskov, Barbara",205,1939,barbara,CS 149 B,60.00,,60.00,60.00,30.00
"Student, Test",999,,,CS 149 A,,,,,
"""


def test_the_canvas_upload_fills_the_gradebook_exports_own_column(term, monkeypatch, capsys):
    export, graded, tmp = term
    out = _copy(graded, tmp, "canvas")
    roster = tmp / "canvas-export.csv"
    roster.write_text(CANVAS_EXPORT)
    rubric = _rubric(tmp / "points.toml", POINTS_ONLY)
    ref1, max1 = _reference_under(rubric)
    _no_grading(monkeypatch)
    assert cli.main(["rescore", str(export), "--out", str(out), "--rubric", str(rubric),
                     "--roster", str(roster)]) == 0
    capsys.readouterr()
    with (out / gradebook.CANVAS).open(newline="") as f:
        rows = list(csv.reader(f))
    assert rows[0] == ["Student", "ID", "SIS User ID", "SIS Login ID", "Section", "HW3: scanlab (55501)"]
    assert rows[1][0] == "Points Possible" and float(rows[1][5]) == max1
    by_id = {r[1]: r for r in rows[2:]}
    assert set(by_id) == {"201", "202", "203", "204", "205"}        # Canvas's ids; no test student
    assert float(by_id["201"][5]) == ref1 and float(by_id["202"][5]) == ref1 - 0.25 * max1
    assert by_id["201"][3] == "ada"
    # No column named like the rubric's: the rubric's name, said as a new assignment.
    assert canvas_assignment_column(roster, "scanlab") == ("HW3: scanlab (55501)",
                                                           ["HW2: histogram (55400)", "HW3: scanlab (55501)"])
    assert canvas_assignment_column(roster, "reduce lab")[0] == ""
    only_other = tmp / "other.csv"
    only_other.write_text(CANVAS_EXPORT.replace("HW3: scanlab (55501)", "HW4: sort (55600)"))
    assert canvas_assignment_column(only_other, "scanlab")[0] == ""   # never another assignment's


def test_the_gpu_half_corrects_a_task_the_gpu_shows_wrong(term):
    """A GPU grade whose task 3 fails (right on the emulator: Gradescope's autograder gave
    the reference's full score) loses task 3's correctness points in the performance upload."""
    _, out, tmp = term
    rubric = load_rubric(_rubric(tmp / "gpu.toml", '[gradebook]\nscore = "performance"\n'))
    emulator = jsonfile.read(out / "submissions" / "submission_9001" / "results.json")
    assert emulator.identity.autograder_score == 0.0     # the fixture export's metadata says 0.0
    task3 = emulator.tasks[2]
    wrong = [dataclasses.replace(c, status="fail") for c in task3.cases]
    gpu = rescore(dataclasses.replace(emulator, tasks=[*emulator.tasks[:2], dataclasses.replace(task3, cases=wrong),
                                                       *emulator.tasks[3:]]), rubric)
    lost = task3.correctness_max
    gpu = dataclasses.replace(gpu, performance_score=40.0,
                              identity=dataclasses.replace(emulator.identity, autograder_score=REF0))
    assert lost > 0 and gpu.correctness_score == REF0 - lost
    right = dataclasses.replace(emulator, performance_score=40.0,
                                identity=dataclasses.replace(emulator.identity, autograder_score=REF0,
                                                             students=emulator.identity.students[:0] + (
                                                                 dataclasses.replace(emulator.identity.students[0],
                                                                                     name="Right Everywhere",
                                                                                     sid="2000"),)))
    gradebook.write_gradescope([gpu, right], rubric, tmp / "gpu-scores.csv")
    scores = {r["SID"]: float(r["Total Score"]) for r in _rows(tmp / "gpu-scores.csv")}
    assert scores == {"1815": 40.0 - lost, "2000": 40.0}
    plain = gradebook.plain_rows(gpu, rubric)[0]
    assert plain["emulator_correctness"] == f"{REF0:.2f}" and plain["gpu_correction"] == f"{-lost:.2f}"
    summary = class_summary([gpu, right], rubric)
    assert "## GPU and emulator correctness (1 of 2 differ)" in summary
    assert (f"Ada Lovelace (submission_9001): emulator (Gradescope) {REF0:.2f}, GPU {REF0 - lost:.2f}: "
            f"corrected by {-lost:.2f}") in summary
    assert "Right Everywhere" not in summary.split("## GPU and emulator")[1].split("##")[0]


def test_similarity_without_copydetect_stops_before_grading(tmp_path, monkeypatch, capsys):
    monkeypatch.setitem(sys.modules, "copydetect", None)     # not importable
    (tmp_path / "class" / "alice").mkdir(parents=True)
    status = cli.main(["batch", str(tmp_path / "class"), "--similarity", "--out", str(tmp_path / "out")])
    err = capsys.readouterr().err
    assert status == 2 and "copydetect" in err and f"{sys.executable} -m pip install" in err
    assert not (tmp_path / "out").exists()


def test_slurm_jobs_die_with_their_dependency_and_node_local_folders_are_named():
    argv = Jobs.after(["sbatch", "--parsable", "grade.sh"], "afterok", "41")
    assert argv[-3:] == ["--kill-on-invalid-dep=yes", "--dependency=afterok:41", "grade.sh"]
    assert node_local(Path("/tmp/grades")) and node_local(Path("/dev/shm")) and node_local(Path("/var/tmp/x"))
    assert not node_local(Path("/home/course/grades")) and not node_local(Path("/tmpfs-shared/x"))


def test_the_grader_installs_without_root_or_apt(tmp_path):
    """`pip install .` into a fresh virtual environment, as a user who is not root (nobody,
    where the tests run as root), with no apt: the command runs, `doctor` names the
    optional packages missing with the one command that installs them."""
    work = Path(tempfile.mkdtemp(prefix="scanlab-install-"))
    try:
        work.chmod(0o777)
        src = work / "src"
        src.mkdir()
        for name in ("pyproject.toml", "LICENSE"):
            shutil.copy(REPO / name, src / name)
        shutil.copytree(REPO / "grader", src / "grader", ignore=shutil.ignore_patterns("__pycache__"))
        for p in [work, *work.rglob("*")]:
            p.chmod(0o777 if p.is_dir() else 0o666)
        runuser = shutil.which("runuser", path="/usr/sbin:/sbin:/usr/bin:/bin")
        if os.geteuid() == 0 and runuser is None:
            pytest.skip("runuser is not here to install as a user who is not root")
        as_user = [str(runuser), "-u", "nobody", "--"] if os.geteuid() == 0 else []
        env = {"PATH": "/usr/bin:/bin", "HOME": str(work), "PIP_NO_CACHE_DIR": "1",
               "PIP_DISABLE_PIP_VERSION_CHECK": "1"}
        run = lambda *argv, **kw: subprocess.run([*as_user, *argv], cwd=work, env=env, capture_output=True,  # noqa: E731
                                                 text=True, timeout=600, **kw)
        python = shutil.which("python3", path="/usr/bin:/bin")   # the system's, as a login node has
        if python is None:
            pytest.skip("no python3 in /usr/bin")
        made = run(python, "-m", "venv", str(work / "venv"))
        assert made.returncode == 0, made.stderr
        pip = run(str(work / "venv" / "bin" / "pip"), "install", "-q", str(src))
        if pip.returncode != 0 and ("NewConnectionError" in pip.stderr or "Could not find a version" in pip.stderr):
            pytest.skip(f"no package index reachable for setuptools: {pip.stderr[-300:]}")
        assert pip.returncode == 0, pip.stderr[-3000:]
        installed = str(work / "venv" / "bin" / "scanlab-grade")
        at_checkout = {**env, "SCANLAB_ROOT": str(REPO)}
        version = subprocess.run([*as_user, installed, "--version"], cwd=REPO, env=at_checkout,
                                 capture_output=True, text=True, timeout=120)
        assert version.returncode == 0 and version.stdout.startswith("scanlab grader"), version.stderr
        doctor = subprocess.run([*as_user, installed, "doctor"], cwd=REPO, env=at_checkout,
                                capture_output=True, text=True, timeout=300)
        assert "MISSING copydetect" in doctor.stdout
        assert re.search(re.escape(str(work / "venv" / "bin" / "python")) + r"3?(\.\d+)? -m pip install .*'copydetect>=0\.5'",
                         doctor.stdout), doctor.stdout
    finally:
        shutil.rmtree(work, ignore_errors=True)


def test_copies_of_the_reference_are_named_by_their_students_not_as_each_others(term):
    _, out, _ = term
    summary = (out / "class-summary.md").read_text()
    copies = summary[summary.index("## Copies"):].split("\n## ")[0]
    every = task_numbers(BASE)
    assert f"| Ada Lovelace (submission_9001) | identical to the reference solution: task {every} |" in copies
    assert f"| Katherine Johnson (submission_9006) | identical to the reference solution: task {every} |" in copies
    assert "identical files" not in copies      # two copies of the reference are not each other's copy
    assert (f"| Grace Hopper, Alan Turing (submission_9002) | the untouched handout: task "
            f"{task_numbers(BASE, bonus=False)} |") in copies
    assert "Ada Lovelace (submission_9001)" in (out / "class.html").read_text()


def test_a_rubric_kept_elsewhere_grades_the_checkouts_cases(tmp_path):
    text = (REPO / "data" / "rubric.toml").read_text()
    (tmp_path / "course.toml").write_text("\n".join(line for line in text.splitlines()
                                                   if not line.startswith("cases =")))
    rubric = load_rubric(tmp_path / "course.toml")
    assert (REPO / "data" / "cases.toml").resolve() in rubric.sources
    assert rubric.cases == load_rubric(REPO / "data" / "rubric.toml").cases


def test_sigterm_leaves_no_workspace(emu_session, tmp_path):
    """A grade stopped by SIGTERM (Slurm's time limit) removes its temporary workspace."""
    work = Path(tempfile.mkdtemp(prefix="scanlab-sigterm-"))   # a folder the sandbox user reaches
    work.chmod(0o755)
    proc = subprocess.Popen([sys.executable, "-m", "grader", "grade", str(REPO / "solution"), "--backend",
                             "emulator", "--rubric", str(TEST_RUBRIC), "--cache", str(cache_dir()),
                             "--workdir", str(work), "--out", str(tmp_path / "out"), "-q"],
                            cwd=REPO, env={**os.environ, "PYTHONPATH": str(REPO)},
                            stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    try:
        deadline = time.monotonic() + 120
        while not list(work.glob("scanlab-grade-*/builds/*")):
            assert proc.poll() is None and time.monotonic() < deadline, proc.stdout.read() if proc.stdout else ""
            time.sleep(0.2)
        proc.send_signal(signal.SIGTERM)
        proc.wait(timeout=300)
    finally:
        if proc.poll() is None:
            proc.kill()
    left = list(work.glob("scanlab-grade-*"))
    shutil.rmtree(work, ignore_errors=True)
    assert proc.returncode == 130
    assert not left, left
