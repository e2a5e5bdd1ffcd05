// Emulator tests: the bugs the emulator exists to expose. Each kernel here is wrong
// in a way a GPU since Volta may or may not show; the emulator must show it
// (a wrong result under its random schedule, or an error naming the kernel, block
// and source line).
#include <catch2/catch.hpp>

#include <numeric>
#include <regex>
#include <string>
#include <vector>

#include "emu_test_util.h"
#include "harness/warp.cuh"

using emutest::DeviceArray;
using emutest::ScheduleScope;
using emutest::takeError;
namespace emu = scanlab::emu;

namespace {
std::string at(int line) { return "emulator/test_diagnostics.cpp:" + std::to_string(line); }

std::vector<int> inclusiveScanPerGroup(const std::vector<int>& in, size_t group) {
    std::vector<int> out(in.size());
    for (size_t i = 0; i < in.size(); ++i) out[i] = (i % group == 0 ? 0 : out[i - 1]) + in[i];
    return out;
}

std::vector<int> testInput(size_t n) {
    std::vector<int> in(n);
    for (size_t i = 0; i < n; ++i) in[i] = int((i * 2654435761u) % 19) - 9;
    return in;
}
}  // namespace

// ---------------------------------------------------------------------------------
// (a) The lockstep warp scan of the pre-Volta textbooks: no __syncwarp, volatile
// shared memory, lanes assumed to run in lockstep.

__device__ int warpScanLockstep(volatile int* sh, unsigned idx) {
    const unsigned lane = idx & 31;
    if (lane >= 1) sh[idx] = sh[idx - 1] + sh[idx];
    if (lane >= 2) sh[idx] = sh[idx - 2] + sh[idx];
    if (lane >= 4) sh[idx] = sh[idx - 4] + sh[idx];
    if (lane >= 8) sh[idx] = sh[idx - 8] + sh[idx];
    if (lane >= 16) sh[idx] = sh[idx - 16] + sh[idx];
    return sh[idx];
}

// The same steps with the reads and the writes separated by __syncwarp.
__device__ int warpScanSynced(volatile int* sh, unsigned idx) {
    const unsigned lane = idx & 31;
    for (unsigned h = 1; h < 32; h <<= 1) {
        const int left = lane >= h ? sh[idx - h] : 0;
        __syncwarp();
        sh[idx] = left + sh[idx];
        __syncwarp();
    }
    return sh[idx];
}

template <bool kSynced>
__global__ void warpScanKernel(const int* in, int* out) {
    int* sh = static_cast<int*>(emu::dynamicSharedMemory());
    const unsigned i = blockIdx.x * blockDim.x + threadIdx.x;
    sh[threadIdx.x] = in[i];
    __syncwarp();
    out[i] = kSynced ? warpScanSynced(sh, threadIdx.x) : warpScanLockstep(sh, threadIdx.x);
}

template <bool kSynced>
std::vector<int> runWarpScan(const std::vector<int>& in) {
    DeviceArray<int> din(in), dout(in.size());
    const int* pi = din.ptr;
    int* po = dout.ptr;
    emu::launch("warpScanKernel", dim3(unsigned(in.size() / 128)), dim3(128), 128 * sizeof(int),
                [=] { warpScanKernel<kSynced>(pi, po); });
    REQUIRE(takeError().empty());
    return dout.get();
}

TEST_CASE("(a) a lockstep warp scan without __syncwarp gives wrong results", "[diagnose][lockstep]") {
    const auto in = testInput(128 * 8);
    const auto expect = inclusiveScanPerGroup(in, 32);
    for (uint64_t seed : {1u, 2u, 3u}) {
        INFO("seed " << seed);
        std::vector<int> a, b;
        {
            ScheduleScope scope(seed);
            a = runWarpScan<false>(in);
        }
        {
            ScheduleScope scope(seed);
            b = runWarpScan<false>(in);
        }
        CHECK(a != expect);  // the race shows...
        CHECK(a == b);       // ...and the same seed shows it the same way
        // The fixed version passes under the same schedules.
        ScheduleScope scope(seed);
        CHECK(runWarpScan<true>(in) == expect);
    }
}

// ---------------------------------------------------------------------------------
// (b) A block-wide Hillis-Steele scan that is missing the __syncthreads between
// reading the neighbour and writing its own slot.

