"""Who a submission belongs to: Gradescope's submission export and a plain roster CSV.

A Gradescope "Export Submissions" download is a folder (or the one folder inside the
zip) holding one `submission_<id>/` folder per submission and `submission_metadata.yml`,
which maps each folder to its submitters (name, SID, email), its time and score:

    submission_409194023:
      :submitters:
      - :name: Ada Lovelace
        :sid: '1815'
        :email: ada@example.edu
      :created_at: 2026-11-20 17:34:00.861687000 Z
      :score: 60.0
      :results: ...

The file is YAML written by Ruby (symbol keys). The grader's core is the standard
library only, so this module reads the part of that YAML it needs: top-level submission
keys, their `:submitters:` list and their scalar keys; everything nested deeper (the
previous results, block scalars) is skipped by indentation, never interpreted.

A roster CSV (any spreadsheet export) names students by column header, case and spaces
ignored: `submission` (the folder or archive name the student's submission has in the
batch, without .zip/.tar.gz), `name`, `sid` (or `student id`), `email`, `login`,
`section`, `late`. Several rows with one submission are a group. With a Gradescope
export too, roster rows without `submission` are matched to submitters by SID or email
(to add section and login).
"""
from __future__ import annotations

import csv
import dataclasses
import datetime
import difflib
import json
import re
from dataclasses import dataclass, field
from pathlib import Path

from ..results import Identity, Student

METADATA_FILE = "submission_metadata.yml"


class RosterError(ValueError):
    """A roster or metadata file that cannot be used (said with its path and line)."""


# ---- Gradescope's submission_metadata.yml ------------------------------------------------

_TIMESTAMP = re.compile(r"^(\d{4}-\d\d-\d\d)[ T](\d\d:\d\d:\d\d)(\.\d+)?\s*(Z|[+-]\d\d:?\d\d)?$")


def _scalar(text: str) -> str:
    """A YAML scalar as a string: quoted ('it''s', "a\\tb") or plain (comment cut)."""
    text = text.strip()
    if text.startswith("'") and text.endswith("'") and len(text) >= 2:
        return text[1:-1].replace("''", "'")
    if text.startswith('"') and text.endswith('"') and len(text) >= 2:
        try:
            return str(json.loads(text))
        except ValueError:
            return text[1:-1]
    text = re.sub(r"\s+#.*$", "", text)
    return "" if text in ("~", "null") else text


def _key_value(body: str) -> tuple[str, str] | None:
    """`:name: Ada` -> ("name", "Ada"); `:submitters:` -> ("submitters", "")."""
    m = re.match(r"^:?([A-Za-z_][\w-]*):(?:\s+(.*))?$", body)
    return (m.group(1), m.group(2) or "") if m else None


def iso_time(text: str) -> str:
    """A Ruby/YAML timestamp ('2026-11-20 17:34:00.861687000 Z') in ISO 8601, to the
    second; text that is not one is returned as it is."""
    m = _TIMESTAMP.match(text.strip())
    if not m:
        return text.strip()
    zone = m.group(4) or ""
    if zone and zone != "Z" and ":" not in zone:
        zone = zone[:3] + ":" + zone[3:]
    return f"{m.group(1)}T{m.group(2)}{'+00:00' if zone == 'Z' else zone}"


