"""The fixture submissions are made from solution/student by small edits
(fixture.toml): every edit must still apply, once, to today's solution, or the
fixture would silently test something else."""
from __future__ import annotations

import pytest

from conftest import REPO, Edit, StaleFixture, apply_edit, compose, fixture_names, load_fixture


@pytest.mark.parametrize("name", [n for n in fixture_names() if load_fixture(n).edits])
def test_edits_apply_to_the_solution(name, tmp_path):
    fx = load_fixture(name)
    submission = compose(name, tmp_path)
    for edit in fx.edits:
        text = (submission / "student" / edit.file).read_text()
        assert edit.replace in text
        assert text != (REPO / "solution" / "student" / edit.file).read_text()


@pytest.mark.parametrize("name", [n for n in fixture_names() if load_fixture(n).copies])
def test_copies_exist(name, tmp_path):
    submission = compose(name, tmp_path)
    for source, dest in load_fixture(name).copies:
        assert (submission / dest).read_bytes() == (REPO / source).read_bytes()


def test_an_edit_that_no_longer_matches_is_reported():
    edit = Edit("scan.cuh", "text the solution does not have", "x")
    with pytest.raises(StaleFixture, match="occurs 0 times"):
        apply_edit("int main() {}", edit, "demo")
    with pytest.raises(StaleFixture, match="occurs 2 times"):
        apply_edit("a a", Edit("scan.cuh", "a", "b"), "demo")
