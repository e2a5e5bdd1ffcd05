"""The GPU pipeline without a GPU: the CPU emulator's drivers pose as GPU drivers, so
timing (interleaved rounds, trusted verify of the timed output, baselines, copy
bandwidth), eligibility and performance scoring run end to end here. The emulator's
times mean nothing about GPUs; only the plumbing and the arithmetic are checked. (The
real thing: test_e2e_gpu.py, on a GPU.)"""
from __future__ import annotations

import dataclasses
import re
import subprocess
import threading
import time

import pytest

from conftest import REPO, cache_dir, compose, fixture_driver, load_fixture
from grader.machine import detect as machines
from grader.machine.backend import CUDA, EMULATOR
from grader.grading.build import Layout
from grader.machine.slots import GpuSlots
from grader.classroom.batch import run_batch
from grader.grading.correctness.check import TimeoutTracker
from grader.grading.correctness.check import run_batch as run_batch_of_cases
from grader.grading.pipeline import grade
from grader.grading.session import Options, Session
from grader.config.assignment import default_assignment
from grader.config.draw import RACE_GROUP
from grader.grading.timing import PERF_SEED, BaselineStore, PerfJob, measure, measure_all, set_up_together


@pytest.fixture(scope="module")
def pseudo_gpu(test_rubric, tmp_path_factory):
    m = machines.detect(check_boost=True)
    if not m.can_build_emulator:
        pytest.skip("the CPU emulator cannot be built here")
    small = tuple(dataclasses.replace(t, perf=tuple(dataclasses.replace(p, n=1 << 15) for p in t.perf))
                  for t in test_rubric.tasks)
    # The drawn cases at the emulator's sizes: a GPU draw goes to 2^27 and past 2^31,
    # which the emulator's drivers refuse (and would take hours at).
    drawn = dataclasses.replace(test_rubric.drawn, gpu_max_n=test_rubric.drawn.emulator_max_n, huge=False)
    rubric = dataclasses.replace(
        test_rubric, tasks=small, drawn=drawn,
        performance=dataclasses.replace(test_rubric.performance, warmup=1, reps=3, rounds=2, max_rounds=3))
    session = Session(rubric, Layout(REPO), Options(backend="emulator", cache_dir=cache_dir(), seed=3),
                      log=lambda line: None)
    session.prepare()
    # The race check of GPU grades: emulator builds and cases next to the "GPU" ones.
    session.race_builder = session._builder(EMULATOR, "")
    session.race_setup, _ = session._prepare_backend(session.race_builder)
    # Pose as a GPU machine: timing and scoring take their GPU paths, with emulator drivers.
    session.backend = CUDA
    session.gpus = [machines.Gpu(0, "CPU emulator posing as a GPU", "9.0", 0)]
    session.resources.gpus = GpuSlots([0])
    session.baselines = BaselineStore(tmp_path_factory.mktemp("cache") / "baselines.json")
    yield session, tmp_path_factory.mktemp("pseudo")
    session.close()


# A fast time, as a served round of the scan perf case reports it (this module's perf
# size, 2^15; the perf seed; 1 warm-up and 3 reps: round k's repetitions are FIRST =
# 4(k-1) to LAST = 4k-1, which ROUND_K below fills in as a driver numbers them).
FAST_ROUND = ('{"status": "pass", "task": "scan", "op": "add-i32", "n": 32768, "block": 256, '
              '"seed": 20240601, "timing": {"median_ms": 0.001, "min_ms": 0.001, "max_ms": 0.001, '
              '"reps": 3, "repetitions": {"first": FIRST, "last": LAST, "warmup": 1, "timed": 3}}}')
ROUND_K = (f"echo '{FAST_ROUND}' | sed \"s/FIRST/$((4 * k - 4))/; s/LAST/$((4 * k - 1))/\" "
           '> "$JSON.tmp" && mv "$JSON.tmp" "$JSON.$k"')   # whole when it appears, as the harness's


def _fake_driver(session, name: str, body: str):
    """A stand-in driver: a shell script that finds its --json and --output arguments
    (JSON, OUT), then runs `body`."""
    path = session.workdir / name
    path.write_text("#!/bin/sh\n"
                    'OUT=""; JSON=""; prev=""\n'
                    'for a in "$@"; do case "$prev" in --output) OUT=$a;; --json) JSON=$a;; esac; prev=$a; done\n'
                    + body)
    path.chmod(0o755)
    return path