def read_gradescope_metadata(path: Path) -> dict[str, Identity]:
    """The identities of an export's submissions, by folder name (`submission_<id>`)."""
    try:
        lines = path.read_text(encoding="utf-8").splitlines()
    except (OSError, UnicodeDecodeError) as e:
        raise RosterError(f"{path}: cannot be read ({e})") from None
    records: dict[str, dict[str, object]] = {}
    current: dict[str, object] | None = None
    key_indent: int | None = None
    mode = ""
    submitter: dict[str, str] | None = None
    for number, line in enumerate(lines, 1):
        body = line.strip()
        if not body or body.startswith("#") or body in ("---", "..."):
            continue
        indent = len(line) - len(line.lstrip(" "))
        if indent == 0:
            if not body.endswith(":"):
                raise RosterError(f"{path}:{number}: expected a submission key "
                                  f"('submission_<id>:'), found {body[:60]!r}")
            current = records.setdefault(_scalar(body[:-1]), {"submitters": []})
            key_indent, mode, submitter = None, "", None
            continue
        if current is None:
            continue
        if key_indent is None:
            key_indent = indent
        if indent == key_indent and not body.startswith("-"):
            kv = _key_value(body)
            if kv is None:
                raise RosterError(f"{path}:{number}: expected ':key: value', found {body[:60]!r}")
            mode, submitter = kv[0], None
            if mode != "submitters" and kv[1] and not kv[1].startswith(("|", ">")):
                current[mode] = _scalar(kv[1])
            continue
        if mode != "submitters" or indent < key_indent:
            continue  # deeper parts of other keys (results, history): not needed
        if body.startswith("-"):
            submitter = {}
            submitters = current["submitters"]
            assert isinstance(submitters, list)
            submitters.append(submitter)
            body = body[1:].strip()
            if not body:
                continue
        kv = _key_value(body)
        if submitter is not None and kv is not None:
            submitter[kv[0]] = _scalar(kv[1])
    out: dict[str, Identity] = {}
    for folder, record in records.items():
        subs = record["submitters"]
        assert isinstance(subs, list)
        students = tuple(Student(name=s.get("name", ""), sid=s.get("sid", ""),
                                 email=s.get("email", "")) for s in subs)
        submission_id = folder.removeprefix("submission_") if folder.startswith("submission_") else ""
        try:
            autograder: float | None = float(str(record.get("score", "")))
        except ValueError:
            autograder = None
        out[folder] = Identity(students, str(record.get("id", "") or submission_id),
                               iso_time(str(record.get("created_at", ""))), autograder_score=autograder)
    return out


# ---- a plain roster CSV ----------------------------------------------------------------

_COLUMNS = {"submission": "submission", "folder": "submission", "name": "name",
            "student": "name", "sid": "sid", "studentid": "sid", "email": "email",
            "login": "login", "section": "section", "late": "late",
            "submittedat": "submitted_at", "secondslate": "seconds_late",
            # Canvas's gradebook export: ID is Canvas's user id (its bulk download's file
            # names carry it), SIS User ID the student id, SIS Login ID the login.
            "id": "canvas_id", "sisuserid": "sid", "sisloginid": "login"}
# Rows of a Canvas gradebook export that are no student.
_NOT_STUDENTS = ("points possible", "muted", "student, test", "test student")
# An assignment's column of Canvas's gradebook export: its name, then Canvas's id.
_CANVAS_ASSIGNMENT = re.compile(r"^(?P<name>.+?)\s*\((?P<id>\d+)\)$")


def _canvas_submissions(path: Path, data: object) -> list[dict[str, str]]:
    """Canvas's submissions list (`/api/v1/courses/C/assignments/A/submissions?include[]=user`,
    saved from the browser as JSON): per student Canvas's user id, `submitted_at`, `late`
    and `seconds_late` (Canvas's own count, each student's due date and extensions in it),
    with the name, SIS id and login where `include[]=user` added them."""
    if not isinstance(data, list) or not all(isinstance(s, dict) and "user_id" in s for s in data):
        raise RosterError(f"{path}: not Canvas's submissions list (a JSON array of objects with "
                          "user_id, submitted_at, late, seconds_late)")
    rows = []
    for s in data:
        user = s.get("user") if isinstance(s.get("user"), dict) else {}
        row = {"canvas_id": str(s["user_id"]), "submitted_at": str(s.get("submitted_at") or ""),
               "late": "true" if s.get("late") is True else "false" if s.get("late") is False else "",
               "seconds_late": str(s["seconds_late"]) if isinstance(s.get("seconds_late"), (int, float))
               and s.get("submitted_at") else "",
               "name": str(user.get("name") or user.get("sortable_name") or ""),
               "sid": str(user.get("sis_user_id") or ""), "login": str(user.get("login_id") or ""),
               "email": str(user.get("email") or "")}
        rows.append({k: v for k, v in row.items() if v})
    return rows


