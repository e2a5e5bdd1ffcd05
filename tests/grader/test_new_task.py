"""Adding a task is four hand-written files and one `make handout` (README.md, "To add a
task"): the driver, the C++ suite, the grader and the handout (the task's page included)
pick it up, with nothing else edited.

A copy of the repository gets one more task under the first free task number, a bonus
segmented reduce (one output element per 1024 input elements: an output size that is
neither n nor one) with a trivial kernel (one thread folds each segment): its [[task]]
and [[driver_task]] in the manifest, its student file in solution/student/ (its comments
the contracts), its type in handout/harness/tasks/segment_reduce_task.cuh, and its points
in the rubric. `make_handout.py` runs once: it writes the task's page,
handout/tasks/<number>-segment-reduce.md, whole (the task has none written by hand) and
the quick start's row for it, and its contract in the other tasks' builds,
grader/contract/student/segment_reduce.cuh (its kernel declared: no task runs its code).
Then the emulator driver and the C++ suite are built (those targets only) and asked what
they see, the grader grades the solution's file and a reduce of the student's own (whose
task build sees the new task's contract) on the emulator, and the tests marked `task_list` (pyproject.toml: their expectations follow
data/'s list of tasks, and they build nothing) pass there unedited.
"""
from __future__ import annotations

import json
import re
import shutil
import subprocess
import sys
import xml.etree.ElementTree as ET
from dataclasses import dataclass
from pathlib import Path

import pytest

from conftest import REPO
from grader.config.assignment import default_assignment, parse_output_size

NUMBER = max(t.number for t in default_assignment().tasks) + 1   # the first free task number
# Free names too: in this test's own copy of the repository (where the whole suite runs),
# data/ has a segmented reduce already.
TAG = "" if "segment-reduce" not in {t.name for t in default_assignment().tasks} else str(NUMBER)
NAME = "segment-reduce" + (f"-{TAG}" if TAG else "")
STEM = "segment_reduce" + (f"_{TAG}" if TAG else "")       # the student file's: {STEM}.cuh
TYPE, KERNEL, K_SEGMENT = f"SegmentReduce{TAG}", f"segmentReduce{TAG}Kernel", f"kSegment{TAG}"
SEGMENT = 1024
OUTPUT = f"n/{SEGMENT}"

MANIFEST_TASK = f'''
[[task]]
number = {NUMBER}
name = "{NAME}"
title = "bonus: segmented reduce (a toy task added by tests/grader/test_new_task.py)"
file = "{STEM}.cuh"
kernels = ["{KERNEL}"]
bonus = true
'''

MANIFEST_DRIVER_TASK = f'''
[[driver_task]]
name = "{NAME}"
type = "{TYPE}"
task = {NUMBER}
output = "{OUTPUT}"
elements_moved = 1
baselines = ["cpu-sequential"]
'''

STUDENT_FILE = f'''\
// Task {NUMBER} (bonus): a segmented reduce, one output element per segment of {SEGMENT} inputs.
//                                                                  YOUR FILE: edit it.
//
// The input is cut into segments of `segment` consecutive elements, the last one possibly
// short, and each segment is folded into one element of the output. The harness
// (harness/tasks/{STEM}_task.cuh) launches {KERNEL} with one thread per
// segment; a block per segment, with a tree inside it, is faster.
//
// The operator may be non-commutative (MSSP): fold each segment in index order.
#pragma once
#include <cstddef>

#include "harness/ops.cuh"
#include "harness/platform.cuh"
#include "harness/runtime.cuh"

namespace scanlab {{

// Writes out[s] = in[s*segment] (+) in[s*segment + 1] (+) ... (+) in[min(n, (s+1)*segment) - 1]
// for every segment s of in[0, n): (n + segment - 1) / segment elements, none past them.
template <class Op>
__global__ void {KERNEL}(const typename Op::Element* in, typename Op::Element* out,
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
// Task {NUMBER}'s driver task (student/{STEM}.cuh): the fold of each segment of {SEGMENT}.
#pragma once
#include <cstddef>
#include <vector>

#include "harness/tasks/launch.cuh"
#include "harness/tasks/task.cuh"
#include "harness/tasks/tiling.cuh"

namespace scanlab::tasks {{

inline constexpr size_t {K_SEGMENT} = {SEGMENT};

struct {TYPE} {{
    template <class Op>
    static std::vector<typename Op::Element> reference(const std::vector<typename Op::Element>& in) {{
        std::vector<typename Op::Element> out((in.size() + {K_SEGMENT} - 1) / {K_SEGMENT}, Op::identity());
        for (size_t i = 0; i < in.size(); ++i) out[i / {K_SEGMENT}] = Op::apply(out[i / {K_SEGMENT}], in[i]);
        return out;
    }}

    static constexpr TimedCheck kTimedCheck = TimedCheck::onHost();

    template <class Op, class Baselines>
    static void baselines(Baselines&) {{}}  // the CPU reference only
}};

}}  // namespace scanlab::tasks

#if defined(SCANLAB_STUDENT_UNIT)
#include "student/{STEM}.cuh"

namespace scanlab {{

template <>
struct Plan<tasks::{TYPE}> {{
    template <class Op>
    static void launch(const typename Op::Element* in, size_t n, typename Op::Element* out,
                       unsigned blockSize, const Scratch<typename Op::Element>&) {{
        const size_t segments = (n + tasks::{K_SEGMENT} - 1) / tasks::{K_SEGMENT};
        launchKernel("{KERNEL}", {KERNEL}<Op>,
                     dim3(unsigned((segments + blockSize - 1) / blockSize)), dim3(blockSize), 0, in, out,
                     n, tasks::{K_SEGMENT});
    }}
}};

}}  // namespace scanlab
#endif
'''

