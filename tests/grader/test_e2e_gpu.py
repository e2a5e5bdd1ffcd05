"""End to end on a real GPU: verdicts, the CUDA error of a crash, and performance
(interleaved timing against the reference). Skipped -- never passed -- without a GPU."""
from __future__ import annotations

import random

import pytest

from conftest import assert_expected_verdicts, compose, fixture_driver, fixture_names, load_fixture
from grader.grading.pipeline import grade
from grader.grading.timing import measure


@pytest.mark.parametrize("name", [n for n in fixture_names() if not load_fixture(n).huge])
def test_fixture_verdicts_on_gpu(gpu, name):
    result = gpu(name)
    assert result.machine.backend == "cuda"
    assert_expected_verdicts(name, result, "cuda")
    # On a GPU every task's performance is scored (0 when it is not eligible).
    assert result.performance_score is not None
    for tr in result.tasks:
        assert tr.performance_points is not None
        if not tr.all_passed:
            assert tr.performance_points == 0


@pytest.mark.parametrize("huge_fixture", ["reference", *(n for n in fixture_names() if load_fixture(n).huge)])
def test_drawn_cases_past_2_31_give_their_verdicts(gpu_huge_session, tmp_path, huge_fixture):
    """The drawn n >= 2^31 cases (one a task): the reference passes them, and a fixture
    wrong only there (a 32-bit index) fails them."""
    result = grade(gpu_huge_session, compose(huge_fixture, tmp_path))
    assert_expected_verdicts(huge_fixture, result, "cuda")
    huge = [c for tr in result.tasks for c in tr.cases if c.case.n >= 1 << 31]
    assert {c.case.task for c in huge} >= {"reduce"}, "one n >= 2^31 case a task"


def test_reference_full_marks_on_gpu(gpu):
    result = gpu("reference")
    assert result.machine.copy_gbps and result.machine.copy_gbps > 0
    for tr in result.tasks:
        assert tr.perf_status == "measured", tr.perf_message
        p = tr.perf[0]
        assert p.student_ms > 0 and p.reference_ms > 0 and p.gbps > 0
        assert p.baselines, "the reference's baselines (timed once per machine, kept in the cache)"
        # The reference against itself: within the full-credit band unless flagged noisy.
        if not p.noisy:
            assert tr.performance_points == pytest.approx(tr.performance_max), p
    # Full marks, and the bonus task's points on top of them.
    assert result.bonus_score > 0
    assert result.score == pytest.approx(result.max_score + result.bonus_score, abs=0.5)


def test_slow_scan_loses_performance_points(gpu):
    t3 = gpu("slow_scan").tasks[2]
    assert t3.all_passed
    assert t3.perf_status == "measured"
    assert t3.perf[0].slowdown > 2
    assert t3.performance_points < 0.5 * t3.performance_max


def test_the_untouched_handout_earns_nothing_on_the_gpu(gpu):
    """Tasks 1-2's placeholders are the handout's: in a grading build they do no work
    (harness/baselines.cuh), their cases say so, 0 points, not timed ([correctness]
    zero_for_placeholders; their slowness is the C++ test handout.placeholders.gpu's)."""
    result = gpu("handout")
    t1, t2, t3, t4 = result.tasks
    # (their placeholders do no work in a grading build: harness/baselines.cuh)
    assert t1.verdict == t2.verdict == "not_implemented" and t1.placeholder and t2.placeholder
    assert any(c.placeholder for c in t1.cases) and any(c.placeholder for c in t2.cases)
    assert result.score == 0 and result.performance_measured
    assert t1.perf_status == t2.perf_status == "not_eligible" and "placeholder" in t2.perf_message
    assert t3.performance_points == 0
    # The bonus task, still its placeholder, is not attempted: not built, not timed.
    assert t4.status == "not_attempted" and t4.points == 0


def test_crash_reports_the_cuda_error(gpu):
    t2 = gpu("crash").tasks[1]
    assert t2.passed == 0
    assert any("illegal" in c.summary.lower() or "CUDA" in c.summary for c in t2.cases)


def test_hang_is_killed_on_gpu(gpu, test_rubric):
    result = gpu("hang")
    statuses = [c.status for c in result.tasks[0].cases + result.integration.cases]
    assert "timeout" in statuses
    assert set(statuses) <= {"timeout", "not_run"}
    assert result.tasks[1].all_passed and result.tasks[2].all_passed


def test_race_check_catches_the_lockstep_warp_scan(gpu):
    # The GPU may run the racy warp in lockstep and pass it; the race check on the CPU
    # emulator (when it can be built on this machine) must not.
    t1 = gpu("race_warp_scan").tasks[0]
    if not t1.race_note.startswith("race check:"):
        pytest.skip(f"no race check on this machine: {t1.race_note}")
    assert not t1.all_passed
    assert any(c.case.backend == "emulator" and not c.passed for c in t1.cases)
    assert gpu("reference").tasks[0].race_note.startswith("race check:")


