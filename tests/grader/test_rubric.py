"""The rubric and the case list: parsing, validation, inheritance, expansion."""
from __future__ import annotations

import textwrap
from pathlib import Path

import pytest

from conftest import REPO, TEST_RUBRIC
from grader.config.cases import Case, CaseError, expand, parse_count
from grader.config.assignment import default_assignment
from grader.config.rubric import RubricError, load_rubric, rubric_settings

# Its expectations follow data/'s list of tasks (pyproject.toml's markers).
pytestmark = pytest.mark.task_list

RUBRIC = REPO / "data" / "rubric.toml"


def test_the_real_rubric():
    r = load_rubric(RUBRIC)
    a = default_assignment()
    # One rubric task per task of the manifest, in its order, with its file and driver tasks.
    assert [t.number for t in r.tasks] == [t.number for t in a.tasks]
    assert r.student_files == tuple(t.file for t in a.tasks)
    assert [t.driver_tasks for t in r.tasks] == [t.driver_tasks for t in a.tasks]
    # The manifest's bonus tasks: on top of the 100, and their files may be left out.
    bonus = {t.number for t in a.tasks if t.bonus}
    assert bonus and {t.number for t in r.tasks if t.bonus} == bonus
    assert r.max_correctness + r.max_performance == 100
    assert r.max_bonus == sum(t.max_points for t in r.tasks if t.number in bonus) > 0
    assert {a.task(n).file for n in bonus} <= r.optional_files
    assert not {t.file for t in a.tasks if t.number not in bonus} & r.optional_files
    assert r.performance.full_credit_slowdown == 1.2
    # A task with performance points is timed on something.
    assert all(t.perf for t in r.tasks if t.performance_points) and any(t.perf for t in r.tasks)
    assert {rule.name for rule in r.forbidden.rules} >= {"cub-thrust", "inline-asm", "kernel-launch"}
    # Calls (files, processes, the network, the CUDA runtime) are decided on the compiled
    # code, never by a name in the text (issue 45).
    assert not {rule.name for rule in r.forbidden.rules} & {"cuda-runtime", "files-processes-network",
                                                          "launch-stream", "harness-host", "streams"}


def test_cases_cover_what_the_assignment_needs():
    r = load_rubric(RUBRIC)
    for t in r.tasks:
        cases = r.cases_for(t.driver_tasks, emulator=False)
        # Every operator of the manifest, the non-commutative ones included.
        assert {c.op for c in cases} == set(default_assignment().operator_names)
        assert {"mssp", "seg-add-i32"} <= {c.op for c in cases}
        assert {c.dist for c in cases} == {"random", "ones", "ascending", "descending", "negative"}
        sizes = {c.n for c in cases}
        assert 1 in sizes and {31, 32}.issubset(sizes) and 2049 in sizes
        assert max(sizes) >= 1 << 26
        assert len({c.block for c in cases}) >= 4
        assert any(c.hidden for c in cases)
    # On the emulator the sizes are capped.
    emu = r.cases_for(("scan",), emulator=True)
    assert emu and max(c.n for c in emu) <= r.emulator_max_n


def test_emulator_max_n_defaults_to_the_suite():
    import tomllib
    suite = tomllib.loads((REPO / "data" / "cases.toml").read_text())["suite"]
    assert load_rubric(RUBRIC).emulator_max_n == suite["emulator_max_n"]


def test_base_rubric_merges(tmp_path):
    r = load_rubric(TEST_RUBRIC)
    base = load_rubric(RUBRIC)
    assert r.limits.emulator_run_timeout_s == 20
    assert r.tasks == base.tasks                      # inherited
    assert {c.group for c in r.cases} < {c.group for c in base.cases}
    assert r.sources[0] == TEST_RUBRIC.resolve() and RUBRIC.resolve() in r.sources


def _write(tmp_path: Path, text: str) -> Path:
    p = tmp_path / "rubric.toml"
    p.write_text(f'base = "{RUBRIC}"\n' + textwrap.dedent(text))
    return p


@pytest.mark.parametrize("text, message", [
    ("[performance]\nfull_credit_slowdown = 0.5\n", "full_credit_slowdown"),
    ("[performance]\nreps = \"many\"\n", "reps"),
    ("[correctness]\nscoring = \"curved\"\n", "scoring"),
    ("[rubric]\ngroups = [\"no such group\"]\n", "no such group"),
    ("[[forbidden.rule]]\nname = \"x\"\npattern = \"(\"\nmessage = \"m\"\n", "bad pattern"),
    ("[gradescope]\nvisibility = \"public\"\n", "visibility"),
    ("[integration]\ntasks = [\"sort\"]\n", "unknown driver task"),
    ("[integration]\ngroups = [\"nope\"]\n", "no cases in group"),
    ("[limits]\nmemory_mb = 1\n", "memory_mb` must be at least 256"),
    ("[emulator]\nmax_n = \"big\"\n", "max_n"),
])
def test_bad_rubrics_are_refused(tmp_path, text, message):
    with pytest.raises(RubricError, match=message):
        load_rubric(_write(tmp_path, text))


