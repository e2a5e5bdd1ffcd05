"""tools/make_handout.py: the handout README's points table follows the rubric."""
from __future__ import annotations

import importlib.util
import sys
from pathlib import Path

import pytest

from conftest import REPO, TEST_RUBRIC
from grader.rubric import load_rubric

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
    table = make_handout.rubric_table(load_rubric(tmp_path / "rubric.toml"))
    assert "| 3: scan of any length (inclusive and exclusive) | `student/scan.cuh` | 33 | 20 |" in table
    assert "| total | | 63 | 40 | 103 points |" in table
    assert "full within 1.5x the reference time" in table
    assert "`<cstdint>`" in table and "`#pragma`" in table


def test_test_rubric_table_differs_in_limits():
    table = make_handout.rubric_table(load_rubric(TEST_RUBRIC))
    assert "20 s on the GPU, 20 s on the emulator" in table


def test_readme_between_markers_only():
    readme = ("# title\nbefore\n" + make_handout.README_RUBRIC_BEGIN + "stale table\n"
              + make_handout.README_RUBRIC_END + "after\n")
    out = make_handout.readme_with_rubric(readme)
    assert out.startswith("# title\nbefore\n" + make_handout.README_RUBRIC_BEGIN + "| task |")
    assert out.endswith(make_handout.README_RUBRIC_END + "after\n")
    assert "stale table" not in out


def test_readme_without_markers_is_an_error():
    with pytest.raises(SystemExit, match="rubric markers"):
        make_handout.readme_with_rubric("# a README with no table\n")
