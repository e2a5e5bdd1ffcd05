"""The symbol checks that know the toolchain (grader/grading/checks/object_code.py), on an object nvcc
compiles here (nothing CUDA runs): nvcc's own host code (stubs, a __device__ function's
host body that calls exit, the registration) is not the student's; every other host
function is, and is refused where it runs (issue 45: a static initializer, a special
member the launch calls, what they call), not where it never does (a __host__ __device__
helper's host body); the launch reached from student code is refused; the device
variables the driver restores before every launch are read from the cubin (__constant__
data is not among them) and reach the linked program in its own section. Skipped without
nvcc."""
from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest

from conftest import CUDA_CXX_STD, CXX_STD, REPO
from grader.grading.checks import object_code

# Harness files the student unit includes (in a grade: the compiler's -M list).
UNIT_HARNESS = [REPO / "handout" / "harness" / f for f in
                ("generated/task_list.cuh", "runtime.cuh", "host/student_unit.cu")] \
    + sorted((REPO / "handout" / "harness" / "tasks").glob("*.cuh"))

UNIT = r"""
#include <cuda_runtime.h>
#include <cstdio>
namespace scanlab {
__device__ int plainHelper(int x) { return 3 * x + 1; }
__constant__ int kTable[4] = {1, 2, 3, 4};
__device__ int gState;
static __device__ int gHidden;
__device__ const int kDeviceTable[4] = {5, 6, 7, 8};
template <class T> __device__ T tmplStatic(T x) { static T s; s += x; return s; }
__device__ int lookup(int i) { static const int kLocal[4] = {9, 10, 11, 12}; return kLocal[i & 3]; }
__global__ void printing(int* p) { printf("p[0] = %d\\n", p[0]); p[1] = lookup(p[2]) + kDeviceTable[p[3] & 3] + gHidden++; }
inline int hostCount = 0;
struct Counted {
    int* p;
    // (noinline: the call graph is what is tested; an inlined one leaves only what it
    // does, its host state and calls, which the other checks see.)
    __host__ __attribute__((noinline)) Counted(int* q) : p(q) { ++hostCount; }
};
__global__ void kernel(int* p) { p[0] = plainHelper(p[1]) + kTable[p[2]] + tmplStatic<int>(p[3]); ++gState; }
__global__ void argKernel(Counted c) { c.p[0] = 1; }
void hostLaunch(int* p) { kernel<<<1, 1>>>(p); }
using Launch = cudaError_t (*)(const void*, dim3, dim3, void**, size_t, cudaStream_t);
Launch grab() { return &cudaLaunchKernel; }
__host__ __device__ int both(int x) { return x + 1; }        // a kernel calls it
__global__ void bothKernel(int* p) { p[0] = both(p[1]); }
__attribute__((noinline)) int hostInit() { return hostCount + 1; }
__attribute__((noinline)) int hostHelperOfInit() { return hostInit(); }
inline int kAtLoad = hostHelperOfInit();                       // a static initializer
// Named like the harness's launchTask: the harness's code converting a kernel argument.
void launchTask(int* p) { argKernel<<<1, 1>>>(Counted(p)); }
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
    subprocess.run([nvcc, "-O3", CUDA_CXX_STD, "-arch=sm_90", "-c", "unit.cu", "-o", "unit.o",
                    "--keep", "--keep-dir", "keep"], cwd=tmp, check=True, capture_output=True,
                   timeout=600)
    return tmp / "unit.o", next((tmp / "keep").glob("*.cubin"))


def test_host_code_is_the_toolchains_or_refused(compiled):
    obj, _ = compiled
    found = object_code.check_host_code(object_code.read_functions(obj), cuda=True,
                                        harness=object_code.harness_host_functions(UNIT_HARNESS))
    host = {f.name.split("(")[0] for f in found if f.rule == "host-code"}
    calls = {f.name for f in found if f.rule == "symbol-call"}
    # Host code that runs: from the static initializer, and the constructor the launch
    # (here the harness-named launchTask) runs on the kernel argument.
    assert {"scanlab::hostInit", "scanlab::hostHelperOfInit", "scanlab::Counted::Counted"} <= host, found
    # Host code that never runs is not refused: the host body of a __host__ __device__
    # helper that a kernel calls, and host functions nothing calls.
    assert not {"scanlab::both", "scanlab::hostLaunch", "scanlab::grab"} & host, host
    assert not any("plainHelper" in n or "kernel" in n.lower() or "stub" in n for n in host
                   if not n.startswith("_GLOBAL__sub_I")), host   # (g++ names it after a symbol)
    # The launch reached from the student's own host code (a pointer to it, a <<<) is
    # refused; exit from a __device__ function's host body is not.
    assert {"cudaLaunchKernel", "__cudaPushCallConfiguration"} <= calls and "exit" not in calls, calls


def test_the_device_state_to_restore_is_read_from_the_cubin(compiled):
    _, cubin = compiled
    variables = object_code.read_device_variables(cubin)
    names = object_code.device_state_names(variables).splitlines()
    required = [n for n in names if not n.startswith("? ")]
    # __device__ variables, a static one, a function-scope static of a template, const
    # tables at namespace and function scope: restored (mangled, as the driver looks them up).
    assert "_ZN7scanlab6gStateE" in required, names
    assert any(n.endswith("7gHiddenE") for n in required), names
    assert any("tmplStatic" in n for n in required), names
    assert any("kDeviceTable" in n for n in required) and any("kLocal" in n for n in required), names
    # printf's format, a string literal: restored where the driver finds it.
    assert "? $str" in names, names
    # __constant__: device code cannot write it, nothing to restore.
    assert not any("kTable" in n for n in names)
    assert any("kTable" in v.name and v.section.startswith(".nv.constant") for v in variables)


def test_the_device_state_reaches_the_program_in_its_own_section(tmp_path):
    """The grader's objcopy and the driver's reader (harness/host/program_section.h), on a
    host program built here."""
    gxx = shutil.which("g++")
    if gxx is None or shutil.which("objcopy") is None:
        pytest.skip("no g++ or objcopy here")
    (tmp_path / "show.cpp").write_text('#include "harness/host/program_section.h"\n#include <iostream>\n'
                                       'int main() { std::cout << scanlab::programSection('
                                       '".scanlab.device_state"); }\n')
    program = tmp_path / "scanlab"
    subprocess.run([gxx, CXX_STD, "-I", str(REPO / "handout"), "show.cpp", "-o", str(program)],
                   cwd=tmp_path, check=True, timeout=300)
    assert subprocess.run([program], capture_output=True, text=True).stdout == ""   # none yet
    names = "_ZN7scanlab6gStateE\n? $str\n"
    object_code.add_device_state(program, names)
    assert subprocess.run([program], capture_output=True, text=True).stdout == names
    object_code.add_device_state(program, "other\n")                                # replaced
    assert subprocess.run([program], capture_output=True, text=True).stdout == "other\n"


def test_the_harness_host_functions_are_read_from_the_harness():
    names = object_code.harness_host_functions(UNIT_HARNESS)
    # Every plan the unit instantiates, the look-back's launch included (it was missing
    # from a hand-written list and made every fresh submission "host code" on gcc 13).
    assert {"warpScan", "reduce", "scan", "lookbackScan", "launchLookbackScan", "launchKernel",
            "launchTask", "withTask", "splitBlocks"} <= names, names
    # The tasks' plans are members of Plan<T> (harness/tasks/), the dispatch TaskList's.
    assert {"Plan", "TaskList"} <= names, names
    assert "planTiles" in names and "parseArgs" not in names   # the driver's are not the unit's
    assert not any(n.startswith("scanTile") or n.endswith("Kernel") and n != "launchKernel"
                   for n in names), names    # device code is not host code


def test_a_harness_function_kept_apart_by_the_compiler_is_the_harnesss():
    harness = object_code.harness_host_functions(UNIT_HARNESS)
    kept = object_code.Function(
        "void scanlab::launchLookbackScan<scanlab::Add<int>, 12, true>(int const*, unsigned long, int*, "
        "scanlab::Workspace const&)", "_ZN7scanlab18launchLookbackScanINS_3AddIiEELi12ELb1EEEvPKT_mPS3_RKNS_9WorkspaceE",
        ".text", 0, 64, "FUNC", {"__stack_chk_fail", "cudaGetLastError"})
    helper = object_code.Function("scanlab::myHostHelper(int)", "_ZN7scanlab12myHostHelperEi", ".text", 64, 16,
                                  "FUNC", {"__stack_chk_fail"})
    converted = object_code.Function("scanlab::Arg::Arg(int const*)", "_ZN7scanlab3ArgC2EPKi", ".text", 96, 16,
                                     "FUNC", {"scanlab::myHostHelper(int)"})
    kept.refs.add("scanlab::Arg::Arg(int const*)")
    plan = object_code.Function(
        "void scanlab::Plan<scanlab::tasks::Scan>::launch<scanlab::Add<int> >(int const*, unsigned long, "
        "int*, unsigned int, scanlab::Scratch<int> const&)",
        "_ZN7scanlab4PlanINS_5tasks4ScanEE6launchINS_3AddIiEEEEvPKNT_7ElementEmPS8_jRKNS_7ScratchIS8_EE",
        ".text", 80, 16, "FUNC", {"cudaGetLastError"})
    found = object_code.check_host_code([kept, helper, plan, converted], cuda=True, harness=harness)
    # The harness's function runs the student's constructor, which runs the helper.
    assert sorted(f.name for f in found) == ["scanlab::Arg::Arg(int const*)", "scanlab::myHostHelper(int)"], found
    # Nothing of the harness's runs it: the helper never runs on the host.
    kept.refs.discard("scanlab::Arg::Arg(int const*)")
    assert object_code.check_host_code([kept, helper, plan, converted], cuda=True, harness=harness) == []


# ---- what the object holds decides host code and state (issue 58, item 3) ------------------
BEFORE_MAIN = r"""
#include <cstdio>
namespace scanlab {
__attribute__((constructor)) static void printFakeVerdict() { std::printf("{\"score\": 100}\n"); }
__attribute__((destructor)) void afterTheEnd() { std::printf("bye\n"); }
thread_local unsigned hostLaunches = 0;
unsigned bump() { return ++hostLaunches; }
__global__ void kernel(int* p) { p[0] = 1; }
}  // namespace scanlab
"""


@pytest.mark.parametrize("compiler", ["g++", "nvcc"])
def test_init_entries_and_thread_locals_are_read_from_the_object(tmp_path, compiler):
    from grader.grading.checks import compiled as compiled_checks
    from grader.config.rubric import ForbiddenRubric
    tool = shutil.which(compiler) or (f"/usr/local/cuda/bin/{compiler}"
                                      if Path(f"/usr/local/cuda/bin/{compiler}").exists() else None)
    if tool is None:
        pytest.skip(f"no {compiler} here")
    source = BEFORE_MAIN if compiler == "nvcc" else \
        '#include "emulator/cuda_emu.h"\n' + BEFORE_MAIN.replace("__global__ void kernel(int* p) { p[0] = 1; }",
                                                                 "__global__ void kernel(int* p) { __shared__ int tile[4]; "
                                                                 "tile[p[1] & 3] = 1; p[0] = tile[0]; }")
    unit = tmp_path / ("unit.cu" if compiler == "nvcc" else "unit.cpp")
    unit.write_text(source)
    argv = [tool, "-O3", CUDA_CXX_STD if compiler == "nvcc" else CXX_STD, "-c", str(unit),
            "-o", str(tmp_path / "unit.o")]
    argv += ["-arch=sm_90"] if compiler == "nvcc" else [f"-I{REPO / 'handout'}", "-Wno-unknown-pragmas"]
    subprocess.run(argv, cwd=tmp_path, check=True, capture_output=True, timeout=600)
    obj = tmp_path / "unit.o"
    sources = {"alice/scan.cuh": source}
    found = object_code.check_init_entries(obj, frozenset(), sources)
    names = {f.name.split("(")[0] for f in found}
    # The student's constructor and destructor; not nvcc's registration.
    assert names == {"scanlab::printFakeVerdict", "scanlab::afterTheEnd"}, found
    assert all(f.rule == "host-code" for f in found)
    if compiler != "nvcc":
        # The emulator's sanitizer build: GCC's own module constructor and destructor
        # (`_sub_I_00099_1`, `_sub_D_00099_0`) are the compiler's, not the student's.
        subprocess.run([*argv, "-fsanitize=address"], cwd=tmp_path, check=True, capture_output=True,
                       timeout=600)
        assert any(n.startswith("_sub_I_") for _, n in object_code.init_entries(obj))
        again = object_code.check_init_entries(obj, frozenset(), sources)
        assert {f.name.split("(")[0] for f in again} == names, again
    symbols = compiled_checks.read_symbols(obj)
    state = [v for v in compiled_checks.check_symbols(symbols, [], sources, ForbiddenRubric(),
                                                      cuda=compiler == "nvcc") if v.rule == "state"]
    # The thread_local is refused on its line; the emulator's __shared__ tile is not state.
    line = source.split("\n").index("thread_local unsigned hostLaunches = 0;") + 1
    assert any("hostLaunches" in v.message and v.line == line for v in state), state
    assert not any("tile" in v.message for v in state), state


def test_nvccs_thread_local_error_is_the_state_refusal():
    from grader.grading.checks import compiled as compiled_checks
    errors = ("alice/reduce.cuh(12): error: cannot use thread_local specifier for variable "
              "declarations in device code\n")
    found = compiled_checks.device_thread_locals(errors, {"alice/reduce.cuh": "x\n" * 20})
    assert [(v.file, v.line, v.rule) for v in found] == [("alice/reduce.cuh", 12, "state")]
