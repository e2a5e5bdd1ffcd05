"""A batch of ten fixture submissions: a progress line each, the grades CSV, the class
summary, and every submission's reports."""
from __future__ import annotations

import csv
import re

from fixtures import BATCH_OF_TEN as TEN, compose_class
from grader.classroom.batch import CLASS_PAGE, find_submissions, run_batch
from grader.report import gradebook
from grader.report.folder import REPORT_FILES



def test_batch_of_ten(emulator, tmp_path):
    folder = tmp_path / "class"
    compose_class(TEN, folder, tmp_path / "parts")
    entries, skipped = find_submissions(folder)
    assert len(entries) == 10 and not skipped
    lines: list[str] = []
    out = tmp_path / "out"
    results = run_batch(emulator.session, entries, out, lines.append)
    done = [line for line in lines if line.startswith("[")]
    assert len(results) == 10 and len(done) == 10
    assert sorted(int(line.split("/")[0].strip("[ ")) for line in done) == list(range(1, 11))
    # A line as each phase of each submission ends, and an ETA until the last one.
    assert any(re.match(r"^    crash: cases: \d+/\d+ passed", line) for line in lines), lines
    assert any(line.startswith("    compile_error: built: ") and "failed" in line for line in lines)
    assert "ETA" in done[0] and "ETA" not in done[-1]

    rows = {row["submission"]: row for row in csv.DictReader((out / "grades.csv").open())}
    assert set(rows) == set(TEN)
    assert list(next(iter(rows.values()))) == gradebook.columns(emulator.session.rubric)
    # The maximum and the bonus tasks' correctness on top (no GPU), as the rubric gives them.
    rubric = emulator.session.rubric
    bonus = sum(t.correctness_points for t in rubric.tasks if t.bonus)
    assert float(rows["reference"]["score"]) == rubric.max_correctness + bonus
    assert float(rows["reference"]["bonus"]) == bonus > 0 and float(rows["handout"]["bonus"]) == 0
    assert float(rows["handout"]["score"]) == 0     # placeholders earn nothing
    assert "task 3: build failed" in rows["compile_error"]["comment"]
    assert "task 2: forbidden" in rows["forbidden"]["comment"]
    assert int(rows["crash"]["task2_passed"]) < int(rows["crash"]["task2_total"])
    # A crash is said apart from wrong answers (issue 59 item 8), its verdict still "wrong".
    assert "task 2:" in rows["crash"]["comment"] and "of them crashed" in rows["crash"]["comment"]
    assert "task 2:" in rows["commutative_reduce"]["comment"] and "cases fail" in rows["commutative_reduce"]["comment"]
    assert "task 3: not implemented" in rows["handout"]["comment"]
    assert rows["handout"]["task1_placeholder"] == "1" and rows["reference"]["task1_placeholder"] == "0"
    assert "broken" in rows["broken_archive"]["comment"].lower() or rows["broken_archive"]["comment"]
    assert rows["empty"]["comment"]
    assert all(row["performance"] == "" and row["performance_measured"] == "0" for row in rows.values())
    # Every result equals the one the same submission got alone (same session and seed).
    for r in results:
        alone = emulator(r.name)
        assert r.score == alone.score, r.name

    summary = (out / "class-summary.md").read_text()
    assert "class summary (10 submissions)" in summary
    assert "| compile_error |" in summary and "does not compile" in summary
    assert "| wrong (of them crashed) |" in summary
    reduce_row = next(line for line in summary.splitlines() if line.startswith("| 2 `"))
    assert " (1) |" in reduce_row, reduce_row   # the crash fixture's
    assert "| handout | - | 0.00 | task 1: the handout's placeholder; task 2: the handout's " \
           "placeholder; task 3: not implemented |" in summary
    for name in TEN:
        for report in REPORT_FILES:
            assert (out / "submissions" / name / report).is_file(), (name, report)
    # The class page links every submission's page, and every link leads to one.
    links = re.findall(r'<a href="([^"]+)"', (out / CLASS_PAGE).read_text(encoding="utf-8"))
    assert sorted(links) == sorted(f"submissions/{name}/report.html" for name in TEN)
    assert all((out / link).is_file() for link in links)
