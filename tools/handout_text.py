"""The handout's text pages, generated from the assignment's one source of truth
(tools/make_handout.py writes them and re-exports these names): the points table of
appendix D (data/rubric.toml), the driver's options and exit statuses of appendix C
(data/assignment.toml), each task page's facts (its points and timed case, its CHUNK
per operator and its tile, from harness/policy.cuh and the operators' element sizes), the
quick start's table of task pages, and the whole page of a task that has none written by
hand (from the manifest, the rubric and its solution file's comments)."""
from __future__ import annotations

import re
from dataclasses import dataclass

from grader.config.assignment import Assignment, Task
from grader.config.rubric import Rubric, TaskRubric
from student_file import StudentFunction, header_comment, student_functions


def size_text(n: int) -> str:
    return f"2^{n.bit_length() - 1}" if n > 1 and n & (n - 1) == 0 else \
        f"2^{n.bit_length()}-1" if n > 2 and (n + 1) & n == 0 else str(n)


def rubric_table(rubric: Rubric) -> str:
    """Section 5's points table: what each task is worth and what it is timed on."""
    rows = ["| task | file | correctness | performance | timed on |",
            "| --- | --- | --- | --- | --- |"]
    def row(t: TaskRubric) -> str:
        timed = "; ".join(f"`{c.task}`, `{c.op}`, n = {size_text(c.n)}, block {c.block}"
                          for c in t.perf) or "-"
        return (f"| {t.number}: {t.title} | `student/{t.file}` | {t.correctness_points:g} | "
                f"{t.performance_points:g} | {timed} |")
    rows += [row(t) for t in rubric.tasks if not t.bonus]
    correctness, performance = rubric.max_correctness, rubric.max_performance
    rows.append(f"| total | | {correctness:g} | {performance:g} | {correctness + performance:g} points |")
    bonus = [t for t in rubric.tasks if t.bonus]
    if bonus:
        rows += [row(t) for t in bonus]
        rows.append(f"| bonus, on top of the total | | | | {rubric.max_bonus:g} points |")
    scoring = ("in proportion to the cases passed, hidden cases included"
               if rubric.correctness_scoring == "proportional" else
               "all or nothing: every case of the task must pass")
    slowdown = rubric.performance.full_credit_slowdown
    allowed = rubric.forbidden
    return "\n".join(rows) + "\n\n" + "\n".join([
        f"- Correctness points: {scoring}.",
        f"- Performance credit: full within {slowdown:g}x the reference time, "
        f"{slowdown:g} / slowdown beyond it.",
        f"- Time limit per run: {rubric.limits.run_timeout_s:g} s on the GPU, "
        f"{rubric.limits.emulator_run_timeout_s:g} s on the emulator.",
        "- Standard headers you may include: "
        + ", ".join(f"`<{h}>`" for h in allowed.allowed_system_includes) + ".",
        "- Preprocessor directives you may use besides `#include`: "
        + ", ".join(f"`#{d}`" for d in allowed.allowed_directives) + ".",
    ]) + "\n"


def driver_tables(a: Assignment) -> str:
    """The driver's options and exit statuses, as the handout README lists them."""
    lim, codes = a.limits, a.exit_codes
    ops = ", ".join(f"`{o.name}`" + (" (default)" if i == 0 else "") for i, o in enumerate(a.operators))
    dists = ", ".join(f"`{d}`" + (" (default)" if i == 0 else "") for i, d in enumerate(a.distributions))
    return "\n".join([
        "| option | meaning |",
        "| --- | --- |",
        f"| `--task` | {', '.join(f'`{d}`' for d in a.driver_task_names)} (required for `run`) |",
        f"| `--op` | {ops} |",
        f"| `--n` | element count from {lim.min_n} to {size_text(lim.max_n)} (the CPU emulator: up to "
        f"{size_text(lim.emulator_max_n)}; default `{size_text(lim.default_n)}`); "
        "accepts " + ", ".join(f"`{k}`" if "*" not in k else f"`'{k}'` (quote the `*`)"
                               for k in a.size_examples) + " |",
        f"| `--block` | threads per block, a multiple of {lim.warp_size} in [{lim.min_block}, "
        f"{lim.max_block}] (default {lim.default_block}) |",
        f"| `--seed`, `--dist` | input seed (default 1); {dists} |",
        "| `--time`, `--warmup`, `--reps`, `--baselines` | timing (appendix B.1) |",
        "| `--no-check`, `--output FILE`, `--json FILE` | skip the check; save raw output; results as JSON (`-` = stdout) |",
        "| `test`: `--tasks`, `--ops`, `--blocks` | comma-separated subsets, e.g. `--tasks scan --ops mssp --blocks 32,1024` |",
        "| `test`: `--max-n`, `--large`, `--junit FILE` | size cap; add the large sizes (block 256); JUnit report |",
        "",
        "| exit status | meaning |",
        "| --- | --- |",
        f"| {codes.passed} | pass |",
        f"| {codes.fail} | wrong result |",
        f"| {codes.usage} | bad arguments |",
        f"| {codes.not_implemented} | a task is still a stub (not implemented) |",
        f"| {codes.error} | CUDA or runtime error (illegal address, emulator diagnostic, ...) |",
        f"| {codes.no_gpu} | no GPU found (the GPU suite counts as skipped) |",
        f"| {codes.placeholder} | a grading build reached the handout's placeholder (it does no work "
        "there: harness/baselines.cuh) |",
    ]) + "\n"


