"""data/assignment.toml: the grader's reading of it, and that every consumer agrees.

The driver is compiled from the manifest (harness/generated/assignment.h, operators.cuh), so a
driver built here must list exactly what the grader reads; the emulator driver is
used, which builds without a GPU.
"""
from __future__ import annotations

import json
import subprocess
import tomllib
from pathlib import Path

import pytest

from conftest import REPO
from grader.config.assignment import (AssignmentError, CountError, default_assignment, load_assignment,
                               parse_assignment, parse_count, parse_output_size)
from grader.config.rubric import load_rubric

# Its expectations follow data/'s list of tasks (pyproject.toml's markers).
pytestmark = pytest.mark.task_list

EMU_DRIVER = REPO / "build" / "scanlab-reference-emu"
MANIFEST = REPO / "data" / "assignment.toml"


def manifest_data() -> dict:
    return tomllib.loads(MANIFEST.read_text())


def test_the_manifest():
    a = default_assignment()
    # The course's four tasks, first (a task added later comes after them).
    assert a.driver_task_names[:6] == ("warp-scan", "reduce", "scan", "scan-exclusive",
                                       "lookback-scan", "lookback-scan-exclusive")
    assert [t.file for t in a.tasks][:4] == ["warp_scan.cuh", "reduce.cuh", "scan.cuh", "lookback_scan.cuh"]
    assert [t.bonus for t in a.tasks][:4] == [False, False, False, True]
    assert a.task(3).driver_tasks == ("scan", "scan-exclusive")
    assert a.operator("mssp").element_bytes == 16 and not a.operator("mssp").commutative
    assert a.output_bytes("reduce", "mssp", 1000) == 16
    assert a.output_bytes("scan", "add-i32", 1000) == 4000
    assert a.bytes_moved("scan", "add-i32", 1000) == 8000
    assert a.exit_meaning(a.exit_codes.no_gpu) == "no_gpu" and a.exit_meaning(None) == ""


def test_size_grammar_examples():
    for text, value in default_assignment().size_examples.items():
        assert parse_count(text) == value


@pytest.mark.parametrize("text", ["", "2^", "x", "--1", "2^100", "1.5e0x", "-5", "5+", True, 1.5])
def test_size_grammar_rejects(text):
    with pytest.raises(CountError):
        parse_count(text)


@pytest.mark.parametrize("text, counts", [
    ("n", {1: 1, 1000: 1000, 2**32: 2**32}),
    ("1", {1: 1, 1000: 1, 2**32: 1}),
    ("n/1024", {1: 1, 1024: 1, 1025: 2, 3 * 1024: 3, 2**32: 2**22}),
    (" n / 3 ", {1: 1, 3: 1, 4: 2}),
    ("4", {1: 4, 5000: 4}),
])
def test_output_sizes(text, counts):
    size = parse_output_size(text)
    assert {n: size.count(n) for n in counts} == counts


@pytest.mark.parametrize("text", ["", "one", "n/0", "0", "2n", "n*2", "n/", "n+1", "n/-4"])
def test_output_sizes_rejected(text):
    with pytest.raises(AssignmentError, match="output size"):
        parse_output_size(text)


@pytest.mark.parametrize("change, message", [
    (lambda d: d["operator"].append(dict(d["operator"][0])), "share the name"),
    (lambda d: d["operator"][0].update(sample="gauss"), "sample"),
    (lambda d: d["operator"][0].update(tasks=["sort"]), "unknown driver task"),
    (lambda d: d["driver_task"][3].update(task=9), "no \\[\\[task\\]\\] number 9"),
    (lambda d: d["driver_task"][0].update(output="two"), "output"),
    (lambda d: d["task"][0].update(file="../x.cuh"), "plain .cuh"),
    (lambda d: d["task"][2].update(uses=["sort"]), "`uses` must name other tasks"),
    (lambda d: d["task"][2].update(uses=["scan"]), "`uses` must name other tasks"),
    (lambda d: d["exit_codes"].update(no_gpu=1), "share a code"),
    (lambda d: d["sizes"]["examples"].update({"2^10": 1000}), "is not 1000"),
    (lambda d: d["limits"].update(default_block=48), "defaults"),
    (lambda d: d.update(colour="red"), "unknown key"),
])
def test_bad_manifests_are_refused(change, message):
    data = manifest_data()
    change(data)
    with pytest.raises(AssignmentError, match=message):
        parse_assignment(data, MANIFEST)


