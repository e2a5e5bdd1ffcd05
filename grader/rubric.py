"""The rubric: data/rubric.toml (tasks, points, limits, forbidden constructs) and the
grading cases it names (the [grade] tables of data/cases.toml).

A rubric may start from another one: `base = "path/to/rubric.toml"` at the top level
merges this file's tables over that file's (tables merge key by key; arrays and
values replace). Tests use that to grade with fewer cases.
"""
from __future__ import annotations

import re
import tomllib
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from grader.cases import Case, CaseError, DRIVER_TASKS, expand, parse_count, validate_case


class RubricError(ValueError):
    """A rubric that cannot be used, with the reason."""


@dataclass(frozen=True)
class PerfCase:
    """What a task is timed on."""

    task: str
    op: str
    n: int
    block: int = 256

    def as_case(self) -> Case:
        return Case(self.task, self.op, self.n, self.block, "random", False, "performance")


@dataclass(frozen=True)
class TaskRubric:
    number: int
    title: str
    file: str                      # the student file, under student/
    driver_tasks: tuple[str, ...]  # the driver tasks whose cases it must pass
    correctness_points: float
    performance_points: float
    perf: tuple[PerfCase, ...]

    @property
    def name(self) -> str:
        return f"task {self.number}"

    @property
    def max_points(self) -> float:
        return self.correctness_points + self.performance_points


@dataclass(frozen=True)
class IntegrationRubric:
    points: float = 0.0
    tasks: tuple[str, ...] = ("scan", "scan-exclusive")
    groups: tuple[str, ...] = ()   # empty: every group


@dataclass(frozen=True)
class PerformanceRubric:
    full_credit_slowdown: float = 1.2
    warmup: int = 5
    reps: int = 30
    rounds: int = 2
    max_rounds: int = 5
    max_spread: float = 0.08
    baselines: bool = True


@dataclass(frozen=True)
class Limits:
    run_timeout_s: float = 30.0
    emulator_run_timeout_s: float = 120.0
    max_timeouts_per_task: int = 2
    memory_mb: int = 16384
    build_timeout_s: float = 600.0
    emulator_build_type: str = "Release"
    gpu_runs_at_once: int = 1


@dataclass(frozen=True)
class SubmissionLimits:
    max_total_bytes: int = 50_000_000
    max_files: int = 2000
    max_file_bytes: int = 1_000_000
    max_student_file_bytes: int = 200_000


@dataclass(frozen=True)
class ForbiddenRule:
    name: str
    pattern: re.Pattern[str]
    message: str


@dataclass(frozen=True)
class ForbiddenRubric:
    rules: tuple[ForbiddenRule, ...] = ()
    allowed_system_includes: tuple[str, ...] = ()
    allowed_directives: tuple[str, ...] = ()


@dataclass(frozen=True)
class GradescopeRubric:
    visibility: str = "visible"
    stdout_visibility: str = "hidden"


@dataclass(frozen=True)
class Rubric:
    path: Path
    name: str
    tasks: tuple[TaskRubric, ...]
    cases: tuple[Case, ...]               # every grading case (before the emulator cap)
    emulator_max_n: int
    race_check_groups: tuple[str, ...]    # GPU grades also run these groups on the emulator
    correctness_scoring: str
    integration: IntegrationRubric
    performance: PerformanceRubric
    limits: Limits
    submission: SubmissionLimits
    forbidden: ForbiddenRubric
    gradescope: GradescopeRubric
    sources: tuple[Path, ...] = field(default=())  # files read, for the report

    @property
    def student_files(self) -> tuple[str, ...]:
        return tuple(t.file for t in self.tasks)

    @property
    def max_correctness(self) -> float:
        return sum(t.correctness_points for t in self.tasks) + self.integration.points

    @property
    def max_performance(self) -> float:
        return sum(t.performance_points for t in self.tasks)

    def task_for_driver(self, driver_task: str) -> TaskRubric | None:
        for t in self.tasks:
            if driver_task in t.driver_tasks:
                return t
        return None

    def cases_for(self, driver_tasks: tuple[str, ...], emulator: bool,
                  groups: tuple[str, ...] = ()) -> list[Case]:
        """The cases of these driver tasks (on the emulator: up to emulator_max_n)."""
        return [c for c in self.cases
                if c.task in driver_tasks
                and (not emulator or c.n <= self.emulator_max_n)
                and (not groups or c.group in groups)]


# ---- loading ----------------------------------------------------------------------------

def _merge(base: dict[str, Any], over: dict[str, Any]) -> dict[str, Any]:
    out = dict(base)
    for key, value in over.items():
        if isinstance(value, dict) and isinstance(out.get(key), dict):
            out[key] = _merge(out[key], value)
        else:
            out[key] = value
    return out


