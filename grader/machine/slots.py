"""What grading runs share: CPU slots (builds, verifies, emulator runs) and the GPUs,
each of which takes a few correctness runs at once or one timing run alone."""
from __future__ import annotations

import queue
import threading
import time
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Iterator


class GpuSlots:
    """The GPUs: each takes `per_gpu` correctness runs at once (default 1: one process
    at a time); a timing run has its GPU to itself."""

    def __init__(self, indices: list[int], per_gpu: int = 1):
        self.per_gpu = max(1, per_gpu)
        self.turns = {i: {"shared": 0, "alone": 0} for i in indices}   # runs each GPU took
        self._count = threading.Lock()
        # Seconds each GPU was held by at least one run (overlapping runs counted once).
        self._busy = {i: 0.0 for i in indices}
        self._holders = {i: 0 for i in indices}
        self._held_since = {i: 0.0 for i in indices}
        self._tokens: queue.Queue[int] = queue.Queue()
        self._running = {i: threading.Semaphore(self.per_gpu) for i in indices}
        self._exclusive = {i: threading.Lock() for i in indices}
        for _ in range(self.per_gpu):
            for i in indices:
                self._tokens.put(i)

    @contextmanager
    def _token(self) -> Iterator[int]:
        """A GPU's index, taken from the queue of free turns and given back after."""
        index = self._tokens.get()
        try:
            yield index
        finally:
            self._tokens.put(index)

    @contextmanager
    def _held(self, index: int, kind: str) -> Iterator[int]:
        """Counts the turn, and the time the GPU is held (from the first holder in to the
        last one out)."""
        with self._count:
            self.turns[index][kind] += 1
            if self._holders[index] == 0:
                self._held_since[index] = time.monotonic()
            self._holders[index] += 1
        try:
            yield index
        finally:
            with self._count:
                self._holders[index] -= 1
                if self._holders[index] == 0:
                    self._busy[index] += time.monotonic() - self._held_since[index]

    def busy_s(self) -> dict[int, float]:
        """Seconds each GPU has been held by a run so far (one in progress counted)."""
        now = time.monotonic()
        with self._count:
            return {i: b + (now - self._held_since[i] if self._holders[i] else 0.0)
                    for i, b in self._busy.items()}

    @contextmanager
    def shared(self) -> Iterator[int]:
        with self._token() as index, self._running[index], self._held(index, "shared"):
            yield index

    @contextmanager
    def exclusive(self) -> Iterator[int]:
        with self._token() as index, self._exclusive[index]:
            for _ in range(self.per_gpu):       # waits for the runs in flight
                self._running[index].acquire()
            try:
                with self._held(index, "alone"):
                    yield index
            finally:
                for _ in range(self.per_gpu):
                    self._running[index].release()


class DiskBudget:
    """The workspace's disk, shared by the output files of runs in flight: a run reserves
    what its outputs will take before it starts and gives it back once they are deleted,
    waiting while that would pass the budget (drawn cases write up to 512 MiB an output,
    n >= 2^31 ones 8 GiB: a class's grades at once filled a 64 GB disk on the H100, and
    every grade then ended in an internal error). A reservation larger than the whole
    budget runs alone."""

    def __init__(self, total_bytes: int):
        self.total = max(1, total_bytes)
        self.used = 0
        self._changed = threading.Condition()

    @contextmanager
    def reserve(self, nbytes: int) -> Iterator[None]:
        with self._changed:
            while self.used > 0 and self.used + nbytes > self.total:
                self._changed.wait()
            self.used += nbytes
        try:
            yield
        finally:
            with self._changed:
                self.used -= nbytes
                self._changed.notify_all()


@dataclass
class Resources:
    """What grading runs share: CPU slots (builds, verifies, emulator runs), GPUs and the
    workspace's disk."""

    cpu: threading.BoundedSemaphore
    cores: int                       # how many CPU slots there are
    gpus: GpuSlots | None = None
    disk: DiskBudget = field(default_factory=lambda: DiskBudget(1 << 62))

    @staticmethod
    def create(cores: int, gpu_indices: list[int], runs_per_gpu: int = 1,
               disk_bytes: int = 1 << 62) -> "Resources":
        return Resources(threading.BoundedSemaphore(max(1, cores)), max(1, cores),
                         GpuSlots(gpu_indices, runs_per_gpu) if gpu_indices else None, DiskBudget(disk_bytes))

    @contextmanager
    def cpu_slot(self) -> Iterator[None]:
        with self.cpu:
            yield

    def gpu(self):
        """A GPU for a correctness run."""
        assert self.gpus is not None
        return self.gpus.shared()

    def gpu_alone(self):
        """A GPU with nothing else running on it: for timing."""
        assert self.gpus is not None
        return self.gpus.exclusive()