def test_measure_interleaves_and_verifies(pseudo_gpu):
    session, _ = pseudo_gpu
    setup = session.prepare()
    perf_case = session.rubric.tasks[2].perf[0]
    ref = session.run_reference
    steps: list[str] = []
    p = measure(setup, ref, ref, perf_case, session.rubric.performance, 100.0, steps.append,
                session.baselines_of(perf_case))
    assert p.status == "measured", p.message
    assert 2 <= p.rounds <= 3
    assert len(p.reference_runs) == len(p.student_runs) == p.rounds
    # Two processes, set up once, then timed round by round; the output checked after.
    assert sum("set up" in s for s in steps) == 1
    assert sum("round" in s for s in steps) == p.rounds
    assert "verifying" in steps[-1]
    assert p.reference_ms > 0 and p.student_ms > 0 and p.gbps > 0
    assert p.copy_fraction == pytest.approx(p.gbps / 100.0)
    assert {"cpu-sequential", "naive-hillis-steele"} <= set(p.baselines)
    assert all(s > 0 for s in p.speedups().values())
    assert p.noisy == (max(p.reference_spread, p.student_spread) > session.rubric.performance.max_spread)


def test_baselines_are_timed_once_per_gpu_and_kept(pseudo_gpu):
    session, _ = pseudo_gpu
    setup = session.prepare()
    store = session.baselines
    perf_case = session.rubric.tasks[1].perf[0]
    ref = session.run_reference
    first, fresh = store.get(setup, ref, "GPU A", perf_case, session.rubric.performance)
    assert fresh and {"cpu-sequential", "placeholder"} <= set(first)
    again, fresh = store.get(setup, ref, "GPU A", perf_case, session.rubric.performance)
    assert not fresh and again == first
    # Another process reads them from the cache file; another GPU model times its own.
    assert BaselineStore(store.path).get(setup, ref, "GPU A", perf_case,
                                         session.rubric.performance) == (first, False)
    _, fresh = store.get(setup, ref, "GPU B", perf_case, session.rubric.performance)
    assert fresh


def test_a_timed_process_that_stops_answering_is_killed(pseudo_gpu):
    session, _ = pseudo_gpu
    setup = dataclasses.replace(session.prepare(), timeout_s=3)
    # Sets up, then never times the round it is asked for.
    mute = _fake_driver(session, "mute-timed", 'echo \'{"status": "ready"}\' > "$JSON.ready"\n'
                                               'exec sleep 600\n')
    p = measure(setup, mute, session.run_reference, session.rubric.tasks[2].perf[0],
                session.rubric.performance, None)
    assert p.status == "failed" and "time limit" in p.message, p.message


def _liar(session):
    """It speaks the served protocol (run --time --serve) for the scan perf case,
    claims a fast time every round, and writes zeros."""
    return _fake_driver(session, "liar-timed",
                        'echo \'{"status": "ready"}\' > "$JSON.ready"; k=0\n'
                        'while read line && [ "$line" = time ]; do k=$((k+1))\n'
                        f"  {ROUND_K}\n"
                        'done\n'
                        '[ -n "$OUT" ] && head -c 131072 /dev/zero > "$OUT"\n')


def test_measure_rejects_a_wrong_timed_output(pseudo_gpu, tmp_path):
    session, _ = pseudo_gpu
    setup = session.prepare()
    p = measure(setup, _liar(session), session.run_reference, session.rubric.tasks[2].perf[0],
                session.rubric.performance, None)
    assert p.status == "failed" and "wrong" in p.message


def test_scores_with_performance(pseudo_gpu):
    session, tmp = pseudo_gpu
    result = grade(session, compose("reference", tmp))
    assert result.machine.backend == "cuda" and result.machine.copy_gbps > 0
    assert result.performance_measured
    assert result.max_score == 100
    # Every task of performance points measured; one of none (data/ may have one) not eligible.
    assert all(tr.perf_status == "not_eligible" for tr in result.tasks if tr.performance_max == 0)
    for tr in [tr for tr in result.tasks if tr.performance_max > 0]:
        assert tr.perf_status == "measured", tr.perf_message
        assert 0 < tr.performance_points <= tr.performance_max
        assert tr.perf[0].slowdown > 0
    assert result.score == pytest.approx(result.correctness_score + result.performance_score)

    # A task that is not graded earns no performance points; the same builds timed on
    # the same cases are not timed again.
    # (The fixture leaves the bonus out: not attempted, where the reference earns it.)
    forbidden = grade(session, compose("forbidden", tmp))
    t2 = forbidden.tasks[1]
    assert t2.perf_status == "not_eligible" and t2.performance_points == 0
    assert forbidden.tasks[0].perf[0] is result.tasks[0].perf[0]
    assert forbidden.tasks[3].verdict == "not_attempted" and result.bonus_score > 0
    assert forbidden.score == pytest.approx(result.score - result.tasks[1].points - result.bonus_score)