def read_roster(path: Path) -> list[dict[str, str]]:
    """The rows of a roster CSV with their columns named as above (unknown ones dropped), or
    of Canvas's submissions list (JSON: _canvas_submissions)."""
    try:
        text = path.read_text(encoding="utf-8-sig")
    except (OSError, UnicodeDecodeError) as e:
        raise RosterError(f"{path}: cannot be read ({e})") from None
    if text.lstrip().startswith("["):
        try:
            return _canvas_submissions(path, json.loads(text))
        except ValueError as e:
            raise RosterError(f"{path}: not valid JSON ({e})") from None
    reader = csv.DictReader(text.splitlines())
    if not reader.fieldnames:
        raise RosterError(f"{path}: empty (a header row is needed: submission,name,sid,email)")
    names = {f: _COLUMNS.get(re.sub(r"[\s_-]", "", f.lower())) for f in reader.fieldnames if f}
    if not any(names.values()):
        raise RosterError(f"{path}: no known column in {', '.join(reader.fieldnames)} "
                          "(expected submission, name, sid, email, login, section, late)")
    rows = []
    for row in reader:
        named: dict[str, str] = {}
        for k, v in row.items():
            column = names.get(k) if k else None
            if column and not named.get(column):
                named[column] = (v or "").strip() if isinstance(v, str) else ""
        if named.get("name", "").lower() in _NOT_STUDENTS or not any(named.values()):
            continue
        rows.append(named)
    return rows


def _assignment_name(column: str) -> str:
    m = _CANVAS_ASSIGNMENT.match(column)
    return m.group("name") if m else column


def canvas_assignment_column(path: Path, assignment: str) -> tuple[str, list[str]]:
    """The assignment column of Canvas's gradebook export that the upload fills (the one
    whose name holds `assignment`, e.g. `HW3: scanlab (55501)` for "scanlab"), or "" where
    no one column is; and every assignment column of
    the export (to say so). A column Canvas does not know would make a new assignment."""
    try:
        text = path.read_text(encoding="utf-8-sig")
    except (OSError, UnicodeDecodeError):
        return "", []
    if text.lstrip().startswith("["):   # Canvas's submissions list: no assignment columns
        return "", []
    header = next(csv.reader(text.splitlines()), [])
    found = [h.strip() for h in header if _CANVAS_ASSIGNMENT.match(h.strip())
             and _COLUMNS.get(re.sub(r"[\s_-]", "", h.lower())) is None]
    named = [h for h in found if h == assignment or assignment.lower() in _assignment_name(h).lower()]
    # Never another assignment's column only because it is the only one: that would
    # overwrite its grades.
    return (named[0] if len(named) == 1 else ""), found


def _truthy(text: str) -> bool | None:
    t = text.strip().lower()
    if t in ("1", "true", "yes", "y", "late"):
        return True
    if t in ("0", "false", "no", "n", "on time", ""):
        return False if t else None
    return None


def _student(row: dict[str, str]) -> Student:
    return Student(row.get("name", ""), row.get("sid", ""), row.get("email", ""),
                   row.get("login", ""), row.get("section", ""), row.get("canvas_id", ""))


def _merge(known: Student, row: dict[str, str]) -> Student:
    """A submitter completed from its roster row (the roster fills what is empty)."""
    extra = _student(row)
    return dataclasses.replace(known, **{f.name: getattr(extra, f.name)
                                         for f in dataclasses.fields(Student)
                                         if not getattr(known, f.name) and getattr(extra, f.name)})