def replace_between(text: str, begin_mark: str, end_mark: str, body: str, what: str,
                    where: str = "handout/README.md") -> str:
    begin, end = text.find(begin_mark), text.find(end_mark)
    if begin < 0 or end < begin:
        raise SystemExit(f"{where}: the markers of {what} are missing")
    begin += len(begin_mark)
    return text[:begin] + body + text[end:]


@dataclass(frozen=True)
class Policy:
    """The launch knobs of harness/policy.cuh that the task pages state (read from it,
    so that the text follows the code)."""
    chunk_bytes: int          # ChunkPolicy: bytes a thread of tasks 2 and 3
    lookback_bytes: int       # LookbackPolicy::kBytesPerThread: task 4
    max_blocks: int           # kMaxBlocks
    default_shared: int       # kDefaultSharedBytes

    def chunk(self, element_bytes: int) -> int:
        return 1 if element_bytes >= self.chunk_bytes else self.chunk_bytes // element_bytes

    def lookback_chunk(self, element_bytes: int, block: int) -> int:
        items = 1 if element_bytes >= self.lookback_bytes else self.lookback_bytes // element_bytes
        fits = lookback_shared_bytes(element_bytes, block, items) <= self.default_shared
        return items if fits else self.chunk(element_bytes)


def read_policy(text: str) -> Policy:
    def find(pattern: str, what: str) -> str:
        m = re.search(pattern, text, re.S)
        if not m:
            raise SystemExit(f"make_handout: harness/policy.cuh: {what} not found")
        return m.group(1)
    shared = find(r"kDefaultSharedBytes\s*=\s*([\d\s*]+);", "kDefaultSharedBytes")
    return Policy(int(find(r"struct ChunkPolicy\b.*?int\((\d+) / sizeof\(T\)\)", "ChunkPolicy's bytes")),
                  int(find(r"kBytesPerThread\s*=\s*(\d+);", "LookbackPolicy::kBytesPerThread")),
                  int(find(r"kMaxBlocks\s*=\s*(\d+);", "kMaxBlocks")),
                  eval_product(shared))


def eval_product(text: str) -> int:
    value = 1
    for factor in text.split("*"):
        value *= int(factor)
    return value


WARP = 32


def staged_slots(items: int) -> int:
    """harness/tile_io.cuh's stagedSlots: a tile with one pad slot every 32 elements."""
    return (items - 1) + (items - 1) // WARP + 1


