"""The gate of a submission's build: before anything it compiled is used, what its student
unit reads (each file inside the submission, the handout's harness or the compiler's
headers) and the code rules over the unit as the build's own command preprocesses it."""
from __future__ import annotations

import dataclasses
import os
from pathlib import Path
from typing import Callable

from . import contract, sandbox
from .checks import compiled
from .checks.rules_engine import violations as as_violations
from ..config.rubric import ForbiddenRubric
from ..results import Violation
from ..rules import code_rules


def gate(cmake: str, src: Path, build_dir: Path, compile_argv: list[str], sources: dict[str, str],
         own: dict[str, str], env: dict[str, str], identity: sandbox.Identity, limits: sandbox.Limits,
         forbidden: ForbiddenRubric, public_dirs: tuple[str, ...]) -> list[Violation] | str:
    """Before the build: the files the student unit reads (the compiler's -M), each
    inside the submission, the handout's harness or the compiler's headers; then the
    code rules over the unit preprocessed by the build's own command (-E). A str: the
    preprocessor failed (its output), so the rules could not run: not built."""
    student_files = {str(src / "student" / name): shown for name, shown in own.items()}
    steps = [("-M", build_dir / "student_unit.d"), ("-E", build_dir / "student_unit.i")]
    for mode, output in steps:
        argv = [cmake, "-E", "chdir", str(build_dir),
                *compiled.command_variant(compile_argv, mode, str(output))]
        r = sandbox.run(argv, src, dataclasses.replace(limits, wall_s=limits.wall_s / 2),
                        env, identity, sandboxed=True)
        if not r.ok:
            return (r.stdout + r.stderr) or f"the preprocessor ({mode}): {r.describe_end()}"
        if mode == "-M":
            outside = code_rules.outside_files(
                code_rules.parse_dependencies(output.read_text(errors="replace")), set(student_files),
                (str(src / "harness"), str(src / "emulator"), str(src / "student"),
                 *public_dirs))
            if outside:
                missing = frozenset(d for d in outside if not (build_dir / d).exists())
                return as_violations(code_rules.refuse_outside(outside, sources, missing))
    return compiled.scan_preprocessed(
        (build_dir / "student_unit.i").read_text(errors="replace"), student_files, sources,
        forbidden, contract.include_dirs(src))


def constants(src: Path, build_dir: Path, own: dict[str, str]) -> set[str]:
    """The constants the gate's preprocessed student unit names (code_rules.constant_names)."""
    unit = (build_dir / "student_unit.i").read_text(errors="replace") \
        if (build_dir / "student_unit.i").is_file() else ""
    shown_by_path = {str(src / "student" / name): shown for name, shown in own.items()}
    return code_rules.constant_names(unit, shown_by_path)


def harness_includes(src: Path, build_dir: Path) -> list[Path]:
    """The harness files the student unit includes (the compiler's -M list of the
    gate), else every harness file."""
    deps = build_dir / "student_unit.d"
    harness = (src / "harness").resolve()
    if deps.is_file():
        listed = [Path(code_rules.norm(d if os.path.isabs(d) else str(build_dir / d))) for d in
                  code_rules.parse_dependencies(deps.read_text(errors="replace"))]
        return [p for p in listed if p.is_relative_to(harness)]
    return sorted(p for p in harness.rglob("*") if p.suffix in (".cuh", ".h", ".cu"))


def beside_compile(compile_step: list[str], where: Path, src: Path, env: dict[str, str],
                   identity: sandbox.Identity, limits: sandbox.Limits,
                   run_gate: Callable[[], list[Violation] | str]) -> tuple[list[Violation] | str, sandbox.Running]:
    """The gate (`run_gate`), with the compile started beside it (a grade's critical path is
    a build): where the gate refuses the unit or its preprocessor fails, the compile is ended
    and nothing it made is read. The gate's verdict, and the compile (its output files in
    `where`, not in `src` where the gate's are)."""
    compiling = sandbox.start(compile_step, src, limits, env, identity, interactive=False, output_dir=where)
    try:
        verdict = run_gate()
    except BaseException:
        compiling.finish(timeout=0)
        raise
    if isinstance(verdict, str) or verdict:
        compiling.finish(timeout=0)
    return verdict, compiling
