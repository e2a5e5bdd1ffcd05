"""End to end on the CPU emulator: every fixture submission gets its expected verdict.
(Skipped, never passed, when the emulator cannot be built here.)"""
from __future__ import annotations

import math
import re
import xml.etree.ElementTree as ET

import pytest

from conftest import REPO, assert_expected_verdicts, fixture_names


@pytest.mark.parametrize("name", fixture_names())
def test_fixture_verdicts(emulator, name):
    result = emulator(name)
    assert_expected_verdicts(name, result, "emulator")
    # Without a GPU, performance is never scored: not as zero, not as full.
    assert result.performance_score is None
    assert all(tr.performance_points is None for tr in result.tasks)
    assert result.max_score == result.correctness_max


def bonus_and_required(result, rubric):
    """The result's tasks split as the rubric splits them (data/: a task added edits no test)."""
    bonus = [tr for tr, t in zip(result.tasks, rubric.tasks, strict=True) if t.bonus]
    return bonus, [tr for tr in result.tasks if tr not in bonus]


def test_reference_full_marks(emulator):
    result = emulator("reference")
    rubric = emulator.session.rubric
    # Full marks, and the bonus on top: the bonus tasks' correctness points (no GPU here).
    bonus, _ = bonus_and_required(result, rubric)
    assert bonus and result.bonus_score == sum(tr.correctness_max for tr in bonus) > 0
    assert result.score == pytest.approx(result.max_score + result.bonus_score)
    assert result.max_score == rubric.max_correctness
    assert all(tr.identical_to_reference for tr in result.tasks)


def test_the_untouched_handout_earns_nothing(emulator):
    """The required tasks' placeholders (tasks 1-2 today: correct and slow) are the
    handout's own code: by default ([correctness] zero_for_placeholders) a grading build's
    placeholders do no work (harness/baselines.cuh), every case says it reached one, the
    tasks earn 0, and every report says why; a bonus task left as it is was not attempted."""
    result = emulator("handout")
    bonus, required = bonus_and_required(result, emulator.session.rubric)
    assert all(tr.verdict == "not_attempted" and tr.build is None and "not attempted" in tr.message
               for tr in bonus)
    assert all(tr.unchanged and tr.placeholder for tr in required)
    assert {tr.verdict for tr in required} == {"not_implemented"}
    reached = [tr for tr in required if any(c.placeholder for c in tr.cases)]
    assert reached and all(c.placeholder and "calls the handout's placeholder" in c.summary
                           for tr in reached for c in tr.cases)
    assert result.score == 0
    assert all("placeholder" in tr.message and "zero_for_placeholders" in tr.message for tr in reached)
    from grader.report import gradescope, terminal
    assert "the handout's placeholder" in terminal.render(result)
    tests = gradescope.document(result)["tests"]
    assert all(t["status"] == "failed" for t in tests if "correctness" in t["name"])


def test_placeholders_earn_their_points_when_the_rubric_says_so(emulator, tmp_path):
    """The switch off ([correctness] zero_for_placeholders = false): the builds leave the
    placeholders as they are (no SCANLAB_GRADING_BUILD), and the passing placeholders'
    cases score (a rubric may want that)."""
    import dataclasses
    from conftest import _session
    from grader.grading.pipeline import grade
    from fixtures import compose
    rubric = emulator.session.rubric
    lenient = dataclasses.replace(rubric, correctness=dataclasses.replace(
        rubric.correctness, zero_for_placeholders=False))
    session = _session("emulator", lenient, tmp_path / "session")
    try:
        again = grade(session, compose("handout", tmp_path / "submissions"))
    finally:
        session.close()
    bonus, required = bonus_and_required(again, rubric)
    # A bonus not attempted was not run: nothing to earn.
    assert bonus and all(tr.correctness_points == 0 for tr in bonus)
    assert not any(c.placeholder for tr in required for c in tr.cases)
    passing = [tr for tr in required if tr.verdict == "correct"]
    assert passing and all(tr.correctness_points == tr.correctness_max > 0 for tr in passing)
    assert again.score == pytest.approx(sum(tr.correctness_max for tr in passing))


