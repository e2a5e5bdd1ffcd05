"""CUDA builds (nvcc), without running them: the reference builds for the GPU, and a
submission's compiler errors come back with the paths the student knows. Skipped
without nvcc."""
from __future__ import annotations

import subprocess

import pytest

from conftest import compose, scratch_builder
from grader import machine as machines
from grader.build import Toolchain


@pytest.fixture(scope="module")
def cuda_builder():
    m = machines.detect(check_boost=False)
    if not m.can_build_cuda:
        pytest.skip("no CUDA toolchain (nvcc, cmake, g++) here")
    with scratch_builder(Toolchain("cuda", m.cmake.path, m.nvcc.path, "90", f"nvcc {m.nvcc.version}",
                                   2, "Release")) as builder:
        yield builder


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