def _sanitized(task, tool: str) -> list:
    return [c for c in task.cases if c.case.backend == f"compute-sanitizer {tool}"]


def test_every_task_runs_under_compute_sanitizer_and_the_reference_is_clean(gpu):
    """Each task's own GPU build ran under racecheck, synccheck and memcheck, one case per
    tool, and the reference's builds have no finding (a false finding costs points)."""
    for tr in gpu("reference").tasks:
        for tool in ("racecheck", "synccheck", "memcheck"):
            (run,) = _sanitized(tr, tool)
            assert run.passed, (tr.name, tool, run.summary, run.details)


@pytest.mark.parametrize("name", ["lockstep_cudacc", "lockstep_trait"])
def test_racecheck_finds_the_lockstep_scan_the_emulator_never_sees(gpu, name):
    t1 = gpu(name).tasks[0]
    (run,) = _sanitized(t1, "racecheck")
    assert run.status == "fail" and "compute-sanitizer racecheck" in run.summary
    assert t1.verdict == "wrong" and run.summary in t1.message
    assert "/tmp/" not in run.summary + run.details and "scanlab-grade" not in run.details


def test_memcheck_finds_a_write_far_past_the_end_at_a_size_the_emulator_never_runs(gpu):
    t2 = gpu("reduce_far_past_end").tasks[1]
    (run,) = _sanitized(t2, "memcheck")
    assert run.status == "fail" and "Invalid __global__ write" in run.summary
    assert "reduce.cuh:" in run.summary      # the submission's file and line
    # The emulator's race-check cases never run that size: they pass.
    assert all(c.passed for c in t2.cases if c.case.backend == "emulator")


def test_a_write_before_the_start_is_named_by_the_canary(gpu):
    t2 = gpu("reduce_write_before").tasks[1]
    assert any("one before the start of" in c.summary for c in t2.cases if not c.passed)


def test_a_file_the_emulator_cannot_build_is_a_finding(gpu):
    t1 = gpu("emu_missing_intrinsic").tasks[0]
    assert t1.verdict == "wrong"
    if "race check on the CPU emulator not run" not in t1.race_note:
        failed = [c for c in t1.cases if c.case.backend == "emulator"]
        assert failed and all("does not build for the CPU emulator" in c.summary for c in failed)
# ---- timing cheats (issue 31): none earns performance points, refused or not ----------

# (fixture, its file, the driver task it cheats on, whether its timing fails outright).
# checked_only_reduce is no longer one: its launch counter is restored before every launch
# (issue 45), so it does the whole work every time (test_perf_emulated.py).
TIMING_CHEATS = [
    ("input_counter_reduce", "reduce.cuh", "reduce", True),      # writes its input
    ("tile_state_counter_lookback", "lookback_scan.cuh", "lookback-scan", True),
    ("recognize_timed_reduce", "reduce.cuh", "reduce", False),   # never recognizes: slow work
    ("side_stream_reduce", "reduce.cuh", "reduce", False),       # its slow work timed all the same
]


@pytest.mark.parametrize("name,file,task,fails", TIMING_CHEATS)
def test_a_timing_cheat_earns_nothing_even_past_the_static_checks(gpu_session, tmp_path, name, file,
                                                                   task, fails):
    """Each cheat built as its task is graded but past the text and symbol checks (some
    refuse it), timed against the reference on a secret seed: the runtime defences alone
    leave it no performance credit (its timing fails, or it is timed doing its slow
    honest work: credit full_credit_slowdown / slowdown, under 1%)."""
    session = gpu_session
    setup = session.prepare()
    cheat = fixture_driver(session, name, tmp_path, file, past_static_checks=True)
    perf_case = next(p for t in session.rubric.tasks for p in t.perf if p.task == task)
    rubric = session.rubric.performance
    p = measure(setup, cheat, session.run_reference, perf_case, rubric,
                session.machine_info().copy_gbps, seed=random.SystemRandom().randrange(1, 2**63))
    print(f"{name}: {p.status}; {p.message}; slowdown {p.slowdown}")
    if fails:
        assert p.status == "failed" and "timed repetition" in p.message, p.message
    elif p.status != "failed":   # (too slow for the time limit is no credit either)
        assert p.status == "measured", p.message
        assert p.slowdown is not None and rubric.full_credit_slowdown / p.slowdown < 0.01, p.slowdown


def test_timing_cheat_fixtures_earn_no_performance_points_when_graded(gpu_session, tmp_path):
    """Graded as submissions: each cheating task gets 0 performance points; the honest
    tasks of the same submissions keep theirs."""
    for name, _, task, _ in TIMING_CHEATS:
        result = grade(gpu_session, compose(name, tmp_path / "submissions"))
        assert_expected_verdicts(name, result, "cuda")
        for tr in result.tasks:
            print(f"{name}: task {tr.number}: {tr.perf_status} {tr.performance_points} {tr.perf_message}")
            if tr.name == task:
                assert tr.performance_points == pytest.approx(0, abs=0.01 * tr.performance_max), tr.perf_message