def test_a_placeholder_with_only_comments_edited_is_still_the_placeholder(emu_session, tmp_path):
    from grader.grading.pipeline import grade
    from grader.grading.checks.forbidden import same_code
    folder = tmp_path / "commented" / "student"
    folder.mkdir(parents=True)
    handout = (REPO / "handout" / "student" / "reduce.cuh").read_text()
    edited = "// my notes on the reduce\n" + handout.replace("\n", "\n  \n", 3)
    assert edited != handout and same_code(edited, handout)
    (folder / "reduce.cuh").write_text(edited)
    result = grade(emu_session, folder.parent)
    t2 = result.tasks[1]
    assert not t2.unchanged and t2.placeholder and t2.correctness_points == 0
    assert "only comments or spacing changed" in t2.message


def test_compile_error_shows_compiler_errors_with_submission_paths(emulator):
    result = emulator("compile_error")
    t3 = result.tasks[2]
    assert t3.build is not None and not t3.build.ok
    assert "student/scan.cuh" in t3.build.errors
    assert "blockPrefixs" in t3.build.errors
    assert "/tmp/" not in t3.build.errors and "scanlab-grade-" not in t3.build.errors
    assert t3.correctness_points == 0
    # The other tasks are graded in full.
    assert result.tasks[0].correctness_points == result.tasks[0].correctness_max


def test_crash_fails_with_the_crash_reported(emulator):
    t2 = emulator("crash").tasks[1]
    assert t2.passed == 0
    assert {c.status for c in t2.cases} <= {"crash", "error"}
    assert any("SIGSEGV" in c.summary or "illegal" in c.summary.lower() for c in t2.cases)


def test_hang_is_killed_and_the_rest_is_graded(emulator, test_rubric):
    result = emulator("hang")
    t1 = result.tasks[0]
    # Task 1's build and the integration build (both with its warp_scan.cuh) hang in
    # every case. After `limit` timeouts a build's cases run with a shortened limit, and
    # once its timeouts have cost [limits] hang_budget_limits time limits and number
    # [limits] hang_budget_case_share of its cases, none more starts: each is failed
    # once, as could not run.
    limits = test_rubric.limits
    shortened = (limits.hang_budget_limits - limits.max_timeouts_per_task) / limits.hung_limit_fraction

    def allowed(cases: list) -> int:
        return max(limits.max_timeouts_per_task + math.ceil(shortened),
                   math.ceil(limits.hang_budget_case_share * len(cases)))
    for cases in (t1.cases, result.integration.cases):
        statuses = [c.status for c in cases]
        # Cases already running in parallel when the allowance is spent still time out.
        assert limits.max_timeouts_per_task < statuses.count("timeout") \
            <= allowed(cases) + emulator.session.jobs - 1, statuses
        assert set(statuses) <= {"timeout", "not_run"}
    assert "not_run" in [c.status for c in t1.cases]
    assert all(c.summary.startswith("could not run") for c in t1.cases if c.status == "not_run")
    assert t1.passed == 0
    assert result.tasks[1].all_passed and result.tasks[2].all_passed
    # The applications do not start on the hung integration build.
    assert result.applications and all(a.status == "error" and "the integration build hung" in a.message
                                       for a in result.applications)
    # Bounded: each build's timeouts cost at most hang_budget_limits time limits (and the
    # cases already running when it is spent); the grade ends within the submission's time
    # budget. (Wall-clock figures depend on the load: the fixtures are graded all at once
    # here, and a hang holds a CPU slot the other tasks' cases wait for.)
    for cases in (t1.cases, result.integration.cases):
        killed = [float(re.search(r"killed after (\d+) s", c.summary).group(1)) for c in cases
                  if c.status == "timeout"]
        full = limits.max_timeouts_per_task + emulator.session.jobs
        assert sum(killed) <= limits.emulator_run_timeout_s * (
            full + (allowed(cases) - limits.max_timeouts_per_task) * limits.hung_limit_fraction)
    assert result.seconds < limits.budget_s, result.timings