RUBRIC_TASK = f'''
[[task]]
number = {NUMBER}
correctness_points = 5
performance_points = 0
'''

# Its contract in the other tasks' builds: its kernel declared (generated: no task uses it).
CONTRACT = f"grader/contract/student/{STEM}.cuh"
PAGE = f"handout/tasks/{NUMBER}-{NAME}.md"   # generated: the task has no page by hand
HAND_WRITTEN = {"data/assignment.toml", f"solution/student/{STEM}.cuh",
                f"handout/harness/tasks/{STEM}_task.cuh", "data/rubric.toml"}
IGNORED = ("build", "build-*", ".venv", ".git", "__pycache__", ".pytest_cache", ".dev", ".debs",
           "grader-out")
# The tests whose expectations follow data/'s list of tasks (pyproject.toml's marker), from
# wherever they are: each passes in the copy, unedited.
DATA_DRIVEN = ("-m", "task_list", "tests/grader", "tests/handout")


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
    # The four hand-written files.
    manifest = root / "data" / "assignment.toml"
    insert_before(manifest, "# ---- exercises", MANIFEST_TASK)
    manifest.write_text(manifest.read_text() + MANIFEST_DRIVER_TASK)
    (root / "solution" / "student" / f"{STEM}.cuh").write_text(STUDENT_FILE)
    (root / "handout" / "harness" / "tasks" / f"{STEM}_task.cuh").write_text(TASK_HEADER)
    insert_before(root / "data" / "rubric.toml", "[correctness]", RUBRIC_TASK)
    # One `make handout`: it must succeed on its first run.
    r = run([sys.executable, "tools/make_handout.py"], root)
    assert r.returncode == 0, r.stdout + r.stderr
    generated = frozenset(re.findall(r"^wrote (\S+)$", r.stdout, re.M))
    assert {f"handout/student/{STEM}.cuh", "handout/harness/generated/task_list.cuh", PAGE,
            "handout/README.md", CONTRACT} <= generated
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
    assert run([str(driver), "list", "tasks"], root).stdout.split()[-1] == f"{NAME}"
    # 70001 elements: 69 segments, the last one short; the output is the manifest's size.
    outputs = parse_output_size(OUTPUT).count(70001)
    assert outputs == 69
    r = run([str(driver), "run", "--task", f"{NAME}", "--op", "mssp", "--n", "70001", "--block", "96",
             "--output", "out.bin"], root)
    assert r.returncode == 0 and f"check   PASS ({outputs} elements match" in r.stdout, r.stdout + r.stderr
    assert (root / "out.bin").stat().st_size == outputs * default_assignment().operator("mssp").element_bytes
    # Timed: every repetition checked on the host against the type's reference (its
    # TimedCheck), and its one baseline.
    r = run([str(driver), "run", "--task", f"{NAME}", "--n", "5000", "--time", "--warmup", "1",
             "--reps", "2", "--baselines", "--json", "-"], root)
    assert r.returncode == 0, r.stdout + r.stderr
    result = json.loads(r.stdout.splitlines()[-1])
    assert result["status"] == "pass" and [b["name"] for b in result["baselines"]] == ["cpu-sequential"]


def test_the_cpp_suite_registers_and_passes_the_new_task(repo_with_task: RepoWithTask):
    root = repo_with_task.root
    suite = root / "build" / "tests" / "test_suite_emu"
    listed = run([str(suite), "--list-test-names-only"], root).stdout
    assert f"{NAME}: reference over the suite" in listed
    # Its CTest, from the manifest's list of driver tasks (--warn NoTests: it runs cases).
    r = run(["ctest", "--test-dir", "build", "-R", f"^emu.reference.{NAME}$", "--output-on-failure"],
            root)
    assert r.returncode == 0, r.stdout[-4000:]
    assert "100% tests passed, 0 tests failed out of 1" in r.stdout, r.stdout[-4000:]


