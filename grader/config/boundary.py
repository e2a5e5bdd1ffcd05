"""The boundary family: every grade runs each task's boundaries, not only a draw (issue 58).

A random draw finds a bug that lives at one size only by chance: a count that wraps at n =
2^32, a path taken at exact multiples of the tile, warps dropped only when a block of 512
threads is full. So besides the visible cases and the secret draw, each grade runs, for
each task, the family that data/cases.toml's [boundary] table defines, scaled to the
backend's size limit (the draw's, grader/config/draw.py):

- every legal block size, with n = `block_tiles` full tiles of that block (every warp of
  every tile full), the task's driver tasks and operators taken in turn;
- n = 2^k - 1, 2^k, 2^k + 1 (`power_offsets`) for k from `power_min_k` up to the largest
  k with 2^k at most the backend's largest drawn size (from `power_top_from_k` on, only
  the largest 2^k, alone), with the task's cheapest exact operator at the default block;
- exact multiples of the tile: `tile_counts` tiles at each of `tile_blocks`;
- on a GPU, `huge_sizes` (from 2^31, where a 32-bit index or count overflows), each for
  the driver tasks whose output at that size fits ([drawn] huge_output_max_n; the
  reduce's single element always does, up to max_n).

The family is deterministic and public (students can reproduce it): its cases are
visible, in group "boundary", and count in the task's correctness like any other case.
Pure: no I/O, no global state.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Iterable

from .assignment import Assignment, Task
from .cases import Case, CaseError, parse_count
from .draw import DrawLimits, legal_blocks
from .toml_table import setting

GROUP = "boundary"

# The tile of each driver task's kernels (its C++ type), mirrored from the harness:
# bytes of elements a thread holds a tile. harness/tasks/warp_tile.cuh (WarpScanPolicy:
# 16), harness/policy.cuh (ChunkPolicy: 32; LookbackPolicy: 80, or ChunkPolicy's where
# that tile's shared memory passes 48 KiB). tests/grader/test_boundary.py reads them there.
WARP_SCAN_BYTES = 16
CHUNK_BYTES = 32
LOOKBACK_BYTES = 80
TILE_POLICY = {"WarpScan": "warp", "Reduce": "chunk", "Scan": "chunk", "ScanExclusive": "chunk",
               "LookbackScan": "lookback", "LookbackScanExclusive": "lookback"}
DEFAULT_SHARED_BYTES = 48 * 1024     # harness/policy.cuh kDefaultSharedBytes
WARP = 32


def _items(element_bytes: int, per_thread_bytes: int) -> int:
    return 1 if element_bytes >= per_thread_bytes else per_thread_bytes // element_bytes


def _staged_slots(items: int) -> int:
    """harness/tile_io.cuh stagedSlots: one pad slot every 32 elements."""
    return (items - 1) + (items - 1) // WARP + 1


def tile_items(a: Assignment, driver: str, op: str, block: int) -> int:
    """Elements one tile of `block` threads takes in `driver`'s kernels (a block's
    segments in the warp scan's)."""
    size = a.operator(op).element_bytes
    # A kernel type this table does not know (a task added to data/ alone): the harness's
    # default policy, ChunkPolicy's tile.
    policy = TILE_POLICY.get(a.driver_task(driver).type, "chunk")
    if policy == "warp":
        return block * _items(size, WARP_SCAN_BYTES)
    if policy == "chunk":
        return block * _items(size, CHUNK_BYTES)
    items = _items(size, LOOKBACK_BYTES)
    shared = (_staged_slots(block * items) + block // WARP + 2) * size
    return block * (items if shared <= DEFAULT_SHARED_BYTES else _items(size, CHUNK_BYTES))


@dataclass(frozen=True)
class BoundaryRubric:
    """Whether each grade runs the boundary family (grader/config/boundary.py)."""
    TABLE = "boundary"
    run: bool = setting(True, "each grade also runs each task's boundary family (data/cases.toml "
                        "[boundary]: every block size with full tiles, n = 2^k and 2^k +- 1 up to "
                        "the backend's largest drawn size, exact tile multiples, on a GPU sizes from "
                        "2^31); visible, group \"boundary\" (false: off)")


@dataclass(frozen=True)
class BoundaryFamily:
    """data/cases.toml [boundary]: what each task's boundary family holds."""

    block_tiles: int = 3
    power_min_k: int = 5
    power_offsets: tuple[int, ...] = (-1, 0, 1)
    power_top_from_k: int = 24
    tile_counts: tuple[int, ...] = (1, 2)
    tile_blocks: tuple[int, ...] = (32,)
    huge_sizes: tuple[int, ...] = ()

    def cases(self, a: Assignment, task: Task, limits: DrawLimits) -> list[Case]:
        """The family of `task` on the backend of `limits`, without duplicates."""
        out = self._blocks(a, task, limits) + self._powers(a, task, limits) + \
            self._tile_multiples(a, task, limits) + self._huge(a, task, limits)
        return list(dict.fromkeys(out))

    def _blocks(self, a: Assignment, task: Task, limits: DrawLimits) -> list[Case]:
        pairs = _pairs(a, task)
        out: list[Case] = []
        for i, block in enumerate(legal_blocks(a)):
            # The pair of the turn, else (over the limit) the one with the smallest tile.
            for driver, op in [pairs[i % len(pairs)]] + _by_tile(a, pairs, block):
                n = self.block_tiles * tile_items(a, driver, op, block)
                if n <= limits.max_n:
                    out.append(_case(driver, op, n, block))
                    break
        return out

    def _powers(self, a: Assignment, task: Task, limits: DrawLimits) -> list[Case]:
        out: list[Case] = []
        top = limits.max_n.bit_length() - 1          # the largest k with 2^k within the limit
        for k in range(self.power_min_k, top + 1):
            if k >= self.power_top_from_k and k < top:
                continue                             # a large 2^k: only the largest
            for offset in self.power_offsets if k < self.power_top_from_k else (0,):
                driver = task.driver_tasks[len(out) % len(task.driver_tasks)]
                n = (1 << k) + offset
                if 1 <= n <= limits.max_n:
                    out.append(_case(driver, cheapest_op(a, driver), n, a.limits.default_block))
        return out

    def _tile_multiples(self, a: Assignment, task: Task, limits: DrawLimits) -> list[Case]:
        pairs = _pairs(a, task)
        out: list[Case] = []
        for block in self.tile_blocks:
            for count in self.tile_counts:
                turn = pairs[len(out) % len(pairs)]
                for driver, op in [turn] + _by_tile(a, pairs, block):
                    n = count * tile_items(a, driver, op, block)
                    if n <= limits.max_n:
                        out.append(_case(driver, op, n, block))
                        break
        return out

    def _huge(self, a: Assignment, task: Task, limits: DrawLimits) -> list[Case]:
        if limits.huge_max_n is None:
            return []
        out: list[Case] = []
        for n in self.huge_sizes:
            fits = [d for d in task.driver_tasks if n <= limits.huge_max_n and
                    a.driver_task(d).output_count(n) <= limits.huge_output_max_n]
            if fits:
                driver = fits[len(out) % len(fits)]
                out.append(_case(driver, cheapest_op(a, driver), n, a.limits.default_block))
        return out


def beyond(family: Iterable[Case], fixed: Iterable[Case]) -> list[Case]:
    """The family's cases that the case file's `fixed` ones do not already hold (by id):
    what a grade adds (grading/checking.py) and `scanlab grade` lists (tools/make_handout.py)."""
    known = {c.id for c in fixed}
    return [c for c in family if c.id not in known]


def cheapest_op(a: Assignment, driver: str) -> str:
    """The driver task's cheapest element (4 bytes), of an exact operator where there is
    one (the draw's n >= 2^31 cases take the same: their outputs are checked bit for bit)."""
    return min(a.operators_for(driver), key=lambda o: (a.operator(o).element_bytes,
                                                       not a.operator(o).exact, o))


def _pairs(a: Assignment, task: Task) -> list[tuple[str, str]]:
    return [(d, op) for d in task.driver_tasks for op in a.operators_for(d)]


def _by_tile(a: Assignment, pairs: list[tuple[str, str]], block: int) -> list[tuple[str, str]]:
    return sorted(pairs, key=lambda p: tile_items(a, p[0], p[1], block))


def _case(driver: str, op: str, n: int, block: int) -> Case:
    return Case(driver, op, n, block, "random", False, GROUP)


def _ints(table: dict[str, Any], key: str, default: tuple[int, ...], where: str,
          minimum: int) -> tuple[int, ...]:
    value = table.get(key, list(default))
    if not isinstance(value, list):
        value = [value]
    out = []
    for v in value:
        n = parse_count(v) if key == "huge_sizes" else v
        if not isinstance(n, int) or isinstance(n, bool) or n < minimum:
            raise CaseError(f"{where}: {key}: {v!r} is not a whole number of at least {minimum}")
        out.append(n)
    return tuple(out)


def parse_family(table: Any, a: Assignment, source: str = "cases") -> BoundaryFamily:
    """The [boundary] table of a case file (absent: the defaults above)."""
    where = f"{source}: [boundary]"
    if not isinstance(table, dict):
        raise CaseError(f"{where}: expected a table")
    known = {"block_tiles", "power_min_k", "power_offsets", "power_top_from_k", "tile_counts",
             "tile_blocks", "huge_sizes"}
    unknown = set(table) - known
    if unknown:
        raise CaseError(f"{where}: unknown key(s) {', '.join(sorted(unknown))}")
    d = BoundaryFamily()
    tile_blocks = _ints(table, "tile_blocks", d.tile_blocks, where, 1)
    for block in tile_blocks:
        if a.limits.block_problem(block):
            raise CaseError(f"{where}: tile_blocks: {a.limits.block_problem(block)}")
    huge = _ints(table, "huge_sizes", d.huge_sizes, where, 1)
    if any(n > a.limits.max_n for n in huge):
        raise CaseError(f"{where}: huge_sizes: above max_n {a.limits.max_n}")
    return BoundaryFamily(_ints(table, "block_tiles", (d.block_tiles,), where, 1)[0],
                          _ints(table, "power_min_k", (d.power_min_k,), where, 0)[0],
                          _ints(table, "power_offsets", d.power_offsets, where, -1 << 62),
                          _ints(table, "power_top_from_k", (d.power_top_from_k,), where, 0)[0],
                          _ints(table, "tile_counts", d.tile_counts, where, 1), tile_blocks, huge)
