// The race check of shared memory (emulator/emu_race.h; issue 42, item 4): a race names
// both threads, both of the student's lines and the barrier likely missing, and correct
// kernels never raise one. Compiled as a student unit is (SCANLAB_EMU_CHECK_FLAGS), so
// this file plays the student's.
#include <catch2/catch.hpp>

#include <string>
#include <vector>

#include "emu_test_util.h"
#include "emulator/emu_race.h"
#include "harness/runtime.cuh"
#include "harness/tasks/launch.cuh"
#include "harness/tile_io.cuh"

using emutest::DeviceArray;
using emutest::ScheduleScope;
using emutest::takeError;
namespace emu = scanlab::emu;

namespace {
std::string at(int line) { return "emulator/test_race.cpp:" + std::to_string(line); }
}  // namespace

// The PMPH-style warp scan: each step reads a neighbour's slot, then writes its own. With
// `synced`, a __syncwarp() separates them (and the steps), as independent thread
// scheduling needs.
constexpr int kWarpReadLine = __LINE__ + 8;
constexpr int kWarpWriteLine = __LINE__ + 9;
__global__ void warpScanKernel(int* out, bool synced) {
    __shared__ int sh[32];
    const unsigned lane = threadIdx.x;
    sh[lane] = int(lane) + 1;
    __syncwarp();
    for (unsigned h = 1; h < 32; h <<= 1) {
        const int x = lane >= h ? sh[lane - h] : 0;
        if (synced) __syncwarp();
        sh[lane] += x;  // BUG unless synced: lane - h may not have read it yet
        if (synced) __syncwarp();
    }
    out[lane] = sh[lane];
}

// Each thread writes its slot, then reads the mirror slot, which a thread of the other
// warp writes: only a __syncthreads() orders them (a __syncwarp() does not).
constexpr int kBlockWriteLine = __LINE__ + 4;
constexpr int kBlockReadLine = __LINE__ + 6;
__global__ void mirrorKernel(int* out, bool synced) {
    __shared__ int sh[64];
    sh[threadIdx.x] = int(threadIdx.x);
    __syncwarp();
    if (synced) __syncthreads();
    out[threadIdx.x] = sh[63 - threadIdx.x];  // BUG unless synced: the other warp's slot
}

// The harness's stageTile (inlined here) writes the tile into shared memory; each thread
// then reads a slot another warp staged, with no barrier: the write is named at this
// file's call, then the harness line inside it.
constexpr int kStageLine = __LINE__ + 4;
constexpr int kStagedReadLine = __LINE__ + 4;
__global__ void stageKernel(const int* in, int* out) {
    __shared__ int staging[66];  // stagedSlots(64)
    scanlab::stageTile<1>(in, 64, 0, staging, threadIdx.x, 64);
    out[threadIdx.x] = staging[scanlab::paddedIndex(63 - threadIdx.x)];  // BUG: no __syncthreads()
}

// Correct code the check must accept: per-thread bytes of one word, atomics on one shared
// word, a flag set by one thread and read by the others after a barrier, a spin of the
// other warps on a volatile word another thread writes with fences around it.
__global__ void honestKernel(int* out) {
    __shared__ unsigned char flags[64];
    __shared__ int counter;
    __shared__ int ready;
    if (threadIdx.x == 0) counter = 0;
    if (threadIdx.x == 0) ready = 0;
    __syncthreads();
    flags[threadIdx.x] = 1;
    atomicAdd(&counter, 1);
    __syncthreads();
    int sum = 0;
    for (int k = 0; k < 64; ++k) sum += flags[k];
    if (threadIdx.x == 0) {
        __threadfence_block();
        atomicExch(&ready, 1);
    } else {
        while (atomicAdd(&ready, 0) == 0) __threadfence_block();
    }
    out[threadIdx.x] = sum + counter;
}

