"""Grading cases: the [grade] matrices of data/cases.toml, expanded, and their seeds."""
from __future__ import annotations

import hashlib
import re
from dataclasses import dataclass
from typing import Any, Iterable

DRIVER_TASKS = ("warp-scan", "reduce", "scan", "scan-exclusive")
OPERATORS = ("add-i32", "add-f32", "max-i32", "mssp")
DISTRIBUTIONS = ("random", "ones", "ascending", "descending")
# Bytes of one element of each operator (harness/ops.cuh).
ELEMENT_BYTES = {"add-i32": 4, "add-f32": 4, "max-i32": 4, "mssp": 16}
# Elements a perfect kernel reads + writes per input element (harness/tasks.h
# bytesMoved): what GB/s is computed from.
ELEMENTS_MOVED = {"warp-scan": 2, "reduce": 1, "scan": 2, "scan-exclusive": 2}
MAX_N = 1 << 32


class CaseError(ValueError):
    """A malformed case definition."""


_POWER = r"\d+(?:\^\d+)?"
_TERM = rf"{_POWER}(?:\*{_POWER})*"
_EXPRESSION = re.compile(rf"{_TERM}(?:[+-]{_TERM})*")


def parse_count(value: int | str) -> int:
    """'1000', '2^20', '3*2^20', '2^24+43', '2^26-1' -> an element count.

    The driver's forms plus + and -, so the case list can name sizes next to powers
    of two; the grader always passes the driver a plain number.
    """
    if isinstance(value, bool) or not isinstance(value, (int, str)):
        raise CaseError(f"size {value!r} is not a number")
    if isinstance(value, int):
        return value
    text = value.replace(" ", "")
    if not _EXPRESSION.fullmatch(text):
        raise CaseError(f"size {value!r}: expected a number such as 1000, 2^20, 3*2^20 or 2^24+43")
    total = 0
    for sign, term in re.findall(r"([+-]?)([^+-]+)", text):
        product = 1
        for factor in term.split("*"):
            base, _, exponent = factor.partition("^")
            if exponent and int(exponent) > 64:
                raise CaseError(f"size {value!r}: exponent too large")
            product *= int(base) ** int(exponent) if exponent else int(base)
        total += -product if sign == "-" else product
    return total


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
        count = 1 if self.task == "reduce" else self.n
        return count * ELEMENT_BYTES[self.op]

    def driver_args(self, seed: int) -> list[str]:
        return ["--task", self.task, "--op", self.op, "--n", str(self.n),
                "--block", str(self.block), "--seed", str(seed), "--dist", self.dist]


def _as_list(table: dict[str, Any], key: str, default: Iterable[Any]) -> list[Any]:
    value = table.get(key, list(default))
    return value if isinstance(value, list) else [value]


def validate_case(case: Case, where: str) -> None:
    if case.task not in DRIVER_TASKS:
        raise CaseError(f"{where}: unknown task {case.task!r} (expected one of {', '.join(DRIVER_TASKS)})")
    if case.op not in OPERATORS:
        raise CaseError(f"{where}: unknown operator {case.op!r} (expected one of {', '.join(OPERATORS)})")
    if case.dist not in DISTRIBUTIONS:
        raise CaseError(f"{where}: unknown distribution {case.dist!r}")
    if not 1 <= case.n <= MAX_N:
        raise CaseError(f"{where}: size {case.n} is outside [1, 2^32]")
    if case.block % 32 or not 32 <= case.block <= 1024:
        raise CaseError(f"{where}: block {case.block} is not a multiple of 32 in [32, 1024]")


def expand(tables: list[dict[str, Any]], source: str = "cases") -> list[Case]:
    """Every combination of every [[grade.case]] table, without duplicates, in order."""
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
        tasks = _as_list(table, "tasks", _as_list(table, "task", DRIVER_TASKS))
        ops = _as_list(table, "ops", _as_list(table, "op", OPERATORS))
        sizes = _as_list(table, "sizes", _as_list(table, "n", []))
        blocks = _as_list(table, "blocks", _as_list(table, "block", [256]))
        dists = _as_list(table, "dists", _as_list(table, "dist", ["random"]))
        if not sizes:
            raise CaseError(f"{where}: no sizes")
        for task in tasks:
            for op in ops:
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
    return cases
