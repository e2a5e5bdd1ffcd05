"""Adding an operator is one table in data/assignment.toml (for a type harness/ops.cuh
already has): the driver, the suite, the grader's case list and the GPU scripts all
pick it up, with nothing else edited.

A copy of the repository gets a `max-f32` operator (Max<float>) in its manifest only;
`make_handout.py` regenerates the derived files; the handout's emulator driver is built
with the solution's student files; then every consumer is asked what it sees.
"""
from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from conftest import REPO
from grader.config.assignment import default_assignment

TOY = '''
[[operator]]
name = "max-f32"
cpp = "Max<float>"
element_bytes = 4
commutative = true
identity = "-3.40282347e+38"
sample = "unit-float"
description = "float maximum (a toy operator added by tests/grader/test_new_operator.py)"
'''


def run(argv: list[str], cwd: Path, **kw) -> subprocess.CompletedProcess:
    return subprocess.run(argv, cwd=cwd, capture_output=True, text=True, timeout=900, **kw)


@pytest.fixture(scope="module")
def repo_with_toy(tmp_path_factory) -> Path:
    if not shutil.which("cmake") or not shutil.which("g++"):
        pytest.skip("cmake and g++ are needed to build the emulator driver")
    root = tmp_path_factory.mktemp("toy") / "scanlab"
    ignore = shutil.ignore_patterns("build", "build-*", "__pycache__", ".venv")
    for folder in ("data", "handout", "solution", "grader", "tools", "tests/gpu"):
        shutil.copytree(REPO / folder, root / folder, ignore=ignore)
    manifest = root / "data" / "assignment.toml"
    text = manifest.read_text()
    at = text.index("# ---- distributions")
    manifest.write_text(text[:at] + TOY.lstrip() + "\n" + text[at:])
    r = run([sys.executable, "tools/make_handout.py"], root)
    assert r.returncode == 0, r.stdout + r.stderr
    assert "wrote handout/harness/generated/operators.cuh" in r.stdout
    handout = root / "handout"
    for f in (root / "solution" / "student").glob("*.cuh"):
        shutil.copy(f, handout / "student" / f.name)
    r = run(["cmake", "-S", ".", "-B", "build", "-DSCANLAB_CUDA=OFF", "-DCMAKE_BUILD_TYPE=Release"],
            handout)
    if r.returncode != 0 and "Boost" in r.stdout + r.stderr:
        pytest.skip("Boost.Context is missing: the emulator driver cannot be built")
    assert r.returncode == 0, r.stdout + r.stderr
    r = run(["cmake", "--build", "build", "-j", str(os.cpu_count() or 2), "--target", "scanlab-emu"],
            handout)
    assert r.returncode == 0, r.stdout[-4000:] + r.stderr[-4000:]
    return root


def test_the_driver_runs_the_new_operator(repo_with_toy: Path):
    driver = repo_with_toy / "handout" / "build" / "scanlab-emu"
    listed = run([str(driver), "list", "operators"], repo_with_toy).stdout.split()
    assert listed[-1] == "max-f32" and "mssp" in listed
    r = run([str(driver), "test", "--ops", "max-f32", "--blocks", "32,256", "--max-n", "9000"],
            repo_with_toy)
    assert r.returncode == 0, r.stdout[-3000:]
    tasks = run([str(driver), "list", "tasks"], repo_with_toy).stdout.split()
    sizes = [n for n in run([str(driver), "list", "sizes"], repo_with_toy).stdout.split()
             if int(n) <= 9000]
    # Two block sizes, and the identity-sensitive inputs (all negative, one block size):
    # max-f32's identity is not 0.
    cases = len(tasks) * 3 * len(sizes)
    assert f"{cases} cases: {cases} passed" in r.stdout


def test_the_grader_grades_the_new_operator(repo_with_toy: Path):
    script = ("from pathlib import Path\nfrom grader.config.rubric import load_rubric\n"
              "r = load_rubric(Path('data/rubric.toml'))\n"
              "print(sorted({c.task for c in r.cases if c.op == 'max-f32' and c.group == 'operators'}))\n"
              "print(r.assignment.output_bytes('reduce', 'max-f32', 10))")
    r = run([sys.executable, "-c", script], repo_with_toy)
    assert r.returncode == 0, r.stderr
    tasks, output_bytes = r.stdout.splitlines()
    # Every driver task of the manifest: the operator has no `tasks` list.
    names = sorted(run([sys.executable, "-c", "from grader.config.assignment import default_assignment\n"
                        "print(*default_assignment().driver_task_names)"], repo_with_toy).stdout.split())
    assert tasks == str(names) and "reduce" in names
    assert output_bytes == "4"


def test_the_gpu_scripts_pick_up_the_new_operator(repo_with_toy: Path):
    driver = repo_with_toy / "handout" / "build" / "scanlab-emu"
    env = {**os.environ, "SCANLAB_LIST_CASES": "1"}
    sanitize = run(["bash", "tests/gpu/sanitize.sh", str(driver)], repo_with_toy, env=env)
    assert sanitize.returncode == 0, sanitize.stderr
    for task in ("warp-scan", "reduce", "scan", "scan-exclusive"):
        assert f"--task {task} --op max-f32 " in sanitize.stdout
    agreement = run(["bash", "tests/gpu/emulator_agreement.sh", str(driver), str(driver)],
                    repo_with_toy, env=env)
    assert agreement.returncode == 0, agreement.stderr
    # As many runs as another operator's, but for the look-back scan, whose float sums
    # the agreement leaves out (their order depends on timing).
    runs = agreement.stdout.splitlines()
    floats = [line for line in runs if "--op max-f32 " in line]
    others = [line for line in runs if "--op mssp " in line and "--task lookback-" not in line]
    assert len(floats) == len(others) > 0
    assert not any("--task lookback-" in line for line in floats)


def test_nothing_but_the_manifest_and_generated_files_changed(repo_with_toy: Path):
    # Each task's page lists the operators (data/'s tasks: one more edits no test).
    pages = {f"handout/tasks/{t.number}-{t.name}.md" for t in default_assignment().tasks}
    generated = {"handout/harness/generated/assignment.h", "handout/harness/generated/operators.cuh",
                 "handout/cmake/assignment.cmake", "handout/appendix/C-reference.md",
                 "handout/appendix/D-grading.md", *pages,
                 "handout/harness/generated/grading.h"}  # the new operator's grading cases
    changed = set()
    for folder in ("data", "handout", "solution", "grader", "tools", "tests/gpu"):
        for f in (repo_with_toy / folder).rglob("*"):
            rel = f.relative_to(repo_with_toy).as_posix()
            if not f.is_file() or "/build/" in rel or "__pycache__" in rel:
                continue
            if rel.startswith("handout/student/"):
                continue  # the solution's files, dropped in to build a finished handout
            original = REPO / rel
            if not original.is_file() or original.read_bytes() != f.read_bytes():
                changed.add(rel)
    assert "data/assignment.toml" in changed
    assert changed - generated == {"data/assignment.toml"}
