// The student's line in every kind of message (issue 42, item 4): faults, divergence and
// deadlocks name the innermost frame in the student's files, then the harness frame inside
// it. Compiled as a student unit is (SCANLAB_EMU_CHECK_FLAGS: its line tables), so this
// file plays the student's, and harness/tile_io.cuh's barriers the harness's helpers.
#include <catch2/catch.hpp>

#include <cstdlib>
#include <string>
#include <vector>

#include "emu_test_util.h"
#include "harness/runtime.cuh"
#include "harness/tasks/launch.cuh"
#include "harness/tile_io.cuh"

using emutest::DeviceArray;
using emutest::ScheduleScope;
using emutest::takeError;
namespace emu = scanlab::emu;

namespace {
std::string at(int line) { return "emulator/test_lines.cpp:" + std::to_string(line); }
// tile_io.cuh's BlockSync and WarpSync: the harness frame named after the student's line.
const std::string kBlockSyncLine = "harness/tile_io.cuh:222";
const std::string kWarpSyncLine = "harness/tile_io.cuh:225";
}  // namespace

constexpr int kNullWriteLine = __LINE__ + 3;
__global__ void nullWriteKernel(int* out) {
    int* p = threadIdx.x == 7 ? nullptr : out;
    p[threadIdx.x] = 1;  // BUG: thread 7 writes through a null pointer
}

// The divisors come from memory, so that the compiler cannot see the zero.
constexpr int kDivideLine = __LINE__ + 3;
__global__ void divideKernel(const int* in, const int* divisors, int* out) {
    const unsigned i = threadIdx.x;
    out[i] = in[i] / divisors[i];  // BUG: divisors[3] is 0
}

constexpr int kAbortLine = __LINE__ + 2;
__global__ void abortKernel() {
    if (threadIdx.x == 9) std::abort();  // as a failed assert() does
}

TEST_CASE("a fault in a kernel names the student's line", "[lines][fault]") {
    DeviceArray<int> out(64);
    int* q = out.ptr;
    cudaError_t code{};
    emu::launch("nullWriteKernel", dim3(1), dim3(32), 0, [=] { nullWriteKernel(q); });
    std::string msg = takeError(&code);
    CHECK(code == cudaErrorIllegalAddress);
    CHECK_THAT(msg, Catch::StartsWith("emulator: kernel nullWriteKernel: illegal memory access in "
                                      "block (0,0,0) by thread (7,0,0)"));
    CHECK_THAT(msg, Catch::EndsWith(", at " + at(kNullWriteLine)));

    std::vector<int> divisors(32, 2);
    divisors[3] = 0;
    DeviceArray<int> in(std::vector<int>(32, 10)), by(divisors);
    const int* p = in.ptr;
    int* d = by.ptr;
    emu::launch("divideKernel", dim3(1), dim3(32), 0, [=] { divideKernel(p, d, q); });
    msg = takeError(&code);
    CHECK(code == cudaErrorLaunchFailure);
    CHECK_THAT(msg, Catch::StartsWith("emulator: kernel divideKernel: arithmetic fault in block "
                                      "(0,0,0) by thread (3,0,0): integer division by zero"));
    CHECK_THAT(msg, Catch::EndsWith(", at " + at(kDivideLine)));

    emu::launch("abortKernel", dim3(1), dim3(32), 0, [] { abortKernel(); });
    msg = takeError(&code);
    CHECK(code == cudaErrorAssert);
    CHECK_THAT(msg, Catch::StartsWith("emulator: kernel abortKernel: abort() in block (0,0,0) by "
                                      "thread (9,0,0)"));
    CHECK_THAT(msg, Catch::EndsWith(", at " + at(kAbortLine)));

    // The emulator goes on after each.
    const int two = 2;
    cudaMemcpy(d + 3, &two, sizeof two, cudaMemcpyHostToDevice);
    emu::launch("divideKernel", dim3(1), dim3(32), 0, [=] { divideKernel(p, d, q); });
    CHECK(takeError().empty());
    CHECK(out.get()[3] == 5);
}

// A harness barrier (tile_io.cuh's BlockSync) inside a loop whose trip count differs
// between threads: the odd threads call it once more, and wait there for threads that
// have finished.
constexpr int kLoopBarrierLine = __LINE__ + 3;
__global__ void loopBarrierKernel() {
    const unsigned trips = 1 + threadIdx.x % 2;  // BUG: a barrier in a divergent loop
    for (unsigned k = 0; k < trips; ++k) scanlab::BlockSync{}();
}

// A harness warp barrier (WarpSync: __syncwarp() of the full warp) that only half the
// lanes of a warp reach.
constexpr int kHalfWarpLine = __LINE__ + 2;
__global__ void halfWarpKernel() {
    if (threadIdx.x < 16) scanlab::WarpSync{}();  // BUG: lanes 16-31 never reach it
}

