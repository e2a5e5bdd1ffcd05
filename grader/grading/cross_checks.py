"""What a GPU grade learns beyond its own cases: the task's GPU build under
compute-sanitizer (grader/grading/checks/sanitizer.py), a file that builds for the GPU but not for the
CPU emulator (its race-check cases fail), and cases the two backends judge differently."""
from __future__ import annotations

import dataclasses
import re
from concurrent.futures import Future
from pathlib import Path

from .checks import sanitizer as sanitizers
from .build_types import BuildResult
from ..config.cases import Case
from .correctness.check import RunSetup
from ..machine.backend import EMULATOR
from ..results import CaseResult
from .outcomes import CheckOutcome

CaseFutures = list["Future[list[CaseResult]]"]


def first_error(errors: str) -> str:
    """The first line of a compiler's output that says error."""
    return next((line for line in errors.splitlines() if "error" in line), "").strip()[:200]


def sanitize_after(cases: CaseFutures, setup: RunSetup, sanitizer: sanitizers.Sanitizer, tool: str,
                    binary: Path, tool_cases: list[Case], seed: int, shown: dict[str, str]) -> CaseResult:
    """One tool's run on a task's GPU build, once the build's own cases are done: one that
    hung there (a time limit) is not run again under the tool, which would only hang too,
    nor one that is still the handout's stub (every case not implemented)."""
    done = [r for f in cases for r in f.result()]
    first = dataclasses.replace(tool_cases[0], backend=f"compute-sanitizer {tool}")
    hung = [c for c in done if c.status == "timeout"]
    if hung:
        return CaseResult(first, tool_cases[0].seed(seed), "not_run",
                          f"not run under compute-sanitizer {tool}: {len(hung)} case(s) of this "
                          "build timed out")
    if done and all(c.status == "not_implemented" for c in done):
        # The handout's stub: nothing of the student's to check, and the task stays "not
        # implemented" (a failed tool run would make it "wrong").
        return CaseResult(first, tool_cases[0].seed(seed), "not_implemented",
                          f"not run under compute-sanitizer {tool}: the task is not implemented")
    return sanitizers.run(setup, sanitizer, tool, binary, tool_cases, seed, shown)


def say_sanitizer_findings(check: CheckOutcome, done: list[CaseResult]) -> CheckOutcome:
    """The task with compute-sanitizer's runs on its GPU build (`done`) among its cases: its
    message names what the tool found; the race note says what ran."""
    tools = ", ".join(c.case.backend.removeprefix("compute-sanitizer ") for c in done)
    found = [c for c in done if not c.passed]
    note = (f"compute-sanitizer ({tools}): " + (f"{len(found)} run(s) with findings" if found
                                                else "no finding")) if done else ""
    return dataclasses.replace(
        check, cases=(*check.cases, *done),
        race_note="; ".join(x for x in (check.race_note, note) if x),
        message="; ".join(x for x in (check.message, found[0].summary) if x) if found else check.message)


# The emulator's own error for a listed CUDA device function it does not provide
# (handout/emulator/cuda_emu_intrinsics.h, from device_functions.def), as g++ prints it.
EMULATOR_GAP = re.compile(r"emulator/cuda_emu_intrinsics\.h:\d+:\d+: error: static assertion "
                          r"failed: emulator gap: (\w+) is a CUDA device function")


def emulator_gaps(errors: str) -> list[str]:
    """The listed device functions the emulator lacks, when they are the build's only errors
    (each reported from the emulator's header, which no submission can write); else []."""
    lines = [line for line in errors.splitlines() if ": error:" in line]
    found = [EMULATOR_GAP.search(line) for line in lines]
    if not lines or not all(found):
        return []
    return sorted({m.group(1) for m in found if m})


def emulator_build_failed(check: CheckOutcome, race_build: BuildResult, race_cases: list[Case],
                          seed: int) -> CheckOutcome:
    """The file builds for the GPU but not for the CPU emulator: the race check cannot run
    it, so its cases fail (code one backend compiles and the other does not is a finding,
    not a note). Unless the only reason is a device function the emulator lacks (its gap,
    not the student's): then nothing is lost, and the note says so; compute-sanitizer's
    racecheck runs the race check's cases on the GPU build instead (checking.py,
    racecheck_instead: code that avoids the emulator on purpose meets it)."""
    gaps = emulator_gaps(race_build.errors)
    if gaps:
        note = (f"race check on the CPU emulator not run: the emulator does not provide {', '.join(gaps)} "
                "(a gap of the emulator, not counted against you; compute-sanitizer's racecheck "
                "runs the race check's cases on the GPU build instead)")
        return dataclasses.replace(check, race_note="; ".join(x for x in (note, check.race_note) if x))
    error = first_error(race_build.errors) or "the build failed"
    summary = (f"does not build for the CPU emulator, while it builds for the GPU ({error}): "
               "every task must build for both")
    failed = tuple(CaseResult(dataclasses.replace(case, backend=EMULATOR.name), case.seed(seed),
                              "fail", summary, race_build.errors[:2000]) for case in race_cases)
    return dataclasses.replace(
        check, cases=check.cases + failed,
        race_note="; ".join(x for x in ("race check: " + summary, check.race_note) if x),
        message="; ".join(x for x in (check.message, summary) if x))


def say_where_they_disagree(check: CheckOutcome) -> CheckOutcome:
    """A case the GPU and the CPU emulator both ran with different verdicts (code that
    takes another path on each backend, or a race one of them forgives) is named in the
    task's message; the failing side's case already counts as failed."""
    gpu = {c.case.id: c for c in check.cases if not c.case.backend}
    differ = [(gpu[c.case.id], c) for c in check.cases if c.case.backend == EMULATOR.name
              and c.case.id in gpu and gpu[c.case.id].passed != c.passed
              and not c.summary.startswith("does not build")]
    if not differ:
        return check
    g, e = differ[0]
    return dataclasses.replace(check, message="; ".join(x for x in (check.message, (
        f"the GPU and the CPU emulator disagree on {len(differ)} case(s) "
        f"(first: {g.case.label}: GPU {g.status}, emulator {e.status}): code that differs by "
        "backend, or a race one of them forgives")) if x))
