"""Adding a task is four hand-written files of code and data, its page, and one `make
handout` (README.md, "To add a task"): the driver, the C++ suite, the grader and the
handout's text pick it up, with nothing else edited.

A copy of the repository gets one more task under the first free task number, a bonus
segmented reduce (one output element per 1024 input elements: an output size that is
neither n nor one) with a trivial kernel (one thread folds each segment): its [[task]]
and [[driver_task]] in the manifest, its student file in solution/student/, its type in
handout/harness/tasks/segment_reduce_task.cuh, its points in the rubric, and its page
handout/tasks/<number>-segment-reduce.md (the text test wants one page per task).
`make_handout.py` runs once; then the emulator driver and the C++ suite are built (those
targets only) and asked what they see, the grader grades the solution's file on the
emulator, and the tests that read the task list from data/ (DATA_DRIVEN_TESTS, the handout's
text test among them) pass there unedited.
"""
from __future__ import annotations

import json
import re
import shutil
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

import pytest

from conftest import REPO
from grader.config.assignment import default_assignment, parse_output_size

NUMBER = max(t.number for t in default_assignment().tasks) + 1   # the first free task number
SEGMENT = 1024
OUTPUT = f"n/{SEGMENT}"

MANIFEST_TASK = f'''
[[task]]
number = {NUMBER}
name = "segment-reduce"
title = "bonus: segmented reduce (a toy task added by tests/grader/test_new_task.py)"
file = "segment_reduce.cuh"
kernels = ["segmentReduceKernel"]
bonus = true
'''

MANIFEST_DRIVER_TASK = f'''
[[driver_task]]
name = "segment-reduce"
type = "SegmentReduce"
task = {NUMBER}
output = "{OUTPUT}"
elements_moved = 1
baselines = ["cpu-sequential"]
'''

STUDENT_FILE = f'''\
// Task {NUMBER}: the segmented reduce, out[s] = the fold of in[s*{SEGMENT}, min(n, (s+1)*{SEGMENT})).
//                                                                  YOUR FILE: edit it.
#pragma once
#include <cstddef>

#include "harness/ops.cuh"
#include "harness/platform.cuh"
#include "harness/runtime.cuh"

namespace scanlab {{

template <class Op>
__global__ void segmentReduceKernel(const typename Op::Element* in, typename Op::Element* out,
                                    size_t n, size_t segment) {{
    //@@ solution
    // One thread folds each segment, from the left: trivial, and right for any operator.
    const size_t s = size_t(blockIdx.x) * blockDim.x + threadIdx.x;
    if (s * segment >= n) return;
    typename Op::Element acc = Op::identity();
    for (size_t i = s * segment; i < n && i < (s + 1) * segment; ++i) acc = Op::apply(acc, in[i]);
    out[s] = acc;
    //@@ placeholder
    //| // TODO(task {NUMBER}): the segmented reduce.
    //| notImplemented();
    //@@ end
}}

}}  // namespace scanlab
'''

TASK_HEADER = f'''\
// scanlab harness: students, do not edit (your code goes in student/); maintainers edit it here.
//
// Task {NUMBER}'s driver task (student/segment_reduce.cuh): the fold of each segment of {SEGMENT}.
#pragma once
#include <cstddef>
#include <vector>

#include "harness/tasks/launch.cuh"
#include "harness/tasks/task.cuh"
#include "harness/tasks/tiling.cuh"

namespace scanlab::tasks {{

inline constexpr size_t kSegment = {SEGMENT};

struct SegmentReduce {{
    template <class Op>
    static std::vector<typename Op::Element> reference(const std::vector<typename Op::Element>& in) {{
        std::vector<typename Op::Element> out((in.size() + kSegment - 1) / kSegment, Op::identity());
        for (size_t i = 0; i < in.size(); ++i) out[i / kSegment] = Op::apply(out[i / kSegment], in[i]);
        return out;
    }}

    static constexpr TimedCheck kTimedCheck = TimedCheck::onHost();

    template <class Op, class Baselines>
    static void baselines(Baselines&) {{}}  // the CPU reference only
}};

}}  // namespace scanlab::tasks

#if defined(SCANLAB_STUDENT_UNIT)
#include "student/segment_reduce.cuh"

namespace scanlab {{

template <>
struct Plan<tasks::SegmentReduce> {{
    template <class Op>
    static void launch(const typename Op::Element* in, size_t n, typename Op::Element* out,
                       unsigned blockSize, const Scratch<typename Op::Element>&) {{
        const size_t segments = (n + tasks::kSegment - 1) / tasks::kSegment;
        launchKernel("segmentReduceKernel", segmentReduceKernel<Op>,
                     dim3(unsigned((segments + blockSize - 1) / blockSize)), dim3(blockSize), 0, in, out,
                     n, tasks::kSegment);
    }}
}};

}}  // namespace scanlab
#endif
'''

