"""CUDA builds (nvcc), without running them: the reference builds for the GPU, and a
submission's compiler errors come back with the paths the student knows. Skipped
without nvcc."""
from __future__ import annotations

import subprocess
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest

from conftest import REPO, compose, fixture_names, load_fixture, scratch_builder
from grader.machine import detect as machines
from grader.machine.backend import CUDA
from grader.grading.build import BuildResult, Builder, Toolchain
from grader.config.rubric import load_rubric

TASK_OF_FILE = {t.file: t for t in load_rubric(REPO / "data" / "rubric.toml").tasks}


def test_reference_builds_for_cuda(cuda_builder):
    ref = cuda_builder.reference()
    assert ref.ok, ref.errors
    assert ref.binary.name == "scanlab"
    # It runs (77 without a GPU, 0 with one).
    p = subprocess.run([str(ref.binary), "info"], capture_output=True, text=True, timeout=120)
    assert p.returncode in (0, 77), p.stdout + p.stderr


def test_compile_error_paths_for_cuda(cuda_builder, tmp_path):
    files = dict(cuda_builder.reference_files)
    files["scan.cuh"] = (compose("compile_error", tmp_path) / "student" / "scan.cuh").read_bytes()
    result = cuda_builder.build("task 3", files, {}, {"scan.cuh": "alice/scan.cuh"})
    assert not result.ok
    assert "alice/scan.cuh(" in result.errors and "blockPrefixs" in result.errors
    assert str(cuda_builder.workdir) not in result.errors


# ---- the compiled checks on nvcc's objects (issue 32): built here, nothing runs ----------

CUDA_CHECKS = {  # fixture -> (its file, rules it must break: empty for an honest one)
    "honest_device_helper": ("reduce.cuh", set()),          # nvcc's host body calls exit
    "honest_constant_table": ("warp_scan.cuh", set()),      # __constant__: not state
    "honest_anon_constant": ("scan.cuh", set()),
    "honest_shared_atomics": ("reduce.cuh", set()),         # static __shared__: per launch
    "honest_ldcs": ("scan.cuh", set()),
    # Device state: restored before every launch (harness/host/student_state.h), not refused.
    "attack_template_static": ("reduce.cuh", set()),       # a function-scope static
    "memo_reduce": ("reduce.cuh", set()),
    "attack_state_counter": ("reduce.cuh", set()),
    "honest_printf_kernel": ("reduce.cuh", set()),         # printf's format: a $str
    "honest_device_const_table": ("warp_scan.cuh", set()),  # __device__ const: .nv.global.init
    "honest_static_const_local": ("warp_scan.cuh", set()),
    # Issue 45: host code only where it runs, calls by their symbols, placeholders by the
    # compiled calls.
    "honest_host_device_helper": ("reduce.cuh", set()),     # its host body never runs
    "honest_libc_named_helpers": ("reduce.cuh", set()),     # signal, send, stage::exit
    "honest_libc_member_names": ("scan.cuh", set()),
    "honest_disabled_debug_placeholder": ("warp_scan.cuh", set()),
    "honest_dead_placeholder_branch": ("reduce.cuh", set()),
    "honest_baseline_variable": ("scan.cuh", set()),
    "honest_device_assert": ("reduce.cuh", set()),
    "honest_dynamic_shared": ("reduce.cuh", set()),
    "honest_mul24": ("reduce.cuh", set()),
    "honest_warp_masks": ("warp_scan.cuh", set()),
    "fnptr_system": ("scan.cuh", {"symbol-call"}),
    "attack_stream": ("scan.cuh", {"symbol-call"}),
    # A pointer to the launch kept in the program is refused; one nothing uses, which
    # nvcc does not emit, is no call (and the emulator decides the same: both compared below).
    "attack_fnptr_launch": ("scan.cuh", {"symbol-call"}),
    "unused_fnptr_launch": ("scan.cuh", set()),
}
# What the driver restores (the program's .scanlab.device_state): a name each must hold.
DEVICE_STATE = {"attack_template_static": "launches", "memo_reduce": "gMemoInput",
                "attack_state_counter": "gOneBlockLaunches", "honest_printf_kernel": "? $str",
                "honest_device_const_table": "kStepDistance"}
# (honest_static_const_local's kDistance: folded away in its task's own build, nothing to restore.)