TEST_CASE("a warp scan missing __syncwarp() is a race naming both lines", "[race]") {
    REQUIRE(emu::raceCheckActive());
    const emu::RaceCheckScope watch;
    DeviceArray<int> out(32);
    int* o = out.ptr;
    for (uint64_t seed : {1u, 2u, 3u}) {
        INFO("seed " << seed);
        ScheduleScope scope(seed);
        emu::clearRaces();
        emu::launch("warpScanKernel", dim3(1), dim3(32), 0, [=] { warpScanKernel(o, false); });
        CHECK(takeError().empty());
        const std::string race = emu::firstRace();
        CHECK_THAT(
            race, Catch::Contains("race on shared memory in kernel warpScanKernel, block (0,0,0)"));
        CHECK_THAT(race, Catch::Contains(at(kWarpReadLine)) && Catch::Contains(at(kWarpWriteLine)));
        CHECK_THAT(race,
                   Catch::Contains("(lanes of warp 0)") &&
                       Catch::EndsWith("likely a missing __syncwarp() between those two lines"));
        CHECK_THAT(race, Catch::Matches("a (read-after-write|write-after-read) race .*"));
        // The word: its byte in the student's __shared__ array, named from the symbol table.
        CHECK_THAT(race, Catch::Matches(".*: thread \\(([0-9]+),0,0\\) (read|wrote) byte [0-9]+ of "
                                        "__shared__ warpScanKernel\\(int\\*, bool\\)::sh at .*"));
    }
    emu::clearRaces();
    emu::launch("warpScanKernel", dim3(1), dim3(32), 0, [=] { warpScanKernel(o, true); });
    CHECK(takeError().empty());
    CHECK(emu::firstRace().empty());
    std::vector<int> want(32);
    for (int i = 0; i < 32; ++i) want[size_t(i)] = (i + 1) * (i + 2) / 2;
    CHECK(out.get() == want);
}

TEST_CASE("a missing __syncthreads() between warps is a race naming both lines", "[race]") {
    const emu::RaceCheckScope watch;
    DeviceArray<int> out(64);
    int* o = out.ptr;
    emu::clearRaces();
    emu::launch("mirrorKernel", dim3(2), dim3(64), 0, [=] { mirrorKernel(o, false); });
    CHECK(takeError().empty());
    const std::string race = emu::firstRace();
    CHECK_THAT(race, Catch::Contains("race on shared memory in kernel mirrorKernel, block ("));
    CHECK_THAT(race, Catch::Contains(at(kBlockWriteLine)) && Catch::Contains(at(kBlockReadLine)));
    CHECK_THAT(
        race, Catch::Matches(".*\\(warps [01] and [01]\\) with no synchronization between "
                             "them: likely a missing __syncthreads\\(\\) between those two lines"));
    // Cleared, then the same kernel with its barrier: none.
    emu::clearRaces();
    CHECK(emu::firstRace().empty());
    emu::launch("mirrorKernel", dim3(2), dim3(64), 0, [=] { mirrorKernel(o, true); });
    CHECK(takeError().empty());
    CHECK(emu::firstRace().empty());
}

TEST_CASE("a race in a harness helper names the student's line, then the helper's", "[race]") {
    const emu::RaceCheckScope watch;
    DeviceArray<int> in(std::vector<int>(64, 5)), out(64);
    const int* i = in.ptr;
    int* o = out.ptr;
    emu::clearRaces();
    emu::launch("stageKernel", dim3(1), dim3(64), 0, [=] { stageKernel(i, o); });
    CHECK(takeError().empty());
    const std::string race = emu::firstRace();
    CHECK_THAT(race, Catch::Contains(at(kStageLine) + " (in harness/tile_io.cuh:") &&
                         Catch::Contains(at(kStagedReadLine)));
    CHECK_THAT(race, Catch::Contains("likely a missing __syncthreads()"));
}

TEST_CASE("bytes of one word, shared atomics and a fenced flag are no race", "[race]") {
    const emu::RaceCheckScope watch;
    DeviceArray<int> out(64);
    int* o = out.ptr;
    for (uint64_t seed : {1u, 2u}) {
        ScheduleScope scope(seed);
        emu::clearRaces();
        emu::launch("honestKernel", dim3(3), dim3(64), 0, [=] { honestKernel(o); });
        CHECK(takeError().empty());
        CHECK(emu::firstRace() == "");
        CHECK(out.get() == std::vector<int>(64, 128));
    }
}

TEST_CASE("shared memory is watched only when asked", "[race]") {
    DeviceArray<int> out(64);
    int* o = out.ptr;
    emu::clearRaces();
    emu::launch("mirrorKernel", dim3(1), dim3(64), 0, [=] { mirrorKernel(o, false); });
    CHECK(takeError().empty());
    CHECK(emu::firstRace().empty());
}
