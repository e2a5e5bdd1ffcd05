"""The rubric: data/rubric.toml (points, limits, forbidden constructs) and the grading
cases it names (the [grade] tables of data/cases.toml). What the tasks are (titles,
student files, driver tasks) is the assignment's, data/assignment.toml; the rubric
says what each is worth.

Every setting is declared once, below, with its TOML table and key, its default and a
one-line description (`setting(...)`); a key left out of rubric.toml takes that
default, and `python3 -m grader rubric-keys` prints them all.

A rubric may start from another one: `base = "path/to/rubric.toml"` at the top level
merges this file's tables over that file's (tables merge key by key; arrays and
values replace; [[task]] tables merge by task number: a rubric states only the tasks,
and the keys, it changes). Tests use that to grade with fewer cases.
"""
from __future__ import annotations

import dataclasses
import hashlib
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Iterator

from .assignment import DEFAULT_PATH, Assignment, Task, default_assignment
from .boundary import BoundaryFamily, BoundaryRubric, parse_family
from .draw import Drawn, DrawnRubric
from .classroom_rubric import LeaderboardRubric, SlurmRubric
from .late_policy import LatePolicy
from .cases import Case, CaseError, SanitizeCase, expand, expand_sanitize, parse_count, validate_case
from .rubric_file import RubricError, read_rubric_toml
from .toml_table import TomlTable, read_toml, setting



@dataclass(frozen=True)
class PerfCase:
    """What a task is timed on."""

    task: str
    op: str
    n: int
    block: int

    def as_case(self) -> Case:
        return Case(self.task, self.op, self.n, self.block, "random", False, "performance")


@dataclass(frozen=True)
class TaskRubric:
    """A task of the assignment with the points the rubric gives it."""
    number: int
    name: str                      # from data/assignment.toml
    title: str                     # ditto
    file: str                      # the student file, under student/ (data/assignment.toml)
    driver_tasks: tuple[str, ...]  # the driver tasks whose cases it must pass (ditto)
    correctness_points: float
    performance_points: float
    perf: tuple[PerfCase, ...]
    # A bonus task (data/assignment.toml): its points come on top of the maximum (a score
    # may pass it); its file is optional, and one still the handout's placeholder is not
    # built (not attempted).
    bonus: bool = False

    @property
    def label(self) -> str:
        return f"task {self.number}" + (" (bonus)" if self.bonus else "")

    @property
    def max_points(self) -> float:
        return self.correctness_points + self.performance_points


@dataclass(frozen=True)
class CorrectnessRubric:
    TABLE = "correctness"
    scoring: str = setting("proportional", "\"proportional\": points x cases passed / cases; "
                           "\"all-or-nothing\": full points only when every case passes",
                           choices=("proportional", "all-or-nothing"))
    zero_for_placeholders: bool = setting(
        True, "a task whose file is still the handout's (unchanged, or changed only in comments "
        "and spacing) earns no points, correctness or performance; it is graded and reported")


@dataclass(frozen=True)
class IntegrationRubric:
    TABLE = "integration"
    points: float = setting(0.0, "points of the build of all the student's files together "
                            "(0: reported, not scored)", minimum=0)
    tasks: tuple[str, ...] = setting((), "driver tasks whose cases the integration build runs "
                                     "(empty: every driver task)")
    groups: tuple[str, ...] = setting((), "case groups it runs (empty: every group)")
    applications: bool = setting(True, "run the applications of handout/apps (pi, normal CDF, "
                                 "compaction) on this build: reported, no points")
    application_n: int = setting(1 << 22, "the applications' size on a GPU", minimum=1)
    application_emulator_n: int = setting(1 << 14, "the applications' size on the CPU emulator",
                                          minimum=1)