def test_a_hang_at_one_block_size_costs_its_own_cases(emulator):
    """A warp scan that spins at block size 1024 only scores as the same bug giving a wrong
    answer there: its other cases run (in a fresh process) and pass."""
    hang, wrong = emulator("hang_block_1024"), emulator("wrong_block_1024")
    failed = [c for c in hang.tasks[0].cases if not c.passed]
    assert failed and all(c.status == "timeout" and c.case.block == 1024 for c in failed)
    assert [c.case.id for c in failed] == [c.case.id for c in wrong.tasks[0].cases if not c.passed]
    assert [(t.passed, t.total) for t in hang.tasks] == [(t.passed, t.total) for t in wrong.tasks]
    assert hang.integration.passed == wrong.integration.passed
    assert hang.score == pytest.approx(wrong.score) and hang.score > 0.9 * hang.max_score


def test_garbage_output_does_not_count(emulator):
    # It prints "check PASS", a passing JSON line and a fake grader total.
    t3 = emulator("garbage_output").tasks[2]
    assert t3.correctness_points < 0.2 * t3.correctness_max
    failed = [c for c in t3.cases if not c.passed]
    assert failed and all(c.status == "fail" for c in failed)
    assert all("differ" in c.summary for c in failed)


def test_forbidden_is_not_built(emulator):
    # CUB is a file outside (the compiler's -M list): refused before anything is built.
    t2 = emulator("forbidden").tasks[1]
    assert t2.build is None and not t2.cases
    rules = {v.rule for v in t2.violations}
    assert "include" in rules and "cub/cub.cuh" in t2.violations[0].message
    assert all(v.file == "student/reduce.cuh" and v.line > 0 for v in t2.violations)


@pytest.mark.parametrize("fixture,task", [("commutative_reduce", 2), ("commutative_scan", 3)])
def test_operands_out_of_order_fail_only_the_non_commutative_operators(emulator, fixture, task):
    tr = emulator(fixture).tasks[task - 1]
    failed = {c.case.op for c in tr.cases if not c.passed}
    passed = {c.case.op for c in tr.cases if c.passed}
    # mssp and the segmented sum are the operators that are not commutative.
    assert failed == {"mssp", "seg-add-i32"}
    assert {"add-i32", "add-f32", "max-i32"} <= passed
    assert "not commutative" in tr.message and "out of order" in tr.message
    assert "seg-add-i32" in tr.message


def test_large_scan_bug_fails_only_partial_last_blocks(emulator):
    t3 = emulator("large_scan_bug").tasks[2]
    failed = [c.case for c in t3.cases if not c.passed]
    assert failed
    assert all(c.n % c.block != 0 for c in failed)
    # Small inputs (one block) pass.
    assert all(c.passed for c in t3.cases if c.case.n <= 33)


def test_wrong_names_suggest_the_right_ones(emulator):
    result = emulator("wrong_names")
    assert "Scan.cu" in result.missing["scan.cuh"]
    assert "warpscan.cuh" in result.missing["warp_scan.cuh"]
    assert result.score == 0


def test_broken_archive_is_reported(emulator):
    result = emulator("broken_archive")
    assert "broken" in (result.error or "")
    assert result.score == 0


def test_a_failing_suite_says_where_and_hints_at_operand_order(emu_session, tmp_path):
    # The driver's own `test` (what a student runs): failures by task and operator, and a
    # hint when only the non-commutative operator fails.
    import subprocess
    from conftest import fixture_driver
    binary = fixture_driver(emu_session, "commutative_reduce", tmp_path)
    r = subprocess.run([str(binary), "test", "--tasks", "reduce,warp-scan", "--blocks", "32,256",
                        "--max-n", "70000"], capture_output=True, text=True, timeout=600)
    assert r.returncode == 1, r.stdout[-2000:]
    lines = r.stdout.splitlines()
    table = lines[lines.index("failed cases by task and operator:") + 1:]
    reduce = next(line for line in table if line.split()[0] == "reduce")
    assert " add-i32 0/" in reduce and " max-i32 0/" in reduce and " mssp 0/" not in reduce
    assert any(line.split()[0] == "warp-scan" and "mssp 0/" in line for line in table)
    assert ("hint: reduce fails only with mssp and seg-add-i32, whose operators are not commutative"
            in r.stdout)
    assert "hint: warp-scan" not in r.stdout


