"""A grading job as data: which submissions are graded, with which rubric, and how (the
Options: backend, seed, timing, limits of the machine's use). `grade`, `batch` and the
Slurm tasks all start from one; it round-trips through JSON (a Slurm plan stores it), so
no command line is parsed twice."""
from __future__ import annotations

import dataclasses
import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

JOB_FORMAT = "scanlab-grading-job-1"


def default_cache_dir() -> Path:
    explicit = os.environ.get("SCANLAB_CACHE")
    if explicit:
        return Path(explicit)
    return Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache") / "scanlab"


@dataclass
class Options:
    backend: str = "auto"                 # auto | cuda | emulator (machine/backend.py)
    cache_dir: Path | None = None         # None: default_cache_dir() where the job runs
    jobs: int = 0                         # parallel CPU work; 0: the machine's cores
    seed: int | None = None               # None: a fresh one
    perf_seed: int | None = None          # the timed inputs' seed; None: a fresh one per grade
    draw_seed: int | None = None          # the secret cases' seed; None: a fresh one per grade
    perf: bool = True                     # measure performance (GPU only)
    sandbox_user: str = "nobody"          # when running as root
    cuda_arch: str = ""                   # "" : the GPU's
    workdir: Path | None = None           # parent of the temporary workspace
    keep_workdir: bool = False
    gpu_runs: int = 0                     # correctness runs per GPU at once; 0: the rubric's
    gpus: str = "all"                     # the GPUs to grade on: all, or indices "0,2"
    race_check: bool = True               # GPU grades: also run the rubric's race-check cases
                                          # on the CPU emulator
    sanitize: bool = True                 # GPU grades: also run each task's GPU build under
                                          # compute-sanitizer ([[sanitize.case]])


@dataclass
class GradingJob:
    """One grade described as data: the submissions (one for `grade`, a class's for
    `batch` and Slurm), the rubric file, and the options."""

    rubric: Path
    options: Options = field(default_factory=Options)
    submissions: list[Path] = field(default_factory=list)

    def to_json(self) -> dict[str, Any]:
        options = {f.name: _plain(getattr(self.options, f.name)) for f in dataclasses.fields(Options)}
        return {"format": JOB_FORMAT, "rubric": str(self.rubric), "options": options,
                "submissions": [str(s) for s in self.submissions]}

    @staticmethod
    def from_json(data: Any) -> GradingJob:
        """The job `to_json` wrote; ValueError for anything else."""
        if not isinstance(data, dict) or data.get("format") != JOB_FORMAT:
            raise ValueError("not a grading job of this grader")
        given = data.get("options")
        if not isinstance(given, dict):
            raise ValueError("a grading job without options")
        known = {f.name: f for f in dataclasses.fields(Options)}
        unknown = set(given) - set(known)
        if unknown:
            raise ValueError(f"unknown options {sorted(unknown)}")
        values: dict[str, Any] = {name: (Path(v) if v is not None and "Path" in str(known[name].type) else v)
                                  for name, v in given.items()}
        return GradingJob(Path(data["rubric"]), Options(**values),
                          [Path(s) for s in data.get("submissions", [])])


def _plain(value: Any) -> Any:
    return str(value) if isinstance(value, Path) else value
