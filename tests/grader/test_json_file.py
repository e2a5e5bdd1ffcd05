"""The grader's on-disk caches (grader/grading/json_file.py): read whole, replaced whole."""
from __future__ import annotations

from pathlib import Path

from grader.grading import json_file


def test_a_missing_broken_or_non_object_file_reads_as_empty(tmp_path: Path):
    assert json_file.read_object(tmp_path / "none.json") == {}
    (tmp_path / "broken.json").write_text("{not json")
    assert json_file.read_object(tmp_path / "broken.json") == {}
    (tmp_path / "list.json").write_text("[1, 2]")
    assert json_file.read_object(tmp_path / "list.json") == {}


def test_a_replaced_file_reads_back_and_leaves_no_temporary_file(tmp_path: Path):
    path = tmp_path / "deeper" / "cache.json"
    json_file.replace_object(path, {"b": 2, "a": [1.5]}, ".cache-")
    json_file.replace_object(path, {"c": 3}, ".cache-")
    assert json_file.read_object(path) == {"c": 3}
    assert [p.name for p in path.parent.iterdir()] == ["cache.json"]


def test_an_unwritable_folder_is_not_an_error(tmp_path: Path):
    blocker = tmp_path / "file"
    blocker.write_text("")
    json_file.replace_object(blocker / "cache.json", {"a": 1}, ".cache-")   # a file, not a folder
    assert json_file.read_object(blocker / "cache.json") == {}