@pytest.mark.parametrize("name", sorted(CUDA_CHECKS))
def test_the_compiled_checks_know_nvccs_code(fixture_builds, tmp_path, name):
    file, rules = CUDA_CHECKS[name]
    result = fixture_builds(name, file)
    found = {v.rule for v in result.violations}
    if rules:
        assert rules <= found, [str(v) for v in result.violations]
        assert all(v.file == f"student/{file}" for v in result.violations)
    else:
        assert result.ok and result.binary is not None, result.errors
        assert not result.violations, [str(v) for v in result.violations]
        assert not result.placeholders, result.placeholders
    if name in DEVICE_STATE:
        from grader.grading.checks import object_code
        shown = subprocess.run(["objcopy", "--dump-section",
                                f"{object_code.DEVICE_STATE_SECTION}=/dev/stdout", str(result.binary),
                                str(tmp_path / "copy")], capture_output=True, text=True, check=True).stdout
        assert any(DEVICE_STATE[name] in line for line in shown.splitlines()), shown


@pytest.mark.parametrize("name, file, line", [
    ("attack_placeholder_token", "warp_scan.cuh", 0), ("attack_wrapped_bonus", "lookback_scan.cuh", 0)])
def test_a_placeholder_call_is_read_from_the_ptx(cuda_builder, tmp_path, name, file, line):
    files = dict(cuda_builder.reference_files)
    files[file] = (compose(name, tmp_path) / "student" / file).read_bytes()
    result = cuda_builder.build(name, files, {}, {file: f"alice/{file}"})
    assert result.ok and not result.violations, (result.errors, [str(v) for v in result.violations])
    said = result.placeholders.get(f"alice/{file}", "")
    assert said.startswith(f"alice/{file}:") and "baseline::" in said, result.placeholders


def test_a_kernel_parameter_built_on_the_host_does_not_build(fixture_builds):
    # A constructor from the harness's pointer would run on the host at every launch
    # (it counts launches): launchKernel's assertion stops the build, as on the emulator.
    result = fixture_builds("attack_arg_constructor", "reduce.cuh")
    assert not result.ok and not result.violations
    assert "a kernel's parameter must take the harness's argument as it is" in result.errors
    assert "CountedInput" in result.errors


def test_the_reference_unit_has_no_host_code_of_its_own(cuda_builder, tmp_path):
    # The reference's files as a submission (one byte more, so it is really built): the
    # harness's host code and nvcc's are recognized, nothing is refused.
    files = {n: data + b"\n" for n, data in cuda_builder.reference_files.items()}
    result = cuda_builder.build("reference, rebuilt", files, {}, {})
    assert result.ok and not result.violations, [str(v) for v in result.violations]


def test_each_task_build_has_no_host_code_of_its_own(cuda_builder):
    # What a GPU grade builds: each task with only its own driver tasks compiled
    # (SCANLAB_BUILD_TASKS); the harness's host code of that build is recognized too.
    files = {n: data + b"\n" for n, data in cuda_builder.reference_files.items()}
    for task in load_rubric(REPO / "data" / "rubric.toml").tasks:
        result = cuda_builder.build(f"task {task.number}", files, {}, {}, task.driver_tasks)
        assert result.ok, result.errors
        assert not result.violations, (task.driver_tasks, [str(v) for v in result.violations])


def test_a_task_build_links_its_unit_library_for_the_profile(cuda_builder):
    # The profiling run's object (grader/grading/ncu.py): the task build's compiled unit and
    # the reference unit it links, as one shared object that exports unitEntry alone; the
    # prebuilt harness holds the loader that opens it.
    task = TASK_OF_FILE["scan.cuh"]
    files = {"scan.cuh": cuda_builder.reference_files["scan.cuh"] + b"\n"}
    result = cuda_builder.build("task 3", files, {}, {"scan.cuh": "scan.cuh"}, task.driver_tasks)
    assert result.ok and not result.violations, result.errors
    assert result.unit_library is not None and result.unit_library.is_file()
    nm = subprocess.run(["nm", "-D", "--defined-only", str(result.unit_library)], capture_output=True,
                        text=True, check=True)
    assert [line.split()[-1] for line in nm.stdout.splitlines()] == ["_ZN7scanlab7student9unitEntryEv"]
    loader = cuda_builder.unit_loader()
    assert loader is not None and loader.name == CUDA.unit_loader
    dynamic = subprocess.run(["nm", "-D", "--defined-only", str(loader)], capture_output=True, text=True, check=True)
    assert "scanlab_kernel_launched" in dynamic.stdout   # the units' launches reach its count


# ---- one verdict on both backends (issue 45, item 5) ---------------------------------------
# Every fixture whose verdict rests on the code rules (the honest corpus, the attacks and the
# calls hidden from the text), built here for the GPU (nvcc compiles; nothing runs) and graded
# on the emulator: the rules decide the same for each task file the fixture changes, and the
# same tasks are the placeholder.
CROSS_BACKEND = sorted(n for n in fixture_names()
                       if n.startswith(("honest_", "attack_")) or n in {
                           "macro_fopen", "paren_getenv", "paren_exit", "fnptr_system",
                           "harness_override", "exit_destructor", "forbidden", "unused_fnptr_launch"})