# Its page: what students read (handout/tasks/<number>-<name>.md, the parts of the others
# in order; `make handout` fills the facts between the markers).
TASK_PAGE = f'''\
# Task {NUMBER}: segmented reduce (`student/segment_reduce.cuh`, a bonus)

Read the [quick start](../README.md) first.

<!-- facts: generated by tools/make_handout.py from data/ and harness/policy.cuh -->
<!-- end facts -->

## What to write: the contracts

- `segmentReduceKernel<Op>(in, out, n, segment)`: `out[s]` is the fold of
  `in[s*segment, min(n, (s+1)*segment))` in index order; the last segment may be short.

## Where you start

`student/segment_reduce.cuh`: one kernel, its placeholder calls `notImplemented()`.

## What to do

Fold each segment; one thread a segment is right, a block a segment is faster.

## How to test it

`make emu-test`, then `make grade-local`.

## The three commonest mistakes

1. Writing past the last, short segment.
2. Folding out of order (the operators need not commute).
3. Starting from a value other than the operator's identity or the segment's first element.

## What the grader checks

Its cases on every operator, as for the other tasks.
'''

RUBRIC_TASK = f'''
[[task]]
number = {NUMBER}
correctness_points = 5
performance_points = 0
'''

PAGE = f"handout/tasks/{NUMBER}-segment-reduce.md"
HAND_WRITTEN = {"data/assignment.toml", "solution/student/segment_reduce.cuh",
                "handout/harness/tasks/segment_reduce_task.cuh", "data/rubric.toml", PAGE}
IGNORED = ("build", "build-*", ".venv", ".git", "__pycache__", ".pytest_cache", ".dev", ".debs",
           "grader-out")
# The tests that read the task list from data/: each passes in the copy, unedited. Of
# test_cli, not the two that grade the whole reference (minutes of builds in a fresh copy;
# the new task's grade below covers the path, and their totals come from the rubric).
DATA_DRIVEN_TESTS = tuple(f"tests/grader/{t}" for t in (
    "test_assignment.py", "test_rubric.py", "test_make_handout.py", "test_reports.py", "test_html.py",
    "test_fixtures.py", "test_cli.py")) + ("tests/handout/test_handout_text.py",)
WHOLE_GRADES = "not test_grade_reference_from_the_command_line and not test_gradescope_autograder_runs"


@dataclass(frozen=True)
class RepoWithTask:
    root: Path
    generated: frozenset[str]   # what its one `make handout` wrote


def run(argv: list[str], cwd: Path, **kw) -> subprocess.CompletedProcess:
    return subprocess.run(argv, cwd=cwd, capture_output=True, text=True, timeout=1200, **kw)


def insert_before(path: Path, marker: str, text: str) -> None:
    """`text` before the first line that starts with `marker`."""
    content = path.read_text()
    found = re.search("^" + re.escape(marker), content, re.M)
    assert found, f"{path}: no line starts with {marker!r}"
    at = found.start()
    path.write_text(content[:at] + text.lstrip() + "\n" + content[at:])


@pytest.fixture(scope="module")
def repo_with_task(tmp_path_factory) -> RepoWithTask:
    if not shutil.which("cmake") or not shutil.which("g++"):
        pytest.skip("cmake and g++ are needed to build the emulator driver")
    root = tmp_path_factory.mktemp("task") / "scanlab"
    shutil.copytree(REPO, root, ignore=shutil.ignore_patterns(*IGNORED))
    # The hand-written files: four of code and data, and the page.
    manifest = root / "data" / "assignment.toml"
    insert_before(manifest, "# ---- exercises", MANIFEST_TASK)
    manifest.write_text(manifest.read_text() + MANIFEST_DRIVER_TASK)
    (root / "solution" / "student" / "segment_reduce.cuh").write_text(STUDENT_FILE)
    (root / "handout" / "harness" / "tasks" / "segment_reduce_task.cuh").write_text(TASK_HEADER)
    insert_before(root / "data" / "rubric.toml", "[correctness]", RUBRIC_TASK)
    (root / PAGE).write_text(TASK_PAGE)
    # One `make handout`: it must succeed on its first run.
    r = run([sys.executable, "tools/make_handout.py"], root)
    assert r.returncode == 0, r.stdout + r.stderr
    generated = frozenset(re.findall(r"^wrote (\S+)$", r.stdout, re.M))
    assert {"handout/student/segment_reduce.cuh", "handout/harness/generated/task_list.cuh", PAGE} <= generated
    # The emulator driver and the C++ suite, nothing else.
    r = run(["cmake", "-S", ".", "-B", "build", "-DSCANLAB_CUDA=OFF", "-DCMAKE_BUILD_TYPE=Release"], root)
    if r.returncode != 0 and "Boost" in r.stdout + r.stderr:
        pytest.skip("Boost.Context is missing: the emulator driver cannot be built")
    assert r.returncode == 0, r.stdout[-4000:] + r.stderr[-4000:]
    r = run(["cmake", "--build", "build", "-j", "2", "--target", "scanlab-reference-emu", "test_suite_emu"],
            root)
    assert r.returncode == 0, r.stdout[-4000:] + r.stderr[-4000:]
    return RepoWithTask(root, generated)


