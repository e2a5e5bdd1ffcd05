"""Adding a task is four hand-written files and one `make handout` (README.md, "To add
a task"): the driver, the C++ suite and the grader pick it up, with nothing else edited.

A copy of the repository gets a fifth task, a bonus suffix scan with a trivial kernel
(one thread walks the array from the right): its [[task]] and [[driver_task]] in the
manifest, its student file in solution/student/, its type in
handout/harness/tasks/suffix_scan_task.cuh, its points in the rubric. `make_handout.py` runs
once; then the emulator driver and the C++ suite are built (those targets only) and
asked what they see, and the grader grades the solution's file on the emulator.
"""
from __future__ import annotations

import json
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from conftest import REPO

MANIFEST_TASK = '''
[[task]]
number = 5
name = "suffix-scan"
title = "bonus: suffix scan (a toy task added by tests/grader/test_new_task.py)"
file = "suffix_scan.cuh"
kernels = ["suffixScanKernel"]
bonus = true
'''

MANIFEST_DRIVER_TASK = '''
[[driver_task]]
name = "suffix-scan"
type = "SuffixScan"
task = 5
output = "n"
elements_moved = 2
baselines = ["cpu-sequential"]
'''

STUDENT_FILE = '''\
// Task 5: the inclusive suffix scan, out[i] = in[i] (+) in[i+1] (+) ... (+) in[n-1].
//                                                                  YOUR FILE: edit it.
#pragma once
#include <cstddef>

#include "harness/ops.cuh"
#include "harness/platform.cuh"
#include "harness/runtime.cuh"

namespace scanlab {

template <class Op>
__global__ void suffixScanKernel(const typename Op::Element* in, typename Op::Element* out,
                                 size_t n) {
    //@@ solution
    // One thread walks the array from the right: trivial, and right for any operator.
    if (blockIdx.x != 0 || threadIdx.x != 0) return;
    typename Op::Element acc = Op::identity();
    for (size_t i = n; i-- > 0;) {
        acc = Op::apply(in[i], acc);
        out[i] = acc;
    }
    //@@ placeholder
    //| // TODO(task 5): the suffix scan.
    //| notImplemented();
    //@@ end
}

}  // namespace scanlab
'''

TASK_HEADER = '''\
// scanlab harness: students, do not edit (your code goes in student/); maintainers edit it here.
//
// Task 5's driver task (student/suffix_scan.cuh): the inclusive suffix scan.
#pragma once
#include <cstddef>
#include <vector>

#include "harness/tasks/launch.cuh"
#include "harness/tasks/task.cuh"
#include "harness/tasks/tiling.cuh"

namespace scanlab::tasks {

struct SuffixScan {
    template <class Op>
    static std::vector<typename Op::Element> reference(const std::vector<typename Op::Element>& in) {
        std::vector<typename Op::Element> out(in.size());
        typename Op::Element acc = Op::identity();
        for (size_t i = in.size(); i-- > 0;) out[i] = acc = Op::apply(in[i], acc);
        return out;
    }

    static constexpr TimedCheck kTimedCheck = TimedCheck::onHost();

    template <class Op, class Baselines>
    static void baselines(Baselines&) {}  // the CPU reference only
};

}  // namespace scanlab::tasks

#if defined(SCANLAB_STUDENT_UNIT)
#include "student/suffix_scan.cuh"

namespace scanlab {

template <>
struct Plan<tasks::SuffixScan> {
    template <class Op>
    static void launch(const typename Op::Element* in, size_t n, typename Op::Element* out,
                       unsigned blockSize, const Scratch<typename Op::Element>&) {
        launchKernel("suffixScanKernel", suffixScanKernel<Op>, dim3(1), dim3(blockSize), 0, in, out, n);
    }
};

}  // namespace scanlab
#endif
'''

RUBRIC_TASK = '''
[[task]]
number = 5
correctness_points = 5
performance_points = 0
'''

HAND_WRITTEN = {"data/assignment.toml", "solution/student/suffix_scan.cuh",
                "handout/harness/tasks/suffix_scan_task.cuh", "data/rubric.toml"}
IGNORED = ("build", "build-*", ".venv", ".git", "__pycache__", ".pytest_cache", ".dev", ".debs",
           "grader-out")


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
def repo_with_task(tmp_path_factory) -> Path:
    if not shutil.which("cmake") or not shutil.which("g++"):
        pytest.skip("cmake and g++ are needed to build the emulator driver")
    root = tmp_path_factory.mktemp("task") / "scanlab"
    shutil.copytree(REPO, root, ignore=shutil.ignore_patterns(*IGNORED))
    # The four hand-written files.
    manifest = root / "data" / "assignment.toml"
    insert_before(manifest, "# ---- exercises", MANIFEST_TASK)
    manifest.write_text(manifest.read_text() + MANIFEST_DRIVER_TASK)
    (root / "solution" / "student" / "suffix_scan.cuh").write_text(STUDENT_FILE)
    (root / "handout" / "harness" / "tasks" / "suffix_scan_task.cuh").write_text(TASK_HEADER)
    insert_before(root / "data" / "rubric.toml", "[correctness]", RUBRIC_TASK)
    # One `make handout`: it must succeed on its first run.
    r = run([sys.executable, "tools/make_handout.py"], root)
    assert r.returncode == 0, r.stdout + r.stderr
    assert "wrote handout/student/suffix_scan.cuh" in r.stdout
    assert "wrote handout/harness/generated/task_list.cuh" in r.stdout
    # The emulator driver and the C++ suite, nothing else.
    r = run(["cmake", "-S", ".", "-B", "build", "-DSCANLAB_CUDA=OFF", "-DCMAKE_BUILD_TYPE=Release"], root)
    if r.returncode != 0 and "Boost" in r.stdout + r.stderr:
        pytest.skip("Boost.Context is missing: the emulator driver cannot be built")
    assert r.returncode == 0, r.stdout[-4000:] + r.stderr[-4000:]
    r = run(["cmake", "--build", "build", "-j", "2", "--target", "scanlab-reference-emu", "test_suite_emu"],
            root)
    assert r.returncode == 0, r.stdout[-4000:] + r.stderr[-4000:]
    return root


