"""No reference source in a student's translation unit (issue 45, item 1; grader/contract/).

Every student unit of a grade (each task's build, the integration build, an exercise's),
preprocessed as its compiler sees it (the gate's `-E` output; on nvcc also the host
pass it keeps), must hold no name that only solution/student/ defines: a task's build
has its own file and the other files' contracts, never solution/'s code."""
from __future__ import annotations

import re
from pathlib import Path

import pytest

from conftest import REPO, scratch_builder
from fixtures import compose
from grader.grading.build import Toolchain
from grader.machine import detect as machines
from grader.machine.backend import CUDA
from grader.grading.collect import collect
from grader.grading.plan import plan
from grader.grading.session import Session

IDENTIFIER = re.compile(r"\b[A-Za-z_]\w*\b")


COMMENT = re.compile(r"//[^\n]*|/\*.*?\*/", re.S)


def _names(paths: list[Path]) -> set[str]:
    """The identifiers of these files' code (a word in a comment, "648 ns", is no name)."""
    return {n for p in paths for n in IDENTIFIER.findall(COMMENT.sub(" ", p.read_text(errors="replace")))}


def reference_only_names() -> set[str]:
    """The identifiers of solution/student/ that no file of handout/ (harness, emulator,
    skeletons) nor grader/contract/ has: the reference's own helpers and locals."""
    solution = _names(sorted((REPO / "solution" / "student").glob("*.cuh")))
    public = _names([p for root in (REPO / "handout", REPO / "grader" / "contract")
                     for p in root.rglob("*") if p.is_file() and p.suffix in (".cuh", ".h", ".cu", ".cpp")])
    return solution - public


def test_the_reference_has_names_of_its_own():
    # The scan below means something only if the reference has names to find.
    names = reference_only_names()
    assert {"lookback_reference", "warpInclusiveScan", "scanTile"} <= names, sorted(names)[:40]


def _units(build_dir: Path) -> list[Path]:
    """What the compiler saw of a build's student unit: the gate's -E output, and nvcc's
    kept host pass."""
    keep = build_dir / "keep"
    return [build_dir / "student_unit.i", *(sorted(keep.glob("*.ii")) if keep.is_dir() else [])]


def _grade_units(session: Session, submission: Path) -> dict[str, list[Path]]:
    """Each planned build of `submission` (as a grade plans them), built: its label ->
    the preprocessed student unit(s)."""
    sub = collect(submission, session.rubric.submitted_files, session.rubric.submission,
                  Path(session.builder.workdir))
    planned = plan(session, sub)
    units: dict[str, list[Path]] = {}
    builds = [(p.label, p.files, p.origins, p.task.driver_tasks if p.task else None)
              for p in planned.parts if p.files is not None]
    builds += [(f"exercise {e.exercise.name}", e.files, e.origins, None)
               for e in planned.exercises if e.files is not None]
    for label, files, origins, tasks in builds:
        b = session.build(session.builder, label, dict(files), dict(origins), {}, tasks)
        assert b.ok and b.binary is not None and not b.violations, (label, b.errors, b.violations)
        units[label] = _units(b.binary.parent)
    return units


def _every_file_changed(tmp: Path) -> Path:
    """The reference with a comment added to every student file (the bonus and the
    exercise included): no build is the cached reference's, every one is compiled."""
    folder = compose("reference", tmp)
    for name in ("lookback_scan.cuh", "split.cuh"):
        (folder / "student" / name).write_bytes((REPO / "solution" / "student" / name).read_bytes())
    for f in (folder / "student").glob("*.cuh"):
        f.write_bytes(f.read_bytes() + b"\n// graded apart (test_contract)\n")
    return folder


def _assert_no_reference(units: dict[str, list[Path]], own: dict[str, set[str]]) -> None:
    banned = reference_only_names()
    for label, paths in units.items():
        for path in paths:
            assert path.is_file(), (label, path)
            text = path.read_text(errors="replace")
            found = sorted((set(IDENTIFIER.findall(text)) & banned) - own.get(label, set()))
            assert not found, f"{label}: {path.name} holds names of solution/student/ only: {found[:20]}"


def test_no_student_unit_of_a_grade_holds_reference_code(emu_session: Session, tmp_path: Path):
    folder = _every_file_changed(tmp_path)
    units = _grade_units(emu_session, folder)
    assert {"task 1", "task 2", "task 3", "task 4", "integration"} <= set(units), sorted(units)
    # The student's own files are the reference's here: a task's unit may hold the names
    # of its own file, never another's; the integration's and exercise's hold only the
    # student's files, all of them the reference's.
    files = {t.number: t.file for t in emu_session.rubric.tasks}
    own = {f"task {n}": _names([REPO / "solution" / "student" / f]) for n, f in files.items()}
    everything = _names(sorted((REPO / "solution" / "student").glob("*.cuh")))
    own.update({label: everything for label in units if not label.startswith("task ")})
    _assert_no_reference(units, own)


def test_a_task_build_reaches_no_other_reference_file(emu_session: Session, tmp_path: Path):
    # Task 3's file is the student's; lookback_scan.cuh, submitted or not, is its
    # contract in task 3's build: the reference look-back's names are not there.
    folder = _every_file_changed(tmp_path)
    units = _grade_units(emu_session, folder)
    text = units["task 3"][0].read_text(errors="replace")
    assert "lookback_reference" not in text and "scanIncWarp" in text
    assert "reduceBlocksKernel" in text   # declared: the plan's phase 1, from the reference unit



