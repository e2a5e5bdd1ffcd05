"""The secret draw: hidden cases over the whole legal space, drawn per grade (issue 41).

The visible cases of data/cases.toml are fixed, so students can reproduce them; a grade
that only looks there invites code that behaves there. So each grade also draws, from a
seed of its own that only the instructor's reports show (like the timed inputs' seed),

- grade cases: for each task, every block size the assignment allows (a multiple of the
  warp size in [min_block, max_block]) at least once, over the task's driver tasks and
  operators, with sizes from every class of SIZE_CLASSES up to the backend's largest; on a
  GPU also one case per task at n >= 2^31 (a 32-bit index overflows there);
- race cases: the emulator's race check (lanes in random order) on a few of those
  configurations, with partial tiles, plus one size above 2^21 for the tasks whose kernels
  loop over tiles;
- sanitize cases: compute-sanitizer's racecheck, synccheck and memcheck on drawn
  configurations, memcheck at a large size too.

Every drawn case is hidden (pass or fail only, no size, operator or block in a student's
report). The draw depends on the seed and the assignment only: `grade --draw-seed S`
repeats it. Pure: no I/O, no global state.
"""
from __future__ import annotations

import random
from dataclasses import dataclass, field

from .assignment import Assignment, Task
from .cases import Case, SanitizeCase
from .toml_table import setting

GROUP = "drawn"
RACE_GROUP = "drawn race check"
SANITIZE_GROUP = "drawn sanitizer"

# The size classes every task's drawn cases cover, in the order they are dealt out.
#   tiny        1 .. 2 warps
#   warp        a multiple of 32, +-1 (lanes of a partial warp)
#   block       a multiple of the block, +-1 (a partial block)
#   tile        a multiple of the tile (block x CHUNK), +-1 (a partial tile)
#   many-tiles  more tiles than MAX_BLOCKS blocks take one each: every block loops, with a
#               partial last tile
#   many-waves  (GPU) far more blocks' work than the GPU holds at once: 2^24 .. [drawn]
#               gpu_max_n (4-byte elements; wider ones as many bytes)
SIZE_CLASSES = ("tiny", "warp", "block", "tile", "many-tiles", "many-waves")
# harness/policy.cuh: at most this many blocks, each looping over its tiles (kMaxBlocks),
# and 32 bytes of elements a thread a tile (ChunkPolicy). Only where the size classes
# fall: a drawn size is right for any kernel, these only make the boundaries likely.
MAX_BLOCKS = 1024
TILE_BYTES_PER_THREAD = 32
# Tasks whose kernels loop over tiles: the race check runs one of their sizes above
# 2^21 (a racy branch reached only with many tiles a block).
TILE_LOOP_DRIVER_TASKS = ("reduce", "scan", "scan-exclusive")
HUGE_MIN_N = 1 << 31
MANY_WAVES_MIN_N = 1 << 24


@dataclass(frozen=True)
class DrawLimits:
    """What the backend that grades can run (from the rubric's [drawn] table)."""

    max_n: int                 # the largest drawn size besides the huge and race-large ones
    huge_max_n: int | None     # a case per task in [2^31, this] (None: not on this backend)
    huge_output_max_n: int     # ... for driver tasks with more output elements than this there
    race_min_n: int            # the race check's large size: in [race_min_n, race_max_n]
    race_max_n: int
    race_cases: int            # race-check configurations per task besides the large one
    sanitize_cases: int        # configurations per task and sanitizer tool
    sanitize_max_n: int        # the largest size of a drawn memcheck case
    large_race_on_grade: bool  # the grade's own cases include the race-large size (emulator)