def test_a_missing_manifest():
    with pytest.raises(AssignmentError, match="cannot read"):
        load_assignment(REPO / "no-such-file.toml")


def test_operators_restricted_to_some_tasks_leave_the_others_out():
    data = manifest_data()
    data["operator"][1]["tasks"] = ["reduce"]   # add-f32 on reduce only
    a = parse_assignment(data, MANIFEST)
    assert "add-f32" in a.operators_for("reduce") and "add-f32" not in a.operators_for("scan")


def test_rubric_tasks_come_from_the_manifest():
    r = load_rubric(REPO / "data" / "rubric.toml")
    a = default_assignment()
    assert [(t.number, t.title, t.file, t.driver_tasks) for t in r.tasks] == \
        [(t.number, t.title, t.file, t.driver_tasks) for t in a.tasks]
    graded_ops = {c.op for c in r.cases}
    assert graded_ops == set(a.operator_names)
    assert {c.task for c in r.cases} == set(a.driver_task_names)


# ---- the compiled driver agrees with the manifest -----------------------------------------

def test_exercises_are_checked_when_read():
    a = default_assignment()
    assert [(e.name, e.file, e.application, e.uses) for e in a.exercises] == [
        ("split", "split.cuh", "radix-sort", "scan-exclusive")]
    assert a.exercise_of_application("radix-sort") is a.exercises[0]
    assert a.exercise_of_application("pi") is None
    bad_uses = manifest_data()
    bad_uses["exercise"][0]["uses"] = "sort"
    with pytest.raises(AssignmentError, match="`uses`: no driver task 'sort'"):
        parse_assignment(bad_uses, MANIFEST)
    a_task_file = manifest_data()
    a_task_file["exercise"][0]["file"] = "scan.cuh"
    with pytest.raises(AssignmentError, match="also a task's file"):
        parse_assignment(a_task_file, MANIFEST)
    none = manifest_data()
    del none["exercise"]
    assert parse_assignment(none, MANIFEST).exercises == ()


def driver(*args: str) -> subprocess.CompletedProcess:
    if not EMU_DRIVER.is_file():
        pytest.skip(f"{EMU_DRIVER} is not built (make)")
    return subprocess.run([str(EMU_DRIVER), *args], capture_output=True, text=True, timeout=120)


def listed(what: str, *more: str) -> list[str]:
    r = driver("list", what, *more)
    assert r.returncode == 0, r.stderr
    return r.stdout.split("\n")[:-1]


def test_driver_lists_what_the_manifest_defines():
    a = default_assignment()
    assert tuple(listed("tasks")) == a.driver_task_names
    assert tuple(listed("operators")) == a.operator_names
    for d in a.driver_task_names:
        assert tuple(listed("operators", "--task", d)) == a.operators_for(d)
    assert tuple(listed("distributions")) == a.distributions
    assert listed("student-files") == [t.file for t in a.tasks]
    codes = dict(line.split() for line in listed("exit-codes"))
    assert {k: int(v) for k, v in codes.items()} == {
        "pass": a.exit_codes.passed, "fail": a.exit_codes.fail, "usage": a.exit_codes.usage,
        "not-implemented": a.exit_codes.not_implemented, "error": a.exit_codes.error,
        "no-gpu": a.exit_codes.no_gpu, "placeholder": a.exit_codes.placeholder}
    # Each exercise is run by the application it names, which lists its file.
    apps = {row.split()[0]: row.split()[1:] for row in listed("applications")}
    for e in a.exercises:
        assert apps[e.application] == [e.uses, e.file]
    assert sum(1 for _, file in apps.values() if file != "-") == len(a.exercises)
    suite = tomllib.loads((REPO / "data" / "cases.toml").read_text())["suite"]
    assert [int(n) for n in listed("sizes")] == suite["sizes"]
    assert [int(b) for b in listed("blocks")] == suite["blocks"]


