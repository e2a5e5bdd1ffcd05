"""What grading a submission produced: the model every report is written from.

The stages return typed outcomes (grader/grading/outcomes.py); grader/grading/assemble.py
makes this model from them, once. It imports none of the stages."""
from __future__ import annotations

import dataclasses
import types
import typing
from dataclasses import dataclass, field
from typing import Any, Sequence

from .config.cases import Case
from .config.rubric import PerfCase
from .machine.backend import BACKENDS


@dataclass
class CaseResult:
    case: Case
    seed: int
    status: str                   # pass fail error crash timeout not_implemented not_run
    summary: str = ""             # one line
    details: str = ""             # first mismatch, error text, hints
    reproduce: str = ""
    seconds: float = 0.0
    # not_implemented because a grading build reached the handout's placeholder (the
    # driver's exit status `placeholder`: harness/baselines.cuh does no work there)
    placeholder: bool = False

    @property
    def passed(self) -> bool:
        return self.status == "pass"


@dataclass(frozen=True)
class Violation:
    file: str      # the path in the submission
    line: int
    rule: str
    message: str
    excerpt: str   # the offending source line, trimmed

    def __str__(self) -> str:
        return f"{self.file}:{self.line}: {self.message} [{self.rule}]\n    {self.excerpt}"


@dataclass(frozen=True)
class PerfResult:
    """One perf case timed (grading/timing.py makes it once, when the case is over)."""

    case: PerfCase
    status: str                          # measured | failed | not_measured
    message: str = ""
    reference_ms: float | None = None
    student_ms: float | None = None
    reference_runs: tuple[float, ...] = ()
    student_runs: tuple[float, ...] = ()
    reference_spread: float = 0.0
    student_spread: float = 0.0
    rounds: int = 0
    noisy: bool = False
    gbps: float | None = None
    copy_gbps: float | None = None
    baselines: dict[str, float] = field(default_factory=dict)   # name -> median ms
    implausible: bool = False            # faster than the GPU's memory allows: not scored

    @property
    def slowdown(self) -> float | None:
        """Submission time / reference time (1.0: as fast as the reference)."""
        if self.reference_ms and self.student_ms:
            return self.student_ms / self.reference_ms
        return None

    @property
    def copy_fraction(self) -> float | None:
        if self.gbps and self.copy_gbps:
            return self.gbps / self.copy_gbps
        return None

    def speedups(self) -> dict[str, float]:
        if not self.student_ms:
            return {}
        return {name: ms / self.student_ms for name, ms in self.baselines.items()}


@dataclass
class KernelTime:
    name: str
    ms: float


@dataclass
class ProfileFigures:
    """One task's Nsight Compute figures, its kernels together (grader/grading/ncu.py):
    DRAM, L2 and stalls time-weighted over its launches, sectors and bank conflicts summed,
    occupancy (achieved and theoretical) and launch geometry of its longest launch
    (main_kernel), so that achieved and theoretical are of one kernel. None: not measured."""

    kernels: list[KernelTime] = field(default_factory=list)
    main_kernel: str = ""
    dram_pct: float | None = None                    # DRAM throughput, % of peak
    achieved_occupancy_pct: float | None = None
    theoretical_occupancy_pct: float | None = None
    blocks_per_sm: float | None = None               # resident blocks an SM holds
    threads_per_block: float | None = None
    occupancy_limiter: str = ""                      # registers | shared memory | the block size | ...
    registers_per_thread: float | None = None
    shared_bytes_per_block: float | None = None
    load_sectors_per_request: float | None = None
    load_ideal_sectors_per_request: float | None = None   # every byte of a sector used
    store_sectors_per_request: float | None = None
    store_ideal_sectors_per_request: float | None = None
    shared_wavefronts_per_request: float | None = None    # 1: no bank conflicts
    l2_hit_pct: float | None = None
    stalls: dict[str, float] = field(default_factory=dict)   # reason -> cycles per issued instruction

    def top_stalls(self, count: int = 3) -> list[tuple[str, float]]:
        """The largest warp-stall reasons, largest first. From the values, never the dict's
        order: a JSON round trip (the reference's cached figures) sorts the keys."""
        ranked = sorted(((r, v) for r, v in self.stalls.items() if r not in ("selected", "not_selected")),
                        key=lambda rv: (-rv[1], rv[0]))
        return ranked[:count]


@dataclass
class TaskProfile:
    """A timed task's profile: its figures beside the reference's, and what they say."""

    status: str                  # profiled | not_profiled
    message: str = ""            # why not (one line)
    n: int = 0                   # the size profiled
    student: ProfileFigures | None = None
    reference: ProfileFigures | None = None
    diagnoses: list[str] = field(default_factory=list)
    seconds: float = 0.0         # the grade's ncu run (all its tasks)


@dataclass
class BuildInfo:
    label: str
    ok: bool
    seconds: float = 0.0
    cached: bool = False
    errors: str = ""
    origins: dict[str, str] = field(default_factory=dict)


