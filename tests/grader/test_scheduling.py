"""GPU slots: at most `per_gpu` correctness runs on a GPU at once, and a timing run
alone on its GPU."""
from __future__ import annotations

import threading
import time

from grader.machine.slots import GpuSlots


def _track(slots: GpuSlots, jobs: list[str]) -> list[tuple[float, float, str, int]]:
    spans: list[tuple[float, float, str, int]] = []
    lock = threading.Lock()

    def work(kind: str) -> None:
        ctx = slots.exclusive() if kind == "x" else slots.shared()
        with ctx as gpu:
            start = time.monotonic()
            time.sleep(0.05)
            with lock:
                spans.append((start, time.monotonic(), kind, gpu))

    threads = [threading.Thread(target=work, args=(k,)) for k in jobs]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    return spans


def _overlap(a, b) -> bool:
    return a[0] < b[1] and b[0] < a[1] and a[3] == b[3]


def test_one_run_at_a_time_by_default():
    spans = _track(GpuSlots([0]), ["s"] * 6)
    assert len(spans) == 6
    assert not any(_overlap(a, b) for i, a in enumerate(spans) for b in spans[i + 1:])


def _most_at_once(spans) -> int:
    events = sorted([(s[0], 1) for s in spans] + [(s[1], -1) for s in spans], key=lambda e: (e[0], e[1]))
    running = most = 0
    for _, step in events:
        running += step
        most = max(most, running)
    return most


def test_shared_runs_up_to_the_limit_and_timing_alone():
    spans = _track(GpuSlots([0], 3), ["s", "s", "x", "s", "s", "s", "x", "s"])
    assert len(spans) == 8
    assert _most_at_once(spans) <= 3
    for a in spans:
        if a[2] == "x":
            assert not any(_overlap(a, b) for b in spans if b is not a)


def test_two_gpus_are_used():
    spans = _track(GpuSlots([0, 1]), ["s"] * 8)
    assert {s[3] for s in spans} == {0, 1}


def test_busy_time_counts_overlapping_runs_once():
    slots = GpuSlots([0, 1], per_gpu=4)
    start = time.monotonic()
    _track(slots, ["s"] * 4)           # four 50 ms runs, side by side on two GPUs
    wall = time.monotonic() - start
    busy = slots.busy_s()
    # Held while a run was on it; runs at once are counted once, so never above the wall time.
    assert 0.05 <= busy[0] <= wall and 0.05 <= busy[1] <= wall, (busy, wall)
    assert busy[0] + busy[1] < 4 * 0.05, busy


def test_output_files_wait_for_room_on_the_disk():
    """Runs reserve their outputs' bytes first: one that would pass the budget waits until
    others give theirs back (a class batch had filled a 64 GB disk: every grade an internal
    error); one larger than the whole budget runs alone, not never."""
    from grader.machine.slots import DiskBudget
    disk = DiskBudget(100)
    order: list[str] = []
    first_in = threading.Event()

    def hold(name: str, nbytes: int, seconds: float) -> None:
        with disk.reserve(nbytes):
            order.append(f"{name} in")
            first_in.set()
            time.sleep(seconds)
            order.append(f"{name} out")

    a = threading.Thread(target=hold, args=("a", 70, 0.3))
    a.start()
    first_in.wait()
    b = threading.Thread(target=hold, args=("b", 50, 0.0))      # 70 + 50 > 100: waits for a
    b.start()
    c = threading.Thread(target=hold, args=("c", 30, 0.0))      # 70 + 30 fits: goes at once
    c.start()
    c.join()
    assert order[:3] == ["a in", "c in", "c out"]
    a.join()
    b.join()
    assert order.index("b in") > order.index("a out")
    with disk.reserve(500):                                     # alone: larger than the budget
        assert disk.used == 500
    assert disk.used == 0