@dataclass(frozen=True)
class PerformanceRubric:
    TABLE = "performance"
    full_credit_slowdown: float = setting(1.2, "full credit within this many times the "
                                          "reference time; beyond it, this / slowdown", minimum=1.0)
    warmup: int = setting(5, "untimed runs before the timed ones, in each timed process", minimum=0)
    reps: int = setting(30, "timed runs of each timed process (their median counts)", minimum=1)
    rounds: int = setting(2, "timed processes each of reference and submission, alternating",
                          minimum=1)
    max_rounds: int = setting(5, "more rounds, up to this many, while the spread exceeds "
                              "max_spread", minimum=1)
    max_spread: float = setting(0.08, "(max - min) / median of a side's medians above which a "
                                "measurement is noisy", minimum=0)
    baselines: bool = setting(True, "time the task's baselines in the reference process too")
    max_copy_multiple: float = setting(1.5, "a submission time implying more bytes per second than "
                                       "this multiple of the GPU's measured copy bandwidth is "
                                       "physically implausible: not scored (0 points, flagged)",
                                       minimum=1.0)
    plausible_min_mb: float = setting(64.0, "the physical-limit check applies to perf cases moving "
                                      "at least this many MiB (smaller inputs can stay in L2)",
                                      minimum=0)


@dataclass(frozen=True)
class Limits:
    TABLE = "limits"
    run_timeout_s: float = setting(30.0, "wall-clock limit of one student process on the GPU",
                                   minimum=1)
    emulator_run_timeout_s: float = setting(20.0, "wall-clock limit of one student process on "
                                            "the CPU emulator (the reference's slowest case takes "
                                            "under 1 s on 2 cores)", table="emulator",
                                            key="run_timeout_s", minimum=1)
    max_timeouts_per_task: int = setting(1, "after this many timeouts a build's other cases "
                                         "still run, each with hung_limit_fraction of its time limit "
                                         "(a hang costs its own case)", minimum=1)
    hung_limit_fraction: float = setting(0.25, "the share of a case's time limit it runs with "
                                         "once its build had max_timeouts_per_task timeouts",
                                         minimum=0.01)
    hang_budget_limits: float = setting(2.0, "once a build's timeouts have cost this many time "
                                        "limits, none of its cases (nor, for the integration build, "
                                        "the applications) starts: each is failed as could not run "
                                        "(once they also number hang_budget_case_share of its cases)",
                                        minimum=1)
    hang_budget_case_share: float = setting(0.1, "a build's hang allowance is spent only once its "
                                            "timeouts also number this share of its cases: a hang at "
                                            "one block size or one size costs only its own cases",
                                            minimum=0.0)
    budget_s: float = setting(900.0, "a submission's time budget: once its grading has taken "
                              "this long, no more cases, applications or timings start (they "
                              "count as failed, said as such); Gradescope's timeout must be above "
                              "it (grader/README.md)", minimum=10)
    memory_mb: int = setting(16384, "memory of one student process, MiB", minimum=256)
    build_timeout_s: float = setting(600.0, "wall-clock limit of one build", minimum=10)
    emulator_build_type: str = setting("Release", "CMAKE_BUILD_TYPE of the emulator builds "
                                       "(\"\" compiles faster)", table="emulator", key="build_type")
    gpu_runs_at_once: int = setting(1, "correctness runs on one GPU at once (timing always has "
                                    "the GPU to itself)", minimum=1)


@dataclass(frozen=True)
class EmulatorRubric:
    TABLE = "emulator"
    max_n: int | None = setting(None, "cases above this many elements are left out on the "
                                "emulator (default: [suite] emulator_max_n of cases.toml)",
                                minimum=1)
    race_check: tuple[str, ...] = setting((), "case groups a GPU grade also runs on the CPU "
                                          "emulator, to catch races GPUs forgive ([]: off)")


