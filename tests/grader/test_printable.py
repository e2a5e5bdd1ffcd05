"""Reports never pass control characters (grader/printable.py): C0 but newline and tab,
DEL, C1 and so escape sequences are shown as \\xNN in every output. The fixture
control_characters carries a clear-screen, a window title and a C1 code on a line that
does not compile (the compiler quotes it) and on a line the rules refuse (its excerpt)."""
from __future__ import annotations

import dataclasses
import re
from pathlib import Path
from types import SimpleNamespace

import pytest

from grader.printable import printable, printable_tree
from grader.results import Violation

# A raw control character in text (C1 as code points) and in UTF-8 bytes (C1 as C2 80-9F).
RAW_TEXT = re.compile(r"[\x00-\x08\x0b-\x1f\x7f-\x9f]")
RAW_BYTES = re.compile(rb"[\x00-\x08\x0b-\x1f\x7f]|\xc2[\x80-\x9f]")
ATTACK = "\x1b[2J\x1b]0;pwned\x07\x9b[1m\x7f"


def test_control_characters_are_shown_escaped():
    assert printable(ATTACK) == "\\x1b[2J\\x1b]0;pwned\\x07\\x9b[1m\\x7f"
    assert printable("a\tb\nc") == "a\tb\nc"                     # newline and tab stay
    assert printable("line\r\nnext\rover") == "line\nnext\\x0dover"
    assert printable("\x00\x1f") == "\\x00\\x1f"
    assert printable("é ü → \\x1b") == "é ü → \\x1b"                # text and backslashes kept
    assert printable(printable(ATTACK)) == printable(ATTACK)       # idempotent


def test_every_string_of_a_result_is_escaped():
    v = Violation("student/\x1bx.cuh", 3, "rule", "message \x1b[2J", "excerpt \x9b")
    tree = {"k\x07": [v, ("a\x1b", 1)], "plain": "ok"}
    shown = printable_tree(tree)
    assert shown == {"k\\x07": [Violation("student/\\x1bx.cuh", 3, "rule", "message \\x1b[2J",
                                          "excerpt \\x9b"), ("a\\x1b", 1)], "plain": "ok"}
    clean = {"plain": ["ok"]}
    assert printable_tree(clean) is clean                          # nothing to change: the same


def _raw_in(path: Path) -> list[str]:
    data = path.read_bytes().replace(b"\r\n", b"\n")   # (the CSV files' line ends)
    return [f"{path.name}: {m.group()!r}" for m in RAW_BYTES.finditer(data)]


def test_no_output_of_a_grade_holds_a_raw_control_character(emulator, tmp_path, capsys, monkeypatch,
                                                                 test_rubric):
    from grader.classroom.batch import finish_batch
    from grader.report import terminal
    from grader.report.folder import write_reports
    from grader import cli

    result = emulator("control_characters")
    scan = next(t for t in result.tasks if t.name == "scan")
    reduce = next(t for t in result.tasks if t.name == "reduce")
    # The evidence is kept, escaped: the compiler's quote of the line and the excerpt.
    assert scan.verdict == "build_failed" and "\\x1b[2J\\x1b]0;pwned\\x07\\x9b" in scan.build.errors, \
        scan.build.errors
    assert reduce.verdict == "forbidden" and any("\\x1b[2J" in v.excerpt for v in reduce.violations), \
        [str(v) for v in reduce.violations]
    # The model itself holds no raw control character (every report is made from it).
    assert [s for s in _strings(result) if RAW_TEXT.search(s)] == []

    # Every report of the submission: text, Markdown, HTML, JUnit, JSON, Gradescope.
    out = tmp_path / "reports"
    write_reports(result, test_rubric, out, tmp_path / "gradescope" / "results.json")
    files = sorted(p for p in out.rglob("*") if p.is_file()) + [tmp_path / "gradescope" / "results.json"]
    assert {p.name for p in files} >= {"report.txt", "summary.md", "report.html", "junit.xml",
                                       "results.json", "gradescope-results.json"}
    assert [hit for p in files for hit in _raw_in(p)] == []
    assert "\\x1b[2J" in (out / "report.txt").read_text() or "\\x1b[2J" in (out / "summary.md").read_text()

    # A result made elsewhere (a resumed batch, a future stage) with raw characters: still
    # escaped by the writer.
    raw = dataclasses.replace(result, name="sub\x1b[2J", notes=[*result.notes, "note \x9b\x07"])
    again = tmp_path / "again"
    write_reports(raw, test_rubric, again)
    assert [hit for p in sorted(again.rglob("*")) if p.is_file() for hit in _raw_in(p)] == []

    # The class's files (gradebook, class summary, leaderboard, class page).
    batch = tmp_path / "batch"
    batch.mkdir()
    finish_batch([raw], test_rubric, [Path("sub")], batch)
    assert [hit for p in sorted(batch.rglob("*")) if p.is_file() for hit in _raw_in(p)] == []

    # The terminal: what `grade` prints (cli.grade_one, the session and the grade
    # replaced by the result above), and its progress lines.
    class NoSession:
        seed, jobs, backend = 1, 1, SimpleNamespace(name="emulator")

        def __init__(self, *args, **kwargs):
            pass

        def __enter__(self):
            return self

        def __exit__(self, *exc):
            return False

    monkeypatch.setattr(cli, "Session", NoSession)
    monkeypatch.setattr(cli, "grade", lambda session, path, on_event=None: raw)
    args = SimpleNamespace(out=tmp_path / "cli", gradescope=None, show_hidden=False, regrade=None)
    job = SimpleNamespace(submissions=[tmp_path], options=None)
    capsys.readouterr()
    assert cli.grade_one(args, job, test_rubric, None, cli._logger(False)) == 0
    cli._logger(False)("building \x1b]0;pwned\x07")
    printed = capsys.readouterr()
    assert "sub\\x1b[2J" in printed.out
    assert not RAW_TEXT.search(printed.out) and not RAW_TEXT.search(printed.err), printed
    assert "\\x1b]0;pwned\\x07" in printed.err


def _strings(value):
    """Every string in a result (through dataclasses, lists, dicts)."""
    if isinstance(value, str):
        yield value
    elif dataclasses.is_dataclass(value) and not isinstance(value, type):
        for f in dataclasses.fields(value):
            yield from _strings(getattr(value, f.name))
    elif isinstance(value, (list, tuple, set, frozenset)):
        for v in value:
            yield from _strings(v)
    elif isinstance(value, dict):
        for k, v in value.items():
            yield from _strings(k)
            yield from _strings(v)


@pytest.mark.parametrize("text", [ATTACK, "\x85next line", "\x1bc"])
def test_the_terminal_report_escapes_what_it_is_given(text):
    assert not RAW_TEXT.search(printable(text))