template <bool kComplete>
__global__ void blockScanKernel(const int* in, int* out) {
    __shared__ int sh[256];
    const unsigned t = threadIdx.x;
    sh[t] = in[blockIdx.x * 256 + t];
    __syncthreads();
    for (unsigned h = 1; h < 256; h <<= 1) {
        const int left = t >= h ? sh[t - h] : 0;
        if (kComplete) __syncthreads();  // everyone has read before anyone writes
        sh[t] += left;
        __syncthreads();
    }
    out[blockIdx.x * 256 + t] = sh[t];
}

template <bool kComplete>
std::vector<int> runBlockScan(const std::vector<int>& in) {
    DeviceArray<int> din(in), dout(in.size());
    const int* pi = din.ptr;
    int* po = dout.ptr;
    emu::launch("blockScanKernel", dim3(unsigned(in.size() / 256)), dim3(256), 0,
                [=] { blockScanKernel<kComplete>(pi, po); });
    REQUIRE(takeError().empty());
    return dout.get();
}

TEST_CASE("(b) a block scan missing one __syncthreads is caught", "[diagnose][barrier]") {
    const auto in = testInput(256 * 16);
    const auto expect = inclusiveScanPerGroup(in, 256);
    for (uint64_t seed : {1u, 7u, 12345u}) {
        INFO("seed " << seed);
        ScheduleScope scope(seed, 2);
        CHECK(runBlockScan<false>(in) != expect);
        CHECK(runBlockScan<true>(in) == expect);
    }
}

// ---------------------------------------------------------------------------------
// (c) __syncthreads inside a branch that only some threads take.

constexpr int kBranchBarrierLine = __LINE__ + 4;
__global__ void branchBarrierKernel(int* out) {
    const unsigned t = threadIdx.x;
    if (t < 128) {
        __syncthreads();
        out[t] = 1;
    }
}

TEST_CASE("(c) __syncthreads in a branch some threads skip is barrier divergence",
          "[diagnose][barrier]") {
    DeviceArray<int> out(256);
    int* p = out.ptr;
    emu::launch("branchBarrierKernel", dim3(4), dim3(256), 0, [=] { branchBarrierKernel(p); });
    // Like an asynchronous kernel fault: pending until cudaGetLastError clears it.
    CHECK(cudaDeviceSynchronize() == cudaErrorLaunchFailure);
    cudaError_t code{};
    const std::string msg = takeError(&code);
    CHECK(code == cudaErrorLaunchFailure);
    // Blocks start in a random order: any of the four may be the one reported.
    CHECK_THAT(msg, Catch::StartsWith("emulator: kernel branchBarrierKernel: barrier divergence "
                                      "in block ("));
    CHECK_THAT(msg, Catch::Contains(",0,0): __syncthreads() at " + at(kBranchBarrierLine) +
                                    " reached by 128 of 256 threads; the other 128 exited"));
    CHECK(cudaDeviceSynchronize() == cudaSuccess);

    // The emulator goes on working after a failed kernel.
    DeviceArray<int> ok(1);
    int* q = ok.ptr;
    emu::launch("tiny", dim3(1), dim3(32), 0, [=] {
        if (threadIdx.x == 0) *q = 5;
    });
    CHECK(takeError().empty());
    CHECK(ok.get()[0] == 5);
}

constexpr int kTwoBarriersLine = __LINE__ + 4;
__global__ void twoBarriersKernel() {
    const unsigned t = threadIdx.x;
    if (t % 64 < 32) {
        __syncthreads();
    } else {
        __syncthreads();
    }
}

TEST_CASE("threads at different __syncthreads calls are barrier divergence", "[diagnose][barrier]") {
    emu::launch("twoBarriersKernel", dim3(1), dim3(128), 0, [] { twoBarriersKernel(); });
    const std::string msg = takeError();
    CHECK_THAT(msg, Catch::Contains("kernel twoBarriersKernel: barrier divergence in block (0,0,0)"));
    CHECK_THAT(msg, Catch::Contains("threads wait at different __syncthreads() calls"));
    CHECK_THAT(msg, Catch::Contains("64 at " + at(kTwoBarriersLine)));
    CHECK_THAT(msg, Catch::Contains("64 at " + at(kTwoBarriersLine + 2)));
}

__global__ void earlyReturnKernel(const int* in, int* out, int n) {
    const int i = int(blockIdx.x * blockDim.x + threadIdx.x);
    if (i >= n) return;  // the last block has idle threads that leave
    __shared__ int sh[128];
    sh[threadIdx.x] = in[i];
    __syncthreads();
    out[i] = sh[threadIdx.x ^ 1];
}

