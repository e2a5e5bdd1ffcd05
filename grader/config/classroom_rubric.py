"""The rubric's settings for a class on a cluster and its ranking: [slurm] (what each job of
`grader slurm` asks for) and [leaderboard]. Read and documented with every other setting by
grader/config/rubric.py (SETTINGS_CLASSES)."""
from __future__ import annotations

from dataclasses import dataclass

from .toml_table import setting


@dataclass(frozen=True)
class SlurmRubric:
    """What each job of `grader slurm` asks the cluster for (options of sbatch)."""
    TABLE = "slurm"
    minutes: int = setting(30, "time limit of one submission's array task (sbatch --time), in minutes",
                           minimum=1)
    memory: str = setting("16G", "memory of one submission's array task (sbatch --mem)")
    cpus: int = setting(8, "CPU cores of one submission's array task (sbatch --cpus-per-task): its "
                        "builds run in parallel on them", minimum=1)
    gres: str = setting("gpu:1", "generic resources of one array task (sbatch --gres); \"\" for none "
                        "(the emulator backend)")
    partition: str = setting("", "the partition of the prepare and grading jobs (sbatch --partition); "
                             "\"\": the cluster's default; --partition overrides it")
    merge_partition: str = setting("", "the partition of the merge job, which needs no GPU (a CPU "
                                   "partition); \"\": the cluster's default")
    account: str = setting("", "the account charged (sbatch --account); \"\": none; --account "
                           "overrides it")


@dataclass(frozen=True)
class LeaderboardRubric:
    """The class's ranking by GB/s (grader/report/leaderboard.py)."""
    TABLE = "leaderboard"
    tasks: tuple[str, ...] = setting(("scan", "lookback-scan"), "the tasks ranked (names of "
                                     "data/assignment.toml), by the GB/s of their first timed case")
    show: bool = setting(False, "fill Gradescope's leaderboard, so students see the class's GB/s "
                         "ranking (always written for instructors: leaderboard.csv, class-summary.md)")
