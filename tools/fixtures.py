#!/usr/bin/env python3
"""The fixture submissions of tests/fixtures/submissions/, made into real submissions.

Each fixture is a folder with a fixture.toml: its base (the reference solution, the
handout, or nothing), edits of solution/student files (so bug-injected submissions
follow the solution), files to copy, and the verdicts expected for each task of
data/assignment.toml, by task name. The grader's tests grade them; tools/gpu_check.sh
grades a batch of them on a GPU.

  fixtures.py class DEST [NAME ...]   the fixtures (default: BATCH_OF_TEN) as a class
                                      folder for `python3 -m grader batch DEST`
  fixtures.py gradescope-export DEST  EXPORT_OF_FIVE as Gradescope's "Export Submissions"
                                      unpacks (submission_<id>/ folders and
                                      submission_metadata.yml, with made-up students)
"""
from __future__ import annotations

import argparse
import re
import shutil
import sys
import tomllib
from dataclasses import dataclass
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))
from grader.config.assignment import Assignment, default_assignment  # noqa: E402

FIXTURES = REPO / "tests" / "fixtures" / "submissions"
# A class of ten for batch runs: every kind of verdict and every kind of bad input.
BATCH_OF_TEN = ["reference", "handout", "compile_error", "crash", "garbage_output", "empty",
                "wrong_names", "forbidden", "commutative_reduce", "broken_archive"]


@dataclass(frozen=True)
class Edit:
    """Replace `find` (which must occur exactly once) by `replace` in a student file."""
    file: str
    find: str
    replace: str