TEST_CASE("returning early before a __syncthreads is reported for the block it happens in",
          "[diagnose][barrier]") {
    DeviceArray<int> in(300), out(300);
    const int* pi = in.ptr;
    int* po = out.ptr;
    emu::launch("earlyReturnKernel", dim3(3), dim3(128), 0, [=] { earlyReturnKernel(pi, po, 300); });
    const std::string msg = takeError();
    CHECK_THAT(msg, Catch::Contains("barrier divergence in block (2,0,0)"));
    CHECK_THAT(msg, Catch::Contains("reached by 44 of 128 threads; the other 84 exited"));
}

// ---------------------------------------------------------------------------------
// Warp operations with bad masks.

constexpr int kBadMaskLine = __LINE__ + 3;
__global__ void badMaskKernel(int* out) {
    const int v = int(threadIdx.x);
    out[threadIdx.x] = __shfl_sync(0x0000ffffu, v, 0);  // lanes 16..31 call it too
}

TEST_CASE("a shuffle whose mask leaves out a calling lane is reported", "[diagnose][warp]") {
    DeviceArray<int> out(32);
    int* p = out.ptr;
    emu::launch("badMaskKernel", dim3(1), dim3(32), 0, [=] { badMaskKernel(p); });
    cudaError_t code{};
    const std::string msg = takeError(&code);
    CHECK(code == cudaErrorLaunchFailure);
    CHECK_THAT(msg, Catch::StartsWith("emulator: kernel badMaskKernel: bad warp mask in block "
                                      "(0,0,0), warp 0: __shfl_sync at " +
                                      at(kBadMaskLine) + ": mask 0x0000ffff leaves out "
                                                         "participating lane "));
    CHECK(std::regex_search(msg, std::regex("participating lane (1[6-9]|2[0-9]|3[01]) ")));
}

// A student's call of a harness helper (harness/warp.cuh) with a bad mask: the message
// names the student's line first, then the helper's (issue 42).
constexpr int kHelperCallLine = __LINE__ + 3;
__global__ void helperBadMaskKernel(int* out) {
    const int v = int(threadIdx.x);
    out[threadIdx.x] = scanlab::shuffleUp(v, 1, 0x0000ffffu);  // lanes 16..31 call it too
}

TEST_CASE("a bad mask passed to a harness helper names the student's line, then the helper's",
          "[diagnose][warp]") {
    DeviceArray<int> out(32);
    int* p = out.ptr;
    emu::launch("helperBadMaskKernel", dim3(1), dim3(32), 0, [=] { helperBadMaskKernel(p); });
    const std::string msg = takeError();
    CHECK_THAT(msg, Catch::Contains("bad warp mask"));
    CHECK(std::regex_search(msg, std::regex("__shfl_up_sync at " + at(kHelperCallLine) +
                                            " \\(in harness/warp\\.cuh:[0-9]+\\): mask 0x0000ffff")));
}

__global__ void sourceOutsideMaskKernel(int* out) {
    const unsigned lane = threadIdx.x % 32;
    if (lane < 16) {
        out[lane] = __shfl_down_sync(0x0000ffffu, int(lane), 8);  // lane 8 reads lane 16
    }
}

TEST_CASE("a shuffle that reads a lane outside its mask is reported", "[diagnose][warp]") {
    DeviceArray<int> out(32);
    int* p = out.ptr;
    emu::launch("sourceOutsideMaskKernel", dim3(1), dim3(32), 0, [=] { sourceOutsideMaskKernel(p); });
    const std::string msg = takeError();
    CHECK_THAT(msg, Catch::Contains("bad shuffle"));
    CHECK(std::regex_search(msg, std::regex("lane (8|9|1[0-5]) \\(thread \\([0-9]+,0,0\\)\\) reads "
                                            "lane (1[6-9]|2[0-3]), which is outside mask "
                                            "0x0000ffff")));
}

__global__ void mismatchedMasksKernel() {
    const unsigned lane = threadIdx.x % 32;
    __syncwarp(lane == 0 ? 0x00000003u : 0xffffffffu);
}

TEST_CASE("lanes that pass different masks to one warp operation are reported", "[diagnose][warp]") {
    emu::launch("mismatchedMasksKernel", dim3(1), dim3(32), 0, [] { mismatchedMasksKernel(); });
    const std::string msg = takeError();
    CHECK_THAT(msg, Catch::Contains("kernel mismatchedMasksKernel"));
    CHECK(std::regex_search(msg, std::regex("different masks|deadlock")));
}

