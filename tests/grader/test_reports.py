"""Every report format, from a synthetic result: fields, types, hidden-case privacy."""
from __future__ import annotations

import csv
import dataclasses
import json
import subprocess
import xml.etree.ElementTree as ET

import pytest

from conftest import REPO, TEST_RUBRIC
from grader.config.cases import Case
from grader.report import gradebook, gradescope, jsonfile, junit, markdown, terminal
from grader.report.class_summary import class_summary
from grader.results import (BuildInfo, CaseResult, Identity, IntegrationResult, MachineInfo,
                            PerfResult, Student, SubmissionResult, TaskResult, Violation)
from grader.config.rubric import PerfCase, load_rubric

# Its expectations follow data/'s list of tasks (pyproject.toml's markers).
pytestmark = pytest.mark.task_list

SECRET_N = 40009


def _case(task, op, n, status="pass", hidden=False, block=256):
    c = Case(task, op, n, block, "random", hidden, "hidden" if hidden else "g")
    summary = "pass" if status == "pass" else "3 of 1000 element(s) differ; first at index 7: expected 1, got 2"
    return CaseResult(c, 1234, status, summary, "hint: a race?" if status != "pass" else "",
                      f"build/scanlab run --task {task} --n {n}", 0.25)


def sample(measured: bool = True) -> SubmissionResult:
    machine = MachineInfo("cuda", "NVIDIA H100", "9.0", 3000.0, "nobody") if measured else \
        MachineInfo("emulator", note="no GPU: correctness is graded with the CPU emulator; performance is not measured",
                    sandbox_user="nobody")
    t1 = TaskResult(1, "warp-scan", "warp scan", "warp_scan.cuh", path="student/warp_scan.cuh",
                    correctness_max=10, performance_max=5,
                    build=BuildInfo("task 1", True, 12.0),
                    cases=[_case("warp-scan", "add-i32", 33), _case("warp-scan", "mssp", 1000, "fail"),
                           _case("warp-scan", "mssp", SECRET_N, "fail", hidden=True),
                           _case("warp-scan", "add-i32", 777, hidden=True)])
    t1.correctness_points = 5.0
    t1.perf_status = "not_eligible" if measured else "not_measured"
    t1.perf_message = "0: performance counts only when every case of the task passes"
    t1.performance_points = 0.0 if measured else None
    t2 = TaskResult(2, "reduce", "reduce", "reduce.cuh", status="forbidden", path="reduce.cuh",
                    message="reduce.cuh uses 1 forbidden construct(s): not built, 0 points",
                    violations=[Violation("reduce.cuh", 3, "inline-asm", "uses inline assembly", 'asm("x");')],
                    correctness_max=20, performance_max=15)
    t2.performance_points = 0.0 if measured else None
    t2.perf_status = "not_eligible" if measured else "not_measured"
    t3 = TaskResult(3, "scan", "scan <all> & \"sizes\"", "scan.cuh", path="student/scan.cuh",
                    correctness_max=30, performance_max=20, build=BuildInfo("task 3", True, 14.0),
                    cases=[_case("scan", "add-i32", 33), _case("scan-exclusive", "mssp", 65537)])
    t3.correctness_points = 30.0
    if measured:
        p = PerfResult(PerfCase("scan", "add-i32", 1 << 26, 256), "measured", reference_ms=0.2, student_ms=0.3,
                       reference_runs=(0.2, 0.2), student_runs=(0.3, 0.3), rounds=2, gbps=1789.6,
                       copy_gbps=3000.0, baselines={"cpu-sequential": 60.0, "naive-hillis-steele": 3.0})
        t3.perf = [p]
        t3.perf_status = "measured"
        t3.performance_points = 20 * 1.2 / 1.5
    else:
        t3.perf_status = "not_measured"
        t3.perf_message = "not measured (no GPU)"
    # The bonus, left as the handout's placeholder: not attempted, not built.
    t4 = TaskResult(4, "lookback-scan", "bonus: look-back", "lookback_scan.cuh", status="not_attempted",
                    path="student/lookback_scan.cuh", placeholder=True,
                    message="bonus not attempted: lookback_scan.cuh is still the handout placeholder",
                    correctness_max=5, performance_max=10)
    t4.performance_points = 0.0
    # Any task the manifest has besides these four (a grade lists every task): not submitted.
    more = [TaskResult(t.number, t.name, t.title, t.file, status="missing", message=f"{t.file} is missing",
                       correctness_max=t.correctness_points, performance_max=t.performance_points)
            for t in load_rubric(TEST_RUBRIC).tasks if t.number not in (1, 2, 3, 4)]
    result = SubmissionResult(name="alice <&>", origin="subs/alice.zip", kind="zip", seed=99,
                              machine=machine, graded_at="2024-01-01T00:00:00+00:00",
                              grader_version="1.0", rubric="data/rubric.toml",
                              files={"warp_scan.cuh": "student/warp_scan.cuh", "reduce.cuh": "reduce.cuh",
                                     "scan.cuh": "student/scan.cuh"},
                              ignored=["README.md", "notes\x01.txt"], notes=["skipped link x"],
                              tasks=[t1, t2, t3, t4, *more],
                              integration=IntegrationResult("not_graded", "not run: reduce.cuh has forbidden constructs"),
                              reproduce="python3 -m grader grade subs/alice.zip --seed 99")
    result.correctness_score = 35.0
    result.correctness_max = 60
    result.performance_max = 40
    if measured:
        result.performance_score = t3.performance_points
        result.score = 35.0 + t3.performance_points
        result.max_score = 100
    else:
        result.score = 35.0
        result.max_score = 60
    result.seconds = 42.4
    return result