def test_race_check_cases_count(pseudo_gpu):
    session, tmp = pseudo_gpu
    result = grade(session, compose("race_warp_scan", tmp))
    t1 = result.tasks[0]
    race = [c for c in t1.cases if c.case.backend == "emulator"]
    groups = session.rubric.race_check_groups
    # The rubric's race-check groups, and the configurations each grade draws for it.
    assert race and all(c.case.group in (*groups, RACE_GROUP) for c in race)
    assert any(c.case.group == RACE_GROUP for c in race)
    assert all("[emulator]" in c.case.label for c in race)
    assert all(c.reproduce.startswith("SCANLAB_EMU_SEED=") for c in race)
    # The racy warp scan fails its race check's cases: under a random lane order nearly
    # every one (a clean-clone CI run here once saw some pass beside a loaded suite, where
    # alone it failed every one; cause not found), so most, and the note counts them.
    passed = sum(c.passed for c in race)
    assert passed <= len(race) // 4, [c.case.label for c in race if c.passed]
    assert t1.race_note.startswith(f"race check: {passed}/{len(race)} ")
    assert t1.verdict == "wrong"
    # The reference passes its race check.
    ref = grade(session, compose("reference", tmp / "again")).tasks[0]
    assert ref.race_note.startswith("race check:") and ref.all_passed


@pytest.mark.parametrize("name", ["crash", "large_scan_bug", "commutative_reduce"])
def test_batched_gpu_cases_keep_their_verdicts(pseudo_gpu, name):
    # GPU grades run each build's cases in one `batch` process; a crash ends the batch
    # and the rest is run case by case. The verdicts must be those of one run per case.
    session, tmp = pseudo_gpu
    result = grade(session, compose(name, tmp / name))
    want = load_fixture(name).expected("emulator")
    for tr in result.tasks:
        assert tr.verdict == want[tr.name], (name, tr.name, tr.message, [(c.case.label, c.status, c.summary[:200]) for c in tr.cases if not c.passed][:6])
    if name == "crash":
        # The crash ends the batch; every case still gets its own verdict, run alone.
        t2 = result.tasks[1]
        assert t2.cases and {c.status for c in t2.cases} <= {"crash", "error"}


# ---- timing cheats (issue: timing integrity) ------------------------------------------------

def _reduce_perf_case(session):
    return next(t for t in session.rubric.tasks if t.name == "reduce").perf[0]


@pytest.mark.parametrize("name", ["memo_reduce", "launch_counter_reduce", "attack_state_counter",
                                  "checked_only_reduce"])
def test_a_kernel_that_remembers_forgets_before_every_timed_repetition(pseudo_gpu, name):
    # Its __device__ variables are put back as loaded before every launch, timed or not
    # (handout/harness/host/student_state.h): the memo is never armed, the launch counter
    # never counts past the launch (attack_state_counter's result would be wrong from its
    # third launch on, checked_only_reduce's from its second), so every repetition does the
    # whole work, and the harness checks every repetition's output on the device: timed,
    # and right.
    session, tmp = pseudo_gpu
    setup = session.prepare()
    cheat = fixture_driver(session, name, tmp)
    p = measure(setup, cheat, session.run_reference, _reduce_perf_case(session),
                session.rubric.performance, None)
    assert p.status == "measured", p.message
    assert p.student_ms is not None and p.student_ms > 0
    honest = measure(setup, session.run_reference, session.run_reference, _reduce_perf_case(session),
                     session.rubric.performance, None)
    assert honest.status == "measured", honest.message


def test_a_counter_kept_in_the_input_fails_the_timing(pseudo_gpu):
    session, tmp = pseudo_gpu
    setup = session.prepare()
    cheat = fixture_driver(session, "input_counter_reduce", tmp)
    p = measure(setup, cheat, session.run_reference, _reduce_perf_case(session),
                session.rubric.performance, None, seed=987654321)
    assert p.status == "failed", p.message
    assert "timed repetition 0" in p.message and "changed their input" in p.message, p.message
    assert "in[0]" in p.message, p.message


