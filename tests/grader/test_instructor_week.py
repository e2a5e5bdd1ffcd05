"""The instructor's week (issue 35): a class of twelve from the fixtures, as an LMS hands
it over, graded with `batch --roster --similarity` on the emulator, once for the module:

  copied_ref   the reference solution handed in (identical to it)
  alice, bob   one file identical between two students (commutative_scan)
  hang         scanIncWarp never returns (a hung build: one time limit, its other cases
               and the applications not run)
  carol, dave  roster rows naming submissions that are not there (karol, dave-v2)
  hopperg_102  Canvas's bulk download: flat, name-prefixed files, the newest upload of
               scan.cuh with Canvas's `-1` suffix (the older one is the handout's)
  turinga_103  Canvas's bulk download: a late zip (the forbidden fixture)
  Zed Nobody   on the roster (a Canvas gradebook export with a submission column), no
               submission: 0 in every upload file
  and handout, erin (empty), frank (wrong names), grace.zip (a broken archive).

Each of them is checked in grades.csv, the class summary and class.html (opened in a
real headless Chromium; skipped, never passed, where none can start), and the upload
files have a row for every roster student. Then Ctrl-C in a batch and an empty folder.
"""
from __future__ import annotations

import csv
import os
import shutil
import signal
import subprocess
import sys
import time
import zipfile
from pathlib import Path

import pytest

from conftest import REPO, TEST_RUBRIC, TEST_SEED, cache_dir, reference_score, task_numbers
from fixtures import compose
from grader import cli
from grader import exits
from grader.config.rubric import load_rubric
from grader.report import gradebook
from grader.report.copies import REFERENCE

RUBRIC = load_rubric(TEST_RUBRIC)     # what the week's batch grades with
from test_html import Page, _chromium, _png_size

FOLDERS = {"copied_ref": "reference", "handout": "handout", "alice": "commutative_scan",
           "bob": "commutative_scan", "hang": "hang", "carol": "commutative_reduce",
           "dave": "compile_error", "erin": "empty", "frank": "wrong_names"}
ROSTER = """Student,ID,SIS User ID,SIS Login ID,Section,Submission
    Points Possible,,,,,
"Ref, Copied",,S001,copied,A,copied_ref
"Out, Hand",,S002,handout,A,handout
Alice,,S003,alice,A,alice
Bob,,S004,bob,A,bob
Hang,,S005,hang,B,hang
Carol,,S006,carol,B,karol
Dave,,S007,dave,B,dave-v2
Erin,,S008,erin,B,erin
Frank,,S009,frank,B,frank
Grace,,S010,grace,B,grace
"Hopper, Grace",102,S011,ghopper,C,
"Turing, Alan",103,S012,aturing,C,
"Nobody, Zed",104,S013,znobody,C,
"""
SUBMISSIONS = ["alice", "bob", "carol", "copied_ref", "dave", "erin", "frank", "grace", "handout",
               "hang", "hopperg_102", "turinga_103"]


def make_class(folder: Path, parts: Path) -> None:
    folder.mkdir(parents=True)
    for name, fixture in FOLDERS.items():
        src = compose(fixture, parts / name)
        shutil.copytree(src, folder / name) if src.is_dir() else shutil.copy(src, folder / f"{name}.zip")
    shutil.copy(compose("broken_archive", parts / "grace"), folder / "grace.zip")
    # Canvas's bulk download: the handout's scan.cuh first, then the reference's uploaded again.
    shutil.copy(REPO / "handout" / "student" / "scan.cuh", folder / "hopperg_102_9001_scan.cuh")
    shutil.copy(REPO / "solution" / "student" / "scan.cuh", folder / "hopperg_102_9002_scan-1.cuh")
    forbidden = compose("forbidden", parts / "turing")
    with zipfile.ZipFile(folder / "turinga_LATE_103_9003_homework.zip", "w") as z:
        for f in sorted(forbidden.rglob("*")):
            if f.is_file():
                z.write(f, f.relative_to(forbidden).as_posix())


