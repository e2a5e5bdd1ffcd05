#!/usr/bin/env python3
"""tools/gpu_space.sh's summary of one grade: each task's verdict against the fixture's
expectation on a GPU ([expect.cuda] over [expect]), its cases, the drawn n >= 2^31 ones
with their seconds, and where the failures are. Exit 1 when a verdict is unexpected.

usage: tools/gpu_space_verdicts.py FIXTURE REPORT_FOLDER
"""
from __future__ import annotations

import sys
import tomllib
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from grader.report import jsonfile  # noqa: E402
from grader.results import SubmissionResult  # noqa: E402


def load(folder: Path) -> SubmissionResult | None:
    for path in sorted(folder.rglob("*.json")):
        try:
            return jsonfile.read(path)
        except ValueError:
            continue
    return None


def expected(name: str) -> dict[str, str]:
    """The fixture's verdicts on a GPU; a task it does not name takes the reference's
    (the bonus: correct with `bonus = true`, else not attempted)."""
    fixture = tomllib.loads((REPO / "tests" / "fixtures" / "submissions" / name / "fixture.toml").read_text())
    table = fixture.get("expect", {})
    out = {"lookback-scan": "correct" if fixture.get("bonus") else "not_attempted"}
    out.update({k: v for k, v in table.items() if k != "cuda"})  # error = true stays a bool
    out.update(table.get("cuda", {}))
    return out


def main(name: str, folder: Path) -> int:
    result = load(folder)
    if result is None:
        print(f"  no results JSON under {folder}")
        return 1
    expect = expected(name)
    ok = True
    for task in result.tasks:
        cases = task.cases
        drawn = [c for c in cases if c.case.group.startswith("drawn")]
        huge = [c for c in drawn if c.case.n >= 2**31]
        failed = [c for c in cases if not c.passed]
        # A submission the grader cannot read (`error = true`: empty, a broken archive)
        # has no task files: each task is missing unless the fixture says otherwise.
        want = expect.get(task.name, "missing" if expect.get("error") is True else "correct")
        good = want in ("any", task.verdict)
        ok &= good
        print(f"  task {task.number} {task.name}: {task.verdict} (expected {want}) "
              f"{'ok' if good else 'UNEXPECTED'}; {len(cases) - len(failed)}/{len(cases)} cases "
              f"passed, {len(drawn)} drawn; n >= 2^31: "
              + (", ".join(f"{c.case.task} {c.case.op} n={c.case.n} {c.status} {c.seconds:.0f} s"
                           for c in huge) or "none"))
        for c in failed[:4]:
            k = c.case
            print(f"    failed: {k.task} {k.op} n={k.n} block={k.block} [{k.backend or 'grade run'}] "
                  f"{k.group}: {c.summary[:200]}")
    want = expect.get("integration", "correct")
    good = want in ("any", result.integration.verdict)
    ok &= good
    print(f"  integration: {result.integration.verdict} (expected {want}) {'ok' if good else 'UNEXPECTED'}")
    print(f"  draw seed {result.draw_seed}; {result.seconds:.0f} s; phases (s): "
          + ", ".join(f"{k} {v:.0f}" for k, v in result.timings.items()))
    return 0 if ok else 1


if __name__ == "__main__":
    if len(sys.argv) != 3:
        sys.exit(__doc__)
    sys.exit(main(sys.argv[1], Path(sys.argv[2])))
