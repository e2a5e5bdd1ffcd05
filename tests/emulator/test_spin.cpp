// Spins that end are no deadlock (issue 58): a look-back in which each lane of warp 0
// waits alone for its own predecessor tile, with several workers on a loaded machine
// (the OS pauses a worker whose block is about to set the flag), must never be called
// a deadlock; a wait on a flag nobody sets still is, with its message.
#include <catch2/catch.hpp>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <thread>

#include "emu_test_util.h"

namespace emu = scanlab::emu;
using emutest::DeviceArray;
using emutest::ScheduleScope;
using emutest::takeError;

namespace {

constexpr unsigned long long kPrefixFlag = 1ull << 32;

// One tile per block, its id from a counter. Lane i of warp 0 spins alone (volatile
// reads and __nanosleep, no warp vote) until tile t-1-i has published its inclusive
// prefix; lane 0's is the one that counts, the warp hands it on with a shuffle. Tile t
// holds the values 1: its prefix is t+1. Every tile waits only for tiles whose blocks
// started, so every wait ends, however the blocks and the OS interleave.
__global__ void perLaneSpinKernel(unsigned* ticket, unsigned long long* tiles, unsigned* out) {
    __shared__ unsigned tile;
    __shared__ unsigned before;
    if (threadIdx.x == 0) tile = atomicAdd(ticket, 1u);
    __syncthreads();
    const unsigned t = tile;
    if (threadIdx.x < 32) {
        const long long mine = (long long)t - 1 - (long long)threadIdx.x;
        unsigned prefix = 0;
        if (mine >= 0) {
            const volatile unsigned long long* word = &tiles[mine];
            unsigned long long w;
            while (((w = *word) & kPrefixFlag) == 0) __nanosleep(0);
            prefix = unsigned(w);
        }
        prefix = __shfl_sync(0xffffffffu, prefix, 0);
        if (threadIdx.x == 0) {
            before = prefix;
            __threadfence();
            *static_cast<volatile unsigned long long*>(&tiles[t]) = kPrefixFlag | (prefix + 1);
        }
    }
    __syncthreads();
    if (threadIdx.x == 0) out[t] = before + 1;
}

// Busy threads that keep the machine's cores taken while they live.
struct Load {
    std::atomic<bool> stop{false};
    std::vector<std::thread> threads;
    explicit Load(unsigned n) {
        for (unsigned i = 0; i < n; ++i)
            threads.emplace_back([this] {
                volatile unsigned long long x = 0;
                while (!stop.load(std::memory_order_relaxed)) x = x + 1;
            });
    }
    ~Load() {
        stop = true;
        for (auto& t : threads) t.join();
    }
};

}  // namespace

TEST_CASE("a per-lane spin on a predecessor's flag is no deadlock, with any worker count, "
          "on a loaded machine", "[blocks][spin]") {
    const unsigned cores = std::max(2u, std::thread::hardware_concurrency());
    Load load(cores);
    constexpr unsigned kTiles = 12;
    constexpr int kCasesPerCount = 2500;  // 10,000 launches over the four worker counts
    DeviceArray<unsigned> ticket(1);
    DeviceArray<unsigned long long> tiles(kTiles);
    DeviceArray<unsigned> out(kTiles);
    unsigned* tk = ticket.ptr;
    unsigned long long* ts = tiles.ptr;
    unsigned* o = out.ptr;
    std::vector<unsigned> want(kTiles);
    for (unsigned i = 0; i < kTiles; ++i) want[i] = i + 1;
    for (unsigned workers : {1u, 2u, 4u, 8u}) {
        ScheduleScope scope(100 + workers, workers);
        int failed = 0;
        std::string first;
        for (int c = 0; c < kCasesPerCount; ++c) {
            cudaMemset(tk, 0, sizeof(unsigned));
            cudaMemset(ts, 0, kTiles * sizeof(unsigned long long));
            emu::launch("perLaneSpinKernel", dim3(kTiles), dim3(64), 0,
                        [=] { perLaneSpinKernel(tk, ts, o); });
            const std::string msg = takeError();
            if (!msg.empty() || out.get() != want) {
                if (failed++ == 0) first = msg.empty() ? "wrong output" : msg;
            }
        }
        INFO(workers << " worker(s): " << failed << " of " << kCasesPerCount
                     << " launches failed; the first: " << first);
        CHECK(failed == 0);
    }
}

namespace {

// Lane 0 of every block waits for a flag nobody sets, the other lanes end.
__global__ void flagNobodySetsKernel(const unsigned long long* flag) {
    if (threadIdx.x != 0) return;
    const volatile unsigned long long* word = flag;
    while ((*word & kPrefixFlag) == 0) __nanosleep(0);
}

}  // namespace

TEST_CASE("a wait for a flag nobody sets is still a deadlock, on a loaded machine",
          "[blocks][spin][deadlock]") {
    const unsigned cores = std::max(2u, std::thread::hardware_concurrency());
    Load load(cores);
    for (unsigned workers : {1u, 2u, 4u, 8u}) {
        INFO(workers << " worker(s)");
        ScheduleScope scope(7, workers);
        DeviceArray<unsigned long long> flag(1);
        const unsigned long long* f = flag.ptr;
        cudaError_t code{};
        emu::launch("flagNobodySetsKernel", dim3(workers), dim3(64), 0,
                    [=] { flagNobodySetsKernel(f); });
        const std::string msg = takeError(&code);
        CHECK(code == cudaErrorLaunchFailure);
        CHECK_THAT(msg, Catch::StartsWith(
                            "emulator: kernel flagNobodySetsKernel: deadlock in block ("));
        CHECK_THAT(msg, Catch::Contains("every block of the launch has started"));
        CHECK_THAT(msg, Catch::Contains("thread 0 of block ("));
        CHECK_THAT(msg, Catch::Contains("A wait for a flag or counter that no "
                                                          "thread sets never ends"));
    }
}

namespace {

// Ticket 0 computes for a long time with no atomic, fence or barrier (its worker never
// votes); every other block does enough atomics without a barrier to count as stuck
// and vote, then ends. A worker whose blocks vote one after the other must not count
// as every worker: its own progress voids its vote.
__global__ void oneWorkerVotesTwiceKernel(unsigned* ticket, unsigned* counter, unsigned* out) {
    __shared__ unsigned mine;
    if (threadIdx.x == 0) mine = atomicAdd(ticket, 1u);
    __syncthreads();
    if (mine == 0) {
        unsigned x = threadIdx.x + 1;
        for (unsigned i = 0; i < 40000000u; ++i) x = x * 1664525u + 1013904223u;
        out[threadIdx.x] = x;
        return;
    }
    for (unsigned i = 0; i < 1100u * 64u; ++i) atomicAdd(counter, 1u);
}

}  // namespace

TEST_CASE("one worker's blocks that each vote in turn are no deadlock", "[blocks][spin]") {
    ScheduleScope scope(11, 2);
    DeviceArray<unsigned> ticket(1), counter(1), out(32);
    unsigned* tk = ticket.ptr;
    unsigned* c = counter.ptr;
    unsigned* o = out.ptr;
    for (int launch = 0; launch < 3; ++launch) {
        cudaMemset(tk, 0, sizeof(unsigned));
        cudaMemset(c, 0, sizeof(unsigned));
        emu::launch("oneWorkerVotesTwiceKernel", dim3(8), dim3(32), 0,
                    [=] { oneWorkerVotesTwiceKernel(tk, c, o); });
        const std::string msg = takeError();
        INFO("launch " << launch);
        CHECK(msg == "");
        CHECK(counter.get()[0] == 7u * 32u * 1100u * 64u);
    }
}