def test_a_write_past_the_end_is_named_and_the_suite_goes_on(emulator, emu_session, tmp_path):
    # Graded: the failing scan cases say which element the kernel wrote (out[n]); the
    # others fail on values (the extra store of a tile lands on the next tile's first
    # element, a race between blocks).
    t3 = emulator("write_past_end").tasks[2]
    failed = [c for c in t3.cases if not c.passed]
    assert failed and t3.correctness_points < t3.correctness_max
    named = [c for c in failed if "past the end" in c.summary]
    assert len(named) >= len(failed) // 2, [c.summary for c in failed][:3]
    for c in named:
        # out[n]; or, with the largest grid, blockResults[1024] (phase 2 scans the block
        # results in place with the same kernel).
        # Stopped at the write, with the thread and the student's line (issue 42).
        # The buffer by the harness's name, and which parameter of the student's kernel
        # pointed into it: `out` (its 2nd), or in place both `in` and `out`.
        m = re.search(r"kernel scanBlocksKernel(?:\(block results\))?: out-of-bounds write in block "
                      r"\(\d+,0,0\): thread \(\d+,0,0\) wrote (out|blockResults)\[(\d+)\], "
                      r"one past the end of `\1` \(n = (\d+); the harness's name for your kernel's "
                      r"([^)]*)\), at student/scan\.cuh:\d+", c.summary)
        assert m, c.summary
        assert m[2] == m[3] and (m[1] != "out" or int(m[2]) == c.case.n), c.summary
        assert m[4] in ("2nd parameter", "1st and 2nd parameters"), c.summary
    # The student's suite: every case runs, and the JUnit file is written.
    import subprocess
    from conftest import fixture_driver
    binary = fixture_driver(emu_session, "write_past_end", tmp_path, file="scan.cuh")
    junit = tmp_path / "junit.xml"
    r = subprocess.run([str(binary), "test", "--tasks", "scan", "--blocks", "256", "--ops",
                        "add-i32", "--max-n", "3000", "--junit", str(junit)],
                       capture_output=True, text=True, timeout=600)
    assert r.returncode == 1
    assert ("wrote out[1000], one past the end of `out` (n = 1000; the harness's name for your "
            "kernel's 2nd parameter), at student/scan.cuh:") in r.stdout
    assert "reproduce: " in r.stdout
    total = int(re.search(r"scanlab test \[emulator\]: (\d+) cases", r.stdout).group(1))
    cases = ET.parse(junit).getroot().findall(".//testcase")
    assert len(cases) == total > 10
    assert any(c.find("failure") is not None or c.find("error") is not None for c in cases)


def test_a_read_past_the_end_stops_the_case_and_names_it(emulator):
    """Issue 42: a read past the end of a buffer, silent before (the case saw garbage),
    stops the case on the emulator; its report names the buffer, the element, how far
    past the end, the thread and the student's line."""
    result = emulator("reduce_read_past_end")
    t2 = next(t for t in result.tasks if t.name == "reduce")
    failed = [c for c in t2.cases if not c.passed]
    assert failed and t2.correctness_points < t2.correctness_max
    # The read: `ahead[k] = i < end ? in[i] : ...` in the solution's reduce.cuh (the
    # fixture's edit keeps the line numbers).
    source = (REPO / "solution" / "student" / "reduce.cuh").read_text().splitlines()
    line = next(k + 1 for k, text in enumerate(source) if "i < end ? in[i]" in text)
    named = [c for c in failed if "out-of-bounds read" in c.summary]
    assert len(named) >= len(failed) // 2, [c.summary for c in failed][:3]
    for c in named:
        m = re.search(r"kernel reduceBlocksKernel(?:\([^)]*\))?: out-of-bounds read in block \(\d+,0,0\): "
                      r"thread \(\d+,0,0\) read (in|blockResults)\[(\d+)\], (one|\d+ elements) past "
                      r"the end of `\1` \(n = (\d+); the harness's name for your kernel's "
                      r"(1st[^)]*)\), at student/reduce\.cuh:(\d+)", c.summary)
        assert m, c.summary
        index, n = int(m[2]), int(m[4])
        assert index >= n and m[3] == ("one" if index == n else f"{index - n + 1} elements"), c.summary
        assert int(m[6]) == line, c.summary
    from grader.report import terminal
    assert "out-of-bounds read" in terminal.render(result)


