"""Whose each submission is: Gradescope's submission_metadata.yml and a roster CSV."""
from __future__ import annotations

import datetime

import pytest

from grader.results import Identity, Student
from grader.classroom.roster import (RosterError, export_root, identities, iso_time, parse_due,
                           read_gradescope_metadata, read_roster)

# As Gradescope writes it (Ruby symbol keys): a single submitter, a group, a submission
# with nobody on it, quoting of all kinds, and the nested keys (results with a block
# scalar whose text looks like keys, history) that must be skipped, not read.
METADATA = """\
---
submission_409194023:
  :submitters:
  - :name: Ada Lovelace
    :sid: '1815'
    :email: ada@example.edu
  :created_at: 2026-11-20 17:34:00.861687000 Z
  :score: 60.0
  :results:
    score: 60.0
    output: |-
      :sid: 'not a submitter'
      - :name: Mallory
  :history:
  - :created_at: 2026-11-19 10:00:00.000000000 -08:00
    :score: 30.0
submission_500000001:
  :submitters:
    - :name: "Grace \\u00c9. Hopper"
      :sid: 1906   # a number, unquoted
      :email: grace@example.edu
    - :name: Alan O'Turing
      :sid: '1912'
      :email: alan@example.edu
  :created_at: 2026-11-21 09:15:00 -08:00
submission_600000002:
  :submitters: []
"""


def test_gradescope_metadata(tmp_path):
    path = tmp_path / "submission_metadata.yml"
    path.write_text(METADATA)
    got = read_gradescope_metadata(path)
    assert set(got) == {"submission_409194023", "submission_500000001", "submission_600000002"}
    ada = got["submission_409194023"]
    assert ada.students == (Student("Ada Lovelace", "1815", "ada@example.edu"),)
    assert ada.submission_id == "409194023"
    assert ada.submitted_at == "2026-11-20T17:34:00+00:00"
    group = got["submission_500000001"]
    assert [s.name for s in group.students] == ["Grace \u00c9. Hopper", "Alan O'Turing"]
    assert [s.sid for s in group.students] == ["1906", "1912"]
    assert group.submitted_at == "2026-11-21T09:15:00-08:00"
    assert got["submission_600000002"].students == ()


def test_broken_metadata_is_said_with_its_line(tmp_path):
    path = tmp_path / "submission_metadata.yml"
    path.write_text("submission_1:\n  :submitters:\n  - :name: A\nthis is not yaml of an export\n")
    with pytest.raises(RosterError, match=r"submission_metadata.yml:4: expected a submission key"):
        read_gradescope_metadata(path)
    path.write_bytes(b"\xff\xfe\x00")
    with pytest.raises(RosterError, match="cannot be read"):
        read_gradescope_metadata(path)


def test_timestamps():
    assert iso_time("2026-11-20 17:34:00.861687000 Z") == "2026-11-20T17:34:00+00:00"
    assert iso_time("2026-11-20 17:34:00 -0800") == "2026-11-20T17:34:00-08:00"
    assert iso_time("yesterday") == "yesterday"


def test_roster_csv_columns_by_name_and_groups(tmp_path):
    path = tmp_path / "roster.csv"
    path.write_text("\ufeffStudent ID,Name,E-mail,Submission,Section,Late\n"
                    "1815,Ada Lovelace,ada@example.edu,alice,A1,no\n"
                    "1906,Grace Hopper,grace@example.edu,pair,B2,yes\n"
                    "1912,Alan Turing,alan@example.edu,pair,B2,\n")
    rows = read_roster(path)
    assert rows[0] == {"sid": "1815", "name": "Ada Lovelace", "email": "ada@example.edu",
                       "submission": "alice", "section": "A1", "late": "no"}
    who = identities(["alice", "pair", "nobody"], {}, read_roster(path))
    assert who["alice"].students == (Student("Ada Lovelace", "1815", "ada@example.edu", "", "A1"),)
    assert who["alice"].late is False
    assert [s.name for s in who["pair"].students] == ["Grace Hopper", "Alan Turing"]
    assert who["pair"].late is True
    assert who["nobody"] == Identity()


def test_roster_completes_the_export_by_sid_or_email(tmp_path):
    meta = tmp_path / "submission_metadata.yml"
    meta.write_text(METADATA)
    roster = tmp_path / "roster.csv"
    roster.write_text("sid,email,login,section\n1815,,ada01,A1\n,GRACE@example.edu,grace7,B2\n")
    who = identities(["submission_409194023", "submission_500000001"],
                     read_gradescope_metadata(meta), read_roster(roster))
    ada = who["submission_409194023"].students[0]
    assert (ada.name, ada.login, ada.section) == ("Ada Lovelace", "ada01", "A1")
    grace, alan = who["submission_500000001"].students
    assert (grace.login, grace.section) == ("grace7", "B2") and alan.login == ""