def test_bad_task_tables(tmp_path):
    p = tmp_path / "r.toml"
    cases = f'[rubric]\ncases = "{REPO / "data" / "cases.toml"}"\n'
    p.write_text(cases + '[[task]]\nnumber = 1\nfile = "a.cuh"\n')
    with pytest.raises(RubricError, match="defined in data/assignment.toml"):
        load_rubric(p)
    numbers = [t.number for t in default_assignment().tasks]
    free = max(numbers) + 1
    p.write_text(cases + f'[[task]]\nnumber = {free}\n')
    with pytest.raises(RubricError, match=f"no task {free}"):
        load_rubric(p)
    p.write_text(cases + f'[[task]]\nnumber = {numbers[0]}\ncorrectness_points = 10\n')
    others = ", ".join(map(str, numbers[1:]))
    with pytest.raises(RubricError, match=f"task\\(s\\) {others} of data/assignment.toml have no"):
        load_rubric(p)
    p.write_text(cases + "".join(f'[[task]]\nnumber = {i}\n' for i in (1, 2, 3))
                 + '[[task.perf]]\ntask = "reduce"\nn = 1000\n')
    with pytest.raises(RubricError, match="checked by scan, scan-exclusive, not reduce"):
        load_rubric(p)
    p.write_text(cases)
    with pytest.raises(RubricError, match="no \\[\\[task\\]\\]"):
        load_rubric(p)
    # A rubric kept elsewhere that names no case file takes the checkout's (issue 46): what
    # it lacks then is its tasks; a case file it names must be there.
    p.write_text("")
    with pytest.raises(RubricError, match="no \\[\\[task\\]\\]"):
        load_rubric(p)
    p.write_text('[rubric]\ncases = "missing.toml"\n')
    with pytest.raises(RubricError, match="cannot read the cases"):
        load_rubric(p)


def test_base_cycle(tmp_path):
    a = tmp_path / "a.toml"
    a.write_text('base = "a.toml"\n')
    with pytest.raises(RubricError, match="refers back"):
        load_rubric(a)


def test_missing_rubric_and_bad_toml(tmp_path):
    with pytest.raises(RubricError, match="cannot read"):
        load_rubric(tmp_path / "nope.toml")
    bad = tmp_path / "bad.toml"
    bad.write_text("[rubric\n")
    with pytest.raises(RubricError, match="not valid TOML"):
        load_rubric(bad)


@pytest.mark.parametrize("text, value", [("1000", 1000), ("2^20", 1 << 20), ("3*2^20", 3 << 20),
                                         ("2^24+43", (1 << 24) + 43), ("2^26-1", (1 << 26) - 1),
                                         ("1e6", 10**6), (17, 17)])
def test_parse_count(text, value):
    assert parse_count(text) == value


@pytest.mark.parametrize("text", ["", "2^", "1.5e0", "x", "--1", "2^100", True, 1.5])
def test_parse_count_rejects(text):
    with pytest.raises(CaseError):
        parse_count(text)


def test_expand_matrix_and_dedup():
    cases = expand([{"group": "g", "tasks": ["scan", "reduce"], "ops": ["add-i32", "mssp"],
                     "sizes": [1, "2^10"], "blocks": [32, 64]},
                    {"group": "h", "tasks": ["scan"], "ops": ["add-i32"], "sizes": [1], "blocks": [32]}])
    assert len(cases) == 2 * 2 * 2 * 2        # the second table repeats a case: left out
    assert cases[0] == Case("scan", "add-i32", 1, 32, "random", False, "g")


@pytest.mark.parametrize("table, message", [
    ({"tasks": ["sort"], "sizes": [1]}, "unknown task"),
    ({"ops": ["mul"], "sizes": [1]}, "unknown operator"),
    ({"sizes": [0]}, "outside"),
    ({"sizes": [1], "blocks": [48]}, "multiple of 32"),
    ({"sizes": [1], "dists": ["gauss"]}, "distribution"),
    ({"sizes": [1], "colour": "red"}, "unknown key"),
    ({}, "no sizes"),
])
def test_expand_rejects(table, message):
    with pytest.raises(CaseError, match=message):
        expand([table])


def test_seeds_depend_on_run_seed_and_case_only():
    a = Case("scan", "mssp", 1000)
    b = Case("scan", "mssp", 1001)
    assert a.seed(1) == a.seed(1)
    assert a.seed(1) != a.seed(2)
    assert a.seed(1) != b.seed(1)
    assert 1 <= a.seed(123) < 2**32


# ---- every setting has one default, declared in grader/config/rubric.py ---------------------------

