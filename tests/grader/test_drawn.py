"""The secret draw of hidden cases over the legal space (grader/config/draw.py, issue 41)."""
from __future__ import annotations

import dataclasses
from pathlib import Path

import pytest

from conftest import REPO

from grader.config.cases import CaseError, validate_case
from grader.config.draw import (GROUP, HUGE_MIN_N, MAX_BLOCKS, RACE_GROUP, TILE_LOOP_DRIVER_TASKS,
                                legal_blocks, tile_of)
from grader.config.rubric import RubricError, load_rubric
from grader.grading.checks import sanitizer
from grader.grading.correctness.check import HUGE_N, RunSetup
from grader.machine.backend import CUDA, EMULATOR
from grader.grading import sandbox
from grader.machine.slots import Resources

SEEDS = (1, 2, 3, 987654321, 2**62 + 5)


@pytest.fixture(scope="module")
def rubric():
    return load_rubric(REPO / "data" / "rubric.toml")


def test_the_legal_blocks_are_every_multiple_of_the_warp(rubric):
    lim = rubric.assignment.limits
    blocks = legal_blocks(rubric.assignment)
    assert blocks[0] == lim.min_block and blocks[-1] == lim.max_block
    assert len(blocks) == (lim.max_block - lim.min_block) // lim.warp_size + 1 == 32


@pytest.mark.parametrize("on_gpu", [True, False])
@pytest.mark.parametrize("seed", SEEDS)
def test_every_task_gets_every_block_and_valid_hidden_cases(rubric, seed, on_gpu):
    drawn = rubric.draw(seed, on_gpu)
    for task in rubric.assignment.tasks:
        cases = drawn.grade_for(task.driver_tasks)
        assert {c.block for c in cases} == set(legal_blocks(rubric.assignment)), task.name
        assert {c.task for c in cases} == set(task.driver_tasks), task.name
        for c in cases:
            assert c.hidden and c.group == GROUP
            validate_case(c, "drawn")      # raises on an illegal configuration


@pytest.mark.parametrize("seed", SEEDS)
def test_on_a_gpu_sizes_cover_every_class_and_pass_2_to_the_31(rubric, seed):
    a = rubric.assignment
    drawn = rubric.draw(seed, True)
    for task in a.tasks:
        cases = drawn.grade_for(task.driver_tasks)
        sizes = [c.n for c in cases]
        assert min(sizes) <= 64, task.name                                        # tiny
        assert any(c.n > MAX_BLOCKS * tile_of(a, c.op, c.block) for c in cases)  # many tiles
        assert any(c.n % tile_of(a, c.op, c.block) for c in cases if c.n > 4096)  # partial tiles
        assert any((1 << 24) <= n < HUGE_MIN_N for n in sizes), task.name        # many waves
        huge = [c for c in cases if c.n >= HUGE_MIN_N]
        assert len(huge) == 1 and huge[0].n <= a.limits.max_n, task.name
        # The cheapest element: 2^31 int32 elements are 8 GiB.
        assert a.operator(huge[0].op).element_bytes == 4 and a.operator(huge[0].op).exact, huge[0]


@pytest.mark.parametrize("seed", SEEDS)
def test_on_the_emulator_sizes_stay_within_its_budget(rubric, seed):
    drawn = rubric.draw(seed, False)
    d = rubric.drawn
    for task in rubric.assignment.tasks:
        cases = drawn.grade_for(task.driver_tasks)
        large = [c for c in cases if c.n > rubric.emulator_max_n]
        # Only the race size above 2^21, for the tasks whose kernels loop over tiles.
        looping = set(task.driver_tasks) & set(TILE_LOOP_DRIVER_TASKS)
        assert len(large) == (1 if looping else 0), task.name
        assert all(d.race_min_n <= c.n <= d.race_max_n and c.task in looping for c in large)
        assert all(c.n < HUGE_MIN_N for c in cases)
    assert not drawn.sanitize


def test_the_draw_is_repeatable_and_differs_between_seeds(rubric):
    assert rubric.draw(77, True) == rubric.draw(77, True)
    assert rubric.draw(77, True).grade != rubric.draw(78, True).grade
    # A task's draw does not depend on which other tasks are drawn.
    task = rubric.assignment.tasks[1]
    assert rubric.draw(77, True, (task,)).grade == tuple(rubric.draw(77, True).grade_for(task.driver_tasks))


