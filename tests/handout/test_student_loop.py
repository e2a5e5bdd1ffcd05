"""The student's loop without a GPU (issues 34 and 44), on a copy of handout/ built as a
student builds it (emulator only): `make grade-local` gives a placeholder the grader's
points and reports a task that passes only with the student's own helpers, naming the
missing barrier, as `make emu-test` does by default; the suite prints progress and hints
at the identity; the local total keeps correctness and the profile's performance estimate
apart; `make profile`'s driver predicts at the write-up's and the graded size. Skipped, never passed,
where the emulator cannot be built."""
from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(REPO))
sys.path.insert(0, str(REPO / "tools"))
from fixtures import compose  # noqa: E402
from grader.config.rubric import load_rubric  # noqa: E402
from grader.machine import detect as machines  # noqa: E402

ISOLATION = ["scanlab-emu-with-harness-warp_scan", "scanlab-emu-with-harness-reduce"]
SYNCWARP_BEFORE_SCAN = "        __syncwarp();\n        const T threadScan = scanIncWarp<Op>(staging, tid);"


class Handout:
    """A copy of handout/, configured for the emulator, whose student files are swapped."""

    def __init__(self, folder: Path):
        self.root = folder / "handout"
        shutil.copytree(REPO / "handout", self.root, ignore=shutil.ignore_patterns("build*"))
        subprocess.run(["cmake", "-S", ".", "-B", "build", "-DSCANLAB_CUDA=OFF", "-DCMAKE_BUILD_TYPE=Release"],
                       cwd=self.root, check=True, capture_output=True)

    def use(self, files: dict[str, str], targets: list[str]) -> None:
        for name, text in files.items():
            (self.root / "student" / name).write_text(text)
        p = subprocess.run(["cmake", "--build", "build", "-j", str(os.cpu_count() or 2), "--target", *targets],
                           cwd=self.root, capture_output=True, text=True)
        assert p.returncode == 0, p.stdout[-3000:] + p.stderr[-3000:]

    def driver(self, *args: str, env: dict[str, str] | None = None) -> subprocess.CompletedProcess:
        return subprocess.run([str(self.root / "build" / "scanlab-emu"), *args], cwd=self.root,
                              capture_output=True, text=True, timeout=900, env={**os.environ, **(env or {})})

    def grade(self, tmp: Path) -> tuple[dict[int, dict], str]:
        out = tmp / "grade.jsonl"
        p = self.driver("grade", "--student", ".", "--json", str(out))
        return {j["task"]: j for j in map(json.loads, out.read_text().splitlines())}, p.stdout


@pytest.fixture(scope="module")
def handout(tmp_path_factory: pytest.TempPathFactory) -> Handout:
    if not machines.detect(check_boost=True).can_build_emulator:
        pytest.skip("the CPU emulator cannot be built here")
    return Handout(tmp_path_factory.mktemp("student-loop"))


def test_placeholders_get_the_graders_points_and_the_suite_hints_at_the_identity(handout, tmp_path):
    # The handout as shipped, but a reduce whose fold starts from T{} (identity_zero_reduce)
    # and a bonus with inline assembly in it (a code rule: the grader refuses the file).
    bug = compose("identity_zero_reduce", tmp_path / "parts") / "student" / "reduce.cuh"
    bonus = (REPO / "handout" / "student" / "lookback_scan.cuh").read_text().replace(
        "namespace scanlab {", "namespace scanlab {\n__device__ inline void scanlabNothing() { asm(\"\"); }", 1)
    handout.use({"reduce.cuh": bug.read_text(), "lookback_scan.cuh": bonus}, ["scanlab-emu", *ISOLATION])
    make = subprocess.run(["make", "grade-local", f"PYTHON={sys.executable}", "ESTIMATE=0"], cwd=handout.root,
                          capture_output=True, text=True, timeout=1800)
    assert make.returncode != 0, make.stdout[-3000:]
    # The grader's words for the rule, and its verdict on the task.
    assert "student/lookback_scan.cuh" in make.stdout and "uses inline assembly (asm/PTX)" in make.stdout
    assert any(line.startswith("  4 ") and "breaks a code rule" in line for line in make.stdout.splitlines())
    graded, printed = handout.grade(tmp_path)
    # Task 1 is still the placeholder: its cases pass, the grader gives it 0, and so does
    # the local grade.
    assert graded[1]["placeholder"] and graded[1]["passed"] == graded[1]["cases"] > 0
    assert graded[1]["correctness"] == 0 and graded[1]["correctness_high"] == 0
    assert "still the handout's placeholder: the grader gives 0" in printed
    # The bonus is no longer the handout's placeholder (it has the asm line), and the
    # driver alone (without --refused) grades it: its cases pass.
    assert not graded[4]["not_attempted"] and graded[4]["passed"] == graded[4]["cases"] > 0
    # Task 2 is the student's own (not a placeholder) and fails on all-negative max.
    assert not graded[2]["placeholder"] and 0 < graded[2]["passed"] < graded[2]["cases"]

    p = handout.driver("test", "--tasks", "reduce", "--ops", "max-i32,add-i32", "--blocks", "256",
                       "--max-n", "70000", env={"SCANLAB_PROGRESS_SECONDS": "0"})
    assert p.returncode == 1, p.stdout[-3000:]
    lines = p.stdout.splitlines()
    progress = [line for line in lines if "cases done" in line and "s elapsed" in line]
    assert len(progress) >= 10, p.stdout[-3000:]
    assert any("dist=negative" in line for line in lines if line.startswith("FAIL "))
    assert "hint: reduce fails mostly on the identity-sensitive inputs (max-i32" in p.stdout
    assert "Op::identity()" in p.stdout