@pytest.mark.parametrize("measured", [True, False])
def test_gradescope_spec(tmp_path, measured):
    path = tmp_path / "results.json"
    gradescope.write(sample(measured), path, "visible", "hidden")
    data = json.loads(path.read_text())
    assert isinstance(data["score"], (int, float)) and data["score"] == pytest.approx(sample(measured).score)
    assert isinstance(data["execution_time"], int)
    assert data["visibility"] in ("visible", "hidden", "after_due_date", "after_published")
    assert data["stdout_visibility"] in ("visible", "hidden", "after_due_date", "after_published")
    assert isinstance(data["output"], str)
    assert isinstance(data["tests"], list) and data["tests"]
    for test in data["tests"]:
        assert set(test) <= {"name", "score", "max_score", "status", "output", "visibility", "number",
                             "tags", "output_format", "name_format", "extra_data"}
        assert isinstance(test["name"], str) and isinstance(test["output"], str)
        assert isinstance(test["score"], (int, float)) and isinstance(test["max_score"], (int, float))
        assert 0 <= test["score"] <= test["max_score"] + 1e-9
        assert test["status"] in ("passed", "failed")
    # The tests add up to the score.
    assert sum(t["score"] for t in data["tests"]) == pytest.approx(data["score"], abs=0.01)
    text = json.dumps(data)
    # Hidden cases: pass/fail only -- neither their size nor their reproduce command.
    assert str(SECRET_N) not in text
    assert "hidden case 1" in text and "1/2 hidden cases passed" in text
    perf = [t for t in data["tests"] if "performance" in t["name"]]
    if measured:
        assert any(t["max_score"] == 20 and 0 < t["score"] < 20 for t in perf)
    else:
        # Not measured: no test pretends to have passed; the top-level output says it once.
        assert perf == []
        assert "Performance (40 points) is not measured here" in data["output"]
        assert "out of the 60 correctness points" in data["output"]
        assert data["output"].count("not measured") == 1, data["output"]
    # The bonus left alone is no failed test: no test of task 4, one line in the output.
    assert not any(t["name"].startswith("Task 4") for t in data["tests"])
    assert "Bonus task 4 (lookback_scan.cuh) not attempted" in data["output"]


@pytest.mark.parametrize("measured", [True, False])
def test_gradescope_no_performance_test_for_a_task_without_performance_points(measured):
    # A task worth no performance points is never timed (the pipeline says "not_eligible"
    # and scores 0.0 of 0): Gradescope must not show it a performance test, least of all a
    # passed one, with a GPU or without (issue 48).
    result = sample(measured)
    t1 = result.tasks[0]
    result.tasks[0] = dataclasses.replace(
        t1, performance_max=0, performance_points=0.0, perf_status="not_eligible",
        perf_message="no performance points in the rubric")
    tests = gradescope.document(result)["tests"]
    names = [t["name"] for t in tests]
    assert "Task 1 (warp_scan.cuh): correctness" in names
    assert not any(t["name"].startswith("Task 1") and "performance" in t["name"] for t in tests), names
    if measured:   # a task with performance points, measured, keeps its test
        assert "Task 3 (scan.cuh): performance" in names


