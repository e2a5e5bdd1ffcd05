"""The class similarity report (grader/classroom/similarity.py, copydetect): a copy of the reference
solution pairs with it in full, a copy with every name changed ranks first among the
students; untouched handouts, all boilerplate, do not pair."""
from __future__ import annotations

import csv
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from conftest import REPO

pytest.importorskip("copydetect", reason="copydetect is not installed (pyproject.toml, extra \"test\")")

from grader.grading.build import Layout  # noqa: E402
from grader.config.rubric import load_rubric  # noqa: E402
from grader.report.copies import REFERENCE  # noqa: E402
from grader.classroom.similarity import CSV_COLUMNS, similarity_report  # noqa: E402

SIMILAR = REPO / "tests" / "fixtures" / "similarity"
# Every name of alice's kernel body, changed as a student hiding a copy would.
RENAMES = {"T": "Elem", "buffer": "smem", "width": "threads", "start": "lo", "stop": "hi",
           "running": "prefix", "base": "tileStart", "mine": "idx", "value": "v", "left": "lhs",
           "offset": "dist", "total": "tileSum"}


def disguised(code: str) -> str:
    """Names changed, comments dropped, indentation redone."""
    code = re.sub(r"//[^\n]*", "", code)
    code = re.sub(r"\b(" + "|".join(RENAMES) + r")\b", lambda m: RENAMES[m.group(1)], code)
    # Indentation halved (4 spaces become 2).
    return "\n".join(" " * ((len(line) - len(line.lstrip())) // 2) + line.strip()
                     for line in code.splitlines() if line.strip()) + "\n"


def make_class(folder: Path) -> None:
    def student(name: str, scan: str | None) -> None:
        shutil.copytree(REPO / "handout" / "student", folder / name / "student")
        if scan is not None:
            (folder / name / "student" / "scan.cuh").write_text(scan)

    alice = (SIMILAR / "alice_scan.cuh").read_text()
    student("alice", alice)
    student("bob", disguised(alice))
    student("carol", (SIMILAR / "carol_scan.cuh").read_text())
    student("dave", None)
    student("erin", None)
    shutil.copytree(REPO / "solution" / "student", folder / "reference" / "student")


def test_a_disguised_copy_ranks_first_and_the_handouts_do_not_pair(tmp_path: Path):
    make_class(tmp_path / "class")
    assert disguised("T buffer = width;  // x\n") == "Elem smem = threads;\n"
    pairs = similarity_report(tmp_path / "class", load_rubric(REPO / "data" / "rubric.toml"),
                              Layout(REPO), tmp_path / "out")
    # The copied reference pairs with the reference solution, every file of it, first.
    leaked = [p for p in pairs if (p.first, p.second) == (REFERENCE, "reference")]
    assert {"warp_scan.cuh", "reduce.cuh", "scan.cuh"} <= {p.file for p in leaked}
    assert all(p.share > 0.95 for p in leaked) and pairs[0] in leaked
    students = [p for p in pairs if not {p.first, p.second} & {REFERENCE, "reference"}]
    top = students[0]
    assert (top.first, top.second, top.file) == ("alice", "bob", "scan.cuh")
    assert top.share > 0.6 and top.tokens > 50
    by_pair = {(p.first, p.second, p.file): p for p in pairs}
    assert by_pair[("alice", "carol", "scan.cuh")].share < 0.5 * top.share
    # Untouched handouts are boilerplate through and through: with each other and with
    # the reference (whose handout lines are the handout's).
    for p in pairs:
        if {p.first, p.second} <= {"dave", "erin", "reference", REFERENCE}:
            assert p.share < 0.05 or {p.first, p.second} == {"reference", REFERENCE}, p
    rows = list(csv.DictReader(open(tmp_path / "out" / "similarity.csv", encoding="utf-8")))
    assert list(rows[0]) == CSV_COLUMNS
    assert [int(r["rank"]) for r in rows] == list(range(1, len(rows) + 1))
    assert (rows[0]["submission_a"], rows[0]["submission_b"]) == (REFERENCE, "reference")
    html = (tmp_path / "out" / "similarity.html").read_text(encoding="utf-8")
    assert "alice" in html and "bob" in html


def test_the_similarity_command(tmp_path: Path):
    make_class(tmp_path / "class")
    r = subprocess.run([sys.executable, "-m", "grader", "similarity", str(tmp_path / "class"),
                        "--out", str(tmp_path / "out")], cwd=REPO, capture_output=True, text=True,
                       timeout=300)
    assert r.returncode == 0, r.stderr
    lines = r.stdout.splitlines()
    assert f"{REFERENCE} ~ reference (" in lines[1]
    assert any("alice ~ bob (scan.cuh" in line for line in lines[1:10]), lines
    assert (tmp_path / "out" / "similarity.csv").is_file()
    r = subprocess.run([sys.executable, "-m", "grader", "similarity", str(tmp_path / "nothing")],
                       cwd=REPO, capture_output=True, text=True, timeout=60)
    assert r.returncode == 2 and "is not a folder" in r.stderr