def test_a_counter_kept_in_the_tile_state_reads_the_poison(pseudo_gpu):
    # The whole tile state is poisoned before every launch: the counter never reads 0,
    # so the kernel skips its work from the first launch on.
    session, tmp = pseudo_gpu
    cheat = fixture_driver(session, "tile_state_counter_lookback", tmp, "lookback_scan.cuh")
    r = subprocess.run([str(cheat), "run", "--task", "lookback-scan", "--n", "100000"],
                       capture_output=True, text=True, timeout=300)
    assert r.returncode == default_assignment().exit_code("fail"), r.stdout + r.stderr
    assert "elements differ" in r.stdout and "expected" in r.stdout, r.stdout


def test_the_timed_inputs_are_never_the_public_seeds(pseudo_gpu):
    # The fixture recognizes the input of the old public perf seed (and is wrong on
    # it); timed repetitions draw their inputs from the grade's secret seed, a fresh
    # one each, so it never recognizes one: it is timed doing its (slow) honest work.
    session, tmp = pseudo_gpu
    setup = session.prepare()
    cheat = fixture_driver(session, "recognize_timed_reduce", tmp)
    fail, ok = default_assignment().exit_code("fail"), default_assignment().exit_code("pass")
    for seed, code in ((PERF_SEED, fail), (PERF_SEED + 1, ok)):
        r = subprocess.run([str(cheat), "run", "--task", "reduce", "--n", str(1 << 15), "--seed", str(seed)],
                           capture_output=True, text=True, timeout=300)
        assert r.returncode == code, (seed, r.stdout + r.stderr)
    for seed in (PERF_SEED, 424242):
        p = measure(setup, cheat, session.run_reference, _reduce_perf_case(session),
                    session.rubric.performance, None, seed=seed)
        assert p.status == "measured", p.message


def test_a_macro_in_a_student_file_does_not_reach_the_timer(pseudo_gpu):
    # timer_macro defines `stop()` to divide every time by 1000. The harness's timer is
    # compiled apart from the student files (harness/host/student_unit.cu), so it is timed
    # like the reference whose code it is: the same time, within noise, not 1000x less.
    session, tmp = pseudo_gpu
    setup = session.prepare()
    cheat = fixture_driver(session, "timer_macro", tmp)
    p = measure(setup, cheat, session.run_reference, _reduce_perf_case(session),
                session.rubric.performance, None)
    assert p.status == "measured" and p.slowdown is not None, p.message
    assert 0.2 < p.slowdown < 5, p.slowdown


def test_a_time_beyond_the_copy_bandwidth_is_not_scored(pseudo_gpu):
    # The ceiling is set below what the honest reference reaches here (the emulator's
    # "device memory" is host memory, so the host's copy bandwidth is no ceiling).
    session, tmp = pseudo_gpu
    setup = session.prepare()
    rubric = dataclasses.replace(session.rubric.performance, plausible_min_mb=0)
    perf_case = _reduce_perf_case(session)
    honest = measure(setup, session.run_reference, session.run_reference, perf_case, rubric, None)
    assert honest.status == "measured" and honest.gbps, honest.message
    roomy = 10 * honest.gbps / rubric.max_copy_multiple
    ok = measure(setup, session.run_reference, session.run_reference, perf_case, rubric, roomy)
    assert ok.status == "measured" and not ok.implausible, ok.message
    tight = honest.gbps / (10 * rubric.max_copy_multiple)
    p = measure(setup, session.run_reference, session.run_reference, perf_case, rubric, tight)
    assert p.implausible and p.status == "failed", (p.status, p.gbps, tight)
    assert "implausible timing" in p.message and "copy bandwidth" in p.message


def test_the_physical_limit_is_not_checked_below_its_size(pseudo_gpu):
    session, tmp = pseudo_gpu
    setup = session.prepare()
    p = measure(setup, session.run_reference, session.run_reference, _reduce_perf_case(session),
                session.rubric.performance, 1e-6)
    # 2^15 elements (this module's perf size) move far less than plausible_min_mb.
    assert not p.implausible and p.status == "measured"