__global__ void exitedLaneKernel() {
    if (threadIdx.x % 32 >= 16) return;
    __syncwarp();  // the full mask names the 16 lanes that left
}

TEST_CASE("a warp operation waiting for a lane that exited is reported", "[diagnose][warp]") {
    for (uint64_t seed : {1u, 2u, 3u, 4u}) {  // exits before or after the others arrive
        ScheduleScope scope(seed);
        emu::launch("exitedLaneKernel", dim3(1), dim3(64), 0, [] { exitedLaneKernel(); });
        const std::string msg = takeError();
        CHECK_THAT(msg, Catch::Contains("kernel exitedLaneKernel: warp divergence in block (0,0,0)"));
        CHECK_THAT(msg, Catch::Contains("exited"));
        CHECK_THAT(msg, Catch::Contains("__syncwarp"));
    }
}

__global__ void deadlockKernel() {
    if (threadIdx.x == 0) {
        __syncthreads();
    } else if (threadIdx.x < 32) {
        __syncwarp();  // waits for lane 0, which waits at __syncthreads
    } else {
        __syncthreads();
    }
}

TEST_CASE("a deadlock between __syncwarp and __syncthreads is reported", "[diagnose][warp]") {
    emu::launch("deadlockKernel", dim3(1), dim3(64), 0, [] { deadlockKernel(); });
    const std::string msg = takeError();
    CHECK_THAT(msg, Catch::StartsWith("emulator: kernel deadlockKernel: deadlock in block (0,0,0)"));
    CHECK_THAT(msg, Catch::Contains("31 thread(s) wait at __syncwarp"));
    CHECK_THAT(msg, Catch::Contains("waits for lane 0 (thread (0,0,0)), which waits at "
                                    "__syncthreads()"));
}

// Every block but the last waits for a flag that only the last block sets: fine on a
// GPU only as long as the last block happens to get a slot.
__global__ void waitForLastBlockKernel(int* flag) {
    if (blockIdx.x == gridDim.x - 1) {
        if (threadIdx.x == 0) atomicExch(flag, 1);
        return;
    }
    while (atomicAdd(flag, 0) == 0) {
    }
}

// Block b waits for block b-1, whose id comes from an atomic counter: a block only
// ever waits for one that has started, so it always ends (the look-back pattern).
__global__ void chainedTicketKernel(unsigned* ticket, int* done) {
    __shared__ unsigned tile;
    if (threadIdx.x == 0) tile = atomicAdd(ticket, 1u);
    __syncthreads();
    if (tile > 0) {
        while (atomicAdd(&done[tile - 1], 0) == 0) {
        }
    }
    __syncthreads();
    if (threadIdx.x == 0) atomicExch(&done[tile], 1);
}

TEST_CASE("a block waiting for one of its launch that cannot start is a deadlock between blocks",
          "[diagnose][blocks]") {
    for (unsigned workers : {1u, 2u}) {
        INFO(workers << " worker(s)");
        ScheduleScope scope(5, workers);
        DeviceArray<int> flag(1);
        int* f = flag.ptr;
        const unsigned blocks = 8;
        emu::launch("waitForLastBlockKernel", dim3(blocks), dim3(64), 0,
                    [=] { waitForLastBlockKernel(f); });
        cudaError_t code{};
        const std::string msg = takeError(&code);
        if (msg.empty()) {
            // The last block happened to start among the first: nothing to find.
            CHECK(flag.get()[0] == 1);
            continue;
        }
        CHECK(code == cudaErrorLaunchFailure);
        CHECK_THAT(msg, Catch::StartsWith("emulator: kernel waitForLastBlockKernel: deadlock "
                                          "between blocks in block ("));
        CHECK_THAT(msg, Catch::Contains("(7,0,0)"));    // the block that cannot start
        CHECK_THAT(msg, Catch::Contains("have not started"));
        CHECK_THAT(msg, Catch::Contains(std::to_string(workers) + " run at once here"));
    }
    // Some seed must put the last block late (with 8 blocks, most seeds do).
    bool found = false;
    for (uint64_t seed = 1; seed <= 6 && !found; ++seed) {
        ScheduleScope scope(seed, 1);
        DeviceArray<int> flag(1);
        int* f = flag.ptr;
        emu::launch("waitForLastBlockKernel", dim3(8), dim3(32), 0, [=] { waitForLastBlockKernel(f); });
        found = takeError().find("deadlock between blocks") != std::string::npos;
    }
    CHECK(found);
}

