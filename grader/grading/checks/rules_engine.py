"""The rubric's [forbidden] tables as the code rules' Rules (grader/rules/code_rules.py,
the code rules' one implementation, of which the handout holds a generated copy for
`make rules`), and their findings as the results' Violations."""
from __future__ import annotations

from dataclasses import dataclass

from ...results import Violation
from ...config.rubric import ForbiddenRubric
from ...rules import code_rules


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