def tile_shared_bytes(element_bytes: int, block: int, chunk: int) -> int:
    return (staged_slots(block * chunk) + block // WARP) * element_bytes


def lookback_shared_bytes(element_bytes: int, block: int, items: int) -> int:
    return (staged_slots(block * items) + block // WARP + 2) * element_bytes


def by_element_size(a: Assignment, driver_task: str) -> list[tuple[int, list[str]]]:
    """The operators a driver task runs, by element size."""
    sizes: dict[int, list[str]] = {}
    for o in a.operators:
        if o.tasks and driver_task not in o.tasks:
            continue
        sizes.setdefault(o.element_bytes, []).append(f"`{o.name}`")
    return sorted(sizes.items())


def points_fact(t: TaskRubric, rubric: Rubric) -> str:
    timed = "; ".join(f"`{c.task}`, `{c.op}`, n = {size_text(c.n)}, block {c.block}" for c in t.perf)
    total = rubric.max_correctness + rubric.max_performance
    kind = f"a bonus, on top of the {total:g}" if t.bonus else f"of the {total:g}"
    return (f"- **Points**: {t.correctness_points:g} for correctness, {t.performance_points:g} for "
            f"performance ({kind}); timed on {timed or 'nothing'}.")


def task_facts(number: int, a: Assignment, rubric: Rubric, policy: Policy) -> str:
    """A task page's facts: its points, and the CHUNK and tile its kernels get."""
    task = next(t for t in rubric.tasks if t.number == number)
    lines = [points_fact(task, rubric)]
    sizes = by_element_size(a, task.driver_tasks[0])
    int_bytes = 4
    if task.name in ("reduce", "scan"):
        chunks = "; ".join(f"{policy.chunk(b)} for {', '.join(names)} ({b}-byte elements)" for b, names in sizes)
        block, n = 256, 1 << 24
        chunk = policy.chunk(int_bytes)
        tile = block * chunk
        tiles = -(-n // tile)
        per_block = -(-tiles // policy.max_blocks)
        grid = -(-tiles // per_block)
        lines += [
            f"- **CHUNK** (`harness/policy.cuh`, `ChunkPolicy`: {policy.chunk_bytes} bytes a thread): {chunks}.",
            f"- **A tile** is `blockDim.x * CHUNK` elements: {tile} `int32` at {block} threads. At most "
            f"{policy.max_blocks} blocks (`kMaxBlocks`), each looping over whole tiles: n = {size_text(n)} "
            f"`int32` at {block} threads is {tiles} tiles, {grid} blocks of {per_block} "
            f"(`itemsPerBlock = {per_block * tile}`).",
            f"- **Shared memory** (`tileSharedBytes`): the staged tile (`stagedSlots(blockDim.x * CHUNK)` "
            f"elements) plus one element per warp: {tile_shared_bytes(int_bytes, block, chunk)} bytes for "
            f"`int32` at {block} threads.",
        ]
    if task.name == "lookback-scan":
        items = "; ".join(f"{policy.lookback_chunk(b, 256)} for {', '.join(names)} ({b}-byte elements)"
                          for b, names in sizes)
        wide = []
        for b, names in sizes:
            blocks = [k for k in (32, 64, 128, 256, 512, 1024) if policy.lookback_chunk(b, k) != policy.lookback_chunk(b, 32)]
            if blocks:
                wide.append(f"{policy.chunk(b)} for {', '.join(names)} at {', '.join(map(str, blocks))} threads")
        block = 256
        chunk = policy.lookback_chunk(int_bytes, block)
        tile = block * chunk
        shared = lookback_shared_bytes(int_bytes, block, chunk)
        lines += [
            f"- **CHUNK** (`harness/policy.cuh`, `LookbackPolicy`: {policy.lookback_bytes} bytes a thread): "
            f"{items}. A block whose tile would not fit in {policy.default_shared // 1024} KiB of shared memory "
            f"takes task 3's CHUNK instead: " + ("; ".join(wide) or "never") + ".",
            f"- **A tile** is `blockDim.x * CHUNK` elements, one block per tile: {tile} `int32` at {block} threads.",
            f"- **Shared memory** (`lookbackSharedBytes`): the staged tile, one slot per warp and two spare "
            f"slots, no more: {shared} bytes for `int32` at {block} threads. While the tile stays staged there "
            f"is no room for `scanIncWarp`'s {block} slots (one per thread).",
        ]
    return "\n".join(lines) + "\n"


# ---- the task pages --------------------------------------------------------------------
# A task's page is tasks/<number>-<name>.md. One written by hand (the course's prose, its
# facts filled in between the markers) has PAGE_PARTS; a task without one gets a page
# generated whole (generated_task_page) from what already says what the task is: the
# manifest, the rubric and its cases, and the solution file's comments (its contracts).
# A generated page has GENERATED_PARTS: "What to do" and "The three commonest mistakes"
# are an author's, learned from teaching it; deleting its first line makes it hand-written.
FACTS_BEGIN = "<!-- facts: generated by tools/make_handout.py from data/ and harness/policy.cuh -->\n"
FACTS_END = "<!-- end facts -->\n"
GENERATED_PAGE = "<!-- GENERATED by tools/make_handout.py"
PAGE_PARTS = ("## What to write", "## Where you start", "## What to do", "## How to test it",
              "## The three commonest mistakes", "## What the grader checks")
GENERATED_PARTS = ("## What to write", "## Where you start", "## How to test it", "## What the grader checks")
TASKS_BEGIN = "<!-- tasks: generated by tools/make_handout.py from data/assignment.toml and solution/student/ -->\n"
TASKS_END = "<!-- end tasks -->\n"
EXERCISES_PAGE = "tasks/apps.md"   # the exercises' page (written by hand)


def task_page_name(task: Task) -> str:
    return f"{task.number}-{task.name}.md"


def is_generated_page(text: str) -> bool:
    return text.startswith(GENERATED_PAGE)


def task_table(a: Assignment, written: dict[str, list[StudentFunction]]) -> str:
    """The quick start's table of pages: each task's and the exercises' (`written`: each
    student file's functions with a placeholder)."""
    def row(label: str, page: str, file: str) -> str:
        return (f"| {label} | [{page}]({page}) | `student/{file}` | "
                f"{', '.join(f'`{f.name}`' for f in written[file])} |")
    rows = ["| task | page | your file | what you write in it |", "| --- | --- | --- | --- |"]
    rows += [row(f"{t.number}" + (" (bonus)" if t.bonus else ""), f"tasks/{task_page_name(t)}", t.file)
             for t in a.tasks]
    rows += [row("exercise (no points)", EXERCISES_PAGE, e.file) for e in a.exercises]
    return "\n".join(rows) + "\n"


def paragraphs(lines: tuple[str, ...]) -> str:
    """Comment lines as Markdown: a blank comment line separates paragraphs."""
    return "\n".join(lines).strip() + "\n"


def contracts(task: Task, source: str) -> tuple[list[StudentFunction], str]:
    """The functions of the task's file and the page's contracts section: each function's
    doc comment, or, for one the file's first comment block names, that block (a function
    with neither is refused: a generated page is never a stub)."""
    functions = student_functions(source, task.file)
    if not functions:
        raise SystemExit(f"solution/student/{task.file}: no function with a //@@ solution region: "
                         f"nothing for tasks/{task_page_name(task)} to describe")
    header = header_comment(source)
    for f in functions:
        if not "".join(f.doc).strip() and not re.search(rf"\b{f.name}\b", "\n".join(header)):
            raise SystemExit(f"solution/student/{task.file}: {f.name} has no doc comment (the // lines "
                             f"right above it), and the file's first comment block does not name it: one of "
                             f"them is its contract on the generated page tasks/{task_page_name(task)}; "
                             "document it, or write the page by hand")
    text = paragraphs(header) + "\n" if header else ""
    text += "".join(f"- `{f.call}`: " + ("\n  ".join(f.doc) if f.doc else "as described above.") + "\n"
                    for f in functions)
    return functions, text


def starting_point(task: Task, functions: list[StudentFunction]) -> str:
    out = [f"In the handout's `student/{task.file}`, each function you write starts as a placeholder.", ""]
    for f in functions:
        what = (f"is a stub: it calls `notImplemented()`, so the driver says `task {task.number}: not "
                "implemented` until you write it" if f.stub else
                "runs as it is, and a file left as the placeholder earns no points")
        out += [f"`{f.name}` {what}:", "", "```cuda", *f.placeholder, "```", ""]
    return "\n".join(out)


def how_to_test(task: TaskRubric, a: Assignment) -> str:
    first = task.driver_tasks[0]
    applies = [o for o in a.operators if not o.tasks or first in o.tasks]
    op = next((o for o in applies if not o.commutative), applies[0]).name
    lines = [
        "make emu                      # after every edit: rebuilds build/scanlab-emu with your files",
        f"./build/scanlab-emu run --task {first} --op {op} --n 1000 --block 64    # one case (GPU: ./build/scanlab)",
        f"./build/scanlab-emu test --tasks {','.join(task.driver_tasks)}    # every case of the suite",
        "make emu-test                 # all tasks, and the isolation check",
        f"for s in $(seq 1 20); do SCANLAB_EMU_SEED=$s ./build/scanlab-emu run --task {first} --op {op} "
        "--n 100 || break; done"]
    lines += [f"./build/scanlab run --task {p.task} --op {p.op} --n {size_text(p.n)} --block {p.block} "
              "--time --baselines   # with a GPU: speed" for p in task.perf]
    return ("```\n" + "\n".join(lines) + "\n```\n\nA failure prints the first wrong index, the expected and "
            "actual values, and a `reproduce:` line with the seed. The emulator picks a random thread order "
            "at every shuffle and barrier: the loop over `SCANLAB_EMU_SEED` tries many schedules.\n")


def and_list(items: list[str]) -> str:
    return items[0] if len(items) == 1 else ", ".join(items[:-1]) + " and " + items[-1]


def grader_checks(task: TaskRubric, a: Assignment, rubric: Rubric) -> str:
    """What the grader runs on the task's file: its cases, drawn cases, race check and
    sanitizer runs as the rubric and the case file have them, and its points' rules."""
    cases = rubric.cases_for(task.driver_tasks, emulator=False)
    drawn = rubric.draw(1, True, (a.task(task.number),)).grade
    race = [c for c in cases if c.group in rubric.race_check_groups]
    sanitize = rubric.sanitize_for(task.driver_tasks)
    uses = [t for t in a.tasks if t.name in a.task(task.number).uses]
    text = (f"Your `{task.file}` alone, with the reference's other files"
            + (f": the code of task{'s' if len(uses) > 1 else ''} {and_list([str(t.number) for t in uses])} "
               f"that it calls is the reference's ({and_list([f'`{t.file}`' for t in uses])}), not yours: "
               "rely on the contracts only" if uses else "")
            + f". Its {len(cases)} cases (driver task{'s' if len(task.driver_tasks) > 1 else ''} "
            f"{', '.join(f'`{d}`' for d in task.driver_tasks)}) cover the operators "
            f"{', '.join(f'`{o}`' for o in dict.fromkeys(c.op for c in cases))}, the block sizes "
            f"{', '.join(str(b) for b in sorted({c.block for c in cases}))} and the inputs "
            f"{', '.join(f'`{d}`' for d in dict.fromkeys(c.dist for c in cases))}; "
            f"{sum(c.hidden for c in cases)} of them are hidden (reported only as pass or fail)"
            + (f", and each grade on a GPU draws {len(drawn)} more" if drawn else "") + ". "
            "They run on a GPU (or on the emulator, where there is none)"
            + (f"; a GPU grade runs {len(race)} of them again on the emulator, whose random thread order "
               "catches a missing synchronization" if race else "")
            + (f"; and {sum(len(v) for v in sanitize.values())} under compute-sanitizer "
               f"({', '.join(sanitize)})" if sanitize else "") + ". ")
    text += ("Performance: your time on the timed case above against the reference's "
             "([appendix D](../appendix/D-grading.md))." if task.performance_points else
             "It has no performance points: correctness alone ([appendix D](../appendix/D-grading.md)).")
    if task.bonus:
        text += " A bonus: left out, or left as the placeholder, it is \"not attempted\": not built, and it costs nothing."
    elif rubric.correctness.zero_for_placeholders:
        text += " A file still the placeholder earns 0."
    return text + "\n"


def generated_task_page(number: int, a: Assignment, rubric: Rubric, policy: Policy, source: str) -> str:
    """The whole page of a task that has none written by hand (`source`: its solution file)."""
    task, scored = a.task(number), next(t for t in rubric.tasks if t.number == number)
    functions, written = contracts(task, source)
    note = (f"{GENERATED_PAGE} from data/assignment.toml, data/rubric.toml and solution/student/{task.file}'s "
            "comments: change those and run `make handout`. To write this page by hand instead, delete this "
            "line: `make handout` then fills only its facts. -->\n")
    return "\n".join([
        note + f"# Task {number}: {task.title} (`student/{task.file}`{', a bonus' if task.bonus else ''})\n",
        "Read the [quick start](../README.md) first.\n",
        FACTS_BEGIN + task_facts(number, a, rubric, policy) + FACTS_END,
        "## What to write: the contracts\n", written,
        "## Where you start\n", starting_point(task, functions),
        "## How to test it\n", how_to_test(scored, a),
        "## What the grader checks\n", grader_checks(scored, a, rubric)]).rstrip("\n") + "\n"