class CaseTally:
    """What a part graded by its cases says of itself: cases passed, cases run, and its
    verdict. For TaskResult, IntegrationResult and the checking stage's CheckOutcome."""

    status: str
    cases: Sequence[CaseResult]

    @property
    def passed(self) -> int:
        return sum(1 for c in self.cases if c.passed)

    @property
    def total(self) -> int:
        return len(self.cases)

    @property
    def verdict(self) -> str:
        """One word for the part: its status when it was not graded (missing, forbidden,
        build_failed), else correct, not_implemented (every case hit the handout's stub)
        or wrong."""
        return verdict_of(self.status, self.cases)


@dataclass
class TaskResult(CaseTally):
    number: int
    name: str                                 # the task's name in data/assignment.toml
    title: str
    file: str
    status: str = "graded"    # graded | missing | forbidden | build_failed | not_attempted (a bonus)
    message: str = ""                         # why not graded, in one line
    path: str | None = None                   # where the file is in the submission
    unchanged: bool = False                   # identical to the handout's placeholder
    identical_to_reference: bool = False
    digest: str = ""                          # sha256 of the student's file (identical files in a class)
    placeholder: bool = False                 # the handout's file, up to comments and spaces
    violations: list[Violation] = field(default_factory=list)
    build: BuildInfo | None = None
    cases: list[CaseResult] = field(default_factory=list)
    perf: list[PerfResult] = field(default_factory=list)
    race_note: str = ""                       # GPU grades: the race check on the emulator
    perf_status: str = "not_eligible"         # measured | not_measured | not_eligible | failed
    perf_message: str = ""
    profile: TaskProfile | None = None        # GPU grades: Nsight Compute's figures (never scored)
    correctness_points: float = 0.0
    correctness_max: float = 0.0
    performance_points: float | None = None   # None: not measured
    performance_max: float = 0.0

    @property
    def all_passed(self) -> bool:
        return self.verdict == "correct"

    @property
    def points(self) -> float:
        return self.correctness_points + (self.performance_points or 0.0)


@dataclass
class AppResult:
    """An application of handout/apps on the integration build, or on it plus the student's
    exercise file (reported, no points)."""
    name: str
    task: int                 # the task whose kernels it uses
    driver_task: str
    status: str               # pass | fail | not_implemented | error
    message: str
    figures: list[str] = field(default_factory=list)   # from the trusted check
    reproduce: str = ""
    exercise: str = ""        # the [[exercise]] it also runs, if any
    exercise_file: str = ""


@dataclass
class IntegrationResult(CaseTally):
    status: str = "not_graded"                # graded | not_graded | build_failed
    message: str = ""
    build: BuildInfo | None = None
    cases: list[CaseResult] = field(default_factory=list)
    points: float = 0.0
    max_points: float = 0.0


def verdict_of(status: str, cases: Sequence[CaseResult]) -> str:
    if status != "graded":
        return status
    if cases and all(c.passed for c in cases):
        return "correct"
    if cases and all(c.status == "not_implemented" for c in cases):
        return "not_implemented"
    # A hang is said as one, not as wrong answers (its cases past the time limit).
    if any(c.status == "timeout" for c in cases):
        return "timed_out"
    return "wrong"


NOT_CONTAINED = "NOT CONTAINED"


@dataclass
class MachineInfo:
    backend: str                              # cuda | emulator (machine/backend.py)
    gpu: str = ""
    compute_capability: str = ""
    copy_gbps: float | None = None
    sandbox_user: str = ""
    note: str = ""                            # e.g. "no GPU: ..."
    sandbox: str = ""                         # the jail, or "NOT CONTAINED: why"

    @property
    def contained(self) -> bool:
        return not self.sandbox.startswith(NOT_CONTAINED)

    @property
    def on_gpu(self) -> bool:
        """Graded on a GPU (its name and compute capability are known)."""
        backend = BACKENDS.get(self.backend)
        return backend is not None and backend.on_gpu


@dataclass(frozen=True)
class Student:
    name: str = ""
    sid: str = ""
    email: str = ""
    login: str = ""
    section: str = ""
    canvas_id: str = ""                  # Canvas's user ID (the gradebook export's ID column)


@dataclass(frozen=True)
class Identity:
    """Whose a submission is, and when it came (grader/classroom/roster.py)."""
    students: tuple[Student, ...] = ()
    submission_id: str = ""              # Gradescope's submission id
    submitted_at: str = ""               # ISO 8601
    late: bool | None = None             # None: not known
    late_seconds: float | None = None    # how long after the due date (None: not known)
    # The score Gradescope's autograder gave (a Gradescope export's metadata): in the
    # round trip, the emulator half's correctness, which the GPU half corrects.
    autograder_score: float | None = None