def test_junit_parses(tmp_path):
    path = tmp_path / "junit.xml"
    junit.write(sample(), path)
    root = ET.parse(path).getroot()
    assert root.tag == "testsuites"
    suites = root.findall("testsuite")
    assert len(suites) == len(sample().tasks) + 1     # the tasks + integration
    bonus = suites[3].findall("testcase")
    assert [c.find("skipped") is not None for c in bonus] == [True]   # not attempted: skipped
    total = sum(int(s.get("tests")) for s in suites)
    assert int(root.get("tests")) == total == len(root.findall(".//testcase"))
    assert int(root.get("failures")) == len(root.findall(".//testcase/failure"))
    names = [c.get("name") for c in root.iter("testcase")]
    assert "hidden case 1" in names and not any(str(SECRET_N) in n for n in names)
    assert str(SECRET_N) not in path.read_text()
    failure = root.find(".//testcase[@name='warp-scan mssp n=1000 block=256 random']/failure")
    assert failure is not None and "expected 1, got 2" in failure.text
    assert root.find(".//testcase[@name='file and forbidden constructs']/failure") is not None


def test_markdown(tmp_path):
    path = tmp_path / "summary.md"
    markdown.write(sample(), path)
    text = path.read_text()
    assert text.startswith("## scanlab grade")
    assert "| 3 | `scan.cuh` | 2/2 |" in text
    assert str(SECRET_N) not in text
    assert "inline assembly" in text


def test_results_json_reads_back_into_the_same_result(tmp_path):
    """A resumed batch rebuilds its reports and CSV from results.json: nothing may be lost."""
    for measured in (True, False):
        result = sample(measured)
        result.identity = Identity((Student("Ada Lovelace", "1815", "ada@example.edu"),), "42",
                                   "2026-11-20T17:34:00+00:00", False)
        path = tmp_path / f"results-{measured}.json"
        jsonfile.write(result, path)
        again = jsonfile.read(path)
        assert again == result
        assert terminal.render(again) == terminal.render(result)
    path.write_text('{"format": "something else"}')
    with pytest.raises(ValueError, match="not a scanlab-grader-results file"):
        jsonfile.read(path)


def test_junit_is_valid_against_the_common_schema(tmp_path):
    """The grader's junit.xml and the driver's --junit file, against Jenkins' junit-10.xsd
    (fetched by tools/install_deps.sh from pytest's sources on PyPI)."""
    xmlschema = pytest.importorskip("xmlschema", reason="xmlschema is not installed (tools/install_deps.sh)")
    xsd = REPO / ".venv" / "share" / "junit-10.xsd"
    if not xsd.is_file():
        pytest.skip(f"{xsd} is missing: tools/install_deps.sh fetches it from PyPI")
    schema = xmlschema.XMLSchema(str(xsd))
    for measured in (True, False):
        path = tmp_path / f"junit-{measured}.xml"
        junit.write(sample(measured), path)
        schema.validate(str(path))
    # A document the schema rejects, so the check above can fail.
    bad = tmp_path / "bad.xml"
    bad.write_text('<testsuites skipped="1"><testsuite name="x" tests="0" failures="0" errors="0"/></testsuites>')
    assert not schema.is_valid(str(bad))
    # The driver's own --junit (the handout's: task 3 is still a stub, so failures too).
    driver = REPO / "build" / "scanlab-handout-emu"
    if not driver.is_file():
        pytest.skip(f"{driver} is not built (make): the driver's JUnit file is not checked")
    out = tmp_path / "driver-junit.xml"
    subprocess.run([str(driver), "test", "--tasks", "reduce,scan", "--ops", "add-i32", "--blocks", "256",
                    "--max-n", "1100", "--junit", str(out)], capture_output=True, timeout=300)
    root = ET.parse(out).getroot()
    assert root.findall(".//failure") and root.findall("testcase")
    schema.validate(str(out))