def test_no_student_destructor_runs_after_the_harness(pseudo_gpu):
    session, tmp = pseudo_gpu
    cheat = fixture_driver(session, "exit_destructor", tmp)
    r = subprocess.run([str(cheat), "run", "--task", "reduce", "--n", "1000"], capture_output=True,
                       text=True, timeout=120)
    assert r.returncode == 0, r.stdout + r.stderr
    assert "check   PASS" in r.stdout
    assert "CHEAT" not in r.stdout + r.stderr


def test_measure_all_times_each_job_on_a_quiet_gpu(pseudo_gpu, tmp_path):
    # Both jobs' processes set up side by side before any round; no process winds down
    # and no output is verified while rounds run; job 1's wrong output fails job 1 alone.
    session, _ = pseudo_gpu
    setup = session.prepare()
    ref = session.run_reference
    steps: list[str] = []
    jobs = [PerfJob(_liar(session), ref, session.rubric.tasks[2].perf[0]),
            PerfJob(ref, ref, _reduce_perf_case(session))]
    # after_rounds (the grade's profile) runs once, after the last job's rounds, with the
    # GPU let go: another turn alone on it is granted at once.
    heard: list[tuple[list[str], bool]] = []

    def after_rounds() -> None:
        got = threading.Event()

        def take() -> None:
            with setup.resources.gpu_alone():
                got.set()
        threading.Thread(target=take, daemon=True).start()
        heard.append((list(steps), got.wait(30)))

    first, second = measure_all(setup, jobs, session.rubric.performance, None, steps.append,
                                after_rounds=after_rounds)
    assert first.status == "failed" and "output of the timed run is wrong" in first.message
    assert second.status == "measured", second.message
    set_up = [i for i, s in enumerate(steps) if "timed processes set up side by side" in s]
    rounds_at = [i for i, s in enumerate(steps) if ": round " in s]
    verified_at = [i for i, s in enumerate(steps) if ": verifying" in s]
    assert len(set_up) == 1 and "4 timed processes" in steps[set_up[0]], steps
    assert rounds_at and set_up[0] < min(rounds_at), steps
    # The liar's output is verified (and found wrong) only after the last round of all.
    assert any(steps[i].startswith("scan: verifying") for i in verified_at), steps
    assert min(verified_at) > max(rounds_at), steps
    assert len(heard) == 1 and heard[0][1], "after_rounds ran with the GPU still held"
    rounds = [s for s in steps if s.startswith("reduce: round")]
    assert rounds and all(r in heard[0][0] for r in rounds), (heard[0][0], steps)
    # Each round says what the reference's process spent besides its timed launches.
    assert all(re.search(r"process: \d+ ms of it drawing and checking inputs\)$", r) for r in rounds), rounds
    # Where the GPU's memory holds one job's processes at a time: job 2 sets up while job 1
    # winds down and is verified, and its rounds wait for that. The same outcomes.
    steps.clear()
    one_by_one = dataclasses.replace(setup, gpu_memory_mib=1)
    first, second = measure_all(one_by_one, jobs, session.rubric.performance, None, steps.append)
    assert first.status == "failed" and second.status == "measured", (first.message, second.message)
    assert sum("2 timed processes set up side by side" in s for s in steps) == 2, steps
    verified = next(i for i, s in enumerate(steps) if s.startswith("scan: verifying"))
    timed = next(i for i, s in enumerate(steps) if s.startswith("reduce: round 1"))
    assert verified < timed, steps


def test_the_timed_processes_set_up_together_as_the_gpus_memory_holds():
    # A grade's four timed tasks at 2^26 int32: all at once on an 80 GB GPU; on a 16 GB
    # one, the scans (2 GiB of input and output each, four copies a process) one by one;
    # all at once where the memory is unknown (the emulator's is the host's).
    from grader.config.rubric import PerfCase
    cases = [PerfCase(t, "add-i32", 1 << 26, 256) for t in ("warp-scan", "reduce", "scan", "lookback-scan")]
    jobs = [PerfJob(REPO, REPO, c) for c in cases]
    assert set_up_together(jobs, 81559) == [[0, 1, 2, 3]]
    assert set_up_together(jobs, None) == set_up_together(jobs, 0) == [[0, 1, 2, 3]]
    small = set_up_together(jobs, 16 << 10)
    assert [k for g in small for k in g] == [0, 1, 2, 3] and len(small) >= 3, small
    assert set_up_together(jobs, 1) == [[0], [1], [2], [3]]     # one a group at least


