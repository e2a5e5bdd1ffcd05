"""Applications: the handout's programs (handout/apps: pi, the normal CDF, stream
compaction, radix sort) run on the submission's integration build, each decided by the
TRUSTED reference driver's `verify-app` on the output file, as cases are (check.py).
Reported, with no points: they show a wrong kernel as a wrong pi or table, and name the
task. An application that runs an exercise (data/assignment.toml [[exercise]]) runs on
the integration build plus the student's exercise file; without one it is not run.
"""
from __future__ import annotations

import shutil
import tempfile
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path

from .. import sandbox
from ...config.assignment import default_assignment
from .check import PLACEHOLDER_REACHED, VERIFY_TIMEOUT_S, RunSetup, read_json
from ...results import AppResult

# The lines of the trusted check that are figures, not the verdict.
_VERDICT_PREFIXES = ("check ", "It uses your", "It runs your", "It still fails", "With the harness's",
                     "scanlab verify-app")


@dataclass(frozen=True)
class ExerciseBuild:
    """The build with a student's exercise file: its driver, or why there is none."""
    binary: Path | None
    problem: str
    not_implemented: bool = False     # the exercise is the handout's stub, or not submitted


@dataclass(frozen=True)
class Application:
    name: str
    driver_task: str
    exercise_file: str        # "" when it runs no exercise


def list_applications(reference: Path) -> list[Application]:
    """The applications as the reference driver lists them. Run in a folder of its own:
    the submissions of a batch ask at the same time, and a run's output files live in
    its folder (grader/grading/sandbox.py)."""
    with tempfile.TemporaryDirectory(prefix="scanlab-apps-") as tmp:
        r = sandbox.run([str(reference), "list", "applications"], Path(tmp),
                        sandbox.Limits(wall_s=60), sandbox.base_env(Path(tmp)), sandbox.Identity(),
                        sandboxed=False)
    rows = [line.split() for line in r.stdout.splitlines()]
    return [Application(p[0], p[1], "" if p[2] == "-" else p[2]) for p in rows if len(p) == 3]


def run_applications(setup: RunSetup, binary: Path, n: int,
                     exercises: dict[str, ExerciseBuild] | None = None) -> list[AppResult]:
    """Each application on `binary` (the integration build), or, for one that runs an
    exercise, on the build with the student's exercise file (`exercises`, by file); all at
    once (each takes its GPU or CPU slot, then its CPU slot for the check)."""
    def one(app: Application) -> AppResult | None:
        built = (exercises or {}).get(app.exercise_file)
        if app.exercise_file and built is None:
            return None  # not planned: nothing to run it on
        if built is not None and built.binary is None:
            result = _new_result(setup, app, n)
            result.message = built.problem
            result.status = "not_implemented" if built.not_implemented else "error"
            return result
        return run_application(setup, built.binary if built and built.binary else binary, app, n)

    apps = list_applications(setup.reference)
    with ThreadPoolExecutor(max_workers=max(1, len(apps)), thread_name_prefix="app") as pool:
        return [r for r in pool.map(one, apps) if r is not None]


def not_run(setup: RunSetup, n: int, why: str) -> list[AppResult]:
    """Every application, not run, for `why` (the integration build hung; the time
    budget was spent): said in the reports, nothing started."""
    out = []
    for app in list_applications(setup.reference):
        result = _new_result(setup, app, n)
        result.message = why
        out.append(result)
    return out


def _new_result(setup: RunSetup, app: Application, n: int) -> AppResult:
    task = default_assignment().driver_task(app.driver_task).task
    prefix = setup.backend.seed_prefix(1, setup.emulator_threads)
    exercise = default_assignment().exercise_of_application(app.name)
    return AppResult(app.name, task, app.driver_task, "error", "",
                     reproduce=f"{prefix}{setup.binary_name} app {app.name} --n {n}",
                     exercise=exercise.name if exercise else "",
                     exercise_file=app.exercise_file)


def run_application(setup: RunSetup, binary: Path, app: Application, n: int) -> AppResult:
    name, driver_task = app.name, app.driver_task
    result = _new_result(setup, app, n)
    task = result.task
    where = Path(tempfile.mkdtemp(prefix=f"app-{name}-", dir=setup.workdir))
    try:
        where.chmod(0o711)
        home = sandbox.make_private_dir(where / "sandbox", setup.identity)
        output, said = home / "out.bin", home / "app.json"
        argv = [str(binary), "app", name, "--n", str(n), "--output", str(output), "--json", str(said)]
        limits = sandbox.Limits(wall_s=setup.timeout_s, cpu_s=setup.timeout_s * 2 + 5,
                                memory_mb=setup.memory_mb,
                                memory_kind="as" if setup.backend.address_space_limit else "data",
                                file_mb=max(64, n * 8 // (1 << 20) + 16))
        slot = setup.resources.gpu() if setup.backend.on_gpu else setup.resources.cpu_slot()
        with slot as gpu:
            r = sandbox.run(argv, home, limits, setup.env(home, 1, gpu), setup.identity)
        ended = default_assignment().exit_meaning(r.returncode)
        if ended == "placeholder":
            result.status = "not_implemented"
            result.message = f"runs task {task} ({driver_task}), whose build {PLACEHOLDER_REACHED}"
            return result
        if ended == "not_implemented":
            # Which stub: the program's own word picks one of two messages made here.
            needs = str((read_json(said) or {}).get("needs", ""))
            result.status = "not_implemented"
            result.message = (f"needs the exercise {result.exercise} (student/{result.exercise_file}): "
                              "its TODO stub is still in place"
                              if result.exercise and needs.startswith("the exercise") else
                              f"needs task {task} ({driver_task}): its TODO stub is still in place")
            return result
        if ended not in ("pass", "fail") or not output.is_file():
            result.message = f"the program did not finish: {r.describe_end()}"
            return result
        _verify(setup, result, name, n, output, where)
        return result
    finally:
        shutil.rmtree(where, ignore_errors=True)


def _verify(setup: RunSetup, result: AppResult, name: str, n: int, output: Path, where: Path) -> None:
    vjson = where / "verify-app.json"
    argv = [str(setup.reference), "verify-app", name, "--n", str(n), "--output", str(output),
            "--json", str(vjson)]
    with setup.resources.cpu_slot():
        r = sandbox.run(argv, where, sandbox.Limits(wall_s=VERIFY_TIMEOUT_S), sandbox.base_env(where),
                        sandbox.Identity(), sandboxed=False)
    data = read_json(vjson) or {}
    ended = default_assignment().exit_meaning(r.returncode)
    result.figures = [line.strip() for line in r.stdout.splitlines()
                      if line.startswith("  ") and not line.strip().startswith(_VERDICT_PREFIXES)]
    if ended == "pass" and data.get("status") == "pass":
        result.status, result.message = "pass", ""
    elif ended == "fail" and data.get("status") == "fail":
        # The task at fault is added when the result is assembled (grading/fault.py):
        # it needs every task's own verdict.
        result.status = "fail"
        result.message = data.get("message") or "wrong output"
    else:
        result.message = f"the reference could not check the output: {r.describe_end()}"