# What the two backends decide apart on purpose: device state (the cubin's `.nv.global`
# on the GPU, host variables on the emulator; being replaced by restoring every writable
# global before each launch, issue 45 item 3) and host code (the CUDA build's: on the
# emulator every kernel is host code).
NOT_COMPARED = {"state", "host-code"}
# Placeholders reached through a pointer held in data (issue 58): the call graph of either
# backend may or may not see them (g++ may devirtualize, nvcc keeps the indirect call);
# the grade decides them as they run, the same on both (the placeholder does no work in a
# grading build: harness/baselines.cuh), so only that is compared.
PLACEHOLDER_IN_DATA = {"attack_placeholder_table", "attack_placeholder_virtual",
                       "attack_placeholder_volatile"}


def _changed_files(builder: Builder, name: str, folder: Path) -> dict[str, bytes]:
    """The fixture's task files that are neither the reference's nor the handout's."""
    changed = {}
    for file in TASK_OF_FILE:
        mine = next(iter(folder.rglob(file)), None)
        handout = REPO / "handout" / "student" / file
        if mine is not None and mine.read_bytes() not in (builder.reference_files.get(file),
                                                          handout.read_bytes() if handout.is_file() else None):
            changed[file] = mine.read_bytes()
    return changed


@pytest.fixture(scope="module")
def fixture_builds(cuda_builder: Builder, tmp_path_factory: pytest.TempPathFactory,
                   request: pytest.FixtureRequest):
    """The GPU build of a fixture's task file as a grade builds it (among the reference's
    files, that task's driver tasks only), by (fixture, file). Every build the selected
    tests of this module need is started at once, as many at a time as the builder
    has jobs (each nvcc is one process: built one test after another, one core idled),
    and the tests of both kinds share each build."""
    tmp = tmp_path_factory.mktemp("fixture-builds")
    folders: dict[str, Path] = {}

    def folder(name: str) -> Path:
        if name not in folders:
            folders[name] = compose(name, tmp / name)
        return folders[name]

    def build(name: str, file: str) -> BuildResult:
        files = dict(cuda_builder.reference_files)
        files[file] = (folder(name) / "student" / file).read_bytes() \
            if (folder(name) / "student" / file).is_file() else next(folder(name).rglob(file)).read_bytes()
        return cuda_builder.build(f"{name} ({file})", files, {}, {file: f"student/{file}"},
                                  TASK_OF_FILE[file].driver_tasks)

    selected = {(item.function.__name__, item.callspec.params["name"]) for item in request.session.items
                if item.module is request.module and hasattr(item, "callspec") and "name" in item.callspec.params}
    wanted = {(n, f) for n, (f, _) in CUDA_CHECKS.items()
              if ("test_the_compiled_checks_know_nvccs_code", n) in selected}
    wanted |= {(n, f) for n in CROSS_BACKEND if ("test_both_backends_give_the_same_rule_verdict", n) in selected
               for f in _changed_files(cuda_builder, n, folder(n))}
    with ThreadPoolExecutor(max_workers=cuda_builder.tools.jobs) as pool:
        list(pool.map(lambda nf: build(*nf), sorted(wanted)))
    return build


@pytest.mark.parametrize("name", CROSS_BACKEND)
def test_both_backends_give_the_same_rule_verdict(cuda_builder, fixture_builds, emulator, tmp_path, name):
    result = emulator(name)
    changed = _changed_files(cuda_builder, name, compose(name, tmp_path))
    compared = 0
    for tr in result.tasks:
        if tr.file not in changed or tr.unchanged:
            continue
        shown = f"student/{tr.file}"
        built = fixture_builds(name, tr.file)
        on_gpu = ({v.rule for v in built.violations} - NOT_COMPARED, shown in built.placeholders)
        on_emulator = ({v.rule for v in tr.violations} - NOT_COMPARED, tr.placeholder)
        if name in PLACEHOLDER_IN_DATA:
            assert tr.placeholder and tr.correctness_points == 0, (name, tr.name, tr.message)
            on_gpu, on_emulator = on_gpu[0], on_emulator[0]
        assert on_gpu == on_emulator, (name, tr.name, [str(v) for v in built.violations],
                                       built.placeholders, [str(v) for v in tr.violations], tr.message)
        # A file that does not build for the GPU among the reference's files does not build
        # in the emulator's grade either (attack_arg_constructor: launchKernel's assertion).
        # (Not the converse: the grade builds it among the student's own files, so a file
        # that borrows another student file's code fails there alone.)
        if not built.ok and not built.violations:
            assert tr.status == "build_failed", (name, tr.name, built.errors[:500], tr.status, tr.message)
        if name.startswith("honest_") or name == "unused_fnptr_launch":
            assert built.ok and not built.placeholders, (name, built.errors, built.placeholders)
        compared += 1
    assert compared > 0 or load_fixture(name).base == "none", name