@dataclass(frozen=True)
class ProfileRubric:
    TABLE = "profile"
    run: bool = setting(True, "a GPU grade also profiles one run of each timed task under Nsight "
                        "Compute (ncu) and reports its figures beside the reference's, with a "
                        "diagnosis (never scored; grader/README.md, \"Why a kernel is slow\")")
    n: int = setting(1 << 23, "the size profiled (0: each task's timed size)", minimum=0)
    max_kernels: int = setting(8, "kernel launches profiled per task at most", minimum=1)
    timeout_s: float = setting(120.0, "wall-clock limit of a grade's ncu process (all its tasks)",
                               minimum=1)


@dataclass(frozen=True)
class SanitizerRubric:
    TABLE = "sanitizer"
    run: bool = setting(True, "a GPU grade also runs each task's own GPU build under "
                        "compute-sanitizer on the [[sanitize.case]] cases of the case file "
                        "(racecheck, synccheck, memcheck); a finding fails the task's case "
                        "(false: off)")
    run_timeout_s: float = setting(60.0, "wall-clock limit of one tool's run over a build's "
                                   "cases (a run past it is no finding, and is said)", minimum=1)


@dataclass(frozen=True)
class SubmissionLimits:
    TABLE = "submission"
    max_total_bytes: int = setting(50_000_000, "an archive or tree larger than this is refused",
                                   minimum=1)
    max_files: int = setting(2000, "a submission with more files is refused", minimum=1)
    max_file_bytes: int = setting(1_000_000, "a larger file is refused", minimum=1)
    max_student_file_bytes: int = setting(200_000, "a larger student file is refused", minimum=1)


@dataclass(frozen=True)
class ForbiddenRule:
    name: str
    pattern: re.Pattern[str]
    message: str


@dataclass(frozen=True)
class ForbiddenRubric:
    TABLE = "forbidden"
    allowed_system_includes: tuple[str, ...] = setting(
        ("cstddef", "cstdint", "climits", "cfloat", "cmath", "type_traits", "limits", "utility",
         "cstdio", "cassert"),
        "standard headers a student file may #include")
    allowed_directives: tuple[str, ...] = setting(
        ("pragma", "define", "undef", "if", "ifdef", "ifndef", "elif", "else", "endif", "error",
         "warning"), "preprocessor directives allowed besides #include")
    allowed_calls: tuple[str, ...] = setting(
        (r"^(std::)?(sqrt|cbrt|exp|exp2|expm1|log|log2|log10|log1p|pow|fabs|fmin|fmax|fmod|floor"
         r"|ceil|round|lround|llround|trunc|sin|cos|tan|tanh|erf|erfc|hypot|ldexp|frexp|nextafter"
         r"|copysign|fma)[fl]?(\(.*)?$",
         r"^(printf|puts|putchar|vprintf|__printf_chk|fprintf|__fprintf_chk|fputs|fputc|fflush"
         r"|stdout|stderr)$",
         r"^(__assert_fail|__assert_perror_fail|__assert_rtn|__assert)$"),
        "what the compiled student unit may use besides the toolchain's own helpers (regular "
        "expressions over demangled names; the emulator compiles device code for the CPU, so its "
        "math functions, kernel printf and assert show up here; printing and assert are allowed, opening files is not)")
    rules: tuple[ForbiddenRule, ...] = ()  # [[forbidden.rule]] tables


@dataclass(frozen=True)
class GradescopeRubric:
    TABLE = "gradescope"
    visibility: str = setting("visible", "visibility of the tests in Gradescope's results.json",
                              choices=("visible", "hidden", "after_due_date", "after_published"))
    stdout_visibility: str = setting("hidden", "visibility of the grader's output on Gradescope",
                                     choices=("visible", "hidden", "after_due_date", "after_published"))


@dataclass(frozen=True)
class GradebookRubric:
    TABLE = "gradebook"
    assignment: str = setting("scanlab", "the assignment's column in the Canvas import file (a name "
                              "Canvas does not know makes a new assignment)")
    score: str = setting("total", "the score the Gradescope and Canvas upload files carry: \"total\", "
                         "or \"performance\" (the GPU points only, where correctness is Gradescope's "
                         "own autograder score; see grader/README.md, the round trip)",
                         choices=("total", "performance"))