def test_late_from_the_due_date(tmp_path):
    meta = tmp_path / "submission_metadata.yml"
    meta.write_text(METADATA)
    due = parse_due("2026-11-21T00:00:00-08:00")
    who = identities(["submission_409194023", "submission_500000001", "submission_600000002"],
                     read_gradescope_metadata(meta), [], due)
    assert who["submission_409194023"].late is False
    assert who["submission_500000001"].late is True
    assert who["submission_600000002"].late is None  # no time: not known
    assert due.tzinfo is not None and due.utcoffset() == datetime.timedelta(hours=-8)
    with pytest.raises(RosterError, match="time zone"):
        parse_due("2026-11-21T00:00:00")
    with pytest.raises(RosterError, match="not an ISO date"):
        parse_due("next friday")


def test_roster_without_known_columns_is_refused(tmp_path):
    path = tmp_path / "roster.csv"
    path.write_text("foo,bar\n1,2\n")
    with pytest.raises(RosterError, match="no known column"):
        read_roster(path)


def test_export_root_finds_the_folder_inside_the_zip(tmp_path):
    inner = tmp_path / "export" / "assignment_123_export"
    inner.mkdir(parents=True)
    (tmp_path / "export" / "__MACOSX").mkdir()
    (inner / "submission_metadata.yml").write_text(METADATA)
    assert export_root(tmp_path / "export") == inner
    assert export_root(inner) == inner
    assert export_root(tmp_path) == tmp_path


# ---- Canvas: its gradebook export as a roster, its bulk download as a class ---------------

CANVAS_EXPORT = """Student,ID,SIS User ID,SIS Login ID,Section,scanlab (12345),Final Score
    Points Possible,,,,,100,
"Hopper, Grace",102,S011,ghopper,CS 149 A,,88.5
"Turing, Alan",103,S012,aturing,CS 149 B,,90
"Nobody, Zed",104,S013,znobody,CS 149 B,,
"Student, Test",999,,,CS 149 A,,
"""


def test_a_canvas_gradebook_export_is_a_roster(tmp_path):
    path = tmp_path / "export.csv"
    path.write_text(CANVAS_EXPORT)
    rows = read_roster(path)
    # Canvas's own test student ("Student, Test") is no student: not listed as one who submitted nothing.
    assert [r["name"] for r in rows] == ["Hopper, Grace", "Turing, Alan", "Nobody, Zed"]
    assert rows[0] == {"name": "Hopper, Grace", "canvas_id": "102", "sid": "S011", "login": "ghopper",
                       "section": "CS 149 A"}


def test_canvas_bulk_download_is_gathered_per_student(tmp_path):
    from grader.classroom.canvas import read_layout, stage
    from grader.classroom.roster import check_roster
    wanted = ("warp_scan.cuh", "reduce.cuh", "scan.cuh")
    flat = tmp_path / "download"
    flat.mkdir()
    (flat / "hoppergrace_102_9001_scan.cuh").write_text("old")
    (flat / "hoppergrace_102_9005_scan-1.cuh").write_text("new")
    (flat / "hoppergrace_102_9002_reduce.cuh").write_text("reduce")
    (flat / "turingalan_LATE_103_9003_hw.zip").write_bytes(b"PK\x05\x06" + bytes(18))
    (flat / "carol_scan.cuh").write_text("loose")
    (flat / "dave").mkdir()
    (flat / "dave" / "scan.cuh").write_text("a folder as before")
    staged = stage(flat, wanted, tmp_path / "out")
    assert sorted(p.name for p in staged.iterdir() if not p.name.startswith(".")) == \
        ["carol", "dave", "hoppergrace_102", "turingalan_103.zip"]
    assert (staged / "hoppergrace_102" / "scan.cuh").read_text() == "new"      # the newest upload
    assert (staged / "hoppergrace_102" / "reduce.cuh").read_text() == "reduce"
    assert (staged / "carol" / "scan.cuh").read_text() == "loose"
    layout = read_layout(staged)
    assert layout["turingalan_103"].late is True and layout["hoppergrace_102"].late is False
    # Matched to the gradebook export by Canvas's user id; Zed and the test student submitted nothing.
    path = tmp_path / "export.csv"
    path.write_text(CANVAS_EXPORT)
    roster = read_roster(path)
    names = ["carol", "dave", "hoppergrace_102", "turingalan_103"]
    who = identities(names, {}, roster, None, layout)
    assert who["hoppergrace_102"].students[0].sid == "S011"
    assert who["turingalan_103"].students[0].canvas_id == "103" and who["turingalan_103"].late is True
    check = check_roster(names, roster, who)
    assert [s.name for s in check.absent] == ["Nobody, Zed"]
    assert check.unclaimed == ["carol", "dave"] and not check.mismatched


