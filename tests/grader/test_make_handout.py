"""tools/make_handout.py: the handout README's points table follows the rubric."""
from __future__ import annotations

import dataclasses
import importlib.util
import sys
from pathlib import Path

import pytest

from conftest import REPO, TEST_RUBRIC
from grader.config.assignment import default_assignment
from grader.config.rubric import load_rubric

# Its expectations follow data/'s list of tasks (pyproject.toml's markers).
pytestmark = pytest.mark.task_list

spec = importlib.util.spec_from_file_location("make_handout", REPO / "tools" / "make_handout.py")
make_handout = importlib.util.module_from_spec(spec)
sys.modules["make_handout"] = make_handout  # its dataclasses look it up
spec.loader.exec_module(make_handout)


def test_table_follows_the_rubric(tmp_path: Path):
    text = (REPO / "data" / "rubric.toml").read_text()
    changed = text.replace("correctness_points = 30", "correctness_points = 33", 1)
    changed = changed.replace("full_credit_slowdown = 1.2", "full_credit_slowdown = 1.5", 1)
    assert changed.count("33") > text.count("33") and "1.5" in changed
    (tmp_path / "cases.toml").write_text((REPO / "data" / "cases.toml").read_text())
    (tmp_path / "rubric.toml").write_text(changed)
    before, after = load_rubric(REPO / "data" / "rubric.toml"), load_rubric(tmp_path / "rubric.toml")
    table = make_handout.rubric_table(after)
    assert "| 3: scan of any length (inclusive and exclusive) | `student/scan.cuh` | 33 | 20 |" in table
    # The totals follow: 3 more correctness points, the performance points as they were.
    correctness, performance = before.max_correctness + 3, before.max_performance
    assert after.max_correctness == correctness
    assert f"| total | | {correctness:g} | {performance:g} | {correctness + performance:g} points |" in table
    # The bonus tasks come after the total, not in it.
    bonus = [t for t in after.tasks if t.bonus]
    assert bonus and all(table.index(f"| {t.number}: {t.title} |") > table.index("| total |") for t in bonus)
    assert f"| bonus, on top of the total | | | | {sum(t.max_points for t in bonus):g} points |" in table
    assert "full within 1.5x the reference time" in table
    assert "`<cstdint>`" in table and "`#pragma`" in table


def test_test_rubric_table_differs_in_limits():
    table = make_handout.rubric_table(load_rubric(TEST_RUBRIC))
    assert "20 s on the GPU, 20 s on the emulator" in table


def test_readme_between_markers_only():
    a = default_assignment()
    readme = ("# title\nbefore\n" + make_handout.README_RUBRIC_BEGIN + "stale table\n"
              + make_handout.README_RUBRIC_END + "middle\n" + make_handout.README_DRIVER_BEGIN
              + "stale options\n" + make_handout.README_DRIVER_END + "after\n")
    out = make_handout.readme_with_tables(readme, a)
    assert out.startswith("# title\nbefore\n" + make_handout.README_RUBRIC_BEGIN + "| task |")
    assert make_handout.README_RUBRIC_END + "middle\n" + make_handout.README_DRIVER_BEGIN + "| option |" in out
    assert out.endswith(make_handout.README_DRIVER_END + "after\n")
    assert "stale table" not in out and "stale options" not in out


def test_readme_without_markers_is_an_error():
    with pytest.raises(SystemExit, match="markers of the points table"):
        make_handout.readme_with_tables("# a README with no table\n", default_assignment())


def test_driver_tables_follow_the_manifest():
    a = default_assignment()
    changed = dataclasses.replace(a, operators=a.operators + (dataclasses.replace(
        a.operators[0], name="min-i32", cpp="Min<int32_t>"),),
        exit_codes=dataclasses.replace(a.exit_codes, no_gpu=99))
    tables = make_handout.driver_tables(changed)
    assert f"`{a.operators[-1].name}`, `min-i32` |" in tables
    assert "| 99 | no GPU found" in tables and "| 77 |" not in tables


