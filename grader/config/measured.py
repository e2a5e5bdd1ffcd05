"""What a rubric measures, apart from what it only scores.

The parts of a rubric that decide what is measured: the cases run (and which tasks'
files and driver tasks they check), what is timed and how, the code rules, the limits a
run is under. Everything else (points, scoring, the slowdown of full credit, which is
applied to stored times, the late policy, the gradebook's names, Slurm's requests) only
scores: a change there is rescored from the stored measurements (`rescore`, `batch
--resume`), never graded again. A new setting that changes what is measured belongs
here (tests/grader/test_rescore.py checks a timed size and a point value fall on their sides).
"""
from __future__ import annotations

import dataclasses
import hashlib

from .rubric import Rubric


def measured_parts(rubric: Rubric) -> dict[str, str]:
    """A digest of each measured part, by name (said when one changes)."""
    parts: dict[str, object] = {
        "cases": (rubric.cases, rubric.emulator_max_n, rubric.sanitize, rubric.emulator.race_check, rubric.drawn,
                  rubric.boundary, rubric.boundary_family,
                  [(t.number, t.file, t.driver_tasks) for t in rubric.tasks],
                  dataclasses.replace(rubric.integration, points=0.0)),
        "timed sizes": ([(t.number, t.perf) for t in rubric.tasks],
                        dataclasses.replace(rubric.performance, full_credit_slowdown=1.0)),
        "rules": rubric.forbidden,
        "limits": (rubric.limits, rubric.submission, rubric.sanitizer),
        "profile": rubric.profile,   # what Nsight Compute profiles: figures of the reports
    }
    return {name: hashlib.sha256(repr(value).encode()).hexdigest()[:16] for name, value in parts.items()}


def measured_digest(rubric: Rubric) -> str:
    """One digest of measured_parts(): a stored result with the same one is rescored."""
    return hashlib.sha256(repr(sorted(measured_parts(rubric).items())).encode()).hexdigest()[:16]
