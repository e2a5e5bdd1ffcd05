"""compute-sanitizer on the GPU build (grader/grading/checks/sanitizer.py): its cases in data/cases.toml,
the parsing of the tool's logs (real ones, recorded on an H100: tests/grader/data/sanitizer,
each with what it was run on), the verdict a run becomes, and what a grade says when the
backends disagree or the emulator cannot build a file. Running the tool needs a GPU: that
is tests/grader/test_e2e_gpu.py's (skipped, never passed, without one)."""
from __future__ import annotations

import json
from pathlib import Path

import pytest

from conftest import REPO
from grader.grading.checks import sanitizer
from grader.grading.build import BuildResult
from grader.config.cases import Case, CaseError, expand_sanitize
from grader.grading.cross_checks import emulator_build_failed, say_sanitizer_findings, say_where_they_disagree
from grader.grading.outcomes import CheckOutcome
from grader.results import CaseResult
from grader.config.rubric import load_rubric
from grader.grading.sandbox import Result

DATA = Path(__file__).resolve().parent / "data" / "sanitizer"
CASES = [Case("reduce", "add-i32", 1000), Case("reduce", "add-i32", 4194311)]


def recorded(stem: str) -> tuple[str, dict]:
    """A log the tool wrote on the H100 and what it was run on (src, shown files, cases)."""
    return (DATA / f"{stem}.log").read_text(), json.loads((DATA / f"{stem}.json").read_text())


def parse_recorded(stem: str) -> tuple[sanitizer.Report, dict]:
    log, meta = recorded(stem)
    paths = sanitizer.Paths({f"{meta['src']}/student/{n}": p for n, p in meta["shown"].items()},
                            meta["src"])
    return sanitizer.parse(log, meta["tool"], paths), meta


# ---- the cases: defined once, in data/cases.toml ------------------------------------------

def test_sanitize_cases_are_tools_times_a_matrix():
    got = expand_sanitize([{"tools": ["racecheck", "synccheck"], "tasks": ["reduce"],
                            "ops": ["add-i32", "mssp"], "sizes": [5003], "blocks": [128]}])
    assert [(s.tool, s.case.op) for s in got] == [
        ("racecheck", "add-i32"), ("racecheck", "mssp"), ("synccheck", "add-i32"), ("synccheck", "mssp")]
    assert all(s.case.n == 5003 and s.case.block == 128 and s.case.group == "sanitizer" for s in got)


@pytest.mark.parametrize("table, words", [
    ({"sizes": [33]}, "no tools"),
    ({"tools": ["helgrind"], "sizes": [33]}, "unknown tool"),
    ({"tools": ["memcheck"], "sizes": [33], "colour": 1}, "unknown key"),
])
def test_bad_sanitize_cases_are_refused(table, words):
    with pytest.raises(CaseError, match=words):
        expand_sanitize([table])


def test_the_rubric_runs_every_tool_on_every_task_and_memcheck_past_the_emulator():
    rubric = load_rubric(REPO / "data" / "rubric.toml")
    assert rubric.sanitizer.run
    for t in rubric.tasks:
        by_tool = rubric.sanitize_for(t.driver_tasks)
        assert set(by_tool) == {"racecheck", "synccheck", "memcheck"}, t.name
        # Small multi-block cases for the race tools; memcheck beyond the emulator's sizes.
        for tool in ("racecheck", "synccheck"):
            assert all(c.n > c.block for c in by_tool[tool])
        assert any(c.n > rubric.emulator_max_n and c.n % 2 for c in by_tool["memcheck"])
        assert {c.task for cases in by_tool.values() for c in cases} == set(t.driver_tasks)


def test_sanitizer_off(tmp_path):
    (tmp_path / "r.toml").write_text(f'base = "{REPO}/data/rubric.toml"\n[sanitizer]\nrun = false\n')
    rubric = load_rubric(tmp_path / "r.toml")
    assert rubric.sanitize and rubric.sanitize_for(("scan",)) == {}


# ---- the command --------------------------------------------------------------------------

def test_command_pads_memcheck_only_and_exits_with_its_own_status(tmp_path):
    b = tmp_path / "scanlab"
    mem = sanitizer.command("/cs", "memcheck", b, tmp_path / "c", tmp_path / "j", tmp_path / "l")
    race = sanitizer.command("/cs", "racecheck", b, tmp_path / "c", tmp_path / "j", tmp_path / "l")
    assert mem[:3] == ["/cs", "--tool", "memcheck"] and "--padding" in mem
    assert "--padding" not in race
    assert race[race.index("--error-exitcode") + 1] == str(sanitizer.ERROR_EXIT)
    assert race[race.index(str(b)):] == [str(b), "batch", "--cases", str(tmp_path / "c"),
                                         "--json", str(tmp_path / "j")]