def test_a_scan_that_leans_on_its_own_warp_scan_is_named_with_the_missing_barrier(handout, tmp_path):
    # The solution, but scan.cuh calls scanIncWarp without the __syncwarp() after writing
    # the slots: its own (register) warp scan reads only its lane's slot and hides it.
    files = {f.name: f.read_text() for f in (REPO / "solution" / "student").glob("*.cuh")}
    assert files["scan.cuh"].count(SYNCWARP_BEFORE_SCAN) == 1
    files["scan.cuh"] = files["scan.cuh"].replace(SYNCWARP_BEFORE_SCAN,
                                                  "        const T threadScan = scanIncWarp<Op>(staging, tid);")
    handout.use(files, ["scanlab-emu", *ISOLATION])
    graded, printed = handout.grade(tmp_path)
    assert graded[1]["correctness"] == graded[1]["correctness_max"]
    assert graded[3]["isolation_failed"] and graded[3]["correctness"] < graded[3]["correctness_max"]
    assert not graded[2]["isolation_failed"] and not graded[4]["isolation_failed"]
    assert "task 3 (scan) passes only with your own student/warp_scan.cuh" in printed
    assert "a missing __syncwarp() (or __syncthreads()) between writing the slots and calling scanIncWarp" \
        in printed

    p = handout.driver("test", "--isolated", "--tasks", "scan", "--ops", "add-i32", "--blocks", "64",
                       "--max-n", "3000")
    assert p.returncode == 1, p.stdout[-3000:]
    assert "task 3 with the harness's student/warp_scan.cuh: FAILS" in p.stdout
    # The race hint names both lines (issue 59 item 12): the student's write and the
    # stand-in warp scan's read, in the student unit's own (race-checked) copy.
    assert re.search(r"wrote \S.* at student/scan\.cuh:\d+, then thread \S+ read it at "
                     r"harness/baselines\.cuh:\d+ .*likely a missing __syncwarp\(\) between those two lines",
                     p.stdout), p.stdout[-3000:]

    # make emu-test runs the same check by default after the suite (issue 44), and says
    # how long it added; ISOLATED=0 leaves it out.
    small = ["ARGS=--tasks scan --ops add-i32 --blocks 64 --max-n 3000",
             "ISOLATED_ARGS=--tasks scan --ops add-i32 --blocks 64 --max-n 3000", "JOBS=2"]
    make = subprocess.run(["make", "emu-test", *small], cwd=handout.root, capture_output=True, text=True,
                          timeout=1800)
    assert make.returncode != 0, make.stdout[-3000:]
    assert "task 3 with the harness's student/warp_scan.cuh: FAILS" in make.stdout
    assert re.search(r"make emu-test: the isolation check added \d+ s", make.stdout), make.stdout[-3000:]
    make = subprocess.run(["make", "emu-test", *small, "ISOLATED=0"], cwd=handout.root, capture_output=True,
                          text=True, timeout=1800)
    assert make.returncode == 0, make.stdout[-3000:]
    assert "--isolated" not in make.stdout and "isolation check added" not in make.stdout


def total_line(rubric) -> re.Pattern[str]:
    """`make grade-local`'s total line, its maxima the rubric's (data/: a task added or a
    point moved edits no test)."""
    bonus = [t for t in rubric.tasks if t.bonus]
    correct_max, perf_max = f"{rubric.max_correctness:g}", f"{rubric.max_performance:g}"
    bonus_correct = f"{sum(t.correctness_points for t in bonus):g}"
    bonus_perf = f"{sum(t.performance_points for t in bonus):g}"
    return re.compile(rf"^  total: correctness (\d+\.\d)/{correct_max}, bonus (\d+\.\d)/{bonus_correct}; "
                      rf"performance: about (\d+\.\d)/{perf_max}, bonus about (\d+\.\d)/{bonus_perf} \(estimated "
                      r"from the profile; a GPU measures it\)\. The profile's stated error is a time within "
                      r"1\.5x of a GPU's: between (\d+\.\d) and (\d+\.\d), bonus (\d+\.\d) and (\d+\.\d)$", re.M)


