"""The GPU pipeline without a GPU: the CPU emulator's drivers pose as GPU drivers, so
timing (interleaved rounds, trusted verify of the timed output, baselines, copy
bandwidth), eligibility and performance scoring run end to end here. The emulator's
times mean nothing about GPUs; only the plumbing and the arithmetic are checked. (The
real thing: test_e2e_gpu.py, on a GPU.)"""
from __future__ import annotations

import dataclasses

import pytest

from conftest import REPO, cache_dir, compose, load_fixture
from grader import machine as machines
from grader.build import Layout
from grader.slots import GpuSlots
from grader.grade import grade
from grader.session import Options, Session
from grader.perf import measure


@pytest.fixture(scope="module")
def pseudo_gpu(test_rubric, tmp_path_factory):
    m = machines.detect(check_boost=True)
    if not m.can_build_emulator:
        pytest.skip("the CPU emulator cannot be built here")
    small = tuple(dataclasses.replace(t, perf=tuple(dataclasses.replace(p, n=1 << 15) for p in t.perf))
                  for t in test_rubric.tasks)
    rubric = dataclasses.replace(
        test_rubric, tasks=small,
        performance=dataclasses.replace(test_rubric.performance, warmup=1, reps=3, rounds=2, max_rounds=3))
    session = Session(rubric, Layout(REPO), Options(backend="emulator", cache_dir=cache_dir(), seed=3),
                      log=lambda line: None)
    session.prepare()
    # The race check of GPU grades: emulator builds and cases next to the "GPU" ones.
    session.race_builder = session._builder("emulator", "")
    session.race_setup, _ = session._prepare_backend(session.race_builder, "emulator")
    # Pose as a GPU machine: timing and scoring take their GPU paths, with emulator drivers.
    session.backend = "cuda"
    session.gpus = [machines.Gpu(0, "CPU emulator posing as a GPU", "9.0", 0)]
    session.resources.gpus = GpuSlots([0])
    yield session, tmp_path_factory.mktemp("pseudo")
    session.close()


def test_measure_interleaves_and_verifies(pseudo_gpu):
    session, _ = pseudo_gpu
    setup = session.prepare()
    perf_case = session.rubric.tasks[2].perf[0]
    ref = session.run_reference
    p = measure(setup, ref, ref, perf_case, session.rubric.performance, 100.0)
    assert p.status == "measured", p.message
    assert 2 <= p.rounds <= 3
    assert len(p.reference_runs) == len(p.student_runs) == p.rounds
    assert p.reference_ms > 0 and p.student_ms > 0 and p.gbps > 0
    assert p.copy_fraction == pytest.approx(p.gbps / 100.0)
    assert {"cpu-sequential", "naive-hillis-steele"} <= set(p.baselines)
    assert all(s > 0 for s in p.speedups().values())
    assert p.noisy == (max(p.reference_spread, p.student_spread) > session.rubric.performance.max_spread)


def test_measure_rejects_a_wrong_timed_output(pseudo_gpu, tmp_path):
    session, _ = pseudo_gpu
    setup = session.prepare()
    liar = session.workdir / "liar-timed"
    liar.write_text("#!/bin/sh\n"
                    'OUT=""; JSON=""; prev=""\n'
                    'for a in "$@"; do case "$prev" in --output) OUT=$a;; --json) JSON=$a;; esac; prev=$a; done\n'
                    '[ -n "$OUT" ] && head -c 131072 /dev/zero > "$OUT"\n'
                    'echo \'{"status": "pass", "task": "scan", "op": "add-i32", "n": 32768, "block": 256, '
                    '"seed": 20240601, "timing": {"median_ms": 0.001, "min_ms": 0.001, "max_ms": 0.001, '
                    '"reps": 3}}\' > "$JSON"\n')
    liar.chmod(0o755)
    p = measure(setup, liar, session.run_reference, session.rubric.tasks[2].perf[0],
                session.rubric.performance, None)
    assert p.status == "failed" and "wrong" in p.message


def test_scores_with_performance(pseudo_gpu):
    session, tmp = pseudo_gpu
    result = grade(session, compose("reference", tmp))
    assert result.machine.backend == "cuda" and result.machine.copy_gbps > 0
    assert result.performance_measured
    assert result.max_score == 100
    for tr in result.tasks:
        assert tr.perf_status == "measured", tr.perf_message
        assert 0 < tr.performance_points <= tr.performance_max
        assert tr.perf[0].slowdown > 0
    assert result.score == pytest.approx(result.correctness_score + result.performance_score)

    # A task that is not graded earns no performance points; the same builds timed on
    # the same cases are not timed again.
    forbidden = grade(session, compose("forbidden", tmp))
    t2 = forbidden.tasks[1]
    assert t2.perf_status == "not_eligible" and t2.performance_points == 0
    assert forbidden.tasks[0].perf[0] is result.tasks[0].perf[0]
    assert forbidden.score == pytest.approx(result.score - result.tasks[1].points)


def test_race_check_cases_count(pseudo_gpu):
    session, tmp = pseudo_gpu
    result = grade(session, compose("race_warp_scan", tmp))
    t1 = result.tasks[0]
    race = [c for c in t1.cases if c.case.backend == "emulator"]
    groups = session.rubric.race_check_groups
    assert race and all(c.case.group in groups for c in race)
    assert all("[emulator]" in c.case.label for c in race)
    assert all(c.reproduce.startswith("SCANLAB_EMU_SEED=") for c in race)
    assert not any(c.passed for c in race)
    assert t1.race_note.startswith("race check: 0/")
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
        assert tr.verdict == want[tr.name], (name, tr.name, tr.message)
    if name == "crash":
        # The crash ends the batch; every case still gets its own verdict, run alone.
        t2 = result.tasks[1]
        assert t2.cases and {c.status for c in t2.cases} <= {"crash", "error"}