@pytest.fixture(scope="module")
def week(tmp_path_factory: pytest.TempPathFactory):
    """The class graded once: (out folder, the batch's exit status, stdout, stderr, seconds)."""
    pytest.importorskip("copydetect", reason="copydetect is not installed (pyproject.toml, extra \"test\")")
    tmp = tmp_path_factory.mktemp("week")
    make_class(tmp / "class", tmp / "parts")
    (tmp / "roster.csv").write_text(ROSTER, encoding="utf-8")
    out = tmp / "out"
    start = time.monotonic()
    r = subprocess.run([sys.executable, "-m", "grader", "batch", str(tmp / "class"), "--out", str(out),
                        "--roster", str(tmp / "roster.csv"), "--similarity", "--backend", "emulator",
                        "--rubric", str(TEST_RUBRIC), "--seed", str(TEST_SEED), "--cache", str(cache_dir()),
                        "-q"], cwd=REPO, capture_output=True, text=True, timeout=1500)
    seconds = time.monotonic() - start
    if "the CPU emulator cannot be built" in r.stderr or "no C++ compiler" in r.stderr:
        pytest.skip(f"the emulator cannot grade here: {r.stderr[-300:]}")
    return out, r.returncode, r.stdout, r.stderr, seconds


def rows(path: Path) -> list[dict[str, str]]:
    with path.open(newline="", encoding="utf-8") as f:
        return list(csv.DictReader(f))


def test_the_class_is_graded_with_each_case_in_grades_csv(week):
    out, status, stdout, stderr, seconds = week
    assert status == 0, stderr[-3000:]
    print(f"the class of 12 graded in {seconds:.0f} s")
    graded = {r["submission"]: r for r in rows(out / "grades.csv") if r["submission"]}
    assert sorted(graded) == SUBMISSIONS
    # The copied reference, the untouched handout, the identical pair, the similarity.
    assert graded["copied_ref"]["same_as_reference"] == task_numbers(RUBRIC, " ")     # the bonus too
    assert graded["handout"]["same_as_handout"] == task_numbers(RUBRIC, " ", bonus=False)
    assert graded["handout"]["same_as_reference"] == ""
    assert graded["alice"]["identical_to"] == "bob" and graded["bob"]["identical_to"] == "alice"
    assert graded["copied_ref"]["most_similar"] == REFERENCE
    assert float(graded["copied_ref"]["most_similar_share"]) > 0.95
    assert graded["carol"]["identical_to"] == "" and graded["frank"]["same_as_reference"] == ""
    # The hang (everywhere): task 1 failed, its cases bounded by the hang allowance.
    assert int(graded["hang"]["task1_passed"]) == 0 and graded["hang"]["task3_passed"] == graded["hang"]["task3_total"]
    # Canvas: the newest upload (-1) graded, the identity from the roster by Canvas's ID.
    assert graded["hopperg_102"]["name"] == "Hopper, Grace" and graded["hopperg_102"]["sid"] == "S011"
    assert graded["hopperg_102"]["same_as_reference"] == "3"
    assert graded["hopperg_102"]["task3_passed"] == graded["hopperg_102"]["task3_total"] != "0"
    assert graded["turinga_103"]["late"] == "1" and "task 2: forbidden" in graded["turinga_103"]["comment"]
    # Carol and Dave: their submissions graded with nobody on them; their roster rows, 0.
    assert graded["carol"]["name"] == "" and graded["dave"]["name"] == ""
    zeros = {r["name"]: r for r in rows(out / "grades.csv") if not r["submission"]}
    assert set(zeros) == {"Carol", "Dave", "Nobody, Zed"}
    assert all(float(r["score"]) == 0 and r["comment"] == gradebook.NO_SUBMISSION for r in zeros.values())


def test_the_roster_problems_are_on_stderr_and_in_the_summary(week):
    out, _, stdout, stderr, _ = week
    summary = (out / "class-summary.md").read_text(encoding="utf-8")
    for text in (stderr, summary):
        assert "names submission 'karol', which is not in the class folder (closest: carol)" in text
        assert "names submission 'dave-v2'" in text
        assert "no submission from Nobody, Zed (S013)" in text
        assert "submission carol matches no roster row" in text
    assert "2 roster row(s) name no submission here, 1 student(s) submitted nothing (3 rows of 0" in summary
    assert "gathered per student" in stderr          # Canvas's flat layout was recognised


