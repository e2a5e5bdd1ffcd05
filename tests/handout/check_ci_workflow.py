#!/usr/bin/env python3
"""The handout's GitHub Actions workflow (handout/ci/github-workflow.yml) does what it
says, as far as it can be run without GitHub: the make targets it calls exist in the
handout's Makefile, and its step-summary script, run on real JUnit reports of the
emulator driver, writes a PASS for the reference and a FAIL naming the not-implemented
task for the untouched handout.

usage: check_ci_workflow.py <handout emulator driver> <reference emulator driver>
"""
from __future__ import annotations

import os
import re
import subprocess
import sys
import tempfile
from pathlib import Path

HANDOUT = Path(__file__).resolve().parents[2] / "handout"
WORKFLOW = HANDOUT / "ci" / "github-workflow.yml"


def step_script(text: str, step: str) -> str:
    """The block scalar under `run: |` of the step named `step` (YAML read as text)."""
    lines = text.splitlines()
    start = next(i for i, l in enumerate(lines) if l.strip() == f"- name: {step}")
    run = next(i for i in range(start + 1, len(lines)) if lines[i].strip() == "run: |")
    indent = len(lines[run]) - len(lines[run].lstrip()) + 2
    body = []
    for line in lines[run + 1:]:
        if line.strip() and len(line) - len(line.lstrip()) < indent:
            break
        body.append(line[indent:])
    return "\n".join(body) + "\n"


def summary_for(driver: str, work: Path, seed: str, fail_first: str = "") -> str:
    """The step summary of `driver test` (its first case made to fail with `fail_first`)."""
    (work / "build").mkdir(parents=True, exist_ok=True)
    junit = work / "build" / "emu-junit.xml"
    subprocess.run([driver, "test", "--max-n", "300", "--blocks", "32,256", "--junit", str(junit)],
                   capture_output=True, text=True, env={**os.environ, "SCANLAB_EMU_SEED": seed})
    if not junit.is_file():
        raise SystemExit(f"FAIL: {driver} wrote no JUnit report")
    if fail_first:
        report = junit.read_text()
        junit.write_text(report.replace("></testcase>", f'><failure message="{fail_first}"/></testcase>', 1))
    summary = work / "summary.md"
    script = step_script(WORKFLOW.read_text(), "Step summary")
    env = {**os.environ, "HANDOUT_DIR": str(work), "GITHUB_STEP_SUMMARY": str(summary),
           "SCANLAB_EMU_SEED": seed}
    p = subprocess.run([sys.executable, "-c", script], env=env, capture_output=True, text=True)
    if p.returncode != 0:
        raise SystemExit(f"FAIL: the step-summary script failed:\n{p.stderr}")
    return summary.read_text()


def main() -> int:
    handout_driver, reference_driver = sys.argv[1:3]
    text = WORKFLOW.read_text()
    problems: list[str] = []

    makefile = (HANDOUT / "Makefile").read_text()
    targets = set(re.findall(r"^([\w-]+):", makefile, re.M))
    for target in re.findall(r'make -C "\$HANDOUT_DIR" ([\w-]+)', text):
        if target not in targets:
            problems.append(f"the workflow runs 'make {target}', which handout/Makefile lacks")
    if "emu-junit.xml" not in makefile:
        problems.append("handout/Makefile's emu-test no longer writes build/emu-junit.xml")

    with tempfile.TemporaryDirectory() as tmp:
        ok = summary_for(reference_driver, Path(tmp) / "reference", "17")
        if "**PASS**" not in ok or " 0 failed" not in ok or "SCANLAB_EMU_SEED=17" not in ok:
            problems.append(f"reference: the summary is not a PASS with its seed:\n{ok}")
        bad = summary_for(handout_driver, Path(tmp) / "handout", "18")
        if "**FAIL**" not in bad or not re.search(r" 0 failed, [1-9]\d* not implemented", bad) or \
                "- task 3: not implemented" not in bad:
            problems.append(f"handout: the summary does not fail task 3 as not implemented:\n{bad}")
        if "scanlab.task" in bad or "- task 1" in bad or "- task 2" in bad:
            problems.append(f"handout: the summary lists a task 1 or 2 case, or a stub case by case:\n{bad}")
        if "SCANLAB_EMU_SEED=18 make emu-test" not in bad:
            problems.append(f"handout: no reproduce line with the seed:\n{bad}")
        wrong = summary_for(reference_driver, Path(tmp) / "wrong", "19", "index 3: expected 7, got 9")
        if "**FAIL**" not in wrong or " 1 failed, 0 not implemented" not in wrong or \
                "| scanlab.task1 warp-scan add-i32 n=1 block=32 | index 3: expected 7, got 9 |" not in wrong:
            problems.append(f"a failing case is not a row of the summary's table:\n{wrong}")

    for p in problems:
        print(f"FAIL: {p}")
    if not problems:
        print("ok: the workflow's make targets exist and its step summary reads the JUnit reports")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