@dataclass(frozen=True)
class Drawn:
    """One grade's draw."""

    seed: int
    grade: tuple[Case, ...] = ()
    race: tuple[Case, ...] = ()
    sanitize: tuple[SanitizeCase, ...] = field(default=())
    # The boundary family (grader/config/boundary.py): not drawn, but run beside the draw.
    boundary: tuple[Case, ...] = ()

    def boundary_for(self, driver_tasks: tuple[str, ...]) -> list[Case]:
        return [c for c in self.boundary if c.task in driver_tasks]

    def grade_for(self, driver_tasks: tuple[str, ...]) -> list[Case]:
        return [c for c in self.grade if c.task in driver_tasks]

    def race_for(self, driver_tasks: tuple[str, ...]) -> list[Case]:
        return [c for c in self.race if c.task in driver_tasks]

    def sanitize_for(self, driver_tasks: tuple[str, ...]) -> dict[str, list[Case]]:
        by_tool: dict[str, list[Case]] = {}
        for s in self.sanitize:
            if s.case.task in driver_tasks:
                by_tool.setdefault(s.tool, []).append(s.case)
        return by_tool


NOTHING = Drawn(0)


@dataclass(frozen=True)
class DrawnRubric:
    """The secret cases each grade draws over the whole legal space (grader/config/draw.py)."""
    TABLE = "drawn"
    run: bool = setting(True, "each grade also draws hidden cases from a secret seed (instructor "
                        "reports show it; --draw-seed repeats it): every legal block size for each "
                        "task, sizes of every class, race-check and compute-sanitizer "
                        "configurations (false: off)")
    gpu_max_n: int = setting(1 << 27, "on a GPU, the largest drawn size of the many-waves class "
                             "(of 4-byte elements; wider ones stop at as many bytes)",
                             minimum=1)
    huge: bool = setting(True, "on a GPU, one drawn case per task at n >= 2^31 (an int32 index "
                         "overflows there; 2^31 int32 elements are 8 GiB)")
    huge_output_max_n: int = setting((1 << 31) + (1 << 24), "the largest huge size of a driver "
                                     "task with one output element per input (its output file is "
                                     "as large as its input); one whose output at the assignment's "
                                     "max_n is no larger (reduce) draws up to that max_n", minimum=1 << 31)
    emulator_max_n: int | None = setting(None, "on the emulator, the largest drawn size besides "
                                         "the race sizes (default: [emulator] max_n)", minimum=1)
    race_min_n: int = setting((1 << 21) + 1, "the race check's large size (each task whose kernels "
                              "loop over tiles; on the emulator grade too) is drawn in "
                              "[race_min_n, race_max_n]", minimum=1)
    race_max_n: int = setting(1 << 22, "see race_min_n", minimum=1)
    race_cases: int = setting(3, "drawn race-check configurations per task besides the large one",
                              minimum=0)
    sanitize_cases: int = setting(2, "drawn configurations per task and compute-sanitizer tool "
                                  "(memcheck: one large one more)", minimum=0)
    sanitize_max_n: int = setting(1 << 24, "memcheck's large drawn size is in [half this, this]",
                                  minimum=1)

    def limits(self, a: Assignment, on_gpu: bool, emulator_max_n: int) -> DrawLimits:
        """What the draw may use on this backend (on the emulator: up to its budget)."""
        lim = a.limits
        if on_gpu:
            return DrawLimits(min(self.gpu_max_n, lim.max_n), lim.max_n if self.huge else None,
                              min(self.huge_output_max_n, lim.max_n), self.race_min_n, self.race_max_n,
                              self.race_cases, self.sanitize_cases, self.sanitize_max_n, False)
        emulator_n = self.emulator_max_n if self.emulator_max_n is not None else emulator_max_n
        return DrawLimits(emulator_n, None, 0, self.race_min_n, self.race_max_n, self.race_cases, 0, 0, True)

    def draw(self, a: Assignment, seed: int, on_gpu: bool, emulator_max_n: int,
             tasks: tuple[Task, ...] | None = None) -> Drawn:
        """A grade's secret cases from `seed` (none: run = false)."""
        if not self.run:
            return Drawn(seed)
        return draw(a, tasks if tasks is not None else a.tasks, seed, self.limits(a, on_gpu, emulator_max_n))



def legal_blocks(a: Assignment) -> list[int]:
    """Every block size the assignment allows."""
    lim = a.limits
    return [b for b in range(lim.min_block, lim.max_block + 1, lim.warp_size) if not lim.block_problem(b)]


