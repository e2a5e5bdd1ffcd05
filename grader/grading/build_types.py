"""What the build stage deals in: where the assignment lives (Layout), the tools a build uses
(Toolchain) and what a build made (BuildResult). The building itself is build.py."""
from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

from ..machine.backend import Backend
from ..results import Violation


@dataclass(frozen=True)
class Layout:
    """Where the grader finds the assignment."""

    root: Path

    @property
    def handout(self) -> Path:
        return self.root / "handout"

    @property
    def solution(self) -> Path:
        return self.root / "solution" / "student"

    @property
    def data(self) -> Path:
        return self.root / "data"

    def handout_student(self, name: str) -> Path:
        return self.handout / "student" / name


@dataclass(frozen=True)
class Toolchain:
    backend: Backend
    cmake: str
    nvcc: str | None = None
    cuda_arch: str = ""           # "90"; "" lets the handout choose
    compiler_id: str = ""         # versions, part of the cache key
    jobs: int = 1                 # make -j of one build
    build_type: str = "Release"   # CMAKE_BUILD_TYPE


@dataclass
class BuildResult:
    label: str
    ok: bool
    binary: Path | None = None
    seconds: float = 0.0
    cached: bool = False
    log: str = ""                 # the whole output (capped)
    errors: str = ""              # the first compiler errors, paths as the student knows them
    key: str = ""
    origins: dict[str, str] = field(default_factory=dict)   # file -> "yours: path" / "reference"
    # What the compiled student unit breaks of the rules (grader/grading/checks/compiled.py); a build
    # with violations is not run.
    violations: list[Violation] = field(default_factory=list)
    # The student files whose task's kernels reach the handout's placeholders
    # (baseline::...) in the compiled code, each with what says so (the file, line and
    # function): their task is not attempted (code_rules.placeholder_calls).
    placeholders: dict[str, str] = field(default_factory=dict)
    # Where the build's seconds went (gate, compile, link, checks), for --trace and
    # tools/bench_grade.py.
    steps: dict[str, float] = field(default_factory=dict)
    # The student unit linked as a shared object, for the one profiling process of a GPU
    # grade (prebuilt.UNIT_LIBRARY, grader/grading/ncu.py); None: not linked (that build's
    # own driver is profiled instead).
    unit_library: Path | None = None
    # The reference's own build (a copy of its cached binary: the student's files are all
    # the reference's), whose figures of any case are the reference's.
    is_reference: bool = False

    def timing(self) -> str:
        """`12 s` or `12 s: gate 0.6, compile 10.1, ...`."""
        said = ", ".join(f"{k} {v:.1f}" for k, v in self.steps.items())
        return f"{self.seconds:.0f} s" + (f": {said}" if said else "")