def _seconds_late(rows: list[dict[str, str]]) -> float | None:
    """How late, as the LMS counted it (Canvas's `seconds_late`), or None where no row says."""
    for r in rows:
        try:
            return max(0.0, float(r["seconds_late"])) if r.get("seconds_late") else None
        except ValueError:
            continue
    return None


def identities(names: list[str], metadata: dict[str, Identity],
               roster: list[dict[str, str]], due: datetime.datetime | None = None,
               canvas: dict[str, Identity] | None = None) -> dict[str, Identity]:
    """The identity of each submission name (folder or archive name without extension).
    `canvas`: the identities a Canvas bulk download's file names give (grader/classroom/canvas.py),
    completed here from the roster's rows of the same Canvas user id."""
    by_submission: dict[str, list[dict[str, str]]] = {}
    by_key: dict[str, dict[str, str]] = {}
    by_canvas: dict[str, list[dict[str, str]]] = {}
    for row in roster:
        if row.get("submission"):
            by_submission.setdefault(row["submission"], []).append(row)
        if row.get("canvas_id"):
            by_canvas.setdefault(row["canvas_id"], []).append(row)
        for key in ("sid", "email"):
            if row.get(key):
                by_key[f"{key}:{row[key].lower()}"] = row
    out: dict[str, Identity] = {}
    for name in names:
        ident = metadata.get(name, Identity())
        rows = by_submission.get(name, [])
        if canvas and name in canvas:
            ident = canvas[name]
            ids = {s.canvas_id for s in ident.students}
            rows = rows or [r for i in sorted(ids) for r in by_canvas.get(i, [])]
            if rows:
                ident = dataclasses.replace(ident, students=())
        if rows:
            students = tuple(_student(r) for r in rows)
            if ident.students:  # both: the metadata's names, the roster's extras
                students = tuple(_merge(s, by_key.get(f"sid:{s.sid.lower()}")
                                        or by_key.get(f"email:{s.email.lower()}") or rows[0])
                                 for s in ident.students)
            late = next((v for v in (_truthy(r.get("late", "")) for r in rows) if v is not None), None)
            at = next((r["submitted_at"] for r in rows if r.get("submitted_at")), "")
            ident = dataclasses.replace(ident, students=students, submitted_at=ident.submitted_at or iso_time(at),
                                        late=late if late is not None else ident.late,
                                        late_seconds=_seconds_late(rows))
            if ident.late is None and ident.late_seconds is not None:
                ident = dataclasses.replace(ident, late=ident.late_seconds > 0)
        elif ident.students and by_key:
            ident = dataclasses.replace(ident, students=tuple(
                _merge(s, by_key.get(f"sid:{s.sid.lower()}") or by_key.get(f"email:{s.email.lower()}") or {})
                for s in ident.students))
        if due is not None and ident.submitted_at and ident.late_seconds is None:
            try:
                at_time = datetime.datetime.fromisoformat(ident.submitted_at)
            except ValueError:
                at_time = None
            if at_time is not None and at_time.tzinfo is not None:
                # How late, from the time; a roster's own `late` column still says whether.
                ident = dataclasses.replace(
                    ident, late=at_time > due if ident.late is None else ident.late,
                    late_seconds=max(0.0, (at_time - due).total_seconds()))
        out[name] = ident
    return out


def export_root(folder: Path) -> Path:
    """Where an export's submissions are: the folder, or the one folder inside it that
    holds submission_metadata.yml (a Gradescope zip unpacked as it comes)."""
    if (folder / METADATA_FILE).is_file():
        return folder
    inner = [p for p in folder.iterdir() if p.is_dir() and not p.name.startswith((".", "__MACOSX"))]
    if len(inner) == 1 and (inner[0] / METADATA_FILE).is_file():
        return inner[0]
    return folder


