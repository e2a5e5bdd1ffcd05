"""A batch of ten fixture submissions: a progress line each, the grades CSV, the class
summary, and every submission's reports."""
from __future__ import annotations

import csv

from fixtures import BATCH_OF_TEN as TEN, compose_class
from grader.batch import find_submissions, run_batch
from grader.report import csvfile



def test_batch_of_ten(emulator, tmp_path):
    folder = tmp_path / "class"
    compose_class(TEN, folder, tmp_path / "parts")
    entries, skipped = find_submissions(folder)
    assert len(entries) == 10 and not skipped
    lines: list[str] = []
    out = tmp_path / "out"
    results = run_batch(emulator.session, entries, out, lines.append)
    assert len(results) == 10 and len(lines) == 10
    assert sorted(int(line.split("/")[0].strip("[ ")) for line in lines) == list(range(1, 11))

    rows = {row["submission"]: row for row in csv.DictReader((out / "grades.csv").open())}
    assert set(rows) == set(TEN)
    assert list(next(iter(rows.values()))) == csvfile.columns(emulator.session.rubric)
    assert float(rows["reference"]["score"]) == 60
    assert float(rows["handout"]["score"]) == 30
    assert rows["compile_error"]["task3_status"] == "build_failed"
    assert rows["forbidden"]["task2_status"] == "forbidden"
    assert rows["crash"]["task2_status"] == "wrong"
    assert rows["commutative_reduce"]["task2_status"] == "wrong"
    assert rows["handout"]["task3_status"] == "not_implemented"
    assert rows["broken_archive"]["error"] and rows["empty"]["error"]
    assert all(row["performance"] == "not measured" for row in rows.values())
    # Every result equals the one the same submission got alone (same session and seed).
    for r in results:
        alone = emulator(r.name)
        assert r.score == alone.score, r.name

    summary = (out / "class-summary.md").read_text()
    assert "class summary (10 submissions)" in summary
    assert "| compile_error |" in summary and "does not compile" in summary
    assert "| handout | 30.00 | task 3: not implemented |" in summary
    for name in TEN:
        for report in ("results.json", "gradescope-results.json", "junit.xml", "summary.md", "report.txt"):
            assert (out / "submissions" / name / report).is_file(), (name, report)