def test_generated_headers_follow_the_manifest():
    a = default_assignment()
    header = make_handout.assignment_header(a)
    for d in a.driver_tasks:
        assert f'{{Task::{d.type}, "{d.name}", {d.task}, ' in header
    # Every driver task's type, from its task's header, in the list the harness loops over.
    tasks = make_handout.task_list_header(a)
    for d in a.driver_tasks:
        task_header = a.task(d.task).harness_header
        assert task_header == f"harness/tasks/{Path(a.task(d.task).file).stem}_task.cuh"
        assert (REPO / "handout" / task_header).is_file(), task_header
        assert f'#include "{task_header}"' in tasks
        assert f"struct TaskTraits<tasks::{d.type}> {{\n    static constexpr Task kTask = Task::{d.type};" in tasks
    assert "using DriverTasks = TaskList<" + ", ".join(f"tasks::{d.type}" for d in a.driver_tasks) + ">;" in tasks
    assert f"kExitNoGpu = {a.exit_codes.no_gpu}," in header
    ops = make_handout.operators_header(a)
    for o in a.operators:
        assert f'if (name == "{o.name}") return f({o.cpp}{{}}), true;' in ops
        assert f"static_assert(sizeof({o.cpp}::Element) == {o.element_bytes}," in ops
    cmake = make_handout.assignment_cmake(a)
    assert f"set(SCANLAB_DRIVER_TASKS {' '.join(a.driver_task_names)})" in cmake


def test_a_kernel_missing_from_its_file_is_reported(tmp_path: Path):
    a = default_assignment()
    for owner in (*a.tasks, *a.exercises):
        (tmp_path / owner.file).write_text("\n".join(f"void {k}(int);" for k in owner.kernels))
    assert make_handout.kernel_problems(a, tmp_path) == []
    first = a.tasks[0]
    (tmp_path / first.file).write_text("// nothing here\n")
    problems = make_handout.kernel_problems(a, tmp_path)
    assert len(problems) == len(first.kernels) and first.kernels[0] in problems[0]
    exercise = a.exercises[0]
    (tmp_path / exercise.file).write_text(f"void {exercise.kernels[0]}(int);\n")
    problems = make_handout.kernel_problems(a, tmp_path)[len(first.kernels):]
    assert problems == [f"{tmp_path / exercise.file} does not define {exercise.kernels[1]} "
                        f"(exercise {exercise.name} in data/assignment.toml)"]


def test_the_handout_code_rules_are_the_graders_own():
    # grader/rules/ is the code rules' one implementation; the handout's tools/ holds the
    # copies make_handout writes: the same lines but for the note and the sibling imports.
    copies = {p.name: p for p in (REPO / "handout" / "tools").glob("*.py")}
    modules = [p for p in (REPO / "grader" / "rules").glob("*.py") if p.name != "__init__.py"]
    assert {"code_rules.py", "compiled_program.py", "cpp_text.py"} <= {p.name for p in modules}
    for module in modules:
        copy = copies[module.name].read_text(encoding="utf-8")
        assert copy == make_handout.handout_tool(module)
        note = make_handout.generated_note(f"grader/rules/{module.name}", "that file", "#")
        assert note in copy
        kept = copy.replace(note, "", 1).splitlines()
        source = module.read_text(encoding="utf-8").splitlines()
        assert len(kept) == len(source), module.name
        changed = [(a, b) for a, b in zip(source, kept) if a != b]
        assert all(a.startswith("from .") and a == b.replace("from ", "from .", 1) for a, b in changed), changed
    assert any("from .cpp_text import" in p.read_text() for p in modules)


def test_the_handout_code_rules_need_no_grader(tmp_path: Path):
    # The handout is self-contained: its copy imports, in an isolated interpreter, with
    # only its own folder on the path (no checkout, no grader package).
    import shutil
    import subprocess
    tools = tmp_path / "tools"
    shutil.copytree(REPO / "handout" / "tools", tools)
    r = subprocess.run([sys.executable, "-I", "-c", "import sys; sys.path.insert(0, '.'); import code_rules; "
                        "print(code_rules.blank('a \"b\" c', comments=False).code)"],
                       cwd=tools, capture_output=True, text=True)
    assert r.returncode == 0, r.stderr
    assert r.stdout == "a \" \" c\n"


STUDENT_FILE = """\
// Task 9: a toy.                                                   YOUR FILE: edit it.
//
// What the task is.
#pragma once

namespace scanlab {

//@@ solution
// helpers of the reference (a region at the top level: no function of the student's)
//@@ placeholder
//| // your helpers
//@@ end

// Folds `value` over a warp;
// lane 0 returns the total.
template <class Op, int CHUNK = 4>
__device__ typename Op::Element foldWarp(typename Op::Element value,
                                         const Pair<int, int>& pair) {
    //@@ solution
    return value;
    //@@ placeholder
    //| // TODO(task 9): fold.
    //| notImplemented();
    //| return value;
    //@@ end
}

// Launch bounds: the harness's.
template <class Op>
__global__ void __launch_bounds__(1024, 2)
    toyKernel(const typename Op::Element* in, size_t n) {
    if (n == 0) return;
    //@@ solution
    (void)in;
    //@@ placeholder
    //| baseline::slow<Op>(in, n);
    //@@ end
}

}  // namespace scanlab
"""