// The same wait, with a volatile read and __nanosleep (as a look-back spins): no atomic,
// no fence, so only the sleep lets the emulator see the spin.
__global__ void sleepForLastBlockKernel(int* flag) {
    if (blockIdx.x == gridDim.x - 1) {
        if (threadIdx.x == 0) atomicExch(flag, 1);
        return;
    }
    while (*static_cast<volatile int*>(flag) == 0) __nanosleep(100);
}

TEST_CASE("a spin on __nanosleep alone is seen: a deadlock between blocks, not a hang",
          "[diagnose][blocks]") {
    bool found = false;
    for (uint64_t seed = 1; seed <= 6 && !found; ++seed) {
        ScheduleScope scope(seed, 1);
        DeviceArray<int> flag(1);
        int* f = flag.ptr;
        emu::launch("sleepForLastBlockKernel", dim3(8), dim3(32), 0, [=] { sleepForLastBlockKernel(f); });
        const std::string msg = takeError();
        if (msg.empty()) {
            CHECK(flag.get()[0] == 1);  // the last block started first: the others saw its flag
            continue;
        }
        CHECK_THAT(msg, Catch::Contains("deadlock between blocks"));
        CHECK_THAT(msg, Catch::Contains("__nanosleep"));
        found = true;
    }
    CHECK(found);
}

TEST_CASE("blocks that wait only for blocks that started (tickets) are no deadlock", "[blocks]") {
    for (unsigned workers : {1u, 3u}) {
        ScheduleScope scope(9, workers);
        const unsigned blocks = 12;
        DeviceArray<unsigned> ticket(1);
        DeviceArray<int> done(blocks);
        unsigned* t = ticket.ptr;
        int* d = done.ptr;
        emu::launch("chainedTicketKernel", dim3(blocks), dim3(64), 0, [=] { chainedTicketKernel(t, d); });
        CHECK(takeError().empty());
        CHECK(done.get() == std::vector<int>(blocks, 1));
    }
}

// ---------------------------------------------------------------------------------
// Launch configuration, faults, exceptions.

TEST_CASE("bad launch configurations are rejected with a reason", "[diagnose][launch]") {
    cudaError_t code{};
    emu::launch("k", dim3(1), dim3(1025), 0, [] {});
    CHECK_THAT(takeError(&code), Catch::Contains("invalid block size (1025,1,1)"));
    CHECK(code == cudaErrorInvalidConfiguration);
    emu::launch("k", dim3(1), dim3(0), 0, [] {});
    CHECK(takeError(&code).find("invalid block size") != std::string::npos);
    emu::launch("k", dim3(0), dim3(32), 0, [] {});
    CHECK_THAT(takeError(&code), Catch::Contains("invalid grid size (0,1,1)"));
    CHECK(code == cudaErrorInvalidConfiguration);
    emu::launch("k", dim3(1), dim3(32), 48 * 1024 + 1, [] {});
    CHECK_THAT(takeError(&code), Catch::Contains("asks for 49153 bytes of dynamic shared memory"));
    CHECK(code == cudaErrorInvalidValue);
}

__global__ void sharedOverrunKernel(unsigned words) {
    unsigned* sh = static_cast<unsigned*>(emu::dynamicSharedMemory());
    sh[threadIdx.x] = 1;  // threads >= words write past the end
    (void)words;
}

__global__ void nullWriteKernel(int* p) {
    if (threadIdx.x == 5) p[threadIdx.x] = 1;
}

TEST_CASE("out-of-bounds accesses in kernels become cudaErrorIllegalAddress",
          "[diagnose][memory]") {
    cudaError_t code{};
    emu::launch("sharedOverrunKernel", dim3(2), dim3(128), 64 * sizeof(unsigned),
                [] { sharedOverrunKernel(64); });
    std::string msg = takeError(&code);
    CHECK(code == cudaErrorIllegalAddress);
    // (Blocks start in a random order: either block may be the one reported.)
    CHECK_THAT(msg, Catch::Contains("kernel sharedOverrunKernel: out-of-bounds access to dynamic "
                                    "shared memory in block ("));
    CHECK_THAT(msg, Catch::Contains("of a 256-byte allocation"));

    int* null = nullptr;
    emu::launch("nullWriteKernel", dim3(1), dim3(32), 0, [=] { nullWriteKernel(null); });
    msg = takeError(&code);
    CHECK(code == cudaErrorIllegalAddress);
    CHECK_THAT(msg, Catch::Contains("illegal memory access in block (0,0,0) by thread (5,0,0)"));

    // And the emulator still works.
    DeviceArray<int> ok(32);
    int* q = ok.ptr;
    emu::launch("nullWriteKernel", dim3(1), dim3(32), 0, [=] { nullWriteKernel(q); });
    CHECK(takeError().empty());
    CHECK(ok.get()[5] == 1);
}