def test_identity_as_zero_is_caught_by_negative_inputs(emulator):
    # A fold started from T{} is right wherever 0 is the identity or the inputs cross
    # zero; only the all-negative max cases can see it.
    t2 = emulator("identity_zero_reduce").tasks[1]
    failed = [c.case for c in t2.cases if not c.passed]
    assert failed and all(c.op == "max-i32" and c.dist == "negative" for c in failed)


def test_a_scan_wrong_at_exact_multiples_of_the_tile_is_caught(emulator):
    from grader.config.boundary import tile_items
    t3 = emulator("tile_multiple_scan").tasks[2]
    a = emulator.session.rubric.assignment
    failed = [c.case for c in t3.cases if not c.passed]
    tiles = [tile_items(a, c.task, c.op, c.block) for c in failed]
    assert failed and all(c.n % tile == 0 and c.n > tile for c, tile in zip(failed, tiles))
    # The boundary family's full tiles at every block size (issue 58), not only 256 and 32.
    assert len({c.block for c in failed}) > 2


def test_a_race_is_named_from_a_second_schedule(emulator):
    # The rerun that decides the race hint runs under another schedule seed (printed),
    # so the lockstep warp scan's hinted failures are named races. Only the first few
    # wrong outputs of a process get a hint (harness/host/run.h, kHintedWrongOutputs).
    t1 = emulator("race_warp_scan").tasks[0]
    failed = [c for c in t1.cases if not c.passed and c.status == "fail"]
    hinted = [c for c in failed if "hint: " in c.details]   # the driver's hint (check.py)
    assert hinted and len(hinted) < len(failed)
    named = [c for c in hinted if "changes from run to run" in c.details]
    assert len(named) >= 0.8 * len(hinted), [c.details for c in hinted if c not in named][:2]
    assert all(re.search(r"second run under SCANLAB_EMU_SEED=\d+", c.details) for c in named)


def test_a_missing_variant_is_named(emulator):
    t3 = emulator("exclusive_missing").tasks[2]
    assert t3.message.startswith("only scan-exclusive is not implemented")
    stubbed = [c for c in t3.cases if c.status == "not_implemented"]
    assert stubbed and all(c.case.task == "scan-exclusive" for c in stubbed)
    assert all(c.summary.startswith("scan-exclusive: not implemented") for c in stubbed)


def test_a_refused_archive_is_said_once(emulator):
    result = emulator("broken_archive")
    assert result.error
    assert all(t.message == "not graded: see the submission's error above"
               for t in result.tasks)


def test_refused_files_are_named_with_the_reason(emu_session, tmp_path):
    from grader.grading.pipeline import grade
    folder = tmp_path / "refused" / "student"
    folder.mkdir(parents=True)
    (folder / "scan.cuh").write_bytes(b"int x;\0\0")
    (folder / "reduce.cuh").write_bytes(b"/" * (emu_session.rubric.submission.max_student_file_bytes + 1))
    (folder / "warp_scan.cuh").symlink_to("/etc/passwd")
    result = grade(emu_session, folder.parent)
    messages = {t.file: t.message for t in result.tasks}
    assert messages["scan.cuh"] == "scan.cuh was refused: student/scan.cuh is not a text file (it contains NUL bytes)"
    assert messages["reduce.cuh"].startswith("reduce.cuh was refused: student/reduce.cuh is ")
    assert messages["warp_scan.cuh"] == ("warp_scan.cuh was refused: student/warp_scan.cuh is a symbolic "
                                         "link, which is not followed: submit the file itself")
    assert result.missing == {}