def test_the_class_summary_names_each_copy_and_the_hang(week):
    out, _, stdout, _, _ = week
    summary = (out / "class-summary.md").read_text(encoding="utf-8")
    copies = summary[summary.index("## Copies"):].split("\n## ")[0]
    said = [tuple(cell.strip() for cell in line.strip("| ").split(" | ")) for line in copies.splitlines()
            if line.startswith("| ") and not line.startswith("| submission")]
    # Each student by roster name (with the submission), each set of identical files once.
    assert ("Ref, Copied (copied_ref)", f"identical to the reference solution: task {task_numbers(RUBRIC)}") in said
    # The fixtures are the reference with one file changed: their other files are the
    # reference's (and said so); the changed one is what alice and bob share: one row.
    assert [who for who, what in said if what == "task 3: identical files"] == ["Alice (alice), Bob (bob)"]
    assert any(who == "Alice (alice)" and what.startswith("identical to the reference solution: task 1, 2")
               for who, what in said)
    # carol's own (changed) reduce.cuh: neither identical nor said twice
    assert all("task 2" not in what for who, what in said if who == "carol")
    assert ("Out, Hand (handout)", "the untouched handout: task 1, 2, 3") in said
    whose = " ".join(who for who, _ in said)
    assert "hopperg_102" in whose and "frank" not in whose and "erin" not in whose
    assert "| hang |" in summary and "task 1: " in summary.split("| hang |")[1].split("\n")[0]
    assert summary in stdout                          # printed at the end too
    report = (out / "submissions" / "copied_ref" / "report.html").read_text(encoding="utf-8")
    assert 'id="identical-to-reference"' in report
    assert 'id="identical-to-reference"' not in (out / "submissions" / "handout" / "report.html").read_text()
    # The hang's applications were not started on its hung integration build.
    hang = (out / "submissions" / "hang" / "report.txt").read_text(encoding="utf-8")
    assert "the integration build hung" in hang


def test_every_roster_student_has_a_row_in_the_uploads(week):
    out = week[0]
    sids = {f"S{i:03d}" for i in range(1, 14)}
    gs = rows(out / gradebook.GRADESCOPE)
    assert {r["SID"] for r in gs} == sids
    assert {r["SID"]: float(r["Total Score"]) for r in gs}["S013"] == 0
    canvas = rows(out / gradebook.CANVAS)[1:]                   # after Points Possible
    assert {r["SIS User ID"] for r in canvas} == sids
    by_sid = {r["SIS User ID"]: r for r in canvas}
    assert by_sid["S011"]["ID"] == "102" and by_sid["S013"]["ID"] == "104"
    assert float(by_sid["S006"]["scanlab"]) == 0 and float(by_sid["S001"]["scanlab"]) > 0


def test_the_class_page_shows_them_in_a_real_browser(week, tmp_path):
    out = week[0].resolve()
    text = (out / "class.html").read_text(encoding="utf-8")
    page = Page(text)
    copies = next(t for t in page.tables if t and t[0] == ["submission", "what"])
    said = {row[0]: row[1] for row in copies[1:]}
    assert said["Ref, Copied (copied_ref)"].startswith(f"identical to the reference solution: task {task_numbers(RUBRIC)}")
    assert said["Alice (alice), Bob (bob)"] == "task 3: identical files"
    assert said["Out, Hand (handout)"].startswith("the untouched handout")
    browser = _chromium()
    shot = tmp_path / "class.png"
    common = [browser, "--headless", "--no-sandbox", "--disable-gpu", "--virtual-time-budget=5000",
              "--window-size=1280,2000"]
    try:
        dom = subprocess.run(common + ["--dump-dom", (out / "class.html").as_uri()], capture_output=True,
                             text=True, timeout=120)
        picture = subprocess.run(common + [f"--screenshot={shot}", (out / "class.html").as_uri()],
                                 capture_output=True, text=True, timeout=120)
    except (OSError, subprocess.TimeoutExpired) as e:
        pytest.skip(f"Chromium could not start here: {e}")
    if dom.returncode != 0 or picture.returncode != 0 or "<body" not in dom.stdout:
        pytest.skip(f"Chromium could not start here (exit {dom.returncode}): {dom.stderr[-300:]}")
    # What the browser laid out: the roster and copies sections with their rows.
    rendered = Page(dom.stdout)
    assert 'id="roster"' in dom.stdout and 'id="copies"' in dom.stdout
    assert any("karol" in item for item in dom.stdout.split("<li>"))
    rendered_copies = next(t for t in rendered.tables if t and t[0] == ["submission", "what"])
    assert rendered_copies == copies
    assert _png_size(shot) == (1280, 2000) and shot.stat().st_size > 20_000   # drawn, not blank


