"""The symbol checks that know the toolchain (grader/object_code.py), on an object nvcc
compiles here (nothing CUDA runs): nvcc's own host code (stubs, a __device__ function's
host body that calls exit, the registration) is not the student's; every other host
function is; the launch reached from student code is refused; device state is read from
the cubin, where __constant__ data is not state. Skipped without nvcc."""
from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest

from grader import object_code

UNIT = r"""
#include <cuda_runtime.h>
namespace scanlab {
__device__ int plainHelper(int x) { return 3 * x + 1; }
__constant__ int kTable[4] = {1, 2, 3, 4};
__device__ int gState;
template <class T> __device__ T tmplStatic(T x) { static T s; s += x; return s; }
inline int hostCount = 0;
struct Counted {
    int* p;
    __host__ Counted(int* q) : p(q) { ++hostCount; }
};
__global__ void kernel(int* p) { p[0] = plainHelper(p[1]) + kTable[p[2]] + tmplStatic<int>(p[3]); ++gState; }
__global__ void argKernel(Counted c) { c.p[0] = 1; }
void hostLaunch(int* p) { kernel<<<1, 1>>>(p); }
using Launch = cudaError_t (*)(const void*, dim3, dim3, void**, size_t, cudaStream_t);
Launch grab() { return &cudaLaunchKernel; }
}  // namespace scanlab
"""


@pytest.fixture(scope="module")
def compiled(tmp_path_factory) -> tuple[Path, Path]:
    nvcc = shutil.which("nvcc") or ("/usr/local/cuda/bin/nvcc" if Path("/usr/local/cuda/bin/nvcc").exists() else None)
    if nvcc is None:
        pytest.skip("no nvcc here")
    tmp = tmp_path_factory.mktemp("nvcc")
    (tmp / "unit.cu").write_text(UNIT)
    (tmp / "keep").mkdir()
    subprocess.run([nvcc, "-O3", "-std=c++17", "-arch=sm_90", "-c", "unit.cu", "-o", "unit.o",
                    "--keep", "--keep-dir", "keep"], cwd=tmp, check=True, capture_output=True,
                   timeout=600)
    return tmp / "unit.o", next((tmp / "keep").glob("*.cubin"))


def test_host_code_is_the_toolchains_or_refused(compiled):
    obj, _ = compiled
    found = object_code.check_host_code(object_code.read_functions(obj), cuda=True)
    host = {f.name.split("(")[0] for f in found if f.rule == "host-code"}
    calls = {f.name for f in found if f.rule == "symbol-call"}
    assert {"scanlab::hostLaunch", "scanlab::grab"} <= host, found
    assert not any("plainHelper" in n or "kernel" in n or "stub" in n for n in host), host
    # The launch reached from the student's own host code (a pointer to it) is refused;
    # exit from a __device__ function's host body is not.
    assert "cudaLaunchKernel" in calls and "exit" not in calls, calls


def test_device_state_is_read_from_the_cubin(compiled):
    _, cubin = compiled
    variables = object_code.read_device_variables(cubin)
    state = {f.name for f in object_code.device_state(variables)}
    assert "scanlab::gState" in state
    assert any("tmplStatic" in n for n in state), state      # a function-scope static of a template
    assert not any("kTable" in n for n in state)              # __constant__: not writable there
    assert any("kTable" in v.name and v.section.startswith(".nv.constant") for v in variables)