def _read_toml(path: Path, chain: tuple[Path, ...] = ()) -> tuple[dict[str, Any], tuple[Path, ...]]:
    path = path.resolve()
    if path in chain:
        raise RubricError(f"{path}: `base` refers back to itself")
    try:
        data = tomllib.loads(path.read_text(encoding="utf-8"))
    except OSError as e:
        raise RubricError(f"cannot read the rubric {path}: {e.strerror}") from None
    except tomllib.TOMLDecodeError as e:
        raise RubricError(f"{path}: not valid TOML: {e}") from None
    # A relative `cases` path is relative to the file that names it.
    rubric_table = data.get("rubric")
    if isinstance(rubric_table, dict) and isinstance(rubric_table.get("cases"), str):
        rubric_table["cases"] = str((path.parent / rubric_table["cases"]).resolve())
    base = data.pop("base", None)
    if base is None:
        return data, (path,)
    if not isinstance(base, str):
        raise RubricError(f"{path}: `base` must be a path")
    base_data, files = _read_toml((path.parent / base), chain + (path,))
    return _merge(base_data, data), (path,) + files


class _Table:
    """Typed access to one TOML table, naming the key in errors."""

    def __init__(self, data: dict[str, Any], where: str):
        if not isinstance(data, dict):
            raise RubricError(f"{where}: expected a table")
        self.data = data
        self.where = where

    def get(self, key: str, kind: type | tuple[type, ...], default: Any = None) -> Any:
        if key not in self.data:
            if default is None:
                raise RubricError(f"{self.where}: `{key}` is missing")
            return default
        value = self.data[key]
        if kind is float and isinstance(value, int) and not isinstance(value, bool):
            value = float(value)
        if not isinstance(value, kind) or (isinstance(value, bool) and kind is not bool):
            raise RubricError(f"{self.where}: `{key}` = {value!r} has the wrong type")
        return value

    def number(self, key: str, default: float, minimum: float = 0.0) -> float:
        value = self.get(key, float, float(default))
        if value < minimum:
            raise RubricError(f"{self.where}: `{key}` must be at least {minimum}")
        return value

    def integer(self, key: str, default: int, minimum: int = 0) -> int:
        value = self.get(key, int, default)
        if value < minimum:
            raise RubricError(f"{self.where}: `{key}` must be at least {minimum}")
        return value

    def strings(self, key: str, default: tuple[str, ...]) -> tuple[str, ...]:
        value = self.get(key, list, list(default))
        if not all(isinstance(v, str) for v in value):
            raise RubricError(f"{self.where}: `{key}` must be a list of strings")
        return tuple(value)


def _task(data: dict[str, Any], index: int) -> TaskRubric:
    t = _Table(data, f"[[task]] #{index + 1}")
    number = t.integer("number", index + 1, 1)
    file = t.get("file", str)
    if "/" in file or "\\" in file or not re.fullmatch(r"[A-Za-z0-9_.-]+", file):
        raise RubricError(f"{t.where}: `file` must be a plain file name (found {file!r})")
    driver_tasks = t.strings("driver_tasks", ())
    if not driver_tasks or any(d not in DRIVER_TASKS for d in driver_tasks):
        raise RubricError(f"{t.where}: `driver_tasks` must name some of {', '.join(DRIVER_TASKS)}")
    perf: list[PerfCase] = []
    for j, p in enumerate(t.get("perf", list, [])):
        pt = _Table(p, f"{t.where} [[task.perf]] #{j + 1}")
        try:
            pc = PerfCase(pt.get("task", str), pt.get("op", str, "add-i32"),
                          parse_count(pt.get("n", (int, str))), pt.integer("block", 256, 32))
            validate_case(pc.as_case(), pt.where)
        except CaseError as e:
            raise RubricError(str(e)) from None
        perf.append(pc)
    return TaskRubric(number, t.get("title", str, f"task {number}"), file, driver_tasks,
                      t.number("correctness_points", 0), t.number("performance_points", 0),
                      tuple(perf))


