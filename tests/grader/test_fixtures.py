"""The fixture submissions are made from solution/student by small edits
(fixture.toml): every edit must still apply, once, to today's solution, or the
fixture would silently test something else."""
from __future__ import annotations

import pytest

from conftest import REPO
from fixtures import Edit, StaleFixture, apply_edit, compose, fixture_names, load_fixture

# Its expectations follow data/'s list of tasks (pyproject.toml's markers).
pytestmark = pytest.mark.task_list


@pytest.mark.parametrize("name", [n for n in fixture_names() if load_fixture(n).edits])
def test_edits_apply_to_the_solution(name, tmp_path):
    fx = load_fixture(name)
    submission = compose(name, tmp_path)
    for edit in fx.edits:
        # Bytes as written: a lone carriage return (attack_cr_comment_cub) stays one.
        text = (submission / "student" / edit.file).read_bytes().decode()
        assert edit.replace in text
        assert text != (REPO / "solution" / "student" / edit.file).read_bytes().decode()


@pytest.mark.parametrize("name", [n for n in fixture_names() if load_fixture(n).copies])
def test_copies_exist(name, tmp_path):
    submission = compose(name, tmp_path)
    fx = load_fixture(name)
    edited = {f"student/{e.file}" for e in fx.edits}
    for source, dest in fx.copies:
        # A copy that edits then change (a fixture made from another's file) is the
        # edits' test's; any other is the file itself.
        if dest in edited:
            assert (submission / dest).is_file()
        else:
            assert (submission / dest).read_bytes() == (REPO / source).read_bytes()


def test_an_edit_that_no_longer_matches_is_reported():
    edit = Edit("scan.cuh", "text the solution does not have", "x")
    with pytest.raises(StaleFixture, match="occurs 0 times"):
        apply_edit("int main() {}", edit, "demo")
    with pytest.raises(StaleFixture, match="occurs 2 times"):
        apply_edit("a a", Edit("scan.cuh", "a", "b"), "demo")


def test_every_fixture_has_a_verdict_for_every_task():
    for name in fixture_names():
        for backend in ("emulator", "cuda"):
            load_fixture(name).expected(backend)  # raises StaleFixture otherwise


def test_a_new_task_takes_its_verdict_from_the_base():
    # A task added to the manifest needs no line in any fixture that does not touch it.
    import dataclasses
    from grader.config.assignment import default_assignment
    a = default_assignment()
    free = max(t.number for t in a.tasks) + 1   # the first free task number
    required = dataclasses.replace(a.tasks[0], number=free, name="suffix-scan", file="suffix_scan.cuh",
                                   bonus=False)
    bonus = dataclasses.replace(required, number=free + 1, name="segmented-sort", file="segmented_sort.cuh",
                                bonus=True)
    more = dataclasses.replace(a, tasks=a.tasks + (required, bonus))
    verdicts = {name: load_fixture(name).expected("emulator", more)
                for name in ("reference", "commutative_reduce", "handout", "wrong_names")}
    assert verdicts["reference"]["suffix-scan"] == verdicts["reference"]["segmented-sort"] == "correct"
    # The reference's bonus files are laid down only with `bonus = true`.
    assert verdicts["commutative_reduce"]["suffix-scan"] == "correct"
    assert verdicts["commutative_reduce"]["segmented-sort"] == "not_attempted"
    assert verdicts["handout"]["segmented-sort"] == "not_attempted"
    assert verdicts["wrong_names"]["suffix-scan"] == "missing"
    assert verdicts["wrong_names"]["segmented-sort"] == "not_attempted"
    # What the fixture says still wins.
    assert verdicts["commutative_reduce"]["reduce"] == "wrong"


def test_a_touched_task_without_a_verdict_stops_the_tests():
    import dataclasses
    fx = load_fixture("commutative_reduce")
    silent = dataclasses.replace(fx, expect={k: v for k, v in fx.expect.items() if k != "reduce"})
    with pytest.raises(StaleFixture, match="commutative_reduce: \\[expect\\] has no verdict for reduce"):
        silent.expected("emulator")
    typo = dataclasses.replace(fx, expect={**fx.expect, "redcue": "correct"})
    with pytest.raises(StaleFixture, match="names no task redcue"):
        typo.expected("emulator")


def test_fixtures_tool_composes_a_class(tmp_path):
    import subprocess
    import sys
    r = subprocess.run([sys.executable, str(REPO / "tools" / "fixtures.py"), "class",
                        str(tmp_path / "class"), "reference", "broken_archive"],
                       capture_output=True, text=True)
    assert r.returncode == 0, r.stderr
    assert (tmp_path / "class" / "reference" / "student" / "scan.cuh").is_file()
    assert (tmp_path / "class" / "broken_archive.zip").is_file()