__global__ void storeAtKernel(int* p, long long index) {
    if (blockIdx.x == 0 && threadIdx.x == 0) p[index] = 7;
}

__global__ void storeRangeKernel(int* p, int from, int count) {
    if (blockIdx.x == 0 && threadIdx.x == 0)
        for (int k = from; k < from + count; ++k) p[k] = k;
}

// This file is not instrumented (as the harness's kernels are not): its writes are found
// in the guard zones after the launch (the student's are stopped as they happen:
// test_bounds.cpp).
TEST_CASE("writes past the end or before the start of an allocation name the element",
          "[diagnose][memory]") {
    cudaError_t code{};
    DeviceArray<int> out(1000);
    emu::nameAllocation(out.ptr, "out", sizeof(int));
    int* p = out.ptr;
    auto store = [&](long long index) {
        emu::launch("storeAtKernel", dim3(2), dim3(32), 0, [=] { storeAtKernel(p, index); });
        return takeError(&code);
    };
    CHECK(store(999).empty());  // the last element is fine
    std::string msg = store(1000);
    CHECK(code == cudaErrorIllegalAddress);
    CHECK(msg == "emulator: kernel storeAtKernel wrote out[1000], one past the end of `out` "
                 "(n = 1000; the harness's name)");
    // The guard was restored: the next launch is clean.
    CHECK(store(0).empty());
    CHECK_THAT(store(1031), Catch::Contains("wrote out[1031], 32 elements past the end of `out`"));
    CHECK_THAT(store(-1), Catch::Contains("wrote out[-1], one before the start of `out`"));
    // An overrun of 24 elements is named as such, not by its first element alone.
    emu::launch("storeRangeKernel", dim3(1), dim3(32), 0, [=] { storeRangeKernel(p, 990, 34); });
    CHECK(takeError(&code) == "emulator: kernel storeRangeKernel wrote out[1000] to out[1023], "
                              "1 to 24 elements past the end of `out` (n = 1000; the harness's "
                              "name)");
    // Beyond the 16 KiB guard zone (out[5096] on): the inaccessible reach after it
    // faults, and the element is named.
    msg = store(5500);
    CHECK(code == cudaErrorIllegalAddress);
    CHECK_THAT(msg, Catch::Contains("illegal memory access in block (0,0,0) by thread (0,0,0): "
                                    "out[5500], 4501 elements past the end of `out`"));
    CHECK(store(5).empty());
    CHECK(out.get()[5] == 7);

    // An allocation nobody named: the byte offset.
    DeviceArray<int> anon(10);
    int* q = anon.ptr;
    emu::launch("storeAtKernel", dim3(1), dim3(32), 0, [=] { storeAtKernel(q, 10); });
    CHECK_THAT(takeError(&code), Catch::Contains("wrote byte 40 of a 40-byte device allocation, "
                                                 "1 byte past its end"));
}

__global__ void throwingKernel() {
    if (threadIdx.x == 3) throw std::runtime_error("boom");
    __syncthreads();
}

constexpr int kTrapLine = __LINE__ + 2;
__global__ void trapKernel() {
    if (blockIdx.x == 1 && threadIdx.x == 7) __trap();
}

TEST_CASE("exceptions and __trap() fail the launch", "[diagnose][launch]") {
    emu::launch("throwingKernel", dim3(1), dim3(32), 0, [] { throwingKernel(); });
    CHECK_THAT(takeError(), Catch::Contains("thread (3,0,0) threw an exception: boom"));
    emu::launch("trapKernel", dim3(2), dim3(32), 0, [] { trapKernel(); });
    CHECK_THAT(takeError(), Catch::Contains("trap in block (1,0,0): thread (7,0,0) called __trap() at " +
                                            at(kTrapLine)));
}
