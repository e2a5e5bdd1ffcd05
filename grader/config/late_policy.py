"""The rubric's [late] table: what lateness costs (applied by grader/report/late.py)."""
from __future__ import annotations

from dataclasses import dataclass

from .toml_table import setting


@dataclass(frozen=True)
class LatePolicy:   # what lateness costs (grader/report/late.py)
    TABLE = "late"
    per: str = setting("day", "the unit the penalty counts: \"day\" or \"hour\" (each one started "
                       "after the due date counts whole)", choices=("day", "hour"))
    penalty_percent: float = setting(0.0, "percent of the maximum taken per day (or hour) late (0: "
                                     "lateness is shown, costs nothing)", minimum=0)
    cap_percent: float = setting(100.0, "at most this percent of the maximum is taken", minimum=0)
    grace_minutes: float = setting(0.0, "minutes after the due date that cost nothing", minimum=0)