def test_the_grader_grades_the_new_task(repo_with_task: RepoWithTask, tmp_path: Path):
    root = repo_with_task.root
    # A student's own segmented reduce (not the reference's file, so the grader builds it).
    submission = tmp_path / "alice"
    (submission / "student").mkdir(parents=True)
    mine = (root / "handout" / "student" / f"{STEM}.cuh").read_text().replace(
        f"    // TODO(task {NUMBER}): the segmented reduce.\n    notImplemented();\n",
        "    const size_t first = (size_t(blockIdx.x) * blockDim.x + threadIdx.x) * segment;\n"
        "    if (first >= n) return;\n"
        "    typename Op::Element total = in[first];\n"
        "    for (size_t i = first + 1; i < n && i < first + segment; ++i) total = Op::apply(total, in[i]);\n"
        "    out[first / segment] = total;\n")
    assert "notImplemented" not in mine
    (submission / "student" / f"{STEM}.cuh").write_text(mine)
    # And a reduce of the student's own: its task build holds that file alone, the new
    # task's file its contract (grader/contract/student/, generated by make handout).
    reduce = (root / "solution" / "student" / "reduce.cuh").read_text() + "// alice's copy\n"
    (submission / "student" / "reduce.cuh").write_text(reduce)
    out = tmp_path / "out"
    r = run([sys.executable, "-m", "grader", "grade", str(submission), "--backend", "emulator", "--no-perf",
             "-j", "2", "--seed", "7", "--cache", str(tmp_path / "cache"), "--out", str(out), "-q"], root)
    results = out / "results.json"
    assert results.is_file(), (r.stdout + r.stderr)[-4000:]
    tasks = {t["name"]: t for t in json.loads(results.read_text())["tasks"]}
    task = tasks[f"{NAME}"]
    assert task["status"] == "graded" and not task["identical_to_reference"], task
    assert task["build"]["ok"] and not task["build"]["cached"], task["build"]
    assert task["cases"] and task["passed"] == task["total"] == len(task["cases"]), task
    assert task["correctness_points"] == task["correctness_max"] == 5, task
    other = tasks["reduce"]
    assert other["status"] == "graded" and other["build"]["ok"], (other["status"], other["build"])
    assert other["passed"] == other["total"] == len(other["cases"]) > 0, other["message"]
    assert tasks["scan"]["status"] == "missing"  # the other tasks' files are not there


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
    assert HAND_WRITTEN <= changed and not HAND_WRITTEN & repo_with_task.generated
    assert changed - repo_with_task.generated == HAND_WRITTEN, sorted(changed - repo_with_task.generated)


def test_the_new_tasks_page_is_generated_from_its_sources(repo_with_task: RepoWithTask):
    # Students get a real page: the kernel's contract (its doc comment), its placeholder,
    # its points and commands; and the quick start links it.
    page = (repo_with_task.root / PAGE).read_text()
    assert page.startswith("<!-- GENERATED by tools/make_handout.py")
    assert f"# Task {NUMBER}: bonus: segmented reduce" in page
    assert (f"- `{KERNEL}<Op>(in, out, n, segment)`: Writes out[s] = in[s*segment] (+) "
            "in[s*segment + 1] (+) ... (+) in[min(n, (s+1)*segment) - 1]") in page
    assert "The input is cut into segments of `segment` consecutive elements" in page
    assert f"```cuda\n// TODO(task {NUMBER}): the segmented reduce.\nnotImplemented();\n```" in page
    assert "- **Points**: 5 for correctness, 0 for performance (a bonus" in page
    assert f"./build/scanlab-emu test --tasks {NAME} " in page
    assert "It has no performance points" in page and "not attempted" in page
    quick_start = (repo_with_task.root / "handout" / "README.md").read_text()
    assert (f"| {NUMBER} (bonus) | [tasks/{NUMBER}-{NAME}.md](tasks/{NUMBER}-{NAME}.md) | "
            f"`student/{STEM}.cuh` | `{KERNEL}` |") in quick_start


def test_the_data_driven_tests_pass_unedited(repo_with_task: RepoWithTask, tmp_path: Path):
    root = repo_with_task.root
    report = tmp_path / "data-driven.xml"
    r = run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", f"--junitxml={report}", *DATA_DRIVEN],
            root)
    assert r.returncode == 0, r.stdout[-6000:] + r.stderr[-2000:]
    cases = ET.parse(report).getroot().iter("testcase")
    ran = {(c.get("classname", "").rsplit(".", 1)[-1], c.get("name")) for c in cases
           if not any(child.tag in ("skipped", "failure", "error") for child in c)}
    # Among them, one run on the new task's page (the marked tests read the new list).
    assert ("test_handout_text", f"test_every_task_page_has_the_same_parts_in_order[{NUMBER}-{NAME}.md]") in ran
    assert {module for module, _ in ran} >= {"test_rubric", "test_make_handout", "test_handout_text"}, ran