def parse_due(text: str) -> datetime.datetime:
    """`--due`: an ISO date and time with its zone ('2026-11-20T23:59:00-08:00')."""
    try:
        due = datetime.datetime.fromisoformat(text)
    except ValueError:
        raise RosterError(f"--due {text!r}: not an ISO date and time "
                          "(e.g. 2026-11-20T23:59:00-08:00)") from None
    if due.tzinfo is None:
        raise RosterError(f"--due {text!r}: give the time zone too (e.g. -08:00 or Z)")
    return due


# ---- what the roster and the class folder disagree on -------------------------------------

@dataclass
class RosterCheck:
    """A roster held against the class folder: its rows whose submission is not there,
    its students who submitted nothing, and the submissions no row names."""
    mismatched: list[tuple[str, Student, list[str]]] = field(default_factory=list)  # 0 in the uploads
    absent: list[Student] = field(default_factory=list)     # no submission: 0 in the upload files
    unclaimed: list[str] = field(default_factory=list)      # submissions of nobody on the roster
    # Canvas's gradebook export: the assignment column the upload fills ("" none found),
    # and every assignment column the export has.
    canvas_column: str = ""
    canvas_columns: list[str] = field(default_factory=list)

    @property
    def zeros(self) -> list[Student]:
        """The students the upload files give 0: those who submitted nothing, and those
        whose row names a submission that is not there (until the roster is corrected)."""
        return [s for _, s, _ in self.mismatched] + self.absent

    def lines(self) -> list[str]:
        """The findings in words, one a line (stderr and the class summary)."""
        out = []
        for submission, s, close in self.mismatched:
            out.append(f"roster row of {who(s)} names submission {submission!r}, which is not in the "
                       "class folder" + (f" (closest: {', '.join(close)})" if close else "")
                       + ": 0 in the upload files until the roster is corrected")
        for s in self.absent:
            out.append(f"no submission from {who(s)} (on the roster): 0 in the upload files")
        for name in self.unclaimed:
            out.append(f"submission {name} matches no roster row: its rows carry no student")
        if self.canvas_columns and not self.canvas_column:
            out.append(f"the gradebook export's assignment columns ({', '.join(self.canvas_columns)}) "
                       "hold no one whose name holds the rubric's [gradebook] assignment: "
                       "canvas-grades.csv uses that name, which Canvas imports as a new assignment")
        return out


def who(s: Student) -> str:
    """A student in words: the name and the first id known."""
    ids = [x for x in (s.sid, s.email, s.canvas_id and f"Canvas {s.canvas_id}") if x]
    return f"{s.name or '(no name)'}" + (f" ({ids[0]})" if ids else "")


def _keys(s: Student) -> set[str]:
    keys = {f"sid:{s.sid.lower()}" if s.sid else "", f"email:{s.email.lower()}" if s.email else "",
            f"canvas:{s.canvas_id}" if s.canvas_id else "", f"login:{s.login.lower()}" if s.login else ""}
    keys.discard("")
    return keys or ({f"name:{s.name.lower()}"} if s.name else set())


def check_roster(names: list[str], roster: list[dict[str, str]],
                 found: dict[str, Identity]) -> RosterCheck:
    """What `roster` and the class's submissions `names` (with the identities `found`
    for them) disagree on."""
    check = RosterCheck()
    if not roster:
        return check
    have = set(names)
    seen: set[str] = set()
    for row in roster:
        submission = row.get("submission", "")
        if submission and submission not in have:
            check.mismatched.append((submission, _student(row),
                                     difflib.get_close_matches(submission, names, n=2, cutoff=0.5)))
            seen |= _keys(_student(row))
    matched = {k for ident in found.values() for s in ident.students for k in _keys(s)}
    for row in roster:
        s = _student(row)
        keys = _keys(s)
        if not keys or keys & matched or keys & seen:
            continue
        seen |= keys
        check.absent.append(s)
    check.unclaimed = [n for n in names if not found.get(n, Identity()).students]
    return check
