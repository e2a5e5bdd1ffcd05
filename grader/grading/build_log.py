"""What a student is shown of a failed build: the first compiler errors of its log, with the
build folder's paths rewritten to the student's own and control characters escaped."""
from __future__ import annotations

import re

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