# ---- parsing the tool's logs ----------------------------------------------------------------

def test_paths_show_the_submission_and_the_handout_only():
    paths = sanitizer.Paths({"/w/b/src/student/scan.cuh": "alice/scan.cuh"}, "/w/b/src")
    assert paths.show("/w/b/src/student/scan.cuh") == "alice/scan.cuh"
    assert paths.show("/w/b/src/harness/tile_io.cuh") == "harness/tile_io.cuh"
    assert paths.show("/w/b/src/student/reduce.cuh") is None      # the reference's file
    assert paths.show("/usr/local/cuda/include/x.h") is None
    line = paths.scrub("at f+0x10 in /w/b/src/student/scan.cuh:57 and /etc/passwd:1")
    assert line == "at f+0x10 in alice/scan.cuh:57 and (a file of the grader):1"


def test_bare_names_of_harness_files_in_subfolders_keep_their_folder():
    # The tool may print a bare file name; most harness files live in its subfolders.
    harness = sanitizer.harness_files(REPO / "handout")
    assert harness["reduce_task.cuh"] == "harness/tasks/reduce_task.cuh"
    assert harness["run.h"] == "harness/host/run.h"
    assert harness["task_list.cuh"] == "harness/generated/task_list.cuh"
    assert harness["tile_io.cuh"] == "harness/tile_io.cuh"
    # No harness file has a student file's name (the isolation stand-ins are left out).
    assert not set(harness) & {p.name for p in (REPO / "handout" / "student").glob("*.cuh")}
    paths = sanitizer.Paths({"/w/b/src/student/scan.cuh": "alice/scan.cuh"}, "/w/b/src", harness)
    assert paths.show("reduce_task.cuh") == "harness/tasks/reduce_task.cuh"
    assert paths.show("tile_io.cuh") == "harness/tile_io.cuh"
    assert paths.show("scan.cuh") == "alice/scan.cuh"      # the student's file comes first
    assert paths.show("reduce.cuh") is None                # the reference's file, not shown
    assert paths.show("passwd") is None


def test_a_synthetic_memcheck_record():
    log = "\n".join([
        "========= COMPUTE-SANITIZER",
        "========= Invalid __global__ write of size 4 bytes",
        "=========     at void scanlab::reduceBlocksKernel<scanlab::Add<int>, (int)8>(const T1::Element *, "
        "unsigned long, unsigned long, T1::Element *)+0x7f0 in /w/src/student/reduce.cuh:130",
        "=========     by thread (0,0,0) in block (0,0,0)",
        "=========     Address 0x7f00 is out of bounds",
        "=========     Saved host backtrace up to driver entry point at kernel launch time",
        "=========         Host Frame: [0x2f0f2f] in /usr/lib/x86_64-linux-gnu/libcuda.so.1",
        "=========",
        "========= ERROR SUMMARY: 1 error",
    ])
    report = sanitizer.parse(log, "memcheck",
                             sanitizer.Paths({"/w/src/student/reduce.cuh": "bob/reduce.cuh"}, "/w/src"))
    assert report.errors == 1
    (f,) = report.failing
    assert f.headline == "Invalid __global__ write of size 4 bytes"
    assert f.where == "bob/reduce.cuh:130 in reduceBlocksKernel"
    assert not any("Host Frame" in line or "/usr/lib" in line for line in f.lines)


def test_a_clean_log_has_no_finding():
    log = "========= COMPUTE-SANITIZER\n========= ERROR SUMMARY: 0 errors\n"
    report = sanitizer.parse(log, "memcheck", sanitizer.Paths({}))
    assert report.errors == 0 and report.findings == []


def test_recorded_racecheck_of_a_lockstep_warp_scan():
    """The tool's real log (H100): intra-warp hazards of a warp scan with no __syncwarp,
    reported as warnings, one record per write with the reads it races with."""
    report, meta = parse_recorded("racecheck_lockstep")
    assert meta["returncode"] == sanitizer.ERROR_EXIT
    assert report.errors == 20                      # RACECHECK SUMMARY: 0 errors, 20 warnings
    assert len(report.failing) == 20 and all(f.warning for f in report.failing)
    first = report.failing[0]
    assert first.headline == "Race reported between Write access and Read access (19200 hazards)"
    assert first.where == "student/warp_scan.cuh:27 in storeVolatile"
    assert "student/warp_scan.cuh:19" in "\n".join(first.lines)