# ---- Ctrl-C, and a folder with nothing to grade -------------------------------------------

def test_ctrl_c_keeps_what_finished_and_exits_130(tmp_path):
    """Five submissions of their own builds, two at a time (-j 1): Ctrl-C after the first
    one finishes cancels those not started, lets the ones being graded finish, writes
    them all, and exits 130."""
    folder = tmp_path / "class"
    base = compose("reference", tmp_path / "parts")
    for i in range(5):
        shutil.copytree(base, folder / f"s{i}")
        with open(folder / f"s{i}" / "student" / "reduce.cuh", "a", encoding="utf-8") as f:
            f.write(f"// student {i}\n")
    out = tmp_path / "out"
    # Fewer cases than the tests' rubric: what is tested is the interruption.
    rubric = tmp_path / "rubric.toml"
    rubric.write_text(f'base = "{TEST_RUBRIC}"\n\n[rubric]\ngroups = ["operators"]\n\n'
                      '[integration]\napplications = false\n')
    # SIGINT as a terminal's Ctrl-C sends it (a shell's background job inherits it ignored).
    proc = subprocess.Popen([sys.executable, "-m", "grader", "batch", str(folder), "--out", str(out),
                             "--backend", "emulator", "--rubric", str(rubric), "--seed", str(TEST_SEED),
                             "--cache", str(cache_dir()), "-j", "1", "-q"],
                            cwd=REPO, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                            preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL))
    assert proc.stdout is not None
    lines = []
    for line in proc.stdout:
        lines.append(line)
        if line.startswith("[1/5]"):
            os.kill(proc.pid, signal.SIGINT)
            break
    rest, err = proc.communicate(timeout=900)
    lines += rest.splitlines(keepends=True)
    said = "".join(lines)
    assert proc.returncode == exits.INTERRUPTED, err[-2000:]
    assert "interrupted: " in said and "not started are cancelled" in said
    finished = [line for line in lines if line.startswith("[")]
    assert 1 <= len(finished) < 5, said
    graded = rows(out / "grades.csv")
    assert len(graded) == len(finished)               # every one that finished is kept
    # The reference's score: finished, not cut short.
    assert all(float(r["score"]) == reference_score(load_rubric(rubric)) for r in graded)
    summary = (out / "class-summary.md").read_text(encoding="utf-8")
    assert f"**Interrupted**: interrupted by Ctrl-C: {len(finished)} of 5 submission(s) graded" in summary
    assert "batch --resume" in err


def test_an_empty_batch_folder_is_an_error(tmp_path, capsys):
    (tmp_path / "empty").mkdir()
    (tmp_path / "empty" / "notes.txt").write_text("nothing to grade\n")
    assert cli.main(["batch", str(tmp_path / "empty"), "--out", str(tmp_path / "out"),
                     "--rubric", str(TEST_RUBRIC)]) == exits.GRADER
    err = capsys.readouterr().err
    assert "no submissions to grade" in err and "notes.txt: neither a folder nor an archive" in err
    assert not (tmp_path / "out" / "grades.csv").exists()