def test_the_driver_runs_the_new_task(repo_with_task: Path):
    driver = repo_with_task / "build" / "scanlab-reference-emu"
    assert run([str(driver), "list", "tasks"], repo_with_task).stdout.split()[-1] == "suffix-scan"
    r = run([str(driver), "run", "--task", "suffix-scan", "--op", "mssp", "--n", "70001", "--block", "96"],
            repo_with_task)
    assert r.returncode == 0 and "check   PASS (70001 elements match" in r.stdout, r.stdout + r.stderr
    # Timed: every repetition checked on the host against the type's reference (its
    # TimedCheck), and its one baseline.
    r = run([str(driver), "run", "--task", "suffix-scan", "--n", "5000", "--time", "--warmup", "1",
             "--reps", "2", "--baselines", "--json", "-"], repo_with_task)
    assert r.returncode == 0, r.stdout + r.stderr
    result = json.loads(r.stdout.splitlines()[-1])
    assert result["status"] == "pass" and [b["name"] for b in result["baselines"]] == ["cpu-sequential"]


def test_the_cpp_suite_registers_and_passes_the_new_task(repo_with_task: Path):
    suite = repo_with_task / "build" / "tests" / "test_suite_emu"
    listed = run([str(suite), "--list-test-names-only"], repo_with_task).stdout
    assert "suffix-scan: reference over the suite" in listed
    # Its CTest, from the manifest's list of driver tasks (--warn NoTests: it runs cases).
    r = run(["ctest", "--test-dir", "build", "-R", "^emu.reference.suffix-scan$", "--output-on-failure"],
            repo_with_task)
    assert r.returncode == 0, r.stdout[-4000:]
    assert "100% tests passed, 0 tests failed out of 1" in r.stdout, r.stdout[-4000:]


def test_the_grader_grades_the_new_task(repo_with_task: Path, tmp_path: Path):
    # A student's own suffix scan (not the reference's file, so the grader builds it).
    submission = tmp_path / "alice"
    (submission / "student").mkdir(parents=True)
    mine = (repo_with_task / "handout" / "student" / "suffix_scan.cuh").read_text().replace(
        "    // TODO(task 5): the suffix scan.\n    notImplemented();\n",
        "    if (blockIdx.x != 0 || threadIdx.x != 0) return;\n"
        "    typename Op::Element total = Op::identity();\n"
        "    for (size_t i = n; i > 0; --i) out[i - 1] = total = Op::apply(in[i - 1], total);\n")
    assert "notImplemented" not in mine
    (submission / "student" / "suffix_scan.cuh").write_text(mine)
    out = tmp_path / "out"
    r = run([sys.executable, "-m", "grader", "grade", str(submission), "--backend", "emulator", "--no-perf",
             "-j", "2", "--seed", "7", "--cache", str(tmp_path / "cache"), "--out", str(out), "-q"],
            repo_with_task)
    results = out / "results.json"
    assert results.is_file(), (r.stdout + r.stderr)[-4000:]
    tasks = {t["name"]: t for t in json.loads(results.read_text())["tasks"]}
    task = tasks["suffix-scan"]
    assert task["status"] == "graded" and not task["identical_to_reference"], task
    assert task["build"]["ok"] and not task["build"]["cached"], task["build"]
    assert task["cases"] and task["passed"] == task["total"] == len(task["cases"]), task
    assert task["correctness_points"] == task["correctness_max"] == 5, task
    assert tasks["reduce"]["status"] == "missing"  # the other tasks' files are not there


def test_nothing_but_the_four_files_and_generated_files_changed(repo_with_task: Path):
    generated = {"handout/harness/generated/assignment.h", "handout/harness/generated/operators.cuh",
                 "handout/harness/generated/task_list.cuh", "handout/harness/generated/grading.h",
                 "handout/cmake/assignment.cmake", "handout/appendix/C-reference.md",
                 "handout/appendix/D-grading.md", "handout/tasks/1-warp-scan.md", "handout/tasks/2-reduce.md",
                 "handout/tasks/3-scan.md", "handout/tasks/4-lookback-scan.md",
                 "handout/student/suffix_scan.cuh", "handout/tools/code_rules.json"}
    changed = set()
    for f in repo_with_task.rglob("*"):
        rel = f.relative_to(repo_with_task).as_posix()
        if not f.is_file() or rel.startswith("build/") or "__pycache__" in rel:
            continue
        original = REPO / rel
        if not original.is_file() or original.read_bytes() != f.read_bytes():
            changed.add(rel)
    assert HAND_WRITTEN <= changed
    assert changed - generated == HAND_WRITTEN, sorted(changed - generated - HAND_WRITTEN)