@pytest.mark.parametrize("seed", SEEDS)
def test_race_and_sanitizer_configurations_are_drawn_with_partial_tiles(rubric, seed):
    a = rubric.assignment
    drawn = rubric.draw(seed, True)
    blocks = set(legal_blocks(a))
    for task in a.tasks:
        race = drawn.race_for(task.driver_tasks)
        assert race and all(c.block in blocks and c.hidden and c.group == RACE_GROUP for c in race)
        assert all(c.n % tile_of(a, c.op, c.block) for c in race)
        if set(task.driver_tasks) & set(TILE_LOOP_DRIVER_TASKS):
            assert any(c.n > 1 << 21 for c in race), task.name
        by_tool = drawn.sanitize_for(task.driver_tasks)
        assert set(by_tool) == {"racecheck", "synccheck", "memcheck"}
        assert all(c.block in blocks and c.n % tile_of(a, c.op, c.block) for cs in by_tool.values()
                   for c in cs if c.n < 1 << 20)
        assert max(c.n for c in by_tool["memcheck"]) >= rubric.drawn.sanitize_max_n // 2
    # Not only the published configuration (128 threads, n = 5003).
    assert len({c.block for s in drawn.sanitize for c in [s.case]}) > 4


def test_drawing_can_be_turned_off_and_is_checked(tmp_path):
    off = tmp_path / "off.toml"
    off.write_text(f'base = "{REPO / "data" / "rubric.toml"}"\n[drawn]\nrun = false\n')
    r = load_rubric(off)
    assert not r.draw(5, True).grade and not r.draw(5, True).sanitize
    bad = tmp_path / "bad.toml"
    bad.write_text(f'base = "{REPO / "data" / "rubric.toml"}"\n[drawn]\nrace_min_n = 100\nrace_max_n = 10\n')
    with pytest.raises(RubricError, match="race_min_n"):
        load_rubric(bad)


def test_the_emulator_limit_is_in_the_assignment(rubric):
    lim = rubric.assignment.limits
    assert lim.emulator_max_n == 2**31 - 1 < HUGE_MIN_N <= lim.max_n
    generated = (REPO / "handout" / "harness" / "generated" / "assignment.h").read_text()
    assert f"kEmulatorLimitN = {lim.emulator_max_n}ull" in generated


def _setup(tmp_path: Path, backend=CUDA) -> RunSetup:
    return RunSetup(backend, tmp_path / "ref", tmp_path, sandbox.Identity(), Resources.create(2, [0]),
                    timeout_s=30.0, memory_mb=16384, max_timeouts=1)


def test_a_huge_case_gets_memory_and_time_for_its_size(rubric, tmp_path):
    setup = _setup(tmp_path)
    drawn = rubric.draw(3, True)
    huge = next(c for c in drawn.grade if c.n >= HUGE_N and c.task == "scan")
    small = next(c for c in drawn.grade if c.n < 1000)
    assert setup.limits(small).memory_mb == 16384 and setup.limits(small).wall_s == 30.0
    big = setup.limits(huge)
    # Input and output of 2^31 int32 each: 16 GiB in host memory, more than the default.
    assert big.memory_mb > 16 * 1024 and big.wall_s > 30.0
    assert big.file_mb * (1 << 20) >= huge.output_bytes()


def test_a_sanitizer_run_of_drawn_cases_stays_hidden(rubric):
    drawn = rubric.draw(3, True)
    cases = drawn.sanitize_for(("reduce",))["racecheck"]
    r = sandbox.Result(["x"], returncode=0)
    report = sanitizer.Report([], 0)
    assert sanitizer.verdict("racecheck", cases, [1] * len(cases), report, r, "", 60).case.hidden
    visible = [dataclasses.replace(c, hidden=False) for c in cases]
    assert not sanitizer.verdict("racecheck", visible, [1] * len(visible), report, r, "", 60).case.hidden


def test_case_validation_still_refuses_illegal_blocks(rubric):
    c = rubric.draw(3, True).grade[0]
    with pytest.raises(CaseError):
        validate_case(dataclasses.replace(c, block=48), "x")


def test_the_emulator_driver_refuses_sizes_from_2_to_the_31(emu_session):
    import subprocess
    setup = emu_session.prepare()
    a = emu_session.rubric.assignment
    r = subprocess.run([str(setup.reference), "run", "--task", "reduce", "--n", "2^31"],
                       capture_output=True, text=True, timeout=120)
    assert r.returncode == a.exit_code("usage")
    assert "runs on a GPU only" in r.stdout + r.stderr
    ok = subprocess.run([str(setup.reference), "run", "--task", "reduce", "--n", "1000"],
                        capture_output=True, text=True, timeout=120)
    assert ok.returncode == a.exit_code("pass")


def test_huge_cases_run_as_many_at_once_as_the_gpus_memory_holds():
    from grader.grading.correctness.check import huge_at_once
    assert huge_at_once(24 * 1024) == 1          # a 24 GiB card: one at a time
    assert huge_at_once(81559) == 2              # an H100 80GB
    assert huge_at_once(143771) == 4             # an H200