def tile_of(a: Assignment, op: str, block: int) -> int:
    """Elements of one tile of `block` threads (harness/policy.cuh's ChunkPolicy)."""
    return block * max(1, TILE_BYTES_PER_THREAD // a.operator(op).element_bytes)


def draw_size(rng: random.Random, size_class: str, block: int, tile: int, max_n: int,
              large_max_n: int) -> int:
    """A size of `size_class` for this block and tile, at most max_n (a class whose sizes
    all lie above max_n gives a size near max_n instead: the emulator's budget)."""
    warp = 32
    if size_class == "tiny":
        n = rng.randint(1, 2 * warp)
    elif size_class == "warp":
        n = warp * rng.randint(1, 2 * block // warp) + rng.choice((-1, 0, 1))
    elif size_class == "block":
        n = block * rng.randint(1, 12) + rng.choice((-1, 0, 1))
    elif size_class == "tile":
        n = tile * rng.randint(1, 24) + rng.choice((-1, 0, 1))
    elif size_class == "many-tiles":
        n = tile * rng.randint(MAX_BLOCKS + 1, 4 * MAX_BLOCKS) + rng.randint(1, tile - 1)
    elif size_class == "many-waves":
        lo = min(MANY_WAVES_MIN_N, large_max_n)
        n = int(2 ** rng.uniform(lo.bit_length() - 1, large_max_n.bit_length() - 1)) + rng.randint(0, 4095)
        n = min(n, large_max_n)
    else:
        raise ValueError(f"unknown size class {size_class!r}")
    n = max(1, n)
    if n > max_n:
        n = rng.randint(max(1, max_n // 2), max_n)
    return n


def _dealt(rng: random.Random, items: list, count: int) -> list:
    """`count` items: every item once per round, each round in a fresh random order."""
    out: list = []
    while len(out) < count:
        round_ = list(items)
        rng.shuffle(round_)
        out += round_
    return out[:count]


def _dist(rng: random.Random, a: Assignment) -> str:
    # Mostly the random distribution; one case in four another one.
    return a.distributions[0] if rng.random() < 0.75 else rng.choice(a.distributions[1:] or a.distributions)


def _task_cases(rng: random.Random, a: Assignment, task: Task, limits: DrawLimits) -> list[Case]:
    blocks = legal_blocks(a)
    rng.shuffle(blocks)
    classes = [c for c in SIZE_CLASSES if c != "many-waves" or limits.max_n >= MANY_WAVES_MIN_N]
    classes_dealt = _dealt(rng, classes, len(blocks))
    drivers = _dealt(rng, list(task.driver_tasks), len(blocks))
    out: list[Case] = []
    ops_by_driver = {d: _dealt(rng, list(a.operators_for(d)), len(blocks)) for d in task.driver_tasks}
    for i, (block, size_class, driver) in enumerate(zip(blocks, classes_dealt, drivers)):
        op = ops_by_driver[driver][i]
        cap = limits.max_n
        if cap >= MANY_WAVES_MIN_N:
            # max_n counts 4-byte elements: wider ones stop at the same bytes (each drawn
            # output is a file, and a batch keeps its files until it ends).
            cap = max(MANY_WAVES_MIN_N, cap * 4 // a.operator(op).element_bytes)
        n = draw_size(rng, size_class, block, tile_of(a, op, block), cap, cap)
        out.append(Case(driver, op, n, block, _dist(rng, a), True, GROUP))
    if limits.huge_max_n is not None:
        # A 32-bit index overflows from 2^31: the cheapest element (4 bytes) past it, of an
        # exact operator where there is one (its 8 GiB output is checked on the GPU; a
        # float one would be scanned on one CPU core: minutes).
        driver = rng.choice(task.driver_tasks)
        op = min(a.operators_for(driver), key=lambda o: (a.operator(o).element_bytes,
                                                         not a.operator(o).exact, o))
        # Its output a file as large as the input's up to huge_output_max_n elements.
        top = limits.huge_max_n \
            if a.driver_task(driver).output_count(limits.huge_max_n) <= limits.huge_output_max_n \
            else min(limits.huge_max_n, limits.huge_output_max_n)
        out.append(Case(driver, op, rng.randint(HUGE_MIN_N + 1, top), rng.choice(blocks), "random",
                        True, GROUP))
    if limits.large_race_on_grade:
        out += _race_large(rng, a, task, limits, GROUP)
    return out


def _race_large(rng: random.Random, a: Assignment, task: Task, limits: DrawLimits, group: str) -> list[Case]:
    """One size above 2^21 (with a partial tile) for a task whose kernels loop over tiles."""
    looping = [d for d in task.driver_tasks if d in TILE_LOOP_DRIVER_TASKS]
    if not looping:
        return []
    driver = rng.choice(looping)
    op = rng.choice([o for o in a.operators_for(driver) if a.operator(o).element_bytes == 4]
                    or list(a.operators_for(driver)))
    block = rng.choice(legal_blocks(a))
    n = rng.randint(limits.race_min_n, limits.race_max_n)
    if n % tile_of(a, op, block) == 0:
        n -= 1
    return [Case(driver, op, n, block, "random", True, group)]


def _race_cases(rng: random.Random, a: Assignment, task: Task, limits: DrawLimits) -> list[Case]:
    out: list[Case] = []
    blocks = legal_blocks(a)
    for driver in _dealt(rng, list(task.driver_tasks), limits.race_cases):
        op = rng.choice(a.operators_for(driver))
        block = rng.choice(blocks)
        # Several tiles and a partial one, within the emulator's everyday sizes.
        tile = tile_of(a, op, block)
        n = min(tile * rng.randint(2, 6) + rng.randint(1, tile - 1), limits.max_n)
        out.append(Case(driver, op, n, block, _dist(rng, a), True, RACE_GROUP))
    return out + _race_large(rng, a, task, limits, RACE_GROUP)


def _sanitize_cases(rng: random.Random, a: Assignment, task: Task, limits: DrawLimits) -> list[SanitizeCase]:
    out: list[SanitizeCase] = []
    if limits.sanitize_cases <= 0:
        return out
    blocks = legal_blocks(a)
    for tool in ("racecheck", "synccheck", "memcheck"):
        for driver in _dealt(rng, list(task.driver_tasks), limits.sanitize_cases):
            op = rng.choice(a.operators_for(driver))
            block = rng.choice(blocks)
            tile = tile_of(a, op, block)
            n = tile * rng.randint(2, 8) + rng.randint(1, tile - 1)
            out.append(SanitizeCase(tool, Case(driver, op, n, block, "random", True, SANITIZE_GROUP)))
        if tool == "memcheck":
            # Large: writes far past a buffer that only many tiles reach.
            driver = rng.choice(task.driver_tasks)
            n = rng.randint(limits.sanitize_max_n // 2, limits.sanitize_max_n)
            out.append(SanitizeCase(tool, Case(driver, "add-i32" if "add-i32" in a.operators_for(driver)
                                               else a.operators_for(driver)[0], n,
                                               rng.choice(blocks), "random", True, SANITIZE_GROUP)))
    return out


def draw(a: Assignment, tasks: tuple[Task, ...], seed: int, limits: DrawLimits) -> Drawn:
    """The grade's secret cases for these tasks (each task's draw its own stream of the
    seed, so a task's cases do not depend on which other tasks are graded)."""
    grade: list[Case] = []
    race: list[Case] = []
    sanitize: list[SanitizeCase] = []
    for task in tasks:
        rng = random.Random(f"{seed}:{task.name}:grade")
        grade += _task_cases(rng, a, task, limits)
        rng = random.Random(f"{seed}:{task.name}:race")
        race += _race_cases(rng, a, task, limits)
        rng = random.Random(f"{seed}:{task.name}:sanitize")
        sanitize += _sanitize_cases(rng, a, task, limits)
    return Drawn(seed, tuple(dict.fromkeys(grade)), tuple(dict.fromkeys(race)),
                 tuple(dict.fromkeys(sanitize)))