def test_driver_reads_the_size_grammar_and_exits_as_declared(tmp_path: Path):
    a = default_assignment()
    for text, value in a.size_examples.items():
        if value > 70000:
            continue  # the emulator is slow; the C++ test cpp.reference reads every example
        out = tmp_path / "r.json"
        r = driver("run", "--task", "reduce", "--n", text, "--json", str(out))
        assert r.returncode == a.exit_codes.passed, r.stdout + r.stderr
        assert json.loads(out.read_text())["n"] == value
    assert driver("run", "--task", "reduce", "--n", "2^").returncode == a.exit_codes.usage
    assert driver("run", "--task", "reduce", "--block", "48").returncode == a.exit_codes.usage


def test_driver_output_and_baselines_follow_the_manifest(tmp_path: Path):
    a = default_assignment()
    for d in a.driver_tasks:
        for op in a.operators_for(d.name):
            out, js = tmp_path / f"{d.name}.{op}.bin", tmp_path / f"{d.name}.{op}.json"
            r = driver("run", "--task", d.name, "--op", op, "--n", "1000", "--output", str(out),
                       "--json", str(js), "--time", "--baselines", "--warmup", "0", "--reps", "1")
            assert r.returncode == a.exit_codes.passed, r.stdout + r.stderr
            assert out.stat().st_size == a.output_bytes(d.name, op, 1000)
            result = json.loads(js.read_text())
            assert result["timing"]["bytes_per_element"] * 1000 == a.bytes_moved(d.name, op, 1000)
            # "cub" only in drivers built with SCANLAB_CUB_BASELINE (data/assignment.toml):
            # never in the emulator's.
            assert tuple(b["name"] for b in result["baselines"]) == \
                tuple(b for b in d.baselines if b != "cub")


def test_the_timed_run_reports_its_repetitions(tmp_path: Path):
    # Served rounds (what the grader's timing runs) number their repetitions on across
    # rounds, warm-ups included, and say so in their JSON; the last one's output is the one
    # `verify --rep LAST` checks, on the input that repetition saw.
    if not EMU_DRIVER.is_file():
        pytest.skip(f"{EMU_DRIVER} is not built (make)")
    case = ["--task", "scan", "--op", "add-i32", "--n", "5000", "--seed", "11"]
    js, out = tmp_path / "time.json", tmp_path / "out.bin"
    r = subprocess.run([str(EMU_DRIVER), "run", *case, "--time", "--warmup", "2", "--reps", "3",
                        "--no-check", "--json", str(js), "--output", str(out), "--serve"],
                       input="time\ntime\nend\n", capture_output=True, text=True, timeout=120)
    assert r.returncode == default_assignment().exit_codes.passed, r.stdout + r.stderr
    said = [json.loads(js.with_name(f"time.json.{k}").read_text())["timing"] for k in (1, 2)]
    assert [t["repetitions"] for t in said] == [{"first": 0, "last": 4, "warmup": 2, "timed": 3},
                                                {"first": 5, "last": 9, "warmup": 2, "timed": 3}]
    assert all(t["reps"] == 3 and t["checked"] == 5 for t in said)
    for rep, expected in ((9, "pass"), (8, "fail")):
        vjs = tmp_path / f"verify{rep}.json"
        v = driver("verify", *case, "--output", str(out), "--json", str(vjs), "--rep", str(rep))
        assert json.loads(vjs.read_text())["status"] == expected, v.stdout + v.stderr


def test_one_cxx_standard_is_stated_in_data_alone():
    # Issue 58, item 4: both backends build the assignment's one standard; no build file
    # states one of its own (CMake reads SCANLAB_CXX_STANDARD, the grader [language], a
    # test's own compile conftest.CXX_STD).
    import re as _re
    from conftest import REPO as _REPO
    stated = _re.compile(r"CUDA_STANDARD \d|CXX_STANDARD \d|cxx_std_\d|-std=(?:c|gnu)\+\+\d")
    places = [p for p in _REPO.rglob("*") if p.is_file() and (p.suffix in (".cmake", ".sh", ".py") or
              p.name in ("CMakeLists.txt", "Makefile")) and not any(
              part.startswith((".", "build")) for part in p.relative_to(_REPO).parts)
              and p != _REPO / "handout" / "cmake" / "assignment.cmake"]   # (generated from data)
    offenders = [str(p.relative_to(_REPO)) for p in places if stated.search(p.read_text(errors="replace"))]
    assert offenders == [], offenders
    from grader.config.assignment import load_assignment
    assert load_assignment().cxx_standard == 17