SETTINGS_CLASSES = (CorrectnessRubric, IntegrationRubric, PerformanceRubric, Limits,
                    EmulatorRubric, DrawnRubric, BoundaryRubric, SanitizerRubric, ProfileRubric, SubmissionLimits,
                    ForbiddenRubric, GradescopeRubric, GradebookRubric, LatePolicy, SlurmRubric,
                    LeaderboardRubric)


@dataclass(frozen=True)
class Setting:
    table: str
    key: str
    default: Any
    doc: str
    owner: type                    # the settings dataclass it belongs to
    field: dataclasses.Field[Any]


def rubric_settings() -> Iterator[Setting]:
    """Every setting of the rubric, where it is read from, its default and its meaning."""
    for cls in SETTINGS_CLASSES:
        for f in dataclasses.fields(cls):
            if "doc" in f.metadata:
                yield Setting(f.metadata["table"] or cls.TABLE, f.metadata["key"] or f.name,
                              f.default, f.metadata["doc"], cls, f)


def settings_table() -> str:
    """Every setting as a Markdown table (grader/README.md; `python3 -m grader rubric-keys`)."""
    def shown(value: Any) -> str:
        if value is None:
            return "(see meaning)"
        if isinstance(value, bool):
            return "true" if value else "false"
        if isinstance(value, tuple):
            return "[" + ", ".join(f'"{v}"' for v in value) + "]"
        return f'"{value}"' if isinstance(value, str) else f"{value:g}" if isinstance(value, float) else str(value)
    rows = ["| table | key | default | meaning |", "| --- | --- | --- | --- |"]
    rows += [f"| `[{s.table}]` | `{s.key}` | `{shown(s.default)}` | {s.doc} |" for s in rubric_settings()]
    return "\n".join(rows) + "\n"