def test_applications_run_on_the_students_kernels(emulator):
    """handout/apps on the integration build, decided by the reference's verify-app:
    all pass on the reference; the handout's pi reaches its reduce placeholder (which does
    no work in a grading build) and the scans say which task they need; a wrong scan shows
    as a wrong table naming task 3."""
    reference = {a.name: a for a in emulator("reference").applications}
    assert set(reference) == {"pi", "normal-cdf", "compaction", "radix-sort"}
    assert all(a.status == "pass" for a in reference.values()), reference
    assert any(f.startswith("pi (your reduce") for f in reference["pi"].figures)
    handout = {a.name: a for a in emulator("handout").applications}
    assert handout["pi"].status == "not_implemented"
    assert "calls the handout's placeholder" in handout["pi"].message
    for name in ("normal-cdf", "compaction"):
        assert handout[name].status == "not_implemented"
        assert "needs task 3" in handout[name].message
    assert handout["radix-sort"].status == "not_implemented"
    assert handout["radix-sort"].message.startswith("needs the exercise split (student/split.cuh)")
    broken = {a.name: a for a in emulator("large_scan_bug").applications}
    assert broken["normal-cdf"].status == "fail"
    assert "Phi(" in broken["normal-cdf"].message and "your scan alone (task 3" in broken["normal-cdf"].message
    assert broken["pi"].status == "pass"


@pytest.mark.parametrize("name", ["reduce_fault_in_scan"])
def test_a_reduce_wrong_inside_the_scan_is_the_task_at_fault(emulator, name):
    """Task 2's reduce runs inside the scan (its phase 1): with it wrong and the scan's
    other files the reference's own, the integration run and the scan's applications
    name task 2's reduce alone, not task 3 (fault.locate: no build needed, the run itself
    had the reduce alone); the pi application (the reduce itself) names it as what it uses."""
    result = emulator(name)
    by_name = {tr.name: tr for tr in result.tasks}
    assert by_name["reduce"].verdict == "wrong" and by_name["scan"].verdict == "correct"
    alone = "with your reduce alone (task 2; the other tasks: the reference's own files, as you submitted them)"
    integ = result.integration
    assert integ.passed < integ.total
    assert re.fullmatch(r"integration (scan\S* \S+ n=\d+ block=\d+ \S+ fails|cases scan.* fail) " + re.escape(alone),
                        integ.message), integ.message
    apps = {a.name: a for a in result.applications}
    assert apps["normal-cdf"].status == "fail", apps["normal-cdf"]
    for a in apps.values():
        if a.status == "fail" and a.task == 3 and not a.exercise:
            assert a.message.endswith(f"; the application {a.name} fails {alone}"), a.message
    if apps["pi"].status == "fail":
        assert apps["pi"].message.endswith("; it uses your reduce (task 2)"), apps["pi"].message


def test_an_off_by_one_split_names_the_first_wrong_index(emulator):
    """The exercise runs on its own build: its tasks keep every point, and radix-sort
    says where the first split went wrong and that keys were lost."""
    result = emulator("split_off_by_one")
    assert result.correctness_score == result.correctness_max
    apps = {a.name: a for a in result.applications}
    assert {n: a.status for n, a in apps.items()} == {"pi": "pass", "normal-cdf": "pass",
                                                      "compaction": "pass", "radix-sort": "fail"}
    message = apps["radix-sort"].message
    assert message.startswith("after the split on bit 0, first wrong index "), message
    assert "written twice and others never" in message
    assert "your split (the exercise, student/split.cuh) on your scan-exclusive (task 3)" in message


def test_a_grader_bug_becomes_the_results_error(emu_session, tmp_path, monkeypatch):
    """A stage that raises stops the grade where it is: the result is still assembled,
    every task not graded, the error and its traceback said, nothing scored."""
    from grader.grading import pipeline
    folder = tmp_path / "buggy" / "student"
    folder.mkdir(parents=True)
    (folder / "scan.cuh").write_text((REPO / "solution" / "student" / "scan.cuh").read_text())

    def broken_plan(session, sub):
        raise RuntimeError("boom")
    monkeypatch.setattr(pipeline, "plan", broken_plan)
    result = pipeline.grade(emu_session, folder.parent)
    assert result.error == "internal grader error (RuntimeError: boom); please report it"
    assert len(result.notes) == 1 and "broken_plan" in result.notes[0]
    assert result.name == "buggy" and result.kind == "folder" and result.files == {}
    assert [t.status for t in result.tasks] == ["not_graded"] * len(emu_session.rubric.tasks)
    assert result.integration.status == "not_graded"
    assert result.integration.max_points == emu_session.rubric.integration.points
    assert result.score == 0 and result.correctness_score == 0
    assert result.source_digest and result.rubric_digest == emu_session.rubric.digest
