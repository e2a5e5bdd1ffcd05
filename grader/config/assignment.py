"""The assignment's one definition (data/assignment.toml): tasks, driver tasks,
operators, distributions, the driver's exit codes and the limits of a run.

The driver is compiled from the same file (tools/make_handout.py generates
handout/harness/generated/assignment.h from it), so the grader and the driver agree by
construction; tests check that they still do.
"""
from __future__ import annotations

import functools
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from .. import REPO_ROOT
from .toml_table import TomlTable, read_toml

DEFAULT_PATH = REPO_ROOT / "data" / "assignment.toml"
SAMPLE_KINDS = ("small-int", "full-int", "unit-float")


class AssignmentError(ValueError):
    """A malformed assignment manifest."""


class CountError(ValueError):
    """A size that is not a count in the size grammar."""


_POWER = r"\d+(?:\^\d+)?"
_TERM = rf"{_POWER}(?:\*{_POWER})*"
_EXPRESSION = re.compile(rf"{_TERM}(?:[+-]{_TERM})*")
_SCIENTIFIC = re.compile(r"\d+(?:\.\d+)?[eE]\d+")


def parse_count(value: int | str) -> int:
    """'1000', '2^20', '3*2^20', '2^24+43', '2^26-1', '1e6' -> an element count.

    The driver's --n reads the same grammar (harness/host/args.h); the examples of
    [sizes.examples] in the manifest are checked against both.
    """
    if isinstance(value, bool) or not isinstance(value, (int, str)):
        raise CountError(f"size {value!r} is not a number")
    if isinstance(value, int):
        return value
    text = value.replace(" ", "")
    if _SCIENTIFIC.fullmatch(text):
        mantissa, _, exponent = text.lower().partition("e")
        if int(exponent) > 19:
            raise CountError(f"size {value!r}: exponent too large")
        number = float(mantissa) * 10 ** int(exponent)
        if number != int(number):
            raise CountError(f"size {value!r} is not a whole number")
        return int(number)
    if not _EXPRESSION.fullmatch(text):
        raise CountError(f"size {value!r}: expected a number such as 1000, 2^20, 3*2^20, "
                         "2^24+43 or 1e6")
    total = 0
    for sign, term in re.findall(r"([+-]?)([^+-]+)", text):
        product = 1
        for factor in term.split("*"):
            base, _, exponent = factor.partition("^")
            if exponent and int(exponent) > 62:
                raise CountError(f"size {value!r}: exponent too large")
            product *= int(base) ** int(exponent) if exponent else int(base)
        total += -product if sign == "-" else product
    return total


