"""The command's front door (`scanlab-grade`, `python3 -m grader`): the course is found
before anything reads it (a checkout, a course folder, or the one the installed package
carries), and `init DIR` makes a course folder from it (data/, handout/, the reference's
solution/student/) whose data/rubric.toml the instructor edits."""
from __future__ import annotations

import shutil
import sys
from pathlib import Path

from . import COMMAND, REPO_ROOT, __version__, exits, is_course

COURSE_PARTS = ("data", "handout", "solution/student")


def init(target: Path) -> int:
    """`init DIR`: a course folder (the parts above, copied from the course in use)."""
    if target.exists() and any(target.iterdir()):
        print(f"{COMMAND} init: {target} is not empty: give a new folder", file=sys.stderr)
        return exits.GRADER
    ignore = shutil.ignore_patterns("build", "build-*", "__pycache__")
    for part in COURSE_PARTS:
        shutil.copytree(REPO_ROOT / part, target / part, ignore=ignore)
    print(f"a course folder in {target} (from {REPO_ROOT}): edit {target / 'data' / 'rubric.toml'}, "
          f"then run {COMMAND} inside it (cd {target}; {COMMAND} doctor), or anywhere with "
          f"SCANLAB_ROOT={target.resolve()}")
    return 0


def main(argv: list[str] | None = None) -> int:
    args = sys.argv[1:] if argv is None else argv
    if not is_course(REPO_ROOT):
        if args == ["--version"]:
            print(f"scanlab grader {__version__}")
            return 0
        print(f"{COMMAND}: no scanlab course here (data/assignment.toml, handout/): run it "
              "inside a checkout or a course folder, or set SCANLAB_ROOT to one", file=sys.stderr)
        return exits.GRADER
    if args[:1] == ["init"]:
        if len(args) != 2 or args[1].startswith("-"):
            print(f"usage: {COMMAND} init DIR   (a course folder: data/, handout/, solution/student/)",
                  file=sys.stderr)
            return exits.GRADER
        return init(Path(args[1]))
    from .cli import main as cli_main
    return cli_main(argv)
