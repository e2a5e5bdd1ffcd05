"""The code rules' one implementation is the handout's (handout/tools/code_rules.py: a
student runs the same code locally with `make rules`); this module makes it importable
as `code_rules` and turns the rubric's [forbidden] tables into its Rules."""
from __future__ import annotations

import sys

from grader import REPO_ROOT
from grader.results import Violation
from grader.rubric import ForbiddenRubric

_TOOLS = str(REPO_ROOT / "handout" / "tools")
if _TOOLS not in sys.path:
    sys.path.append(_TOOLS)

import code_rules  # noqa: E402  (found through the path above)


def rules_of(forbidden: ForbiddenRubric) -> code_rules.Rules:
    return code_rules.Rules(tuple(code_rules.Rule(r.name, r.pattern, r.message) for r in forbidden.rules),
                            forbidden.allowed_system_includes, forbidden.allowed_directives)


def violations(findings: list[code_rules.Finding]) -> list[Violation]:
    return [Violation(f.file, f.line, f.rule, f.message, f.excerpt) for f in findings]