def test_the_student_file_gives_each_function_its_call_contract_and_placeholder():
    found = make_handout.student_functions(STUDENT_FILE, "toy.cuh")
    assert [f.call for f in found] == ["foldWarp<Op, CHUNK>(value, pair)", "toyKernel<Op>(in, n)"]
    assert found[0].doc == ("Folds `value` over a warp;", "lane 0 returns the total.")
    assert found[0].placeholder == ("// TODO(task 9): fold.", "notImplemented();", "return value;")
    assert found[0].stub and not found[1].stub
    assert found[1].doc == ("Launch bounds: the harness's.",) and found[1].placeholder == ("baseline::slow<Op>(in, n);",)
    assert make_handout.header_comment(STUDENT_FILE) == ("Task 9: a toy.", "", "What the task is.")


def test_a_generated_contract_declares_the_kernels_and_defines_nothing():
    # What another task's build sees of a task no task uses (grader/contract/README.md).
    text = make_handout.declared_contract(9, "toy.cuh", ("toyKernel",), STUDENT_FILE, "// note\n")
    assert text.startswith("// note\n") and "#pragma once" in text
    found = make_handout.student_functions(STUDENT_FILE, "toy.cuh")
    assert found[1].declaration + ";" in text and found[0].declaration not in text   # only the kernels named
    assert "{" not in text.split("namespace scanlab {", 1)[1]                        # no body: nothing defined
    assert "slow" not in text and "//@@" not in text
    with pytest.raises(SystemExit, match="no function with a solution region named missingKernel"):
        make_handout.declared_contract(9, "toy.cuh", ("missingKernel",), STUDENT_FILE, "")
    # Every task's contract is either written by hand or generated (and only then), from
    # whatever data/ lists: a task added in a copy has its contract generated there.
    a = default_assignment()
    generated = make_handout.task_contracts(a)
    for t in a.tasks:
        path = make_handout.CONTRACTS / t.file
        by_hand = path.is_file() and not path.read_text().startswith(make_handout.GENERATED_CONTRACT)
        assert (path in generated) != by_hand, t.name


def test_every_kernel_the_manifest_names_is_a_function_the_student_writes():
    a = default_assignment()
    for owner in (*a.tasks, *a.exercises):
        source = (make_handout.SOLUTION / owner.file).read_text()
        assert set(owner.kernels) <= {f.name for f in make_handout.student_functions(source, owner.file)}


def test_a_page_by_hand_keeps_its_prose_and_a_task_without_one_gets_one(tmp_path: Path, monkeypatch):
    a, rubric = default_assignment(), load_rubric(REPO / "data" / "rubric.toml")
    policy = make_handout.read_policy(make_handout.POLICY.read_text())
    by_hand, generated, stale = a.tasks[0], a.tasks[1], a.tasks[2]
    (tmp_path / make_handout.task_page_name(by_hand)).write_text(
        "# my prose\n" + make_handout.FACTS_BEGIN + "stale facts\n" + make_handout.FACTS_END + "more prose\n")
    (tmp_path / make_handout.task_page_name(stale)).write_text(make_handout.GENERATED_PAGE + " edited by hand -->\n")
    monkeypatch.setattr(make_handout, "TASK_PAGES", tmp_path)
    pages = {p.name: text for p, text in make_handout.task_pages(a, rubric, policy).items()}
    assert set(pages) == {make_handout.task_page_name(t) for t in a.tasks}
    assert pages[make_handout.task_page_name(by_hand)] == (
        "# my prose\n" + make_handout.FACTS_BEGIN + make_handout.task_facts(by_hand.number, a, rubric, policy)
        + make_handout.FACTS_END + "more prose\n")
    for t in (generated, stale):   # none by hand, or an edit of a generated one: written whole
        assert pages[make_handout.task_page_name(t)] == make_handout.generated_task_page(
            t.number, a, rubric, policy, (make_handout.SOLUTION / t.file).read_text())
