"""What the stages of one submission's grade return: each stage's typed, frozen answer,
which the next stage reads and assemble.py alone makes into the SubmissionResult.

  collect.collect          -> collect.Submission: the student files found, missing, refused
  plan.plan                -> Plan: a PartPlan per task and one for the integration build
                              (what is built from which files, what the files alone decide),
                              and the exercises' builds
  checking.build_and_check -> per part, a BuildOutcome (its driver, and what the build decides
                              before a case runs) and a CheckOutcome (its cases, what they
                              say, the race check and compute-sanitizer on a GPU); the
                              applications
  pipeline.time_tasks      -> timing.TaskTiming per task
  score.score              -> score.ScoreOutcome: the points
  assemble.assemble        -> results.SubmissionResult, made once from all of the above
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Mapping, Sequence

from .build_types import BuildResult
from .collect import Submission
from ..config.rubric import TaskRubric
from ..results import AppResult, BuildInfo, CaseResult, CaseTally, TaskProfile, Violation
from .fault import Faults
from .timing import TaskTiming


@dataclass(frozen=True)
class PartPlan:
    """The plan of one graded part: a task (the student's file for it among the reference's
    other files) or the integration build (every student file together)."""

    label: str                                 # "task 2", "integration"
    task: TaskRubric | None                    # None: the integration build
    status: str                                # a task: graded | missing | not_attempted;
                                               # the integration build: not_graded
    message: str = ""
    files: Mapping[str, bytes] | None = None   # None: not built (missing, not attempted, ...)
    origins: Mapping[str, str] = field(default_factory=dict)
    path: str | None = None                    # a task: its file in the submission
    digest: str = ""                           # ... that file's sha256
    unchanged: bool = False                    # ... the handout's file, byte for byte
    placeholder: bool = False                  # ... the handout's file, up to comments and spaces
    identical_to_reference: bool = False


@dataclass(frozen=True)
class BuildOutcome:
    """The build of one planned part: its driver, and what the build decides before any
    case runs (the rules broken as the compiler sees them, a build that fails, a task that
    calls the handout's placeholder)."""

    build: BuildResult
    status: str                                # built | forbidden | build_failed | not_attempted
    message: str = ""
    placeholder: bool = False
    violations: tuple[Violation, ...] = ()
    info: BuildInfo | None = None              # what the reports show; None: refused unbuilt

    @property
    def runs(self) -> bool:
        """Its cases run."""
        return self.status == "built"


@dataclass(frozen=True)
class CheckOutcome(CaseTally):
    """The correctness of one part: its cases (on a GPU also the race check's on the
    emulator and compute-sanitizer's runs) and what they say; for a part that was not
    run, why."""

    status: str            # graded | missing | forbidden | build_failed | not_attempted | not_graded
    message: str = ""
    placeholder: bool = False
    violations: tuple[Violation, ...] = ()
    cases: tuple[CaseResult, ...] = ()
    race_note: str = ""


def unbuilt(plan: PartPlan) -> CheckOutcome:
    """The correctness of a part that was not built: what its plan said."""
    return CheckOutcome(plan.status, plan.message, plan.placeholder)


def not_run(built: BuildOutcome) -> CheckOutcome:
    """The correctness of a part whose build stopped it (forbidden, failed, not attempted)."""
    return CheckOutcome(built.status, built.message, built.placeholder, built.violations)


@dataclass(frozen=True)
class Graded:
    """Everything the stages of one grade returned, for assemble.py. `submission` None:
    the grade stopped before a submission was collected (`error` says why)."""

    submission: Submission | None
    graded_at: str                                           # ISO 8601, when collected
    plans: Sequence[PartPlan] = ()                           # the tasks', then the integration's
    builds: Mapping[str, BuildOutcome] = field(default_factory=dict)    # by part label
    checks: Mapping[str, CheckOutcome] = field(default_factory=dict)    # by part label
    applications: Sequence[AppResult] = ()
    timings: Mapping[int, TaskTiming] = field(default_factory=dict)     # by task number
    perf_seed: int = 0
    phases: Mapping[str, float] = field(default_factory=dict)           # phase -> seconds
    error: str | None = None                                 # beyond the submission's own
    notes: Sequence[str] = ()                                # ... and its notes
    profiles: Mapping[int, TaskProfile] = field(default_factory=dict)   # by task number (GPU)
    draw_seed: int = 0                                       # the drawn cases' seed (secret)
    faults: Faults = field(default_factory=Faults)           # the task at fault (fault.locate)