def test_no_cuda_student_unit_holds_reference_code(cuda_builder, test_rubric, tmp_path: Path):
    """The same on the CUDA backend (nvcc compiles and links without a GPU): nvcc's
    device pass (-E) and host pass (--keep) of the builds of tasks 3 and 4, as plan()
    makes them (the file alone, its driver tasks): the two whose kernels call another
    task's device functions, task 3's also linked to the reference unit. (The emulator's
    test above covers every build of a grade; the contract has no #ifdef __CUDACC__.)"""
    folder = _every_file_changed(tmp_path)
    mine = {f.name: f.read_bytes() for f in (folder / "student").glob("*.cuh")}
    builds = [(f"task {t.number}", {t.file: mine[t.file]}, t.driver_tasks) for t in test_rubric.tasks
              if t.file in ("scan.cuh", "lookback_scan.cuh")]
    units = {}
    for label, files, tasks in builds:
        b = cuda_builder.build(label, files, {}, {}, tasks)
        assert b.ok and b.binary is not None and not b.violations, (label, b.errors, b.violations)
        units[label] = _units(b.binary.parent)
        assert len(units[label]) > 1, "nvcc kept no host pass"
    files = {t.number: t.file for t in test_rubric.tasks}
    own = {f"task {n}": _names([REPO / "solution" / "student" / f]) for n, f in files.items()}
    _assert_no_reference(units, own)


def test_a_first_include_of_another_student_file_is_allowed(emu_session: Session, tmp_path: Path):
    # In task 1's build no plan has included student/reduce.cuh before the student's file
    # does: the include enters the contract's folder, which the include rule accepts.
    warp_scan = (REPO / "solution" / "student" / "warp_scan.cuh").read_bytes().replace(
        b'#include "harness/warp.cuh"', b'#include "harness/warp.cuh"\n#include "student/reduce.cuh"', 1)
    assert b"student/reduce.cuh" in warp_scan
    b = emu_session.build(emu_session.builder, "task 1", {"warp_scan.cuh": warp_scan}, {}, {},
                          ("warp-scan",))
    assert b.ok and not b.violations, (b.errors, b.violations)
    unit = (b.binary.parent / "student_unit.i").read_text(errors="replace")
    assert "harness/contract/student/reduce.cuh" in unit


# ---- every spelling of a sibling include is the contract (issue 58, item 2) ----------------
# An include that resolves to a file of the submission, however it is spelled, gets that
# file's contract in a task's build (the integration build has the file itself).
SIBLING_SPELLINGS = {"bare": ('"reduce.cuh"', '"warp_scan.cuh"'),
                     "student": ('"student/reduce.cuh"', '"student/warp_scan.cuh"'),
                     "parent": ('"../student/reduce.cuh"', '"../student/warp_scan.cuh"'),
                     "dot": ('"./reduce.cuh"', '"./warp_scan.cuh"'),
                     "angle": ("<student/reduce.cuh>", "<student/warp_scan.cuh>")}


def sibling_scan(spelling: str) -> bytes:
    """The reference's scan.cuh with its two sibling includes spelled as `spelling` says."""
    reduce, warp_scan = SIBLING_SPELLINGS[spelling]
    text = (REPO / "solution" / "student" / "scan.cuh").read_bytes()
    for old, new in ((b'"student/reduce.cuh"', reduce), (b'"student/warp_scan.cuh"', warp_scan)):
        assert text.count(b"#include " + old) == 1
        text = text.replace(b"#include " + old, b"#include " + new.encode())
    return text


@pytest.mark.parametrize("spelling", sorted(SIBLING_SPELLINGS))
def test_every_spelling_of_a_sibling_include_is_its_contract(emu_session: Session, spelling: str):
    task = next(t for t in emu_session.rubric.tasks if t.file == "scan.cuh")
    b = emu_session.build(emu_session.builder, f"task {task.number}", {"scan.cuh": sibling_scan(spelling)},
                          {}, {"scan.cuh": "alice/scan.cuh"}, task.driver_tasks)
    assert b.ok and b.binary is not None, b.errors
    assert not b.violations and not b.placeholders, ([str(v) for v in b.violations], b.placeholders)
    unit = (b.binary.parent / "student_unit.i").read_text(errors="replace")
    assert "harness/contract/student/reduce.cuh" in unit and "harness/contract/student/warp_scan.cuh" in unit
    # In the integration build the same spelling reads the student's own file.
    whole = {n: d for n, d in emu_session.builder.reference_files.items()}
    whole["scan.cuh"] = sibling_scan(spelling)
    b = emu_session.build(emu_session.builder, "integration", whole, {}, {}, None)
    assert b.ok and not b.violations, (b.errors, [str(v) for v in b.violations])


@pytest.mark.parametrize("spelling", sorted(SIBLING_SPELLINGS))
def test_every_spelling_of_a_sibling_include_is_its_contract_on_nvcc(cuda_builder, test_rubric, spelling):
    task = next(t for t in test_rubric.tasks if t.file == "scan.cuh")
    b = cuda_builder.build(f"task {task.number}", {"scan.cuh": sibling_scan(spelling)}, {},
                           {"scan.cuh": "alice/scan.cuh"}, task.driver_tasks)
    assert b.ok and b.binary is not None, b.errors
    assert not b.violations and not b.placeholders, ([str(v) for v in b.violations], b.placeholders)
