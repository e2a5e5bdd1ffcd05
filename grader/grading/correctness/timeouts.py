"""Each build's timed-out cases and the seconds they cost: what lets a hang cost its own
case and a build that hangs everywhere a bounded time (check.RunSetup.case_limits)."""
from __future__ import annotations

import threading


class TimeoutTracker:
    """Each build's timed-out cases and the seconds they cost (RunSetup.case_limits: a hang
    costs its own case, and a build that hangs everywhere a bounded time)."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._hung: dict[str, tuple[int, float]] = {}
        self._planned: dict[str, int] = {}

    def plan(self, key: str, cases: int) -> None:
        """The build has `cases` more cases to run (its hang allowance grows with them)."""
        with self._lock:
            self._planned[key] = self._planned.get(key, 0) + cases

    def planned(self, key: str) -> int:
        with self._lock:
            return self._planned.get(key, 0)

    def of(self, key: str) -> tuple[int, float]:
        """How many of the build's cases timed out, and the seconds they cost."""
        with self._lock:
            return self._hung.get(key, (0, 0.0))

    def add(self, key: str, seconds: float) -> None:
        with self._lock:
            hung, lost = self._hung.get(key, (0, 0.0))
            self._hung[key] = (hung + 1, lost + seconds)