def test_the_driver_runs_the_new_task(repo_with_task: RepoWithTask):
    root = repo_with_task.root
    driver = root / "build" / "scanlab-reference-emu"
    assert run([str(driver), "list", "tasks"], root).stdout.split()[-1] == "segment-reduce"
    # 70001 elements: 69 segments, the last one short; the output is the manifest's size.
    outputs = parse_output_size(OUTPUT).count(70001)
    assert outputs == 69
    r = run([str(driver), "run", "--task", "segment-reduce", "--op", "mssp", "--n", "70001", "--block", "96",
             "--output", "out.bin"], root)
    assert r.returncode == 0 and f"check   PASS ({outputs} elements match" in r.stdout, r.stdout + r.stderr
    assert (root / "out.bin").stat().st_size == outputs * default_assignment().operator("mssp").element_bytes
    # Timed: every repetition checked on the host against the type's reference (its
    # TimedCheck), and its one baseline.
    r = run([str(driver), "run", "--task", "segment-reduce", "--n", "5000", "--time", "--warmup", "1",
             "--reps", "2", "--baselines", "--json", "-"], root)
    assert r.returncode == 0, r.stdout + r.stderr
    result = json.loads(r.stdout.splitlines()[-1])
    assert result["status"] == "pass" and [b["name"] for b in result["baselines"]] == ["cpu-sequential"]


def test_the_cpp_suite_registers_and_passes_the_new_task(repo_with_task: RepoWithTask):
    root = repo_with_task.root
    suite = root / "build" / "tests" / "test_suite_emu"
    listed = run([str(suite), "--list-test-names-only"], root).stdout
    assert "segment-reduce: reference over the suite" in listed
    # Its CTest, from the manifest's list of driver tasks (--warn NoTests: it runs cases).
    r = run(["ctest", "--test-dir", "build", "-R", "^emu.reference.segment-reduce$", "--output-on-failure"],
            root)
    assert r.returncode == 0, r.stdout[-4000:]
    assert "100% tests passed, 0 tests failed out of 1" in r.stdout, r.stdout[-4000:]


def test_the_grader_grades_the_new_task(repo_with_task: RepoWithTask, tmp_path: Path):
    root = repo_with_task.root
    # A student's own segmented reduce (not the reference's file, so the grader builds it).
    submission = tmp_path / "alice"
    (submission / "student").mkdir(parents=True)
    mine = (root / "handout" / "student" / "segment_reduce.cuh").read_text().replace(
        f"    // TODO(task {NUMBER}): the segmented reduce.\n    notImplemented();\n",
        "    const size_t first = (size_t(blockIdx.x) * blockDim.x + threadIdx.x) * segment;\n"
        "    if (first >= n) return;\n"
        "    typename Op::Element total = in[first];\n"
        "    for (size_t i = first + 1; i < n && i < first + segment; ++i) total = Op::apply(total, in[i]);\n"
        "    out[first / segment] = total;\n")
    assert "notImplemented" not in mine
    (submission / "student" / "segment_reduce.cuh").write_text(mine)
    out = tmp_path / "out"
    r = run([sys.executable, "-m", "grader", "grade", str(submission), "--backend", "emulator", "--no-perf",
             "-j", "2", "--seed", "7", "--cache", str(tmp_path / "cache"), "--out", str(out), "-q"], root)
    results = out / "results.json"
    assert results.is_file(), (r.stdout + r.stderr)[-4000:]
    tasks = {t["name"]: t for t in json.loads(results.read_text())["tasks"]}
    task = tasks["segment-reduce"]
    assert task["status"] == "graded" and not task["identical_to_reference"], task
    assert task["build"]["ok"] and not task["build"]["cached"], task["build"]
    assert task["cases"] and task["passed"] == task["total"] == len(task["cases"]), task
    assert task["correctness_points"] == task["correctness_max"] == 5, task
    assert tasks["reduce"]["status"] == "missing"  # the other tasks' files are not there


def test_nothing_but_the_four_files_and_generated_files_changed(repo_with_task: RepoWithTask):
    root = repo_with_task.root
    changed = set()
    for f in root.rglob("*"):
        rel = f.relative_to(root).as_posix()
        if not f.is_file() or rel.startswith(("build/", "out.bin")) or "__pycache__" in rel:
            continue
        original = REPO / rel
        if not original.is_file() or original.read_bytes() != f.read_bytes():
            changed.add(rel)
    assert HAND_WRITTEN <= changed
    # (the page is hand-written, its facts generated)
    generated_only = repo_with_task.generated - HAND_WRITTEN
    assert changed - generated_only == HAND_WRITTEN, sorted(changed - generated_only - HAND_WRITTEN)


def test_the_data_driven_tests_pass_unedited(repo_with_task: RepoWithTask):
    root = repo_with_task.root
    r = run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "-k", WHOLE_GRADES,
             *DATA_DRIVEN_TESTS], root)
    assert r.returncode == 0, r.stdout[-6000:] + r.stderr[-2000:]
    assert " passed" in r.stdout and " failed" not in r.stdout, r.stdout[-2000:]