def test_a_roster_row_naming_no_submission_is_a_mismatch(tmp_path):
    from grader.classroom.roster import check_roster
    path = tmp_path / "roster.csv"
    path.write_text("submission,name,sid\ncarol,Carol,1\nkarol,Karl,2\n,Zed,3\n")
    roster = read_roster(path)
    who = identities(["carol", "dave"], {}, roster)
    check = check_roster(["carol", "dave"], roster, who)
    assert [(m[0], m[1].name, m[2]) for m in check.mismatched] == [("karol", "Karl", ["carol"])]
    assert [s.name for s in check.absent] == ["Zed"] and check.unclaimed == ["dave"]
    assert [s.name for s in check.zeros] == ["Karl", "Zed"]
    assert any("names submission 'karol'" in line and "closest: carol" in line for line in check.lines())


# Canvas's submissions list (the API's JSON, saved from the browser with include[]=user), as
# Canvas writes it: Turing 26 h late by Canvas's count, Hopper on time, Zed with nothing.
CANVAS_SUBMISSIONS = """[
 {"id": 1, "user_id": 102, "assignment_id": 12345, "submitted_at": "2026-11-20T22:10:00Z",
  "late": false, "missing": false, "seconds_late": 0, "workflow_state": "submitted",
  "user": {"id": 102, "name": "Grace Hopper", "sortable_name": "Hopper, Grace",
           "sis_user_id": "S011", "login_id": "ghopper"}},
 {"id": 2, "user_id": 103, "assignment_id": 12345, "submitted_at": "2026-11-22T01:59:00Z",
  "late": true, "missing": false, "seconds_late": 93600, "workflow_state": "submitted",
  "user": {"id": 103, "name": "Alan Turing", "sis_user_id": "S012", "login_id": "aturing"}},
 {"id": 3, "user_id": 104, "assignment_id": 12345, "submitted_at": null, "late": false,
  "missing": true, "seconds_late": 0, "workflow_state": "unsubmitted"}
]"""


def test_canvas_late_work_is_timed_and_penalised(tmp_path):
    """Issue 59: a Canvas student marked _LATE_ was "late (by how much not known: not
    penalised)". Canvas's submissions list (as --roster) gives its own seconds_late; a
    gradebook export with a Submitted At column gives the time for --due."""
    from grader.classroom.canvas import read_layout, stage
    from grader.config.late_policy import LatePolicy
    from grader.report.late import lateness, penalised
    flat = tmp_path / "download"
    flat.mkdir()
    (flat / "hoppergrace_102_9001_scan.cuh").write_text("a")
    (flat / "turingalan_LATE_103_9003_scan.cuh").write_text("b")
    layout = read_layout(stage(flat, ("scan.cuh",), tmp_path / "out"))
    names = ["hoppergrace_102", "turingalan_103"]
    policy = LatePolicy(per="day", penalty_percent=10, cap_percent=30)
    # The file names alone: late, not timed, not penalised, and the words say what to add.
    alone = identities(names, {}, [], None, layout)["turingalan_103"]
    assert lateness(alone, policy).fraction == 0 and "submitted_at" in lateness(alone, policy).words()
    path = tmp_path / "submissions.json"
    path.write_text(CANVAS_SUBMISSIONS)
    rows = read_roster(path)
    assert rows[1]["canvas_id"] == "103" and rows[1]["seconds_late"] == "93600" and rows[1]["sid"] == "S012"
    who = identities(names, {}, rows, None, layout)       # no --due needed: Canvas counted
    late = lateness(who["turingalan_103"], policy)
    assert who["turingalan_103"].late_seconds == 93600 and late.units == 2 and late.fraction == 0.2
    assert penalised(50.0, 60.0, late) == 38.0 and "late by 1 d 02 h (-20% late penalty)" == late.words()
    assert not who["hoppergrace_102"].late and who["hoppergrace_102"].students[0].name == "Grace Hopper"
    # The gradebook export with a Submitted At column the instructor added, and --due.
    export = tmp_path / "export.csv"
    export.write_text("Student,ID,SIS User ID,Submitted At\n\"Turing, Alan\",103,S012,2026-11-22T01:59:00Z\n"
                      "\"Hopper, Grace\",102,S011,2026-11-20T22:10:00Z\n")
    who = identities(names, {}, read_roster(export), parse_due("2026-11-21T00:00:00Z"), layout)
    assert lateness(who["turingalan_103"], policy).fraction == 0.2
    assert not who["hoppergrace_102"].late
