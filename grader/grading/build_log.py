"""What a student is shown of a failed build: the first compiler errors of its log, with the
build folder's paths rewritten to the student's own and control characters escaped."""
from __future__ import annotations

import re
from pathlib import Path

from ..rules import code_rules
from ..printable import printable

ERROR_LINES = 30


def first_errors(log: str, rewrite: dict[str, str]) -> str:
    """The first compiler errors of a build log, with paths rewritten."""
    for old, new in sorted(rewrite.items(), key=lambda kv: -len(kv[0])):
        log = log.replace(old, new)
    lines = log.splitlines()
    pattern = re.compile(r"(\berror\b|CMake Error|fatal|undefined reference)", re.I)
    for i, line in enumerate(lines):
        if pattern.search(line) and "Werror" not in line and "-- " not in line[:3]:
            start = i
            # Keep the "In file included from" chain that leads to it.
            while start > 0 and re.match(r"\s*(In file included from|from\s|.*In instantiation)", lines[start - 1]):
                start -= 1
            chunk = [l for l in lines[start:] if not l.startswith(("gmake", "make[", "make:"))]
            return printable("\n".join(chunk[:ERROR_LINES]).rstrip())
    return printable("\n".join(lines[-ERROR_LINES:]).rstrip())


def shown_paths(src: Path, build_dir: Path, student_files: dict[str, str]) -> dict[str, str]:
    """What a build's messages show for each path of its folder (`student_files`: each
    student file's name as the student knows it)."""
    rewrite = {f"{src}/student/{name}": shown for name, shown in student_files.items()}
    rewrite.update({f"{build_dir}/": "build/", f"{src}/": "", str(src): "handout"})
    return rewrite


def failure_message(log: str, rewrite: dict[str, str], hint: str, public_dirs: tuple[str, ...] | None) -> str:
    """A failed build's message: its first errors and `hint`, quoting only files under
    `public_dirs` (None: a trusted build's, all of them)."""
    errors = first_errors(log, rewrite)
    if errors:
        errors += hint
    if errors and public_dirs is not None:
        errors = code_rules.only_public_messages(errors, public_dirs)
    return errors or "the build failed without a message"