def test_a_batch_grades_on_every_gpu_and_says_how_fast(pseudo_gpu, tmp_path):
    # Two "GPUs": each submission's correctness runs take either, its timing one alone.
    session, _ = pseudo_gpu
    class_folder = tmp_path / "class"
    for k in range(3):
        student = class_folder / f"student{k}" / "student"
        student.mkdir(parents=True)
        for f in (REPO / "solution" / "student").glob("*.cuh"):
            # A comment of its own: its own builds and timings, not another's.
            (student / f.name).write_text(f.read_text() + f"\n// student {k}\n")
    saved = session.gpus, session.resources.gpus
    session.gpus = [machines.Gpu(0, "CPU emulator posing as a GPU", "9.0", 0),
                    machines.Gpu(1, "CPU emulator posing as a GPU", "9.0", 0)]
    session.resources.gpus = two = GpuSlots([0, 1])
    said: list[str] = []
    try:
        results = run_batch(session, sorted(class_folder.iterdir()), tmp_path / "out", said.append)
    finally:
        session.gpus, session.resources.gpus = saved
    assert len(results) == 3
    for r in results:
        # Every task the rubric gives performance points is timed (data/: others are not eligible).
        statuses = [tr.perf_status for tr in r.tasks]
        assert "measured" in statuses and statuses == [
            "measured" if tr.performance_max > 0 else "not_eligible" for tr in r.tasks], r.name
        assert r.correctness_score == results[0].correctness_score
    assert sum(t["alone"] for t in two.turns.values()) >= 3     # a timing turn each at least
    assert all(t["shared"] + t["alone"] > 0 for t in two.turns.values()), two.turns
    last = said[-1]
    assert last.startswith("graded 3 submission(s) in ") and " per hour on 2 GPU(s) (GPU 0: " in last
    # The share of the batch each GPU was held by a run: what the CPU stages leave idle.
    busy = [int(b) for b in re.findall(r"busy (\d+)%", last)]
    assert len(busy) == 2 and all(0 <= b <= 100 for b in busy) and sum(busy) > 0, last


def test_gpus_are_chosen_by_index():
    gpus = [machines.Gpu(i, "G", "9.0", 0) for i in (0, 1, 2)]
    assert machines.select_gpus(gpus, "all") == gpus
    assert [g.index for g in machines.select_gpus(gpus, "2,0")] == [2, 0]
    with pytest.raises(ValueError, match="no GPU 5 here"):
        machines.select_gpus(gpus, "0,5")
    with pytest.raises(ValueError, match="expected all"):
        machines.select_gpus(gpus, "two")


def test_a_round_reported_before_it_is_asked_for_is_not_a_measurement(pseudo_gpu):
    session, _ = pseudo_gpu
    setup = session.prepare()
    # Writes every round's report at once, then answers nothing.
    eager = _fake_driver(session, "eager-timed",
                         f"for k in 1 2 3; do {ROUND_K}; done\n"
                         'echo \'{"status": "ready"}\' > "$JSON.ready"\n'
                         'while read line; do :; done\n')
    p = measure(setup, eager, session.run_reference, session.rubric.tasks[2].perf[0],
                session.rubric.performance, None)
    assert p.status == "failed" and "before it was asked for" in p.message, p.message


def test_a_hanging_batch_holds_the_gpu_one_time_limit_not_its_whole_allowance(pseudo_gpu, tmp_path):
    # A batch process that ends no case is stopped after one case's time limit; the case
    # it stopped at runs alone, the rest in a fresh batch, and once the build's timeouts
    # have cost its hang allowance (here 2 time limits) the rest are not run.
    session, _ = pseudo_gpu
    setup = dataclasses.replace(session.prepare(), timeout_s=2, max_timeouts=2, hang_budget=2)
    stuck = _fake_driver(session, "stuck-driver", "exec sleep 600\n")
    cases = session.rubric.cases_for(("reduce",), True)[:10]
    start = time.monotonic()
    results = run_batch_of_cases(setup, stuck, "stuck-build", cases, 7, TimeoutTracker())
    seconds = time.monotonic() - start
    assert [r.status for r in results].count("timeout") == 2
    assert {r.status for r in results} == {"timeout", "not_run"}
    # The batch's allowance alone would be 2 + 2 s a case = 22 s before any case runs alone.
    assert seconds < 15, seconds
