"""A submission's time budget ([limits] budget_s of the rubric): what would start after
its end is not run, and says why, so a grade ends in a known time whatever the
submission does (grader/README.md, "Gradescope")."""
from __future__ import annotations

import time
from dataclasses import dataclass


@dataclass(frozen=True)
class Budget:
    """A submission's time budget ([limits] budget_s): what starts after its end is not run."""
    end: float            # time.monotonic() at which it is spent
    seconds: float

    @property
    def spent(self) -> bool:
        return time.monotonic() > self.end

    @property
    def why(self) -> str:
        return f"not run: the submission's time budget ({self.seconds:.0f} s, [limits] budget_s) was spent"


NO_BUDGET = Budget(float("inf"), float("inf"))