def test_recorded_memcheck_of_a_write_far_past_the_end():
    """The tool's real log (H100, --padding): a write 13101 bytes past the 132 KiB block
    results allocation (beyond the harness's canary), then the API calls that fail after it;
    the host backtrace (the harness's functions) is not quoted."""
    report, meta = parse_recorded("memcheck_far_past_end")
    assert report.errors == 6 and len(report.failing) == 6
    first = report.failing[0]
    assert first.headline == "Invalid __global__ write of size 4 bytes"
    assert first.where == "student/reduce.cuh:133 in reduceBlocksKernel"
    text = "\n".join(first.lines)
    assert "13101 bytes after the nearest allocation" in text and "by thread (0,0,0)" in text
    everything = "\n".join(line for f in report.findings for line in f.lines)
    assert "Host Frame" not in everything and "runTask" not in everything
    assert all(f.headline.startswith("Program hit") for f in report.failing[1:])
    c = sanitizer.verdict("memcheck", CASES, [1, 2], report, Result([], returncode=meta["returncode"]),
                          "", 60)
    assert c.status == "fail" and c.summary == (
        "compute-sanitizer memcheck found 6 errors: Invalid __global__ write of size 4 bytes "
        "(student/reduce.cuh:133 in reduceBlocksKernel)")


@pytest.mark.parametrize("stem", ["racecheck_clean", "synccheck_clean", "memcheck_clean"])
def test_recorded_clean_runs(stem):
    report, meta = parse_recorded(stem)
    assert meta["returncode"] == 0 and report.errors == 0 and report.findings == []


# ---- a run's verdict ----------------------------------------------------------------------

def _verdict(report: sanitizer.Report, r: Result) -> CaseResult:
    return sanitizer.verdict("memcheck", CASES, [1, 2], report, r, "compute-sanitizer ...", 120)


def test_a_finding_fails_the_run_with_the_tools_message():
    finding = sanitizer.Finding("memcheck", "Invalid __global__ write of size 4 bytes",
                                "student/reduce.cuh:130 in reduceBlocksKernel", ["Invalid ..."])
    c = _verdict(sanitizer.Report([finding], 1), Result([], returncode=sanitizer.ERROR_EXIT))
    assert c.status == "fail" and c.case.backend == "compute-sanitizer memcheck"
    assert "student/reduce.cuh:130" in c.summary and "n=4194311" in c.details


def test_the_tools_error_status_alone_fails_the_run():
    c = _verdict(sanitizer.Report([], None), Result([], returncode=sanitizer.ERROR_EXIT))
    assert c.status == "fail"


def test_a_run_past_its_time_limit_is_no_finding():
    c = _verdict(sanitizer.Report([], None), Result([], returncode=None, timed_out=True))
    assert c.status == "pass" and "not finished" in c.summary


def test_racechecks_warnings_fail_as_its_exit_status_does():
    w = sanitizer.Finding("racecheck", "Race reported", "", [], warning=True)
    assert _verdict(sanitizer.Report([w], 1), Result([], returncode=sanitizer.ERROR_EXIT)).status == "fail"


def test_a_clean_run_passes():
    assert _verdict(sanitizer.Report([], 0), Result([], returncode=0)).status == "pass"


# ---- what a grade says: the emulator cannot build it; the backends disagree ---------------------

def test_a_file_the_emulator_cannot_build_fails_the_race_check_cases():
    check = CheckOutcome("graded", cases=(CaseResult(Case("warp-scan", "add-i32", 33), 1, "pass"),))
    build = BuildResult("task 1 (emulator)", False,
                        errors="alice/warp_scan.cuh(12): error: identifier \"__match_any_sync\" is undefined")
    after = emulator_build_failed(check, build, [Case("warp-scan", "add-i32", 33), Case("warp-scan", "mssp", 33)], 7)
    assert after.verdict == "wrong" and after.total == 3 and after.passed == 1
    assert all(c.case.backend == "emulator" for c in after.cases[1:])
    assert "does not build for the CPU emulator" in after.message and "__match_any_sync" in after.message
    assert "race check: does not build" in after.race_note
    assert check.total == 1 and check.message == ""   # a new outcome: the stage's input is kept


GAP_ERROR = ("/g/handout/emulator/cuda_emu_intrinsics.h:371:23: error: static assertion failed: "
             "emulator gap: __fns is a CUDA device function the scanlab CPU emulator does not "
             "provide yet (handout/emulator/device_functions.def); your code is not at fault: it "
             "builds with nvcc\n/g/alice/warp_scan.cuh:27:32:   required from here\n")


def test_a_file_that_fails_only_on_an_emulator_gap_loses_nothing():
    check = CheckOutcome("graded", cases=(CaseResult(Case("warp-scan", "add-i32", 33), 1, "pass"),))
    build = BuildResult("task 1 (emulator)", False, errors=GAP_ERROR)
    after = emulator_build_failed(check, build, [Case("warp-scan", "add-i32", 33)], 7)
    assert after.verdict == "correct" and after.total == 1 and after.passed == 1
    assert "does not provide __fns" in after.race_note and "not counted against you" in after.race_note