def load_rubric(path: Path) -> Rubric:
    data, files = _read_toml(path)
    top = _Table(data.get("rubric", {}), "[rubric]")
    cases_path = (files[0].parent / top.get("cases", str, "cases.toml")).resolve()
    try:
        cases_data = tomllib.loads(cases_path.read_text(encoding="utf-8"))
    except OSError as e:
        raise RubricError(f"cannot read the cases {cases_path}: {e.strerror}") from None
    except tomllib.TOMLDecodeError as e:
        raise RubricError(f"{cases_path}: not valid TOML: {e}") from None
    grade = cases_data.get("grade", {})
    tables = grade.get("case", [])
    if not tables:
        raise RubricError(f"{cases_path}: no [[grade.case]] tables")
    try:
        cases = expand(tables, str(cases_path.name))
    except CaseError as e:
        raise RubricError(str(e)) from None
    groups = top.strings("groups", ())
    if groups:
        unknown = set(groups) - {c.group for c in cases}
        if unknown:
            raise RubricError(f"[rubric] groups: no cases in group(s) {', '.join(sorted(unknown))}")
        cases = [c for c in cases if c.group in groups]

    task_tables = data.get("task", [])
    if not isinstance(task_tables, list) or not task_tables:
        raise RubricError("the rubric defines no [[task]]")
    tasks = tuple(_task(t, i) for i, t in enumerate(task_tables))
    if len({t.number for t in tasks}) != len(tasks) or len({t.file for t in tasks}) != len(tasks):
        raise RubricError("two [[task]] tables share a number or a file")
    covered = [d for t in tasks for d in t.driver_tasks]
    if len(covered) != len(set(covered)):
        raise RubricError("a driver task belongs to two [[task]] tables")

    corr = _Table(data.get("correctness", {}), "[correctness]")
    scoring = corr.get("scoring", str, "proportional")
    if scoring not in ("proportional", "all-or-nothing"):
        raise RubricError("[correctness] scoring must be \"proportional\" or \"all-or-nothing\"")

    integ = _Table(data.get("integration", {}), "[integration]")
    integration = IntegrationRubric(integ.number("points", 0), integ.strings("tasks", ("scan", "scan-exclusive")),
                                    integ.strings("groups", ()))
    if any(d not in DRIVER_TASKS for d in integration.tasks):
        raise RubricError("[integration] tasks: unknown driver task")

    perf = _Table(data.get("performance", {}), "[performance]")
    performance = PerformanceRubric(
        full_credit_slowdown=perf.number("full_credit_slowdown", 1.2, 1.0),
        warmup=perf.integer("warmup", 5), reps=perf.integer("reps", 30, 1),
        rounds=perf.integer("rounds", 2, 1), max_rounds=perf.integer("max_rounds", 5, 1),
        max_spread=perf.number("max_spread", 0.08), baselines=perf.get("baselines", bool, True))
    if performance.max_rounds < performance.rounds:
        raise RubricError("[performance] max_rounds must be at least rounds")

    lim = _Table(data.get("limits", {}), "[limits]")
    emu = _Table(data.get("emulator", {}), "[emulator]")
    limits = Limits(run_timeout_s=lim.number("run_timeout_s", 30, 1),
                    emulator_run_timeout_s=emu.number("run_timeout_s", 120, 1),
                    max_timeouts_per_task=lim.integer("max_timeouts_per_task", 2, 1),
                    memory_mb=lim.integer("memory_mb", 16384, 256),
                    build_timeout_s=lim.number("build_timeout_s", 600, 10),
                    emulator_build_type=emu.get("build_type", str, "Release"),
                    gpu_runs_at_once=lim.integer("gpu_runs_at_once", 1, 1))
    suite_max = cases_data.get("suite", {}).get("emulator_max_n", 70000)
    emulator_max_n = emu.integer("max_n", int(suite_max), 1)
    race_check_groups = emu.strings("race_check", ())
    unknown = set(race_check_groups) - {c.group for c in cases}
    if unknown:
        raise RubricError(f"[emulator] race_check: no cases in group(s) {', '.join(sorted(unknown))}")

    sub = _Table(data.get("submission", {}), "[submission]")
    submission = SubmissionLimits(sub.integer("max_total_bytes", 50_000_000, 1),
                                  sub.integer("max_files", 2000, 1),
                                  sub.integer("max_file_bytes", 1_000_000, 1),
                                  sub.integer("max_student_file_bytes", 200_000, 1))

    fb = _Table(data.get("forbidden", {}), "[forbidden]")
    rules = []
    for i, r in enumerate(fb.get("rule", list, [])):
        rt = _Table(r, f"[[forbidden.rule]] #{i + 1}")
        try:
            pattern = re.compile(rt.get("pattern", str))
        except re.error as e:
            raise RubricError(f"{rt.where}: bad pattern: {e}") from None
        rules.append(ForbiddenRule(rt.get("name", str), pattern, rt.get("message", str)))
    forbidden = ForbiddenRubric(tuple(rules), fb.strings("allowed_system_includes", ()),
                                fb.strings("allowed_directives", ("pragma", "define", "undef", "if",
                                                                  "ifdef", "ifndef", "elif", "else",
                                                                  "endif")))

    gs = _Table(data.get("gradescope", {}), "[gradescope]")
    visibilities = ("visible", "hidden", "after_due_date", "after_published")
    gradescope = GradescopeRubric(gs.get("visibility", str, "visible"),
                                  gs.get("stdout_visibility", str, "hidden"))
    if gradescope.visibility not in visibilities or gradescope.stdout_visibility not in visibilities:
        raise RubricError(f"[gradescope] visibility must be one of {', '.join(visibilities)}")

    return Rubric(path=files[0], name=top.get("name", str, "scanlab"), tasks=tasks,
                  cases=tuple(cases), emulator_max_n=emulator_max_n,
                  race_check_groups=race_check_groups,
                  correctness_scoring=scoring, integration=integration,
                  performance=performance, limits=limits, submission=submission,
                  forbidden=forbidden, gradescope=gradescope,
                  sources=tuple(files) + (cases_path,))