@dataclass(frozen=True)
class Rubric:
    path: Path
    name: str
    assignment: Assignment
    tasks: tuple[TaskRubric, ...]
    cases: tuple[Case, ...]               # every grading case (before the emulator cap)
    emulator_max_n: int                   # [emulator] max_n, else the suite's
    correctness: CorrectnessRubric
    integration: IntegrationRubric
    performance: PerformanceRubric
    limits: Limits
    emulator: EmulatorRubric
    submission: SubmissionLimits
    forbidden: ForbiddenRubric
    gradescope: GradescopeRubric
    gradebook: GradebookRubric = field(default_factory=GradebookRubric)
    slurm: SlurmRubric = field(default_factory=SlurmRubric)
    leaderboard: LeaderboardRubric = field(default_factory=LeaderboardRubric)
    sanitizer: SanitizerRubric = field(default_factory=SanitizerRubric)
    profile: ProfileRubric = field(default_factory=ProfileRubric)
    drawn: DrawnRubric = field(default_factory=DrawnRubric)
    boundary: BoundaryRubric = field(default_factory=BoundaryRubric)
    boundary_family: BoundaryFamily = field(default_factory=BoundaryFamily)  # cases.toml [boundary]
    late: LatePolicy = field(default_factory=LatePolicy)
    sanitize: tuple[SanitizeCase, ...] = ()   # [[sanitize.case]] of the case file
    sources: tuple[Path, ...] = field(default=())  # files read, for the report

    @property
    def digest(self) -> str:
        """Of every file the rubric was read from (a resumed batch regrades after a change)."""
        h = hashlib.sha256()
        for path in self.sources:
            h.update(path.name.encode() + b"\0")
            h.update(path.read_bytes() if path.is_file() else b"")
        return h.hexdigest()[:16]

    @property
    def correctness_scoring(self) -> str:
        return self.correctness.scoring

    @property
    def race_check_groups(self) -> tuple[str, ...]:
        """GPU grades also run these groups on the emulator."""
        return self.emulator.race_check

    @property
    def integration_tasks(self) -> tuple[str, ...]:
        return self.integration.tasks or self.assignment.driver_task_names

    @property
    def student_files(self) -> tuple[str, ...]:
        return tuple(t.file for t in self.tasks)

    @property
    def submitted_files(self) -> tuple[str, ...]:
        """What the grader takes from a submission: the tasks' files, then the exercises'
        (optional: the handout's stub stands in for a missing one)."""
        return self.student_files + tuple(e.file for e in self.assignment.exercises)

    @property
    def max_correctness(self) -> float:
        """The maximum's correctness part (bonus tasks come on top of it)."""
        return sum(t.correctness_points for t in self.tasks if not t.bonus) + self.integration.points

    @property
    def max_performance(self) -> float:
        return sum(t.performance_points for t in self.tasks if not t.bonus)

    @property
    def max_bonus(self) -> float:
        return sum(t.max_points for t in self.tasks if t.bonus)

    @property
    def optional_files(self) -> frozenset[str]:
        """Files a submission may leave out: the exercises' and the bonus tasks'."""
        return frozenset([e.file for e in self.assignment.exercises] +
                         [t.file for t in self.tasks if t.bonus])

    def sanitize_for(self, driver_tasks: tuple[str, ...]) -> dict[str, list[Case]]:
        """The compute-sanitizer cases of these driver tasks, by tool (rubric order)."""
        by_tool: dict[str, list[Case]] = {}
        if self.sanitizer.run:
            for s in self.sanitize:
                if s.case.task in driver_tasks:
                    by_tool.setdefault(s.tool, []).append(s.case)
        return by_tool

    def draw(self, seed: int, on_gpu: bool, tasks: tuple[Task, ...] | None = None) -> Drawn:
        """The secret cases of a grade drawn from `seed` ([drawn]; grader/config/draw.py),
        with the boundary family of the backend ([boundary]; grader/config/boundary.py)."""
        drawn = self.drawn.draw(self.assignment, seed, on_gpu, self.emulator_max_n, tasks)
        if not self.boundary.run:
            return drawn
        limits = self.drawn.limits(self.assignment, on_gpu, self.emulator_max_n)
        family = [c for t in (tasks if tasks is not None else self.assignment.tasks)
                  for c in self.boundary_family.cases(self.assignment, t, limits)]
        return dataclasses.replace(drawn, boundary=tuple(family))

    def cases_for(self, driver_tasks: tuple[str, ...], emulator: bool,
                  groups: tuple[str, ...] = ()) -> list[Case]:
        """The cases of these driver tasks (on the emulator: up to emulator_max_n)."""
        return [c for c in self.cases
                if c.task in driver_tasks
                and (not emulator or c.n <= self.emulator_max_n)
                and (not groups or c.group in groups)]


# ---- loading ----------------------------------------------------------------------------

class _Table(TomlTable):
    error = RubricError


def _settings(cls: type, data: dict[str, Any]) -> Any:
    """One settings dataclass read from its tables: each key checked against its type,
    minimum and choices; a key left out takes its declared default."""
    values: dict[str, Any] = {}
    for f in dataclasses.fields(cls):
        if "doc" not in f.metadata:
            continue
        table_name = f.metadata["table"] or getattr(cls, "TABLE")
        table = _Table(data.get(table_name, {}), f"[{table_name}]")
        key = f.metadata["key"] or f.name
        kind = str(f.type)
        default: Any = f.default  # setting() always declares one
        if kind.startswith("tuple"):
            value: Any = table.strings(key, default)
        elif kind.startswith("int"):
            value = table.get(key, int, default) if key in table.data else default
        elif kind == "float":
            value = table.get(key, float, default)
        elif kind == "bool":
            value = table.get(key, bool, default)
        else:
            value = table.get(key, str, default)
        minimum = f.metadata["minimum"]
        if minimum is not None and value is not None and value < minimum:
            raise RubricError(f"{table.where}: `{key}` must be at least {minimum:g}")
        choices = f.metadata["choices"]
        if choices and value not in choices:
            raise RubricError(f"{table.where}: `{key}` must be one of {', '.join(choices)}")
        values[f.name] = value
    return cls(**values)