TEST_CASE("divergence at a harness barrier names the student's line, then the harness's",
          "[lines][divergence]") {
    emu::launch("loopBarrierKernel", dim3(1), dim3(64), 0, [] { loopBarrierKernel(); });
    std::string msg = takeError();
    CHECK_THAT(msg, Catch::StartsWith("emulator: kernel loopBarrierKernel: barrier divergence in "
                                      "block (0,0,0): __syncthreads() at " +
                                      at(kLoopBarrierLine) + " (in " + kBlockSyncLine +
                                      ") reached by 32 of 64 threads"));

    emu::launch("halfWarpKernel", dim3(1), dim3(32), 0, [] { halfWarpKernel(); });
    msg = takeError();
    // Which lane the schedule finds first decides the wording ("mask names lanes which
    // already exited", or "lane 16 exited while lanes wait for it"), not the line.
    CHECK_THAT(msg, Catch::StartsWith("emulator: kernel halfWarpKernel: warp divergence in block "
                                      "(0,0,0), warp 0: "));
    CHECK_THAT(msg, Catch::Contains("__syncwarp at " + at(kHalfWarpLine) + " (in " +
                                    kWarpSyncLine + "): mask 0xffffffff") ||
                        Catch::Contains("wait for it at __syncwarp (" + at(kHalfWarpLine) +
                                        " (in " + kWarpSyncLine + ")) with mask 0xffffffff"));
}

// Threads 0-31 of every block wait for a flag that no thread ever sets; the others end.
constexpr int kSpinLine = __LINE__ + 3;
__global__ void waitForNobodyKernel(int* flag) {
    if (threadIdx.x >= 32) return;
    while (atomicAdd(flag, 0) == 0) {  // BUG: nothing sets the flag
    }
}

TEST_CASE("a spin that no block can end is a deadlock naming where each thread waits",
          "[lines][deadlock]") {
    for (unsigned workers : {1u, 2u}) {
        INFO(workers << " worker(s)");
        ScheduleScope scope(3, workers);
        DeviceArray<int> flag(1);
        int* f = flag.ptr;
        cudaError_t code{};
        emu::launch("waitForNobodyKernel", dim3(workers), dim3(64), 0, [=] { waitForNobodyKernel(f); });
        const std::string msg = takeError(&code);
        CHECK(code == cudaErrorLaunchFailure);
        CHECK_THAT(msg, Catch::StartsWith("emulator: kernel waitForNobodyKernel: deadlock in block ("));
        CHECK_THAT(msg, Catch::Contains("every block of the launch has started"));
        CHECK_THAT(msg, Catch::Matches(".*: threads 0-31 of block \\(([01]),0,0\\) spin at " +
                                       at(kSpinLine) + "; threads 32-63 of block \\(\\1,0,0\\) "
                                       "have finished\\. .*"));
    }
}

// Launched as the harness launches a student's kernel (launchKernel), which tells the
// emulator the arguments: the message names the harness's buffer and says which of the
// kernel's parameters pointed into it (the student's name for it is not known).
constexpr int kPartialsLine = __LINE__ + 4;
__global__ void sumPartialsKernel(const int* values, size_t n, int* d_partials, int parts) {
    const int i = int(threadIdx.x);
    if (i < parts) d_partials[i] = values[i];
    if (i == 0) d_partials[parts + 2] = int(n);  // BUG: 3 past the end of d_partials
}

TEST_CASE("an out-of-bounds access names the harness's buffer and the kernel's parameter",
          "[lines][bounds]") {
    scanlab::DeviceBuffer<int> values(64, "in"), partials(8, "blockResults");
    // The failed launch's message (launchKernel throws it).
    auto launch = [&](const int* in, size_t n) -> std::string {
        try {
            scanlab::launchKernel("sumPartialsKernel", sumPartialsKernel, dim3(1), dim3(32), 0,
                                  in, n, partials.data(), 8);
        } catch (const scanlab::CudaError& e) {
            return e.what();
        }
        return "";
    };
    std::string msg = launch(values.data(), 64);
    CHECK_THAT(msg, Catch::EndsWith("thread (0,0,0) wrote blockResults[10], 3 elements past the "
                                    "end of `blockResults` (n = 8; the harness's name for your "
                                    "kernel's 3rd parameter), at " + at(kPartialsLine)));
    // The same buffer passed twice (a scan in place): both parameters.
    msg = launch(partials.data(), 8);
    CHECK_THAT(msg, Catch::Contains("(n = 8; the harness's name for your kernel's 1st and 3rd "
                                    "parameters)"));
}