def _without(key_table: str, key: str) -> str:
    """data/rubric.toml with one key of one table removed."""
    import tomllib
    data = tomllib.loads(RUBRIC.read_text())
    data.get(key_table, {}).pop(key, None)
    lines = []
    for table, values in data.items():
        if isinstance(values, list):
            continue  # [[task]], [[forbidden.rule]]: written below
        if isinstance(values, dict):
            lines.append(f"[{table}]")
            lines += [f"{k} = {_toml(v)}" for k, v in values.items() if not isinstance(v, list) or
                      all(not isinstance(x, dict) for x in v)]
    for t in data["task"]:
        lines.append("[[task]]")
        lines += [f"{k} = {_toml(v)}" for k, v in t.items() if k != "perf"]
        for p in t.get("perf", []):
            lines.append("[[task.perf]]")
            lines += [f"{k} = {_toml(v)}" for k, v in p.items()]
    for r in data.get("forbidden", {}).get("rule", []):
        lines.append("[[forbidden.rule]]")
        lines += [f"{k} = {_toml(v)}" for k, v in r.items()]
    return "\n".join(lines) + "\n"


def _toml(value) -> str:
    import json
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, str):
        return "'" + value + "'" if "\\" in value else json.dumps(value)
    if isinstance(value, list):
        return "[" + ", ".join(_toml(v) for v in value) + "]"
    return repr(value)


@pytest.mark.parametrize("setting", list(rubric_settings()), ids=lambda s: f"{s.table}.{s.key}")
def test_a_key_left_out_takes_its_declared_default(tmp_path, setting):
    (tmp_path / "cases.toml").write_text((REPO / "data" / "cases.toml").read_text())
    path = tmp_path / "rubric.toml"
    path.write_text(_without(setting.table, setting.key))
    rubric = load_rubric(path)
    holder = next(v for v in vars(rubric).values() if type(v) is setting.owner)
    assert getattr(holder, setting.field.name) == setting.default


def test_every_setting_is_documented():
    from grader.config.rubric import settings_table
    table = settings_table()
    for s in rubric_settings():
        assert s.doc and f"| `[{s.table}]` | `{s.key}` |" in table
    # make_handout writes the table into grader/README.md; handout.fresh checks it is there.
    assert table in (REPO / "grader" / "README.md").read_text()


def test_emulator_max_n_without_the_suite_or_the_rubric_is_an_error(tmp_path):
    cases = (REPO / "data" / "cases.toml").read_text().replace("emulator_max_n = 262145", "")
    (tmp_path / "cases.toml").write_text(cases)
    (tmp_path / "rubric.toml").write_text(_without("emulator", "max_n"))
    with pytest.raises(RubricError, match="emulator_max_n is missing"):
        load_rubric(tmp_path / "rubric.toml")


def test_a_task_table_over_a_base_changes_that_task_only(tmp_path):
    """Issue 59: a rubric with `base` that changes one task's points had to restate every
    task ("task(s) 1, 3, 4 ... have no [[task]] table")."""
    base = load_rubric(RUBRIC)
    second = base.tasks[1]
    r = load_rubric(_write(tmp_path, f"[[task]]\nnumber = {second.number}\n"
                                      f"correctness_points = {second.correctness_points + 7}\n"))
    assert [t.number for t in r.tasks] == [t.number for t in base.tasks]
    changed = {t.number: t for t in r.tasks}[second.number]
    assert changed.correctness_points == second.correctness_points + 7
    assert changed.performance_points == second.performance_points and changed.perf == second.perf
    assert [t for t in r.tasks if t.number != second.number] == \
        [t for t in base.tasks if t.number != second.number]
    # `perf = []` drops a task's timing; the other keys stay the base's.
    r = load_rubric(_write(tmp_path, f"[[task]]\nnumber = {second.number}\nperf = []\n"
                                      "performance_points = 0\n"))
    changed = {t.number: t for t in r.tasks}[second.number]
    assert changed.perf == () and changed.correctness_points == second.correctness_points


def test_the_readmes_commonest_edits_load_and_say_only_what_differs(tmp_path):
    text = (REPO / "grader" / "README.md").read_text()
    example = text.split("The commonest edits:", 1)[1].split("```toml\n", 1)[1].split("```", 1)[0]
    p = tmp_path / "r.toml"
    p.write_text(example.replace("../data/rubric.toml", str(RUBRIC)))
    r, base = load_rubric(p), load_rubric(RUBRIC)
    assert {t.number: t.correctness_points for t in r.tasks}[3] == 40
    assert {t.number: t.perf for t in r.tasks}[4] == ()
    assert [t for t in r.tasks if t.number not in (3, 4)] == [t for t in base.tasks if t.number not in (3, 4)]
    assert r.late.penalty_percent == 10 and r.late.cap_percent == 30