def test_json_is_complete(tmp_path):
    path = tmp_path / "results.json"
    jsonfile.write(sample(), path)
    data = json.loads(path.read_text())
    assert data["format"] == "scanlab-grader-results"
    assert data["tasks"][0]["cases"][2]["case"]["n"] == SECRET_N   # instructors see everything
    assert data["tasks"][2]["perf"][0]["slowdown"] == pytest.approx(1.5)
    assert data["tasks"][2]["perf"][0]["speedups"]["cpu-sequential"] == pytest.approx(200)
    assert data["performance_measured"] is True
    data = json.loads(json.dumps(jsonfile.document(sample(False))))
    assert data["performance_score"] is None and data["performance_measured"] is False


def test_terminal(tmp_path):
    text = terminal.render(sample())
    assert "TOTAL  51.00 / 100" in text
    assert "hidden case 1" in text and str(SECRET_N) not in text
    assert "reduce.cuh:3: uses inline assembly" in text
    assert "1.50x the reference time" in text and "60% of copy bandwidth" in text
    assert "200.0x vs cpu-sequential" in text
    assert "reproduce: build/scanlab run --task warp-scan --n 1000" in text
    assert str(SECRET_N) in terminal.render(sample(), reveal_hidden=True)
    text = terminal.render(sample(False))
    assert "not measured" in text and "No GPU" in text
    # A task's performance says "not measured" once, not again as its points.
    assert "points       not measured" not in text
    assert "TOTAL  35.00 / 60 (correctness; performance, 40 points, not measured)" in text


def test_csv_and_class_summary(tmp_path):
    rubric = load_rubric(TEST_RUBRIC)
    results = [sample(), sample(False)]
    results[1].name = "bob"
    path = tmp_path / "grades.csv"
    gradebook.write_plain(results, rubric, path)
    rows = list(csv.DictReader(path.open()))
    assert len(rows) == 2
    assert list(rows[0]) == gradebook.columns(rubric)
    assert "task 2: forbidden" in rows[0]["comment"] and "task 3" not in rows[0]["comment"]
    assert (rows[0]["task3_passed"], rows[0]["task3_total"]) == ("2", "2")
    assert rows[1]["performance"] == "" and rows[1]["performance_measured"] == "0"
    assert "performance not measured" in rows[1]["comment"]
    assert float(rows[0]["score"]) == pytest.approx(51.0)
    summary = class_summary(results, rubric)
    assert "2 submissions" in summary and "| bob |" in summary
    assert class_summary([], rubric).endswith("No submissions.\n")


def test_implausible_timing_is_flagged_everywhere(tmp_path):
    rubric = load_rubric(TEST_RUBRIC)
    cheat = sample()
    cheat.name = "mallory"
    t3 = cheat.tasks[2]
    t3.perf = [dataclasses.replace(t3.perf[0], status="failed", implausible=True, student_ms=0.01,
                                   gbps=53687.0, message="implausible timing: 53687 GB/s is 17.9x "
                                   "the copy bandwidth this GPU measured (3000 GB/s)")]
    t3.perf_status, t3.perf_message, t3.performance_points = "failed", "0: " + t3.perf[0].message, 0.0
    honest = sample()
    path = tmp_path / "grades.csv"
    gradebook.write_plain([cheat, honest], rubric, path)
    rows = {row["submission"]: row for row in csv.DictReader(path.open())}
    assert "task 3: implausible timing" in rows["mallory"]["comment"]
    assert "implausible" not in rows[honest.name]["comment"]
    summary = class_summary([cheat, honest], rubric)
    assert "| mallory |" in summary and "task 3: implausible timing" in summary
    assert "implausible timing" in terminal.render(cheat)


def test_a_diagnostic_repeated_in_many_cases_is_shown_once_with_a_count():
    from grader.report import failure_texts
    same = "ERROR: out-of-bounds shared read at student/scan.cuh:40"
    cases = [CaseResult(Case("scan", "add-i32", n, 256, "random", False, "g"), 1, "error",
                        "CUDA or runtime error", same, f"repro {n}") for n in (33, 1000, 4097, 65537, 99)]
    cases.append(_case("scan", "mssp", 5000, "fail"))
    texts = failure_texts(cases, limit=5)
    joined = "\n".join(texts)
    assert joined.count(same) == 1
    assert "the same in 4 more case(s)" in joined and "n=1000" in joined
    assert len(texts) == 2 and "differ" in texts[1]
    assert failure_texts(cases, limit=1)[-1] == "... and 1 more failing case(s) (all in the JSON report)"
    for render in (terminal.render, markdown.document):
        result = sample()
        result.tasks[2].cases = cases
        assert render(result).count(same) == 1


