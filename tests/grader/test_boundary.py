"""The boundary family every grade runs besides the draw (grader/config/boundary.py, issue 58)."""
from __future__ import annotations

import dataclasses
import re
import tomllib

import pytest

from conftest import REPO

from grader.config.assignment import parse_count
from grader.config.boundary import (CHUNK_BYTES, DEFAULT_SHARED_BYTES, GROUP, LOOKBACK_BYTES,
                                    TILE_POLICY, WARP_SCAN_BYTES, cheapest_op, tile_items)
from grader.config.cases import validate_case
from grader.config.draw import legal_blocks
from grader.config.rubric import load_rubric
from grader.grading.checking import cases_of
from grader.grading.outcomes import PartPlan
from grader.report import gradescope, terminal
from grader.results import CaseResult

# The family as data/cases.toml defines it: the test reads its expectations there.
FAMILY = tomllib.loads((REPO / "data" / "cases.toml").read_text())["boundary"]


@pytest.fixture(scope="module")
def rubric():
    return load_rubric(REPO / "data" / "rubric.toml")


def _limit(rubric, on_gpu: bool) -> int:
    return rubric.drawn.limits(rubric.assignment, on_gpu, rubric.emulator_max_n).max_n


def test_the_tile_shapes_are_the_harness_ones(rubric):
    """The Python mirror of the kernels' tiles reads the same numbers as the C++."""
    policy = (REPO / "handout" / "harness" / "policy.cuh").read_text()
    warp_tile = (REPO / "handout" / "harness" / "tasks" / "warp_tile.cuh").read_text()
    assert f"int(32 / sizeof(T))" in policy and CHUNK_BYTES == 32
    assert re.search(rf"kBytesPerThread = {LOOKBACK_BYTES};", policy)
    assert f"kDefaultSharedBytes = {DEFAULT_SHARED_BYTES // 1024} * 1024" in policy
    assert f"int({WARP_SCAN_BYTES} / sizeof(T))" in warp_tile
    assert {d.type for d in rubric.assignment.driver_tasks} <= set(TILE_POLICY)
    a = rubric.assignment
    # Task 4's tile: 20 int32 a thread while its shared memory fits 48 KiB, then CHUNK's 8.
    assert tile_items(a, "lookback-scan", "add-i32", 256) == 5120
    assert tile_items(a, "lookback-scan", "add-i32", 1024) == 8192
    assert tile_items(a, "reduce", "mssp", 32) == 64 and tile_items(a, "warp-scan", "add-i32", 32) == 128


@pytest.mark.parametrize("on_gpu", [False, True])
def test_every_task_gets_every_block_with_full_tiles(rubric, on_gpu):
    a = rubric.assignment
    family = rubric.draw(1, on_gpu).boundary
    assert family == rubric.draw(2, on_gpu).boundary, "deterministic: the same for every seed"
    for task in a.tasks:
        cases = [c for c in family if c.task in task.driver_tasks]
        assert all(not c.hidden and c.group == GROUP for c in cases)
        for c in cases:
            validate_case(c, "boundary")
        full = {c.block for c in cases
                if c.n == FAMILY["block_tiles"] * tile_items(a, c.task, c.op, c.block)}
        assert full == set(legal_blocks(a)), task.name
        assert {c.op for c in cases} == {o for d in task.driver_tasks for o in a.operators_for(d)}


@pytest.mark.parametrize("on_gpu", [False, True])
def test_powers_of_two_and_neighbours_up_to_the_backends_limit(rubric, on_gpu):
    a = rubric.assignment
    limit = _limit(rubric, on_gpu)
    top = limit.bit_length() - 1          # the largest k with 2^k within the limit
    assert top == (18 if not on_gpu else 27)
    for task in a.tasks:
        sizes = {c.n for c in rubric.draw(1, on_gpu).boundary_for(task.driver_tasks)}
        for k in range(FAMILY["power_min_k"], top + 1):
            large = k >= FAMILY["power_top_from_k"]
            offsets = [0] if large else FAMILY["power_offsets"]
            want = {(1 << k) + o for o in offsets if (1 << k) + o <= limit}
            if large and k < top:
                assert not want & sizes, (task.name, k)      # few large sizes: the top one only
            else:
                assert want <= sizes, (task.name, k, want - sizes)
        assert 1 << top in sizes and max(n for n in sizes if n < 1 << 31) <= limit