def _task(data: dict[str, Any], index: int, assignment: Assignment) -> TaskRubric:
    t = _Table(data, f"[[task]] #{index + 1}")
    number = t.get("number", int)
    try:
        task = assignment.task(number)
    except KeyError:
        raise RubricError(f"{t.where}: data/assignment.toml has no task {number}") from None
    moved = {"title", "file", "driver_tasks", "bonus"} & set(t.data)
    if moved:
        raise RubricError(f"{t.where}: {', '.join(sorted(moved))} of a task are defined in "
                          "data/assignment.toml, not in the rubric")
    unknown = set(t.data) - {"number", "correctness_points", "performance_points", "perf"}
    if unknown:
        raise RubricError(f"{t.where}: unknown key(s) {', '.join(sorted(unknown))}")
    perf: list[PerfCase] = []
    for j, p in enumerate(t.get("perf", list, [])):
        pt = _Table(p, f"{t.where} [[task.perf]] #{j + 1}")
        try:
            pc = PerfCase(pt.get("task", str), pt.get("op", str, assignment.operator_names[0]),
                          parse_count(pt.get("n", (int, str))),
                          pt.integer("block", assignment.limits.default_block, 1))
            validate_case(pc.as_case(), pt.where)
        except CaseError as e:
            raise RubricError(str(e)) from None
        if pc.task not in task.driver_tasks:
            raise RubricError(f"{pt.where}: task {number} is checked by "
                              f"{', '.join(task.driver_tasks)}, not {pc.task}")
        perf.append(pc)
    return TaskRubric(number, task.name, task.title, task.file, task.driver_tasks,
                      t.number("correctness_points", 0), t.number("performance_points", 0),
                      tuple(perf), task.bonus)


def _cases(top: _Table, rubric_file: Path) -> tuple[list[Case], dict[str, Any], Path]:
    # A rubric kept elsewhere that names no case file grades the checkout's cases.
    beside = rubric_file.parent / "cases.toml"
    default = beside if beside.is_file() else DEFAULT_PATH.parent / "cases.toml"
    cases_path = (rubric_file.parent / top.get("cases", str, str(default))).resolve()
    cases_data = read_toml(cases_path, "cases", RubricError)
    tables = cases_data.get("grade", {}).get("case", [])
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
    return cases, cases_data, cases_path


def _sanitize_cases(cases_data: dict[str, Any], cases_path: Path) -> tuple[SanitizeCase, ...]:
    tables = cases_data.get("sanitize", {}).get("case", [])
    if not isinstance(tables, list):
        raise RubricError(f"{cases_path.name}: [[sanitize.case]] must be tables")
    try:
        return tuple(expand_sanitize(tables, str(cases_path.name)))
    except CaseError as e:
        raise RubricError(str(e)) from None


def _boundary_family(cases_data: dict[str, Any], cases_path: Path, a: Assignment) -> BoundaryFamily:
    try:
        return parse_family(cases_data.get("boundary", {}), a, cases_path.name)
    except CaseError as e:
        raise RubricError(str(e)) from None


def _check_groups(names: tuple[str, ...], cases: list[Case], where: str) -> None:
    unknown = set(names) - {c.group for c in cases}
    if unknown:
        raise RubricError(f"{where}: no cases in group(s) {', '.join(sorted(unknown))}")


