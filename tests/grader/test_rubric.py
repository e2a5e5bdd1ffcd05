"""The rubric and the case list: parsing, validation, inheritance, expansion."""
from __future__ import annotations

import textwrap
from pathlib import Path

import pytest

from conftest import REPO, TEST_RUBRIC
from grader.cases import Case, CaseError, expand, parse_count
from grader.rubric import RubricError, load_rubric

RUBRIC = REPO / "data" / "rubric.toml"


def test_the_real_rubric():
    r = load_rubric(RUBRIC)
    assert [t.number for t in r.tasks] == [1, 2, 3]
    assert r.student_files == ("warp_scan.cuh", "reduce.cuh", "scan.cuh")
    assert r.tasks[2].driver_tasks == ("scan", "scan-exclusive")
    assert r.max_correctness + r.max_performance == 100
    assert r.performance.full_credit_slowdown == 1.2
    assert all(t.perf for t in r.tasks)
    assert {rule.name for rule in r.forbidden.rules} >= {"cub-thrust", "inline-asm", "kernel-launch",
                                                        "cuda-runtime", "files-processes-network"}


def test_cases_cover_what_the_assignment_needs():
    r = load_rubric(RUBRIC)
    for t in r.tasks:
        cases = r.cases_for(t.driver_tasks, emulator=False)
        assert {c.op for c in cases} == {"add-i32", "add-f32", "max-i32", "mssp"}
        assert {c.dist for c in cases} == {"random", "ones", "ascending", "descending"}
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
])
def test_bad_rubrics_are_refused(tmp_path, text, message):
    with pytest.raises(RubricError, match=message):
        load_rubric(_write(tmp_path, text))


def test_bad_task_tables(tmp_path):
    p = tmp_path / "r.toml"
    cases = f'[rubric]\ncases = "{REPO / "data" / "cases.toml"}"\n'
    p.write_text(cases + '[[task]]\nnumber = 1\nfile = "../etc/passwd"\ndriver_tasks = ["scan"]\n')
    with pytest.raises(RubricError, match="plain file name"):
        load_rubric(p)
    p.write_text(cases + '[[task]]\nnumber = 1\nfile = "a.cuh"\ndriver_tasks = ["sort"]\n')
    with pytest.raises(RubricError, match="driver_tasks"):
        load_rubric(p)
    p.write_text(cases)
    with pytest.raises(RubricError, match="no \\[\\[task\\]\\]"):
        load_rubric(p)
    p.write_text("")
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
                                         (17, 17)])
def test_parse_count(text, value):
    assert parse_count(text) == value


@pytest.mark.parametrize("text", ["", "2^", "1e6", "x", "--1", "2^100", True, 1.5])
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