@dataclass(frozen=True)
class OutputSize:
    """How many elements a driver task writes for n input elements: `fixed`, plus one per
    `per_input` input elements (0: none), the last group possibly short. The manifest's
    `output` ("n", "n/1024", "1") read by parse_output_size, the one reader of it; the
    driver gets the two numbers (harness/generated/assignment.h, outputCount in
    harness/host/tasks.h)."""
    text: str
    per_input: int
    fixed: int

    def count(self, n: int) -> int:
        return self.fixed + (-(-n // self.per_input) if self.per_input else 0)


_OUTPUT_SIZE = re.compile(r"n(?:/(\d+))?|(\d+)")


def parse_output_size(text: str) -> OutputSize:
    """'n' (one element per input element), 'n/K' (one per K input elements, rounded up:
    a segmented reduce) or 'K' (K elements whatever n is: a reduce writes "1")."""
    found = _OUTPUT_SIZE.fullmatch(text.replace(" ", ""))
    if not found or int(found.group(1) or found.group(2) or 1) < 1:
        raise AssignmentError(f"output size {text!r}: expected n, n/K or K (K a whole number >= 1)")
    per, fixed = found.groups()
    return OutputSize(text, 0 if fixed else int(per or 1), int(fixed or 0))


@dataclass(frozen=True)
class Operator:
    name: str
    cpp: str
    element_bytes: int
    commutative: bool
    identity: str
    sample: str
    range: int
    description: str
    tasks: tuple[str, ...]     # driver tasks it applies to

    @property
    def exact(self) -> bool:
        """Outputs compared bit for bit (integer elements); float ones pass within a
        rounding tolerance (harness/check.h) and are always checked on the CPU."""
        return self.sample != "unit-float"


@dataclass(frozen=True)
class Task:
    """What a student writes, in one file of student/."""
    number: int
    name: str
    title: str
    file: str
    kernels: tuple[str, ...]
    driver_tasks: tuple[str, ...]
    # Optional: its points come on top of the maximum (data/rubric.toml gives them).
    bonus: bool = False
    # The other tasks (by name) whose code runs inside this task's driver tasks: where
    # an integration case or an application fails, one of them failing its own cases
    # is named first (grader/grading/fault.py).
    uses: tuple[str, ...] = ()

    @property
    def harness_header(self) -> str:
        """Its driver tasks' types (plan, CPU reference, check, baselines), in the handout:
        harness/tasks/<file's stem>_task.cuh, a name no student file has."""
        return f"harness/tasks/{Path(self.file).stem}_task.cuh"


@dataclass(frozen=True)
class Exercise:
    """A student file run by an application (handout/apps), not by graded cases."""
    name: str
    title: str
    file: str
    kernels: tuple[str, ...]
    application: str
    uses: str                  # the driver task whose kernels the application also calls


@dataclass(frozen=True)
class DriverTask:
    """What `scanlab run --task NAME` runs."""
    name: str
    type: str                  # scanlab::tasks::<type> (and Task::<type>), in harness/tasks/
    task: int
    output: OutputSize         # the manifest's `output`: "n", "n/1024", "1"
    elements_moved: int
    baselines: tuple[str, ...]

    def output_count(self, n: int) -> int:
        return self.output.count(n)


@dataclass(frozen=True)
class ExitCodes:
    passed: int
    fail: int
    usage: int
    not_implemented: int
    error: int
    no_gpu: int
    placeholder: int        # a grading build reached the handout's placeholder (baselines.cuh)


@dataclass(frozen=True)
class RunLimits:
    warp_size: int
    min_block: int
    max_block: int
    min_n: int
    max_n: int
    default_n: int
    default_block: int
    emulator_max_n: int = 0      # the CPU emulator's largest n (above it: a GPU only)

    def block_problem(self, block: int) -> str:
        """Why `block` cannot be a block size ('' when it can)."""
        if block % self.warp_size or not self.min_block <= block <= self.max_block:
            return (f"block {block} is not a multiple of {self.warp_size} in "
                    f"[{self.min_block}, {self.max_block}]")
        return ""


@dataclass(frozen=True)
class Assignment:
    path: Path
    limits: RunLimits
    size_examples: dict[str, int]
    exit_codes: ExitCodes
    operators: tuple[Operator, ...]
    distributions: tuple[str, ...]
    tasks: tuple[Task, ...]
    driver_tasks: tuple[DriverTask, ...]
    exercises: tuple[Exercise, ...] = ()
    cxx_standard: int = 0        # [language]: every build's C++ standard, both backends (17: C++17)

    @property
    def operator_names(self) -> tuple[str, ...]:
        return tuple(o.name for o in self.operators)

    @property
    def driver_task_names(self) -> tuple[str, ...]:
        return tuple(d.name for d in self.driver_tasks)

    def operator(self, name: str) -> Operator:
        for o in self.operators:
            if o.name == name:
                return o
        raise KeyError(name)

    def driver_task(self, name: str) -> DriverTask:
        for d in self.driver_tasks:
            if d.name == name:
                return d
        raise KeyError(name)

    def task(self, number: int) -> Task:
        for t in self.tasks:
            if t.number == number:
                return t
        raise KeyError(number)

    def exercise_of_application(self, application: str) -> Exercise | None:
        return next((e for e in self.exercises if e.application == application), None)

    def task_of_file(self, file: str) -> Task | None:
        return next((t for t in self.tasks if t.file == file), None)

    def operators_for(self, driver_task: str) -> tuple[str, ...]:
        return tuple(o.name for o in self.operators if driver_task in o.tasks)

    def output_bytes(self, driver_task: str, op: str, n: int) -> int:
        return self.driver_task(driver_task).output_count(n) * self.operator(op).element_bytes

    def bytes_moved(self, driver_task: str, op: str, n: int) -> int:
        """What a perfect kernel reads + writes: the bytes GB/s is computed from."""
        return self.driver_task(driver_task).elements_moved * self.operator(op).element_bytes * n

    def _meanings(self) -> dict[str, int]:
        c = self.exit_codes
        return {"pass": c.passed, "fail": c.fail, "usage": c.usage,
                "not_implemented": c.not_implemented, "error": c.error, "no_gpu": c.no_gpu,
                "placeholder": c.placeholder}

    def exit_meaning(self, code: int | None) -> str:
        """What the driver's exit status `code` means ('' for none of [exit_codes])."""
        return next((m for m, c in self._meanings().items() if c == code), "")

    def exit_code(self, meaning: str) -> int:
        """The driver's exit status for `meaning` (the inverse of exit_meaning)."""
        return self._meanings()[meaning]


# ---- loading ----------------------------------------------------------------------------

class _Table(TomlTable):
    error = AssignmentError

    def count(self, key: str) -> int:
        try:
            return parse_count(self.get(key, (int, str)))
        except CountError as e:
            raise AssignmentError(f"{self.where}: `{key}`: {e}") from None


_IDENT = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
_NAME = re.compile(r"[a-z0-9][a-z0-9-]*")


def _require(items: list[Any], table: str, what: str, *keys: str) -> None:
    """At least one item, and no two sharing a value of any of `keys`."""
    if not items:
        raise AssignmentError(f"the manifest defines no {table}")
    for key in keys:
        values = [getattr(i, key) for i in items]
        dup = {v for v in values if values.count(v) > 1}
        if dup:
            raise AssignmentError(f"two {what} share the {key} {', '.join(map(str, sorted(dup)))}")


def parse_assignment(data: dict[str, Any], path: Path) -> Assignment:
    top = _Table(data, str(path.name))
    top.unknown({"limits", "sizes", "exit_codes", "language", "operator", "distributions", "task",
                 "driver_task", "exercise"})
    # In the manifest's order, so that of two mistakes the first is the one reported.
    limits, examples, codes = _parse_limits(data), _parse_examples(data), _parse_exit_codes(data)
    distributions = _Table(data.get("distributions", {}), "[distributions]").strings("names")
    driver_tasks = _parse_driver_tasks(data)
    names = tuple(d.name for d in driver_tasks)
    tasks = _parse_tasks(data, driver_tasks)
    exercises = _parse_exercises(data, names, tasks)
    for d in driver_tasks:
        if d.task not in {t.number for t in tasks}:
            raise AssignmentError(f"driver task {d.name}: no [[task]] number {d.task}")
    language = _Table(data.get("language", {}), "[language]")
    language.unknown({"cxx_standard"})
    return Assignment(path, limits, examples, codes, _parse_operators(data, names), distributions,
                      tuple(tasks), tuple(driver_tasks), tuple(exercises), language.get("cxx_standard", int))


def _parse_limits(data: dict[str, Any]) -> RunLimits:
    lt = _Table(data.get("limits", {}), "[limits]")
    lt.unknown({"warp_size", "min_block", "max_block", "min_n", "max_n", "default_n", "default_block",
                "emulator_max_n"})
    limits = RunLimits(lt.get("warp_size", int), lt.get("min_block", int), lt.get("max_block", int),
                       lt.count("min_n"), lt.count("max_n"), lt.count("default_n"),
                       lt.get("default_block", int), lt.count("emulator_max_n"))
    if not limits.min_n <= limits.emulator_max_n <= limits.max_n:
        raise AssignmentError("[limits]: emulator_max_n is outside [min_n, max_n]")
    if limits.block_problem(limits.default_block) or not limits.min_n <= limits.default_n <= limits.max_n:
        raise AssignmentError("[limits]: the defaults are outside the limits")
    return limits


def _parse_examples(data: dict[str, Any]) -> dict[str, int]:
    examples_table = _Table(_Table(data.get("sizes", {}), "[sizes]").data.get("examples", {}),
                            "[sizes.examples]")
    examples: dict[str, int] = {}
    for text, value in examples_table.data.items():
        if not isinstance(value, int) or parse_count(text) != value:
            raise AssignmentError(f"[sizes.examples]: {text!r} is not {value!r}")
        examples[text] = value
    return examples


def _parse_exit_codes(data: dict[str, Any]) -> ExitCodes:
    et = _Table(data.get("exit_codes", {}), "[exit_codes]")
    et.unknown({"pass", "fail", "usage", "not_implemented", "error", "no_gpu", "placeholder"})
    codes = ExitCodes(et.get("pass", int), et.get("fail", int), et.get("usage", int),
                      et.get("not_implemented", int), et.get("error", int), et.get("no_gpu", int),
                      et.get("placeholder", int))
    if len(set(vars(codes).values())) != len(vars(codes)):
        raise AssignmentError("[exit_codes]: two meanings share a code")
    return codes


def _parse_driver_tasks(data: dict[str, Any]) -> list[DriverTask]:
    tables = data.get("driver_task", [])
    driver_tasks: list[DriverTask] = []
    for i, raw in enumerate(tables if isinstance(tables, list) else []):
        t = _Table(raw, f"[[driver_task]] #{i + 1}")
        t.unknown({"name", "type", "task", "output", "elements_moved", "baselines"})
        try:
            output = parse_output_size(t.get("output", str))
        except AssignmentError as e:
            raise AssignmentError(f"{t.where}: `output`: {e}") from None
        d = DriverTask(t.get("name", str), t.get("type", str), t.get("task", int),
                       output, t.get("elements_moved", int), t.strings("baselines", ()))
        if not _NAME.fullmatch(d.name) or not _IDENT.fullmatch(d.type):
            raise AssignmentError(f"{t.where}: `name` must be lower-case-with-dashes and `type` "
                                  "a C++ identifier")
        driver_tasks.append(d)
    _require(driver_tasks, "[[driver_task]]", "driver tasks", "name", "type")
    return driver_tasks


def _parse_tasks(data: dict[str, Any], driver_tasks: list[DriverTask]) -> list[Task]:
    tasks: list[Task] = []
    for i, raw in enumerate(data.get("task", []) or []):
        t = _Table(raw, f"[[task]] #{i + 1}")
        t.unknown({"number", "name", "title", "file", "kernels", "bonus", "uses"})
        number = t.get("number", int)
        file = t.get("file", str)
        if not re.fullmatch(r"[A-Za-z0-9_]+\.cuh", file):
            raise AssignmentError(f"{t.where}: `file` must be a plain .cuh file name (found {file!r})")
        kernels = t.strings("kernels")
        if not kernels or not all(_IDENT.fullmatch(k) for k in kernels):
            raise AssignmentError(f"{t.where}: `kernels` must name C++ functions")
        mine = tuple(d.name for d in driver_tasks if d.task == number)
        if not mine:
            raise AssignmentError(f"{t.where}: no [[driver_task]] checks task {number}")
        name = t.get("name", str)
        if not _NAME.fullmatch(name):
            raise AssignmentError(f"{t.where}: `name` must be lower-case-with-dashes")
        tasks.append(Task(number, name, t.get("title", str), file, kernels, mine,
                          t.get("bonus", bool, False), t.strings("uses", ())))
    _require(tasks, "[[task]]", "tasks", "number", "name", "file")
    task_names = {t.name for t in tasks}
    for task in tasks:
        if not set(task.uses) <= task_names - {task.name}:
            raise AssignmentError(f"[[task]] {task.name}: `uses` must name other tasks "
                                  f"(found {', '.join(task.uses)})")
    return tasks


def _parse_exercises(data: dict[str, Any], names: tuple[str, ...], tasks: list[Task]) -> list[Exercise]:
    exercises: list[Exercise] = []
    for i, raw in enumerate(data.get("exercise", []) or []):
        t = _Table(raw, f"[[exercise]] #{i + 1}")
        t.unknown({"name", "title", "file", "kernels", "application", "uses"})
        exercise = Exercise(t.get("name", str), t.get("title", str), t.get("file", str),
                            t.strings("kernels"),
                            t.get("application", str), t.get("uses", str))
        if not re.fullmatch(r"[A-Za-z0-9_]+\.cuh", exercise.file):
            raise AssignmentError(f"{t.where}: `file` must be a plain .cuh file name (found {exercise.file!r})")
        if not exercise.kernels or not all(_IDENT.fullmatch(k) for k in exercise.kernels):
            raise AssignmentError(f"{t.where}: `kernels` must name C++ functions")
        if not _NAME.fullmatch(exercise.name) or not _NAME.fullmatch(exercise.application):
            raise AssignmentError(f"{t.where}: `name` and `application` must be lower-case-with-dashes")
        if exercise.uses not in names:
            raise AssignmentError(f"{t.where}: `uses`: no driver task {exercise.uses!r}")
        exercises.append(exercise)
    if exercises:  # optional
        _require(exercises, "[[exercise]]", "exercises", "name", "file", "application")
    if {e.file for e in exercises} & {t.file for t in tasks}:
        raise AssignmentError("[[exercise]]: a file of an exercise is also a task's file")
    return exercises


def _parse_operators(data: dict[str, Any], names: tuple[str, ...]) -> tuple[Operator, ...]:
    operators: list[Operator] = []
    for i, raw in enumerate(data.get("operator", []) or []):
        t = _Table(raw, f"[[operator]] #{i + 1}")
        t.unknown({"name", "cpp", "element_bytes", "commutative", "identity", "sample", "range",
                   "description", "tasks"})
        op = Operator(t.get("name", str), t.get("cpp", str), t.get("element_bytes", int),
                      t.get("commutative", bool), t.get("identity", str), t.get("sample", str),
                      t.get("range", int, 0), t.get("description", str, ""), t.strings("tasks", names))
        if not _NAME.fullmatch(op.name):
            raise AssignmentError(f"{t.where}: `name` must be lower-case-with-dashes")
        if "," in op.cpp:
            raise AssignmentError(f"{t.where}: `cpp` = {op.cpp!r} holds a comma, which a macro "
                                  "argument cannot (SCANLAB_FOR_EACH_OPERATOR): give the type an "
                                  "alias in harness/ops.cuh")
        if op.sample not in SAMPLE_KINDS:
            raise AssignmentError(f"{t.where}: `sample` must be one of {', '.join(SAMPLE_KINDS)}")
        if op.sample == "small-int" and op.range < 1:
            raise AssignmentError(f"{t.where}: sample \"small-int\" needs a `range` of at least 1")
        unknown = set(op.tasks) - set(names)
        if unknown:
            raise AssignmentError(f"{t.where}: `tasks`: unknown driver task(s) {', '.join(sorted(unknown))}")
        operators.append(op)
    _require(operators, "[[operator]]", "operators", "name", "cpp")
    return tuple(operators)


def load_assignment(path: Path = DEFAULT_PATH) -> Assignment:
    return parse_assignment(read_toml(path, "assignment", AssignmentError), path.resolve())


@functools.cache
def default_assignment() -> Assignment:
    """data/assignment.toml of this checkout, read once."""
    return load_assignment(DEFAULT_PATH)
