"""A task's build: its student file alone, the other files their contract (issue 45, item 1).

grader/contract/ is laid into every build's handout copy as harness/contract/. In a task's
build (some student files not given), `-I harness/contract` after every other include
folder makes `#include "student/<other>.cuh"` (or any spelling that finds the file beside
the student's own, include_flags) find that file's contract there, and the
reference unit (prebuilt.py: compiled once per machine, trusted) is linked right after
the student object, unless the task's file is one whose kernels it defines.
grader/contract/README.md says why each piece is as it is."""
from __future__ import annotations

from pathlib import Path

from .checks.compiled import Symbol, read_symbols

CONTRACT_DIR = "harness/contract"   # grader/contract/, in a build's handout copy
FAILED_HINT = ("\n(this task is built with its file alone: an include of another student file gives "
               "that task's contract, its functions declared and the grader's stand-ins, never the "
               "reference's code; grader/README.md, \"Builds\")")


def source(root: Path) -> Path:
    """grader/contract/ of the checkout at `root`."""
    return root / "grader" / "contract"


def shown(name: str, data: bytes, reference_files: dict[str, bytes]) -> str:
    """How a message names a student file that is not the submission's."""
    return f"({'reference' if data == reference_files.get(name) else 'handout'}) student/{name}"


def is_task_build(files: dict[str, bytes], reference_files: dict[str, bytes]) -> bool:
    """Some student files are not given: they resolve to their contract."""
    return set(files) != set(reference_files)


def include_flags(src: Path) -> tuple[str, ...]:
    """The include folders of a task's build, after every other one: harness/contract
    (`"student/reduce.cuh"`, `<student/reduce.cuh>`) and its student/ (`"reduce.cuh"`,
    `"./reduce.cuh"`, `"../student/reduce.cuh"` from a student file, which the build's
    student/ does not hold): every spelling that finds a submitted file in the
    integration build finds its contract here (issue 58, item 2)."""
    return (f"-I{src / CONTRACT_DIR}", f"-I{src / CONTRACT_DIR / 'student'}")


def include_dirs(src: Path) -> tuple[str, ...]:
    """The folders a student file may include from (code_rules.split_by_origin): harness/,
    student/, and where a task's build finds the other student files."""
    return (str(src / "harness"), str(src / "student"), str(src / CONTRACT_DIR / "student"))


def after_student_object(argv: list[str], obj: str) -> list[str]:
    """The link command with `obj` right after the student unit's object (before the
    libraries, which then resolve its references too), else at the end."""
    at = next((i for i, a in enumerate(argv) if "-student.dir/" in a and a.endswith(".o")), None)
    return [*argv, obj] if at is None else [*argv[:at + 1], obj, *argv[at + 1:]]


def without_reference_calls(student: list[Symbol], reference_unit: Path | None) -> list[Symbol]:
    """The student unit's symbols less its references to what the linked reference unit
    exports (the contract's kernels): those calls are allowed."""
    if reference_unit is None:
        return student
    exported = {s.mangled for s in read_symbols(reference_unit) if s.defined and s.bind != "LOCAL"}
    return [s for s in student if s.defined or s.mangled not in exported]


STAND_IN_DIR = "stand_in"   # grader/contract/stand_in/: a task's stand-in kernels (fault.py)


def stand_in(root: Path, file: str) -> bytes | None:
    """The grader's stand-in for student `file` with its kernels defined (grader/contract/
    stand_in/), which the builds that find the task at fault run the student's other
    files with; None: there is none."""
    path = source(root) / STAND_IN_DIR / file
    return path.read_bytes() if path.is_file() else None
