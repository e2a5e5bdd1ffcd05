"""The prebuilt harness (grader/grading/prebuilt.py): a submission's build compiles only its
student unit and links it to the harness built once per machine, with CMake's own
commands replayed. On the emulator backend, so it runs here (the CUDA side builds in
test_build_cuda.py and runs in test_e2e_gpu.py)."""
from __future__ import annotations

import json
import shutil
import subprocess
import time
from pathlib import Path

import pytest

from conftest import REPO, scratch_builder
from grader.config.rubric import ForbiddenRubric
from grader.grading import sandbox
from grader.machine import detect as machines
from grader.machine.backend import CUDA, EMULATOR
from grader.grading.build import Builder, BuildResult, Layout, Toolchain
from grader.grading.prebuilt import KIT_FILE, SRC, Kit
from grader.results import Violation


@pytest.fixture(scope="module")
def builder():
    m = machines.detect(check_boost=True)
    if not m.can_build_emulator:
        pytest.skip("the CPU emulator cannot be built here")
    with scratch_builder(Toolchain(EMULATOR, m.cmake.path, None, "", f"g++ {m.gxx.version}", 2,
                                   "Release")) as made:
        yield made


def test_the_kit_keeps_the_harness_and_cmakes_commands_without_its_folders(builder):
    made = builder.kit()
    assert not isinstance(made, str), made
    kit, folder = made
    # The harness's object and the emulator's library, prebuilt; not the student's.
    assert any(p.endswith("driver_emu.cpp.o") for p in kit.prebuilt)
    assert any(p.endswith("libscanlab_emulator.a") for p in kit.prebuilt)
    assert not any("student_unit" in p for p in kit.prebuilt)
    assert all((folder / "files" / p).is_file() for p in kit.prebuilt)
    # The commands name the build's folders only through placeholders.
    words = " ".join(kit.compile + [w for argv in kit.link for w in argv])
    assert SRC in words and "student_unit_emu.cpp" in words
    saved = json.loads((folder / KIT_FILE).read_text())
    assert "/tmp/" not in json.dumps(saved["compile"]) and builder.workdir.as_posix() not in json.dumps(saved)
    # The folder the student object goes to is made in every build.
    student_object = kit.compile[kit.compile.index("-o") + 1]
    assert str(Path(student_object).parent) in kit.folders
    # The reference unit (grader/contract/reference/), prebuilt: task 2's kernel for the
    # other tasks' builds, and nothing else of the reference visible outside it.
    assert kit.reference and kit.reference in kit.prebuilt
    defined = subprocess.run(["nm", "-C", "--defined-only", "--extern-only", str(folder / "files" / kit.reference)],
                             capture_output=True, text=True).stdout
    assert "scanlab::reduceBlocksKernel<scanlab::Mssp" in defined
    assert "reduceWarp" not in defined and "reduceBlock(" not in defined


def test_a_submission_build_compiles_only_its_student_unit(builder):
    files = dict(builder.reference_files)
    files["reduce.cuh"] = files["reduce.cuh"] + b"\n// a student's own bytes\n"
    result = builder.build("task 2", files, {}, {"reduce.cuh": "alice/reduce.cuh"})
    assert result.ok, result.errors
    build = result.binary.parent
    # No CMake configure ran there; the replayed unit is where the compiled checks look.
    assert not (build / "CMakeCache.txt").exists()
    assert (build / "compile_commands.json").is_file() and (build / "scanlab-emu.objects").is_file()
    r = subprocess.run([str(result.binary), "run", "--task", "reduce", "--n", "5000"],
                       capture_output=True, text=True, timeout=300)
    assert r.returncode == 0 and "check   PASS" in r.stdout, r.stdout + r.stderr


def test_a_task_build_compiles_only_that_tasks_plans(builder):
    # The grader builds task 2 with tasks=("reduce",): its cases run, another task's
    # launch says plainly that it is not in this build (and its kernels are not compiled).
    files = dict(builder.reference_files)
    files["reduce.cuh"] = files["reduce.cuh"] + b"\n// only reduce, please\n"
    only = builder.build("task 2", files, {}, {}, ("reduce",))
    every = builder.build("integration", files, {}, {})
    assert only.ok and every.ok, only.errors + every.errors
    assert not only.violations, [str(v) for v in only.violations]
    assert only.key != every.key  # the same files, two different builds
    r = subprocess.run([str(only.binary), "run", "--task", "reduce", "--n", "5000"],
                       capture_output=True, text=True, timeout=300)
    assert r.returncode == 0 and "check   PASS" in r.stdout, r.stdout + r.stderr
    r = subprocess.run([str(only.binary), "run", "--task", "scan", "--n", "5000"],
                       capture_output=True, text=True, timeout=300)
    assert r.returncode != 0 and "not compiled into this build" in r.stdout + r.stderr
    objects = dict(line.split(" ", 1) for line in
                   (only.binary.parent / "scanlab-emu.objects").read_text().splitlines())
    symbols = subprocess.run(["nm", "-C", objects["student"]], capture_output=True, text=True).stdout
    assert "reduceBlocksKernel" in symbols and "scanBlocksKernel" not in symbols


def _student_object(build_dir: Path) -> Path:
    """The student unit's object as this build's compile command writes it."""
    objects = dict(line.split(" ", 1) for line in (build_dir / "scanlab-emu.objects").read_text().splitlines())
    return Path(objects["student"])