@dataclass(frozen=True)
class Reshape:
    """Rewrite a student file's whitespace after the edits, as real editors save it:
    `line_endings = "crlf"` (Windows), `indent = "tabs"` (each 4 leading spaces a tab)."""
    file: str
    line_endings: str = ""
    indent: str = ""

    def apply(self, text: str) -> str:
        if self.indent == "tabs":
            text = re.sub(r"(?m)^((?: {4})+)", lambda m: "\t" * (len(m.group(1)) // 4), text)
        if self.line_endings == "crlf":
            text = text.replace("\r\n", "\n").replace("\n", "\r\n")
        return text


@dataclass(frozen=True)
class Fixture:
    name: str
    description: str
    base: str
    archive: str
    expect: dict
    expect_cuda: dict
    edits: tuple[Edit, ...] = ()
    copies: tuple[tuple[str, str], ...] = ()  # (repository path, path in the submission)
    # base "reference": the bonus tasks' files too (else left out, as most students do,
    # so the fixtures of tasks 1-3 cost no bonus build)
    bonus: bool = False
    reshapes: tuple[Reshape, ...] = ()
    # Its [expect.cuda] needs the drawn n >= 2^31 cases, which the tests' rubric leaves
    # out: test_e2e_gpu.py grades it with them, in a session of its own.
    huge: bool = False

    def expected(self, backend: str, assignment: Assignment | None = None) -> dict:
        """The expected verdicts on `backend`, by task name (and "integration", "error").

        A task the fixture does not touch (none of its edits, copies, reshapes or files
        is the task's file) gets its base's verdict unless [expect] gives one: so a task
        added to data/assignment.toml needs no line in any fixture. A task it touches
        must have one, and so must the integration; a key that names no task stops the
        tests (a typo would otherwise go unchecked)."""
        a = assignment or default_assignment()
        given = {**self.expect, **(self.expect_cuda if backend == "cuda" else {})}
        names = [t.name for t in a.tasks]
        touched = self.touched_files()
        missing = [t.name for t in a.tasks if t.file in touched and t.name not in given]
        missing += [] if "integration" in given else ["integration"]
        unknown = set(given) - set(names) - {"integration", "error"}
        if missing or unknown:
            raise StaleFixture(
                f"fixture {self.name}: [expect] " +
                (f"has no verdict for {', '.join(missing)}" if missing else "") +
                ("; " if missing and unknown else "") +
                (f"names no task {', '.join(sorted(unknown))}" if unknown else "") +
                f" (tasks of data/assignment.toml: {', '.join(names)})")
        return {**{t.name: self.base_verdict(t.file, t.bonus) for t in a.tasks}, **given}

    def touched_files(self) -> set[str]:
        """The student files (by name) this fixture changes or adds to its base."""
        files = {e.file for e in self.edits} | {r.file for r in self.reshapes}
        files |= {Path(dest).name for _, dest in self.copies}
        folder = FIXTURES / self.name
        files |= {f.name for f in folder.rglob("*") if f.is_file() and f.name not in ("fixture.toml", ".keep")}
        return files

    def base_verdict(self, file: str, bonus: bool) -> str:
        """The verdict of an untouched task's file as the base lays it down: the
        reference's is correct (a bonus file only when it is laid down: `bonus = true`),
        the handout's placeholder is not attempted, and a file that is not there is
        missing (a bonus one: not attempted)."""
        if self.archive:
            return "not_attempted" if bonus else "missing"
        if self.base == "reference":
            return "correct" if not bonus or self.bonus else "not_attempted"
        if self.base == "handout":
            return "not_attempted"
        return "not_attempted" if bonus else "missing"


def load_fixture(name: str) -> Fixture:
    data = tomllib.loads((FIXTURES / name / "fixture.toml").read_text())
    expect = dict(data.get("expect", {}))
    expect_cuda = expect.pop("cuda", {})
    return Fixture(name, data.get("description", ""), data.get("base", "reference"),
                   data.get("archive", ""), expect, expect_cuda,
                   tuple(Edit(e["file"], e["find"], e["replace"]) for e in data.get("edit", [])),
                   tuple((c["from"], c["to"]) for c in data.get("copy", [])),
                   bool(data.get("bonus", False)),
                   tuple(Reshape(r["file"], r.get("line_endings", ""), r.get("indent", ""))
                         for r in data.get("reshape", [])),
                   bool(data.get("huge", False)))


class StaleFixture(Exception):
    """A fixture that no longer matches the solution or the assignment it is made from."""


def apply_edit(text: str, edit: Edit, fixture: str) -> str:
    found = text.count(edit.find)
    if found != 1:
        raise StaleFixture(
            f"fixture {fixture}: the text to replace in {edit.file} occurs {found} times in "
            f"solution/student/{edit.file} (must be once): update tests/fixtures/submissions/"
            f"{fixture}/fixture.toml\n--- text ---\n{edit.find}")
    return text.replace(edit.find, edit.replace)


def fixture_names() -> list[str]:
    return sorted(p.name for p in FIXTURES.iterdir() if (p / "fixture.toml").is_file())


def compose(name: str, dest: Path) -> Path:
    """The fixture as a complete submission under dest; returns what to grade."""
    fx = load_fixture(name)
    folder = FIXTURES / name
    if fx.archive:
        return folder / fx.archive
    target = dest / name
    if fx.base == "reference":
        (target / "student").mkdir(parents=True)
        bonus_files = {t.file for t in default_assignment().tasks if t.bonus}
        for f in (REPO / "solution" / "student").glob("*.cuh"):
            if f.name not in bonus_files or fx.bonus or any(e.file == f.name for e in fx.edits):
                shutil.copy(f, target / "student" / f.name)
    elif fx.base == "handout":
        shutil.copytree(REPO / "handout", target,
                        ignore=shutil.ignore_patterns("build", "build-*", "__pycache__"))
    else:
        target.mkdir(parents=True)
    for source, copy_to in fx.copies:
        (target / copy_to).parent.mkdir(parents=True, exist_ok=True)
        shutil.copy(REPO / source, target / copy_to)
    for edit in fx.edits:
        student_file = target / "student" / edit.file
        student_file.write_text(apply_edit(student_file.read_text(), edit, name))
    for reshape in fx.reshapes:
        student_file = target / "student" / reshape.file
        student_file.write_bytes(reshape.apply(student_file.read_bytes().decode()).encode())
    for f in folder.rglob("*"):
        if f.is_file() and f.name not in ("fixture.toml", ".keep"):
            rel = f.relative_to(folder)
            # A fixture's student file replaces the base's, wherever it sits there.
            if fx.base == "reference" and rel.parent == Path("."):
                rel = Path("student") / rel
            (target / rel).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy(f, target / rel)
    return target


def compose_class(names: list[str], folder: Path, parts: Path) -> None:
    """The fixtures `names` as a class folder for `batch`: a subfolder or a .zip each."""
    folder.mkdir(parents=True, exist_ok=True)
    for name in names:
        src = compose(name, parts)
        if src.is_dir():
            shutil.copytree(src, folder / name)
        else:
            shutil.copy(src, folder / f"{name}.zip")


# A Gradescope export of five: (fixture, submission id, its submitters: name, SID, email).
EXPORT_OF_FIVE = [
    ("reference", "9001", [("Ada Lovelace", "1815", "ada@example.edu")]),
    ("handout", "9002", [("Grace Hopper", "1906", "grace@example.edu"),
                         ("Alan Turing", "1912", "alan@example.edu")]),
    ("compile_error", "9003", [("Barbara Liskov", "1939", "barbara@example.edu")]),
    ("crash", "9004", [("Edsger Dijkstra", "1930", "edsger@example.edu")]),
    ("empty", "9005", [("Donald Knuth", "1938", "don@example.edu")]),
]
EXPORT_FOLDER = "assignment_4242_export"


def compose_gradescope_export(dest: Path, parts: Path,
                              export: list[tuple[str, str, list[tuple[str, str, str]]]] = EXPORT_OF_FIVE
                              ) -> Path:
    """The fixtures as Gradescope's "Export Submissions" zip unpacks: dest/<export
    folder>/ holding submission_<id>/ folders and submission_metadata.yml (Ruby-style
    YAML, with the nested results a real export has). Returns the export folder."""
    root = dest / EXPORT_FOLDER
    root.mkdir(parents=True)
    lines = []
    for i, (name, sid, people) in enumerate(export):
        folder = root / f"submission_{sid}"
        src = compose(name, parts)
        if src.is_dir():
            shutil.copytree(src, folder)
        else:  # an archive is uploaded as it is
            folder.mkdir()
            shutil.copy(src, folder / src.name)
        lines += [f"submission_{sid}:", "  :submitters:"]
        for person, student_id, email in people:
            lines += [f"  - :name: {person}", f"    :sid: '{student_id}'", f"    :email: {email}"]
        lines += [f"  :created_at: 2026-11-2{i % 10} 12:00:00.000000000 Z", "  :score: 0.0",
                  "  :results:", "    output: |-", "      :sid: 'not a submitter'"]
    (root / "submission_metadata.yml").write_text("\n".join(lines) + "\n")
    return root


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    sub = parser.add_subparsers(dest="command", required=True)
    c = sub.add_parser("class", help="compose fixtures as a class folder")
    c.add_argument("dest", type=Path)
    c.add_argument("names", nargs="*", default=BATCH_OF_TEN)
    c.add_argument("--parts", type=Path, default=None,
                   help="where to compose them first (default: DEST.parts)")
    g = sub.add_parser("gradescope-export", help="EXPORT_OF_FIVE as a Gradescope export")
    g.add_argument("dest", type=Path)
    args = parser.parse_args()
    if args.command == "gradescope-export":
        root = compose_gradescope_export(args.dest, args.dest.with_suffix(".parts"))
        print(f"wrote a Gradescope export of {len(EXPORT_OF_FIVE)} submissions to {root}")
        return 0
    unknown = set(args.names) - set(fixture_names())
    if unknown:
        parser.error(f"no fixture {', '.join(sorted(unknown))}")
    compose_class(args.names, args.dest, args.parts or args.dest.with_suffix(".parts"))
    print(f"wrote {len(args.names)} submissions to {args.dest}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