def load_rubric(path: Path) -> Rubric:
    data, files = read_rubric_toml(path)
    assignment = default_assignment()
    top = _Table(data.get("rubric", {}), "[rubric]")
    cases, cases_data, cases_path = _cases(top, files[0])

    task_tables = data.get("task", [])
    if not isinstance(task_tables, list) or not task_tables:
        raise RubricError("the rubric defines no [[task]]")
    tasks = tuple(_task(t, i, assignment) for i, t in enumerate(task_tables))
    if len({t.number for t in tasks}) != len(tasks):
        raise RubricError("two [[task]] tables share a number")
    missing = [t.number for t in assignment.tasks if t.number not in {r.number for r in tasks}]
    if missing:
        raise RubricError(f"task(s) {', '.join(map(str, missing))} of data/assignment.toml have "
                          "no [[task]] table in the rubric (give them points, or 0)")

    integration: IntegrationRubric = _settings(IntegrationRubric, data)
    unknown = set(integration.tasks) - set(assignment.driver_task_names)
    if unknown:
        raise RubricError(f"[integration] tasks: unknown driver task(s) {', '.join(sorted(unknown))}")
    _check_groups(integration.groups, cases, "[integration] groups")
    performance: PerformanceRubric = _settings(PerformanceRubric, data)
    if performance.max_rounds < performance.rounds:
        raise RubricError("[performance] max_rounds must be at least rounds")
    emulator: EmulatorRubric = _settings(EmulatorRubric, data)
    _check_groups(emulator.race_check, cases, "[emulator] race_check")
    suite_max = cases_data.get("suite", {}).get("emulator_max_n")
    emulator_max_n = emulator.max_n if emulator.max_n is not None else suite_max
    if not isinstance(emulator_max_n, int):
        raise RubricError(f"{cases_path.name}: [suite] emulator_max_n is missing, and the rubric "
                          "sets no [emulator] max_n")

    drawn: DrawnRubric = _settings(DrawnRubric, data)
    if drawn.race_min_n > drawn.race_max_n:
        raise RubricError("[drawn] race_min_n must be at most race_max_n")
    leaderboard: LeaderboardRubric = _settings(LeaderboardRubric, data)
    unknown = set(leaderboard.tasks) - {t.name for t in tasks}
    if unknown:
        raise RubricError(f"[leaderboard] tasks: no task named {', '.join(sorted(unknown))} "
                          "in data/assignment.toml")

    fb = _Table(data.get("forbidden", {}), "[forbidden]")
    rules = []
    for i, r in enumerate(fb.get("rule", list, [])):
        rt = _Table(r, f"[[forbidden.rule]] #{i + 1}")
        try:
            pattern = re.compile(rt.get("pattern", str))
        except re.error as e:
            raise RubricError(f"{rt.where}: bad pattern: {e}") from None
        rules.append(ForbiddenRule(rt.get("name", str), pattern, rt.get("message", str)))
    forbidden = dataclasses.replace(_settings(ForbiddenRubric, data), rules=tuple(rules))

    return Rubric(path=files[0], name=top.get("name", str, "scanlab"), assignment=assignment,
                  tasks=tasks, cases=tuple(cases), emulator_max_n=emulator_max_n,
                  correctness=_settings(CorrectnessRubric, data), integration=integration,
                  performance=performance, limits=_settings(Limits, data), emulator=emulator,
                  submission=_settings(SubmissionLimits, data), forbidden=forbidden,
                  gradescope=_settings(GradescopeRubric, data),
                  gradebook=_settings(GradebookRubric, data),
                  slurm=_settings(SlurmRubric, data), leaderboard=leaderboard,
                  sanitizer=_settings(SanitizerRubric, data), drawn=drawn,
                  boundary=_settings(BoundaryRubric, data),
                  boundary_family=_boundary_family(cases_data, cases_path, assignment),
                  profile=_settings(ProfileRubric, data),
                  late=_settings(LatePolicy, data),
                  sanitize=_sanitize_cases(cases_data, cases_path),
                  sources=tuple(files) + (cases_path,))
