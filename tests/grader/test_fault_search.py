"""The task at fault found by builds (grader/grading/fault.py, `locate`; issue 42 item 5):
a failing integration case re-run with the student's code of one task at a time, the
other tasks the grader's stand-ins (grader/contract/, grader/contract/stand_in/scan.cuh),
names the task whose code alone fails. Five emulator builds in all (the two submissions
share their warp-scan build): each submission changes all three files the scan runs, so
that every task is a suspect."""
from __future__ import annotations

import shutil
import subprocess

import pytest

from conftest import REPO, students_own_builds
from fixtures import apply_edit, load_fixture  # tools/fixtures.py
from grader.config.assignment import default_assignment
from grader.config.cases import Case
from grader.grading import fault
from grader.grading.budget import NO_BUDGET
from grader.grading.correctness.check import TimeoutTracker, run_batch
from grader.results import AppResult, CaseResult

# Multi-block, with a partial last block: both fixtures' bugs show in them; the stand-in
# scan must pass them with the other tasks' code (a non-commutative operator, exclusive,
# the smallest block).
FAILING = Case("scan", "add-i32", 100_037, 256)
FAILING_EXCLUSIVE = Case("scan-exclusive", "mssp", 70_001, 32)
MINE = b"\n// my own notes (not the reference's bytes)\n"


def _files(session, bug: str) -> dict[str, bytes]:
    """The reference's three scan files, each changed (a comment), the fixture `bug`'s
    edits applied to its file."""
    files = {n: session.builder.reference_files[n] + MINE for n in ("warp_scan.cuh", "reduce.cuh", "scan.cuh")}
    for edit in load_fixture(bug).edits:
        files[edit.file] = apply_edit(files[edit.file].decode(), edit, bug).encode()
    return files


def _search(session, files: dict[str, bytes], builds: list[str] | None = None) -> fault.Search:
    setup = session.prepare()

    def build(label, files, origins, paths, tasks):
        if builds is not None:
            builds.append(label)
        return session.build(session.builder, label, files, origins, paths, tasks)

    return fault.Search(
        build=build,
        run_cases=lambda binary, key, cases: run_batch(setup, binary, key, cases, session.seed, TimeoutTracker()),
        setup=setup, files=files,
        app_n=(session.rubric.integration.application_emulator_n if session.backend.reduced_sizes
               else session.rubric.integration.application_n),
        paths={n: f"sub/{n}" for n in files}, origins={n: f"yours (sub/{n})" for n in files},
        reference=session.builder.reference_files, root=REPO)


def _failing(*cases: Case) -> list[CaseResult]:
    return [CaseResult(c, 1, "fail", "wrong output") for c in cases or (FAILING,)]


@pytest.mark.parametrize("backend", ["emulator", "gpu"])
@pytest.mark.parametrize("bug, at_fault, passes", [
    ("reduce_fault_in_scan", "your reduce alone (task 2; the other tasks: the grader's stand-ins)",
     "your warp-scan alone (task 1) and with your scan alone (task 3)"),
    ("large_scan_bug", "your scan alone (task 3; the other tasks: the grader's stand-ins)",
     "your warp-scan alone (task 1) and with your reduce alone (task 2)"),
])
def test_the_task_whose_code_alone_fails_is_named(request, backend, bug, at_fault, passes):
    """reduce_fault_in_scan's reduce (wrong in the scan's phase 1) is named, not the scan
    that ran it; large_scan_bug's scan is named, not the reduce or the warp scan. On the
    emulator, and on a GPU where there is one (the same builds, for CUDA; skipped, not
    passed, without one: tools/gpu_fault.sh)."""
    session = request.getfixturevalue(f"{'emu' if backend == 'emulator' else 'gpu'}_session")
    found = fault.locate(_search(session, _files(session, bug)), default_assignment(),
                         _failing(FAILING, FAILING_EXCLUSIVE), [], NO_BUDGET)
    assert found.integration == (f"integration cases {FAILING_EXCLUSIVE.label} and {FAILING.label} fail with "
                                 f"{at_fault}; they pass with {passes}")
    assert found.builds == 3