@pytest.mark.parametrize("on_gpu", [False, True])
def test_exact_tile_multiples(rubric, on_gpu):
    a = rubric.assignment
    limit = _limit(rubric, on_gpu)
    for task in a.tasks:
        cases = rubric.draw(1, on_gpu).boundary_for(task.driver_tasks)
        for block in FAMILY["tile_blocks"]:
            for count in FAMILY["tile_counts"]:
                smallest = min(tile_items(a, d, o, block) for d in task.driver_tasks
                               for o in a.operators_for(d))
                found = [c for c in cases if c.block == block and c.n == count * tile_items(a, c.task, c.op, block)]
                assert bool(found) == (count * smallest <= limit), (task.name, block, count)


def test_on_a_gpu_the_sizes_past_2_31_where_the_output_fits(rubric):
    a = rubric.assignment
    huge = [parse_count(s) for s in FAMILY["huge_sizes"]]
    assert a.limits.max_n in huge and all(n >= 1 << 31 for n in huge)
    gpu = rubric.draw(1, True)
    for task in a.tasks:
        sizes = [c for c in gpu.boundary_for(task.driver_tasks) if c.n >= 1 << 31]
        fits = [n for n in huge if any(a.driver_task(d).output_count(n) <= rubric.drawn.huge_output_max_n
                                       for d in task.driver_tasks)]
        assert sorted(c.n for c in sizes) == sorted(fits), task.name
        assert all(c.op == cheapest_op(a, c.task) and a.operator(c.op).element_bytes == 4 for c in sizes)
    # The reduce's one output element fits at max_n: n = 2^32, where a 32-bit count wraps.
    assert a.limits.max_n in {c.n for c in gpu.boundary_for(("reduce",))}
    assert not [c for c in rubric.draw(1, False).boundary if c.n >= 1 << 31]
    # [drawn] huge = false leaves them out with the draw's.
    off = dataclasses.replace(rubric, drawn=dataclasses.replace(rubric.drawn, huge=False))
    assert not [c for c in off.draw(1, True).boundary if c.n >= 1 << 31]


def test_the_family_can_be_turned_off(tmp_path):
    off = tmp_path / "off.toml"
    off.write_text(f'base = "{REPO / "data" / "rubric.toml"}"\n[boundary]\nrun = false\n')
    r = load_rubric(off)
    assert not r.draw(5, False).boundary and r.draw(5, False).grade


def test_a_tasks_cases_hold_the_family_once_beside_the_visible_and_drawn(rubric):
    task = rubric.tasks[1]
    drawn = rubric.draw(3, False)
    part = PartPlan(f"task {task.number}", task, "graded")
    cases = cases_of(rubric, part, True, drawn)
    assert len({c.id for c in cases if not c.group.startswith("drawn")}) == \
        len([c for c in cases if not c.group.startswith("drawn")])
    boundary = [c for c in cases if c.group == GROUP]
    assert boundary and set(boundary) <= set(drawn.boundary_for(task.driver_tasks))
    assert [c for c in cases if c.group.startswith("drawn")] == drawn.grade_for(task.driver_tasks)


def test_reports_name_the_boundary_family():
    from test_reports import _case, sample
    result = sample(False)
    t1 = result.tasks[0]
    family = dataclasses.replace(_case("warp-scan", "add-i32", 4096, "fail").case, group=GROUP)
    t1.cases = [*t1.cases, CaseResult(family, 7, "fail", "1 of 4096 element(s) differ", "", "x", 0.1)]
    text = terminal.render(result)
    assert "boundary family 0/1" in text and "[boundary] FAIL warp-scan add-i32 n=4096" in text
    doc = gradescope.document(result)
    assert any("0/1 of the boundary family" in t.get("output", "") for t in doc["tests"])