@dataclass(frozen=True)
class Provenance:
    """What a grade was made with besides its rubric, seeds and machine
    (grader/grading/provenance.py): a resumed batch regrades a result whose digests differ."""
    grader_version: str = ""
    commit: str = ""              # the checkout's git commit ("+changes": not committed); "": none
    grader_digest: str = ""       # of the grader's Python code
    harness_digest: str = ""      # of the handout less the student's files, and the contract
    reference_digest: str = ""    # of the reference solution

    def changes(self, now: "Provenance") -> list[str]:
        """What differs in `now`, in words ("the grader", ...); every part where this one
        records none (a result of a grader before provenance was kept)."""
        parts = (("the grader", self.grader_digest, now.grader_digest),
                 ("the harness", self.harness_digest, now.harness_digest),
                 ("the reference", self.reference_digest, now.reference_digest))
        if not self.grader_digest:
            return ["the grader (the result records no provenance)"]
        return [name for name, before, after in parts if before != after]


@dataclass(frozen=True)
class PastScore:
    """A score a result had before `rescore` gave it another rubric's points, or before a
    regrade request graded it again (`grade --class OUT --regrade REASON`)."""
    score: float
    max_score: float
    rubric: str
    rubric_digest: str
    until: str                    # when it was rescored or regraded (ISO 8601)
    reason: str = ""              # a regrade request's reason ("": a rescore)
    kept_in: str = ""             # a regrade's record of the earlier grade (OUT/regrades/...)


@dataclass
class SubmissionResult:
    name: str
    origin: str
    kind: str
    seed: int
    machine: MachineInfo
    graded_at: str
    grader_version: str
    rubric: str
    files: dict[str, str] = field(default_factory=dict)          # name -> path in submission
    missing: dict[str, list[str]] = field(default_factory=dict)  # name -> close matches
    ignored: list[str] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    error: str | None = None
    tasks: list[TaskResult] = field(default_factory=list)
    integration: IntegrationResult = field(default_factory=IntegrationResult)
    applications: list[AppResult] = field(default_factory=list)
    score: float = 0.0
    max_score: float = 0.0
    correctness_score: float = 0.0
    correctness_max: float = 0.0
    performance_score: float | None = None   # None: not measured (no GPU)
    performance_max: float = 0.0
    bonus_score: float = 0.0                 # the part of `score` earned by bonus tasks (beyond max_score)
    seconds: float = 0.0
    timings: dict[str, float] = field(default_factory=dict)   # phase -> seconds (wall)
    reproduce: str = ""
    # The seed of the timed inputs: drawn per grade, secret from the student (only the
    # instructor's reports show it; `grade --perf-seed` repeats it). 0: nothing timed.
    perf_seed: int = 0
    # The seed of the hidden cases drawn over the legal space (grader/config/draw.py): per
    # grade, secret like perf_seed (`grade --draw-seed` repeats it). 0: none drawn.
    draw_seed: int = 0
    identity: Identity = field(default_factory=Identity)
    source_digest: str = ""       # of the submission's bytes: a resumed batch regrades a changed one
    rubric_digest: str = ""       # of the rubric and case files it was graded (or rescored) with
    # Of the rubric's parts that decide what is measured (config.measured.measured_parts): a stored
    # result with the same one is rescored by a changed rubric, not graded again.
    measured_digest: str = ""
    provenance: Provenance = field(default_factory=Provenance)
    # The scores before each `rescore` by another rubric, oldest first (never overwritten).
    history: list[PastScore] = field(default_factory=list)

    @property
    def performance_measured(self) -> bool:
        return self.performance_score is not None


def to_jsonable(value: Any) -> Any:
    """Dataclasses (and their properties that reports need) as plain JSON values."""
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        out = {f.name: to_jsonable(getattr(value, f.name)) for f in dataclasses.fields(value)}
        for extra in ("passed", "total", "slowdown", "copy_fraction", "id", "label"):
            attr = getattr(type(value), extra, None)
            if isinstance(attr, property):
                out[extra] = to_jsonable(getattr(value, extra))
        if isinstance(value, PerfResult):
            out["speedups"] = value.speedups()
        return out
    if isinstance(value, dict):
        return {str(k): to_jsonable(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [to_jsonable(v) for v in value]
    if hasattr(value, "pattern") and hasattr(value, "flags"):
        return value.pattern
    return value


def from_jsonable(cls: type, data: Any) -> Any:
    """A dataclass back from its to_jsonable() form (a batch's results.json, resumed).
    Only fields are read; the properties to_jsonable added are recomputed."""
    if not isinstance(data, dict):
        raise ValueError(f"{cls.__name__}: expected an object, found {type(data).__name__}")
    hints = typing.get_type_hints(cls)
    return cls(**{f.name: _from(hints[f.name], data[f.name])
                  for f in dataclasses.fields(cls) if f.init and f.name in data})


def _from(tp: Any, value: Any) -> Any:
    if value is None:
        return None
    origin, args = typing.get_origin(tp), typing.get_args(tp)
    if origin in (typing.Union, types.UnionType):
        return _from(next(a for a in args if a is not type(None)), value)
    if dataclasses.is_dataclass(tp) and isinstance(tp, type):
        return from_jsonable(tp, value)
    if origin is list:
        return [_from(args[0], v) for v in value]
    if origin is tuple:
        return tuple(_from(args[0], v) for v in value)
    if origin is dict:
        return {k: _from(args[1], v) for k, v in value.items()}
    if tp is float:
        return float(value)
    return value
