"""Grading cases: the [grade] matrices of data/cases.toml, expanded, and their seeds.

What a case may name (driver tasks, operators, distributions, sizes, block sizes) is
the assignment's (data/assignment.toml, grader/config/assignment.py).
"""
from __future__ import annotations

import hashlib
from dataclasses import dataclass
from typing import Any, Iterable

from .assignment import CountError, default_assignment
from .assignment import parse_count as assignment_parse_count



class CaseError(ValueError):
    """A malformed case definition."""


def parse_count(value: int | str) -> int:
    """A size in the size grammar of data/assignment.toml ('2^20', '2^24+43', ...)."""
    try:
        return assignment_parse_count(value)
    except CountError as e:
        raise CaseError(str(e)) from None


@dataclass(frozen=True, order=True)
class Case:
    """One run of the driver: a task on generated input."""

    task: str
    op: str
    n: int
    block: int = 256
    dist: str = "random"
    hidden: bool = False
    group: str = ""
    backend: str = ""      # "emulator": a race-check case of a GPU grade (label only)

    @property
    def id(self) -> str:
        """Stable name, also what the seed is derived from."""
        return f"{self.task}/{self.op}/n={self.n}/block={self.block}/{self.dist}"

    @property
    def label(self) -> str:
        where = f" [{self.backend}]" if self.backend else ""
        return f"{self.task} {self.op} n={self.n} block={self.block} {self.dist}{where}"

    def seed(self, run_seed: int) -> int:
        """The case's input seed: fixed by the grading run's seed and the case."""
        digest = hashlib.sha256(f"{run_seed}:{self.id}".encode()).digest()
        return int.from_bytes(digest[:4], "little") or 1

    def output_bytes(self) -> int:
        return default_assignment().output_bytes(self.task, self.op, self.n)

    def driver_args(self, seed: int) -> list[str]:
        return ["--task", self.task, "--op", self.op, "--n", str(self.n),
                "--block", str(self.block), "--seed", str(seed), "--dist", self.dist]


@dataclass(frozen=True)
class SanitizeCase:
    """A case of data/cases.toml's [[sanitize.case]]: a run under a compute-sanitizer tool."""

    tool: str
    case: Case


SANITIZER_TOOLS = ("memcheck", "racecheck", "synccheck", "initcheck")


def _as_list(table: dict[str, Any], key: str, default: Iterable[Any]) -> list[Any]:
    value = table.get(key, list(default))
    return value if isinstance(value, list) else [value]


def validate_case(case: Case, where: str) -> None:
    a = default_assignment()
    if case.task not in a.driver_task_names:
        raise CaseError(f"{where}: unknown task {case.task!r} (expected one of {', '.join(a.driver_task_names)})")
    if case.op not in a.operator_names:
        raise CaseError(f"{where}: unknown operator {case.op!r} (expected one of {', '.join(a.operator_names)})")
    if case.op not in a.operators_for(case.task):
        raise CaseError(f"{where}: operator {case.op!r} is not used with task {case.task!r}")
    if case.dist not in a.distributions:
        raise CaseError(f"{where}: unknown distribution {case.dist!r}")
    if not a.limits.min_n <= case.n <= a.limits.max_n:
        raise CaseError(f"{where}: size {case.n} is outside [{a.limits.min_n}, {a.limits.max_n}]")
    problem = a.limits.block_problem(case.block)
    if problem:
        raise CaseError(f"{where}: {problem}")


def expand(tables: list[dict[str, Any]], source: str = "cases") -> list[Case]:
    """Every combination of every [[grade.case]] table, without duplicates, in order.

    Without `ops`, a task gets every operator the assignment uses with it; an operator
    the assignment does not use with a task is left out of that task's combinations.
    """
    a = default_assignment()
    cases: list[Case] = []
    seen: set[str] = set()
    known = {"group", "tasks", "task", "ops", "op", "sizes", "n", "blocks", "block", "dists",
             "dist", "hidden"}
    for index, table in enumerate(tables):
        where = f"{source}: [[grade.case]] #{index + 1}"
        unknown = set(table) - known
        if unknown:
            raise CaseError(f"{where}: unknown key(s) {', '.join(sorted(unknown))}")
        group = str(table.get("group", f"group {index + 1}"))
        hidden = bool(table.get("hidden", False))
        tasks = _as_list(table, "tasks", _as_list(table, "task", a.driver_task_names))
        named_ops = _as_list(table, "ops", _as_list(table, "op", []))
        sizes = _as_list(table, "sizes", _as_list(table, "n", []))
        blocks = _as_list(table, "blocks", _as_list(table, "block", [a.limits.default_block]))
        dists = _as_list(table, "dists", _as_list(table, "dist", [a.distributions[0]]))
        if not sizes:
            raise CaseError(f"{where}: no sizes")
        for task in tasks:
            if str(task) not in a.driver_task_names:
                raise CaseError(f"{where}: unknown task {task!r} (expected one of "
                                f"{', '.join(a.driver_task_names)})")
            ops = named_ops or list(a.operators_for(str(task)))
            for op in ops:
                if str(op) in a.operator_names and str(op) not in a.operators_for(str(task)):
                    continue
                for size in sizes:
                    for block in blocks:
                        for dist in dists:
                            try:
                                n = parse_count(size)
                            except CaseError as e:
                                raise CaseError(f"{where}: {e}") from None
                            case = Case(str(task), str(op), n, int(block), str(dist), hidden, group)
                            validate_case(case, where)
                            if case.id not in seen:
                                seen.add(case.id)
                                cases.append(case)
    for op in {str(o) for t in tables for o in _as_list(t, "ops", _as_list(t, "op", []))}:
        if op in a.operator_names and not any(c.op == op for c in cases):
            raise CaseError(f"{source}: operator {op!r} is used with none of its tables' tasks")
    return cases


def expand_sanitize(tables: list[dict[str, Any]], source: str = "cases") -> list[SanitizeCase]:
    """Every [[sanitize.case]] table: its `tools` times the matrix of its other keys (as
    [[grade.case]]'s)."""
    out: list[SanitizeCase] = []
    for index, table in enumerate(tables):
        where = f"{source}: [[sanitize.case]] #{index + 1}"
        if not isinstance(table, dict):
            raise CaseError(f"{where}: not a table")
        tools = _as_list(table, "tools", [])
        if not tools:
            raise CaseError(f"{where}: no tools (expected some of {', '.join(SANITIZER_TOOLS)})")
        unknown = [t for t in tools if t not in SANITIZER_TOOLS]
        if unknown:
            raise CaseError(f"{where}: unknown tool(s) {', '.join(map(str, unknown))} (expected "
                            f"some of {', '.join(SANITIZER_TOOLS)})")
        rest = {k: v for k, v in table.items() if k != "tools"}
        rest.setdefault("group", "sanitizer")
        cases = expand([rest], source)
        out += [SanitizeCase(str(t), c) for t in tools for c in cases]
    return list(dict.fromkeys(out))