def test_the_local_total_keeps_correctness_and_estimated_performance_apart(handout, tmp_path):
    files = {f.name: f.read_text() for f in (REPO / "solution" / "student").glob("*.cuh")}
    handout.use(files, ["scanlab-emu", *ISOLATION, "scanlab-emu-profile"])
    # The profile predicts at the write-up's size and the graded one by default, and at
    # the sizes asked for; the waits of a look-back get a count, no time.
    profile = handout.root / "build" / "scanlab-emu-profile"
    out = tmp_path / "p.json"
    p = subprocess.run([str(profile), "run", "--task", "reduce", "--n", "2^16", "--json", str(out)],
                       capture_output=True, text=True, timeout=600)
    assert p.returncode == 0, p.stdout[-3000:]
    assert [e["n"] for e in json.loads(out.read_text())["predictions"]] == [2**24, 2**26]
    assert "at n = 16777216 (the write-up's size" in p.stdout and "at n = 67108864 (the size the grader times" in p.stdout
    p = subprocess.run([str(profile), "run", "--task", "lookback-scan", "--n", "2^16", "--predict-n", "2^20,graded",
                        "--json", str(out)], capture_output=True, text=True, timeout=600)
    assert p.returncode == 0, p.stdout[-3000:]
    assert [e["n"] for e in json.loads(out.read_text())["predictions"]] == [2**20, 2**26]
    polls = [line for line in p.stdout.splitlines() if "polls:" in line]
    assert all(" ms" not in line for line in polls), polls

    # make grade-local on the emulator: correctness measured, performance estimated from
    # the profile with its stated error, never one sum out of 100.
    make = subprocess.run(["make", "grade-local", f"PYTHON={sys.executable}", "PROFILE_N=2^17", "JOBS=2"],
                          cwd=handout.root, capture_output=True, text=True, timeout=1800)
    assert make.returncode == 0, make.stdout[-3000:]
    assert "/ 100" not in make.stdout
    rubric = load_rubric(REPO / "data" / "rubric.toml")
    bonus_tasks = [t for t in rubric.tasks if t.bonus]
    m = total_line(rubric).search(make.stdout)
    assert m, make.stdout[-3000:]
    correct, bonus, perf, bonus_perf, low, high, bonus_low, bonus_high = map(float, m.groups())
    assert correct == rubric.max_correctness and bonus == sum(t.correctness_points for t in bonus_tasks) > 0
    assert 0 < low <= perf <= high <= rubric.max_performance
    assert 0 < bonus_low <= bonus_perf <= bonus_high <= sum(t.performance_points for t in bonus_tasks)
    assert "task 3 estimated: scan add-i32 n=67108864:" in make.stdout

    # The estimates are the driver's to read: a slower estimate gives fewer points.
    graded, printed = handout.grade(tmp_path)
    assert "performance: not estimated" in printed
    fast = handout.driver("grade", "--tasks", "reduce", "--perf-estimates", "reduce=0.0001", "--json", str(out))
    slow = handout.driver("grade", "--tasks", "reduce", "--perf-estimates", "reduce=10", "--json", str(out))
    reduce_max = next(t.performance_points for t in rubric.tasks if t.name == "reduce")
    assert f"performance: about {reduce_max:.1f}/{reduce_max:g}" in fast.stdout, fast.stdout[-2000:]
    points = float(re.search(rf"performance: about (\d+\.\d)/{reduce_max:g}", slow.stdout).group(1))
    assert 0 < points < 1, slow.stdout[-2000:]
    bad = handout.driver("grade", "--tasks", "reduce", "--perf-estimates", "reduce")
    assert bad.returncode == 2 and "is not TASK=MS" in bad.stdout + bad.stderr


def test_an_untouched_bonus_costs_one_case_in_the_suite(handout, tmp_path):
    """Issue 59: the first `make emu-test` took minutes, almost all of it task 4's untouched
    placeholder (correct and very slow). The suite now runs its first case and skips the
    rest with a line; --all-cases runs them all."""
    handout.use({"lookback_scan.cuh": (REPO / "handout" / "student" / "lookback_scan.cuh").read_text()},
                ["scanlab-emu"])
    junit = tmp_path / "junit.xml"
    p = handout.driver("test", "--tasks", "lookback-scan", "--ops", "add-i32", "--junit", str(junit))
    assert p.returncode == 0, p.stdout[-3000:]
    m = re.search(r"(\d+) cases: 1 passed, 0 failed, (\d+) skipped \(a bonus not attempted\)", p.stdout)
    assert m and int(m.group(2)) == int(m.group(1)) - 1 > 0, p.stdout[-3000:]
    assert "student/lookback_scan.cuh is still the handout's placeholder" in p.stdout
    assert "--all-cases runs them" in p.stdout
    assert junit.read_text().count("<skipped ") == int(m.group(2))
    p = handout.driver("test", "--tasks", "lookback-scan", "--ops", "add-i32", "--blocks", "64",
                       "--max-n", "3000", "--all-cases")
    assert p.returncode == 0 and "skipped" not in p.stdout, p.stdout[-3000:]
