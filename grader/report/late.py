"""Lateness and what it costs, by the rubric's [late] policy: one place every view and
upload file asks (grader/README.md, "Late work").

A submission is late when it came after the due date (`batch --due`, with the time from a
Gradescope export or the roster's `submitted_at`), by the LMS's own count (the roster's
`seconds_late`, Canvas's submissions list as the roster), or when the roster or Canvas's
file name says so. Each day (or hour) started after the due date costs `penalty_percent` of
the maximum, up to `cap_percent`; a submission within `grace_minutes` of the due date
costs nothing (it is still shown as late). Late with no time known: shown, and not
penalised (nothing says by how much), so a person decides.
"""
from __future__ import annotations

import math
from dataclasses import dataclass

from ..config.late_policy import LatePolicy
from ..results import Identity

UNIT_SECONDS = {"day": 86400.0, "hour": 3600.0}


@dataclass(frozen=True)
class Lateness:
    late: bool | None          # None: not known
    seconds: float | None      # how late (None: not known)
    units: int                 # days or hours started past the due date that are charged
    fraction: float            # of the maximum taken (0..1)
    in_grace: bool = False

    def words(self) -> str:
        """'late by 1 d 02 h (-10%)', 'late (time not known: not penalised)', or ''."""
        if not self.late:
            return ""
        if self.seconds is None:
            return ("late (by how much not known: not penalised; a roster with the time gives it: "
                    "`submitted_at` with --due, `seconds_late`, or Canvas's submissions list)")
        said = f"late by {duration(self.seconds)}"
        if self.in_grace:
            return said + " (within the grace period: no penalty)"
        return said + (f" (-{100 * self.fraction:g}% late penalty)" if self.fraction > 0 else "")


def duration(seconds: float) -> str:
    minutes = int(math.ceil(seconds / 60))
    days, rest = divmod(minutes, 24 * 60)
    hours, mins = divmod(rest, 60)
    if days:
        return f"{days} d {hours:02d} h"
    return f"{hours} h {mins:02d} min" if hours else f"{mins} min"


def lateness(identity: Identity, policy: LatePolicy) -> Lateness:
    """How late a submission is and what that costs under `policy`."""
    if not identity.late:
        return Lateness(identity.late, identity.late_seconds, 0, 0.0)
    seconds = identity.late_seconds
    if seconds is None:
        return Lateness(True, None, 0, 0.0)
    if seconds <= 60 * policy.grace_minutes:
        return Lateness(True, seconds, 0, 0.0, in_grace=True)
    units = max(1, math.ceil(seconds / UNIT_SECONDS[policy.per]))
    fraction = min(policy.cap_percent, units * policy.penalty_percent) / 100
    return Lateness(True, seconds, units, min(1.0, fraction))


def penalised(raw: float | None, maximum: float, late: Lateness) -> float | None:
    """`raw` less the late penalty (a share of `maximum`), never below 0."""
    if raw is None:
        return None
    return max(0.0, raw - late.fraction * maximum) if late.fraction > 0 else raw