def test_an_uncontained_run_is_said_in_every_report(tmp_path):
    result = sample()
    result.machine.sandbox = "NOT CONTAINED: bubblewrap (bwrap) is not installed"
    assert "WARNING: student code was NOT CONTAINED" in terminal.render(result)
    assert "student code was NOT CONTAINED" in markdown.document(result)
    assert "NOT CONTAINED" in gradescope.document(result)["output"]
    contained = sample()
    contained.machine.sandbox = "bubblewrap 0.8.0: read-only system"
    assert "NOT CONTAINED" not in terminal.render(contained) + markdown.document(contained)


def test_feedback_students_can_be_handed(tmp_path):
    """Issue 59: report.html said "Identical to the reference solution (byte for byte)",
    showed the instructor's paths and commands students cannot run. Each report folder gets
    feedback/ without them, and the class an LMS comments file."""
    from grader.config.late_policy import LatePolicy
    from grader.report import feedback
    from grader.report.folder import write_reports
    from grader.results import Student
    rubric = dataclasses.replace(load_rubric(TEST_RUBRIC), late=LatePolicy(penalty_percent=10))
    r = sample(measured=False)
    r.tasks[2].identical_to_reference = True
    r.perf_seed, r.draw_seed = 123456789, 987654321
    r.origin = "/home/prof/hw3/subs/alice.zip"
    r.reproduce = "python3 -m grader grade /home/prof/hw3/subs/alice.zip --seed 99 --draw-seed 987654321"
    r.tasks[0].cases[1] = dataclasses.replace(
        r.tasks[0].cases[1], reproduce="/tmp/scanlab-grade-x1/build/scanlab-emu run --task warp-scan --n 1000")
    r.identity = Identity((Student("Alice Liddell", "S1", "alice@example.edu", canvas_id="101"),),
                          late=True, late_seconds=3600.0)
    out = tmp_path / "submissions" / "alice"
    write_reports(r, rubric, out)
    instructor = (out / "report.html").read_text() + (out / "report.txt").read_text()
    assert "Identical to the reference" in instructor and "/home/prof" in instructor  # the instructor's, as before
    for name in ("report.txt", "report.html"):
        text = (out / "feedback" / name).read_text()
        assert "reference solution" not in text.lower() and "identical to the reference" not in text.lower()
        assert "/home/prof" not in text and "/tmp/scanlab-grade" not in text, name
        assert "987654321" not in text and "123456789" not in text, name
        assert "-m grader" not in text and "scanlab-grade" not in text.replace("scanlab grade", ""), name
    txt = (out / "feedback" / "report.txt").read_text()
    assert "make grade-local" in txt and "./build/scanlab-emu run --task warp-scan --n 1000" in txt
    assert "Late work: late by 1 h 00 min (-10% late penalty)" in txt
    # The LMS comments file: Canvas's and Gradescope's ids, the score after lateness, words.
    path = tmp_path / feedback.COMMENTS
    feedback.write_comments([r], rubric, path, {r.name: "submissions/alice"})
    rows = list(csv.DictReader(path.read_text().splitlines()))
    assert len(rows) == 1 and rows[0]["ID"] == "101" and rows[0]["SIS User ID"] == "S1"
    assert rows[0]["score"] == "29.00" and rows[0]["feedback"] == "submissions/alice/feedback/report.html"
    assert "late by 1 h 00 min" in rows[0]["comment"] and "reference" not in rows[0]["comment"]


def test_the_class_figures_are_given_after_the_late_penalty_too():
    """Issue 59: the class summary's mean and median were before the late penalty only."""
    from grader.config.late_policy import LatePolicy
    from grader.results import Student
    rubric = dataclasses.replace(load_rubric(TEST_RUBRIC), late=LatePolicy(penalty_percent=10))
    on_time, late = sample(False), sample(False)
    late.name = "bob"
    late.identity = Identity((Student("Bob", "S2"),), late=True, late_seconds=7200.0)   # -10%: 35 -> 29
    summary = class_summary([on_time, late], rubric)
    assert "mean 35.00, median 35.00, min 35.00, max 35.00; after the late penalty: mean 32.00, " \
           "median 32.00, min 29.00, max 35.00" in summary
    assert "after the late penalty" not in class_summary([on_time, on_time], rubric)