def test_a_gap_message_from_a_student_file_or_beside_other_errors_is_no_excuse():
    check = CheckOutcome("graded", cases=(CaseResult(Case("warp-scan", "add-i32", 33), 1, "pass"),))
    cases = [Case("warp-scan", "add-i32", 33)]
    forged = GAP_ERROR.replace("/g/handout/emulator/cuda_emu_intrinsics.h", "/g/alice/warp_scan.cuh")
    other = GAP_ERROR + "/g/alice/warp_scan.cuh:30:5: error: 'x' was not declared in this scope\n"
    for errors in (forged, other):
        after = emulator_build_failed(check, BuildResult("task 1 (emulator)", False, errors=errors), cases, 7)
        assert after.verdict == "wrong" and "does not build for the CPU emulator" in after.message


def test_backends_that_disagree_are_named():
    case = Case("warp-scan", "mssp", 33)
    check = CheckOutcome("graded", cases=(
        CaseResult(case, 1, "pass"), CaseResult(Case("warp-scan", "mssp", 33, backend="emulator"), 1, "fail")))
    said = say_where_they_disagree(check)
    assert "disagree on 1 case" in said.message and "GPU pass, emulator fail" in said.message
    agree = CheckOutcome("graded", cases=(
        CaseResult(case, 1, "pass"), CaseResult(Case("warp-scan", "mssp", 33, backend="emulator"), 1, "pass")))
    assert say_where_they_disagree(agree).message == ""


def test_the_handouts_stub_is_not_run_under_the_tool_and_stays_not_implemented():
    # Every case of the build hit the handout's stub: no tool run (it would fail and make
    # the task "wrong"); the task's verdict stays "not implemented". (Seen on the H100:
    # the untouched handout's task 3 was "wrong".)
    from concurrent.futures import Future
    from grader.grading.cross_checks import sanitize_after
    stub = [CaseResult(Case("scan", "add-i32", 5003), 1, "not_implemented")]
    cases: Future = Future()
    cases.set_result(stub)
    never = sanitizer.Sanitizer("/nonexistent/compute-sanitizer", 1.0)   # never started
    got = sanitize_after([cases], None, never, "racecheck", Path("/nonexistent/scanlab"),
                         [Case("scan", "add-i32", 5003)], 7, {})
    check = say_sanitizer_findings(CheckOutcome("graded", cases=tuple(stub)), [got])
    assert got.status == "not_implemented" and "not implemented" in got.summary
    assert check.verdict == "not_implemented" and check.total == 2


def test_an_emulator_gap_has_racecheck_run_the_race_checks_cases_on_the_gpu_instead():
    # Issue 42, item 2: the file loses nothing for the emulator's gap, and its race check
    # is not skipped: compute-sanitizer's racecheck runs the race check's cases (the
    # visible ones, then the drawn ones in a run of their own) on the GPU build.
    from types import SimpleNamespace
    from grader.config.draw import Drawn
    from grader.grading import checking
    from grader.grading.outcomes import BuildOutcome, PartPlan
    rubric = load_rubric(REPO / "data" / "rubric.toml")
    task = next(t for t in rubric.tasks if t.name == "warp-scan")
    drawn = rubric.draw(41, True)
    runs = checking.race_check_cases(rubric, drawn, task.driver_tasks, "")
    visible = rubric.cases_for(task.driver_tasks, True, rubric.race_check_groups)
    assert [[c.id for c in r] for r in runs] == [[c.id for c in visible], [c.id for c in drawn.race_for(task.driver_tasks)]]
    assert all(c.backend == "" for r in runs for c in r)       # the GPU's cases
    assert checking.race_check_cases(rubric, Drawn(0), task.driver_tasks, "") == runs[:1]

    session = SimpleNamespace(rubric=rubric, jobs=1, gpus=[], sanitizer=object(), seed=7)
    part = PartPlan("task 1", task, "graded", files={task.file: b"..."})
    ran: list[tuple[str, str, list]] = []
    for errors, expected in ((GAP_ERROR, ["racecheck"] * len(runs)),
                             (GAP_ERROR + "/g/alice/warp_scan.cuh:30:5: error: 'x' was not declared\n", [])):
        with checking._Grading(session, lambda: None, [part], {}, print, checking.NO_BUDGET, drawn) as g:
            g.setup = SimpleNamespace()
            g.checks = [(part, [])]
            g.built[part.label] = BuildOutcome(BuildResult("task 1", True, Path("/b/scanlab")), "built")
            g.race_builds[part.label] = BuildResult("task 1 (emulator)", False, errors=errors)
            ran.clear()
            g.sanitize = lambda p, binary, setup, after, tool, cases: ran.append((p.label, tool, cases))
            g.racecheck_instead()
        assert [tool for _, tool, _ in ran] == expected
        assert [cases for _, _, cases in ran] == (runs if expected else [])