def test_a_run_with_one_suspect_needs_no_build(emu_session):
    """Only the reduce is not the reference's: the integration run itself had it alone."""
    files = dict(emu_session.builder.reference_files)
    files["reduce.cuh"] += MINE
    builds: list[str] = []
    app = AppResult("normal-cdf", 3, "scan", "fail", "Phi(0) wrong")
    found = fault.locate(_search(emu_session, files, builds), default_assignment(), _failing(), [app], NO_BUDGET)
    assert builds == [] and found.builds == 0
    alone = "fails with your reduce alone (task 2; the other tasks: the reference's own files, as you submitted them)"
    assert found.integration == f"integration {FAILING.label} {alone}"
    assert found.applications == {"normal-cdf": f"the application normal-cdf {alone}"}


def test_no_task_alone_says_two_are_needed():
    t = {n: default_assignment().task(n) for n in (1, 2, 3)}
    found = fault.Located("integration x", (fault.Tried(t[3], "passes"), fault.Tried(t[2], "passes")))
    assert found.message().startswith(
        "integration x fails only with two or more of your tasks together: it passes with your scan alone "
        "(task 3) and with your reduce alone (task 2)")
    unknown = fault.Located("integration x", (fault.Tried(t[3], "passes"), fault.Tried(t[1], "unknown", why="it does not build")))
    assert unknown.message() == ("integration x: the task at fault was not found (it passes with your scan alone "
                                 "(task 3)); your warp-scan alone (task 1) not tried: it does not build")


def test_the_handouts_app_names_the_task_at_fault(emu_session, tmp_path):
    """`scanlab app` with reduce_fault_in_scan's reduce: beside the harness's drivers with
    its own reduce.cuh and warp_scan.cuh (make grade-local's), it names the reduce, whose
    replacement makes the application pass; alone, it names every task the scan runs.
    Three emulator builds (the scan's driver tasks only)."""
    files = dict(emu_session.builder.reference_files)
    for edit in load_fixture("reduce_fault_in_scan").edits:
        files[edit.file] = apply_edit(files[edit.file].decode(), edit, "reduce_fault_in_scan").encode()
    builds = {"": files}
    for name in ("reduce.cuh", "warp_scan.cuh"):
        builds[name] = {**files, name: (REPO / "handout/harness/isolation" / name.removesuffix(".cuh")
                                        / "student" / name).read_bytes()}
    alone, beside = tmp_path / "alone", tmp_path / "beside"
    for folder in (alone, beside):
        folder.mkdir()
    for harness_file, fileset in builds.items():
        # As make grade-local builds them: the harness's stand-ins call its placeholders.
        with students_own_builds(emu_session.builder) as builder:
            b = builder.build(f"app with the harness's {harness_file or 'nothing'}", fileset, {}, {}, ("scan",))
        assert b.ok and b.binary is not None, b.errors
        stem = b.binary.name + (f"-with-harness-{harness_file.removesuffix('.cuh')}" if harness_file else "")
        for folder in ((alone, beside) if not harness_file else (beside,)):
            shutil.copy2(b.binary, folder / stem)

    def app(folder):
        run = subprocess.run([str(folder / "scanlab-emu"), "app", "normal-cdf"], capture_output=True, text=True,
                             timeout=600, cwd=tmp_path)
        assert "check   FAIL" in run.stdout, run.stdout
        return run.stdout

    assert ("With the harness's student/reduce.cuh in place of yours it passes: the fault is in your reduce "
            "(task 2), as your scan (task 3) uses it") in app(beside)
    assert ("It uses your scan (task 3, student/scan.cuh) and, inside it, your warp-scan (task 1, "
            "student/warp_scan.cuh) and your reduce (task 2, student/reduce.cuh)") in app(alone)
