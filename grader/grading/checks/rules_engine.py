"""The code rules' one implementation is the handout's (handout/tools/code_rules.py: a
student runs the same code locally with `make rules`); this module makes it importable
as `code_rules` and turns the rubric's [forbidden] tables into its Rules."""
from __future__ import annotations

import sys
from dataclasses import dataclass

from ... import REPO_ROOT
from ...results import Violation
from ...config.rubric import ForbiddenRubric

_TOOLS = str(REPO_ROOT / "handout" / "tools")
if _TOOLS not in sys.path:
    sys.path.append(_TOOLS)

import code_rules  # noqa: E402  (found through the path above)


def rules_of(forbidden: ForbiddenRubric) -> code_rules.Rules:
    return code_rules.Rules(tuple(code_rules.Rule(r.name, r.pattern, r.message) for r in forbidden.rules),
                            forbidden.allowed_system_includes, forbidden.allowed_directives,
                            allowed_calls=forbidden.allowed_calls)


def violations(findings: list[code_rules.Finding]) -> list[Violation]:
    return [Violation(f.file, f.line, f.rule, f.message, f.excerpt) for f in findings]


@dataclass(frozen=True)
class PlaceholderCall:
    """A task whose file calls the handout's placeholder: what it comes to."""

    not_attempted: bool     # a bonus: not run at all
    message: str            # the task's message


def placeholder_call(path: str | None, bonus: bool, placeholders: dict[str, str],
                     message: str) -> PlaceholderCall | None:
    """A task whose kernels reach the handout's placeholder or baseline implementations in
    the compiled code (`placeholders`: code_rules.placeholder_calls's messages by submission
    path) is not attempted, however its text was changed around the call: 0 points (the
    task is a placeholder); a bonus task is not run at all. None: no such call.
    `message`: the task's message so far."""
    if path not in placeholders:
        return None
    said = f"{placeholders[path]}: not attempted, 0 points"
    if bonus:
        return PlaceholderCall(True, f"bonus not attempted: {said} (not run)")
    # (the handout's own placeholder already says so)
    return PlaceholderCall(False, message or said + " (the cases run, for your information)")
