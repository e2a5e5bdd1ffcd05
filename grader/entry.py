"""The command's front door (`scanlab-grade`, `python3 -m grader`): the checkout is
found before anything reads it. The code rules' module lives in the checkout's
handout/tools/ (one implementation, the student's too), so an installed grader
outside a checkout must say so before it imports the rest."""
from __future__ import annotations

import sys

from . import REPO_ROOT
from . import __version__
from . import exits


def main(argv: list[str] | None = None) -> int:
    args = sys.argv[1:] if argv is None else argv
    if not (REPO_ROOT / "data" / "assignment.toml").is_file():
        if args == ["--version"]:
            print(f"scanlab grader {__version__}")
            return 0
        print("scanlab-grade: no scanlab checkout here (data/assignment.toml, handout/): run it "
              "inside one, or set SCANLAB_ROOT to one", file=sys.stderr)
        return exits.GRADER
    from .cli import main as cli_main
    return cli_main(argv)