def test_the_compile_runs_beside_the_gate_and_ends_where_the_gate_refuses(builder, monkeypatch):
    # A build's gate (what the unit reads, the code rules) and its compile run at once: a
    # gate that waits for the compile's object sees it made before the gate ends ...
    real_gate = builder._gate
    seen: dict[str, bool] = {}

    def waiting_gate(src, build_dir, *args):
        obj = _student_object(build_dir)
        until = time.monotonic() + 60
        while not obj.is_file() and time.monotonic() < until:
            time.sleep(0.05)
        seen["object made during the gate"] = obj.is_file()
        return real_gate(src, build_dir, *args)

    monkeypatch.setattr(builder, "_gate", waiting_gate)
    files = dict(builder.reference_files)
    files["reduce.cuh"] += b"\n// compiled beside the gate\n"
    result = builder.build("task 2", files, {}, {}, ("reduce",))
    assert seen == {"object made during the gate": True}
    assert result.ok and not result.violations and set(result.steps) >= {"gate", "compile", "checks"}
    # ... and a gate that refuses the unit ends the compile: nothing is built or linked.
    refused: dict[str, Path] = {}

    def refusing_gate(src, build_dir, *args):
        refused["object"], refused["binary"] = _student_object(build_dir), build_dir / builder.tools.backend.binary
        return [Violation("student/reduce.cuh", 1, "a test's rule", "refused by the test", "")]

    monkeypatch.setattr(builder, "_gate", refusing_gate)
    files["reduce.cuh"] += b"\n// refused by the gate\n"
    started = time.monotonic()
    result = builder.build("task 2", files, {}, {}, ("reduce",))
    assert result.binary is None and [v.rule for v in result.violations] == ["a test's rule"]
    time.sleep(max(0.0, 3.0 - (time.monotonic() - started)))  # the compile alone takes longer
    assert not refused["object"].exists()
    assert not refused["binary"].exists()


def test_a_compile_error_in_a_replayed_build_names_the_students_file(builder):
    files = dict(builder.reference_files)
    files["scan.cuh"] = files["scan.cuh"] + b"\nint notAValue = ;\n"
    result = builder.build("task 3", files, {}, {"scan.cuh": "bob/scan.cuh"})
    assert not result.ok
    assert "bob/scan.cuh" in result.errors and "error" in result.errors
    assert str(builder.workdir) not in result.errors


def test_an_unreadable_kit_is_made_again(builder, tmp_path):
    made = builder.kit()
    assert not isinstance(made, str), made
    copy = tmp_path / "kit"
    shutil.copytree(made[1], copy)
    assert Kit.load(copy) == made[0]
    (copy / KIT_FILE).write_text('{"binary": "scanlab-emu"}')   # an older format
    assert Kit.load(copy) is None
    (copy / KIT_FILE).unlink()
    assert Kit.load(copy) is None


def test_a_task_build_has_its_file_alone_and_the_reference_unit(builder):
    # Task 3 as the grader builds it (grader/contract/): scan.cuh alone; its plan's phase 1,
    # reduceBlocksKernel, comes from the reference unit linked apart, and it runs.
    scan = builder.reference_files["scan.cuh"] + b"\n// task 3 alone\n"
    result = builder.build("task 3", {"scan.cuh": scan}, {}, {}, ("scan", "scan-exclusive"))
    assert result.ok and not result.violations, (result.errors, [str(v) for v in result.violations])
    r = subprocess.run([str(result.binary), "run", "--task", "scan", "--op", "mssp", "--n", "70000"],
                       capture_output=True, text=True, timeout=300)
    assert r.returncode == 0 and "check   PASS" in r.stdout, r.stdout + r.stderr
    objects = dict(line.split(" ", 1) for line in
                   (result.binary.parent / "scanlab-emu.objects").read_text().splitlines())
    own = subprocess.run(["nm", "-C", "--defined-only", objects["student"]], capture_output=True,
                         text=True).stdout
    assert "scanBlocksKernel" in own and "reduceBlocksKernel" not in own


def test_a_reference_built_now_is_named_as_a_cached_one(emu_session):
    """The reference's key names the caches of its baselines and Nsight Compute figures
    (Session._prepare_backend). A reference built in this run had none: `prepare` timed and
    profiled into `baselines-.json`, and every grade on that GPU did it all again (8 s)."""
    builder = emu_session.builder
    ref = builder.reference()
    assert ref.key and ref.key == builder.key(builder.reference_files)


@pytest.mark.parametrize("backend, builds", [(EMULATOR, 1), (CUDA, 2)])
def test_the_reference_and_the_kit_are_one_cmake_build_without_a_cub_baseline(backend, builds, tmp_path):
    # On the emulator (no CUB baseline) the reference's CMake build and the prebuilt
    # harness's are the same build: made once, both taken from it. On a GPU the
    # reference's has CUB's baseline and the harness's not: two. (The builds are
    # stood in for: what is counted is how many CMake builds are asked for.)
    asked: list[bool] = []
    work = tmp_path / "work"
    work.mkdir()
    builder = Builder(Layout(REPO), Toolchain(backend, "cmake", "nvcc" if backend is CUDA else None,
                                              "90" if backend is CUDA else ""),
                      tmp_path / "cache", work, sandbox.sandbox_identity(), 60, 1024, ForbiddenRubric())

    def cmake_build(label, files, student_paths, trusted, kit=None, cub=False, tasks=()):
        assert trusted and kit is None and files == builder.reference_files
        asked.append(cub)
        return BuildResult(label, False, errors="stood in for")

    setattr(builder, "_compile", cmake_build)
    assert not builder.reference().ok and isinstance(builder.kit(), str)
    assert sorted(asked) == ([False] if builds == 1 else [False, True])
    # Each says what it is when the build fails.
    assert "REFERENCE does not build" in builder.reference().errors
    assert "prebuilt harness does not build" in builder.kit()
