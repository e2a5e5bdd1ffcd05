// Emulator tests: CUDA semantics that correct kernels rely on (indices, barriers,
// shuffles, votes, atomics, shared memory, the runtime API).
#include <catch2/catch.hpp>

#include <algorithm>
#include <chrono>
#include <numeric>
#include <set>
#include <thread>
#include <vector>

#include "emu_test_util.h"

using emutest::DeviceArray;
using emutest::ScheduleScope;
using emutest::takeError;
namespace emu = scanlab::emu;

// ---------------------------------------------------------------------------------
// Block order: blocks of one launch start in a seeded random order.

__global__ void startOrderKernel(unsigned* ticket, unsigned* startedAs) {
    if (threadIdx.x == 0) startedAs[blockIdx.x] = atomicAdd(ticket, 1u);
}

std::vector<unsigned> blockStartOrder(uint64_t seed, unsigned blocks) {
    ScheduleScope scope(seed, 1);  // one worker: the start order is the whole story
    DeviceArray<unsigned> ticket(1), startedAs(blocks);
    unsigned* t = ticket.ptr;
    unsigned* started = startedAs.ptr;
    emu::launch("startOrderKernel", dim3(blocks), dim3(64), 0, [=] { startOrderKernel(t, started); });
    REQUIRE(cudaDeviceSynchronize() == cudaSuccess);
    return startedAs.get();
}

TEST_CASE("the blocks of a launch start in a random order that the seed replays", "[blocks]") {
    const unsigned blocks = 64;
    const auto first = blockStartOrder(11, blocks);
    std::vector<unsigned> sorted = first;
    std::sort(sorted.begin(), sorted.end());
    std::vector<unsigned> each(blocks);
    std::iota(each.begin(), each.end(), 0u);
    CHECK(sorted == each);                       // every block ran, once
    std::vector<unsigned> identity(each);
    CHECK(first != identity);                    // not in index order
    CHECK(blockStartOrder(11, blocks) == first); // the same seed, the same order
    CHECK(blockStartOrder(12, blocks) != first); // another seed, another order
    // Block 1 starts before block 0 for about half of the seeds.
    int before = 0;
    for (uint64_t seed = 1; seed <= 40; ++seed) {
        const auto order = blockStartOrder(seed, 2);
        before += order[1] < order[0];
    }
    CHECK(before >= 8);
    CHECK(before <= 32);
}

// ---------------------------------------------------------------------------------
// Indices.

struct IndexRecord {
    unsigned t[3], b[3], bd[3], gd[3];
    int warp;
    unsigned written;
};

__global__ void indexKernel(IndexRecord* out) {
    const unsigned threads = blockDim.x * blockDim.y * blockDim.z;
    const unsigned block = (blockIdx.z * gridDim.y + blockIdx.y) * gridDim.x + blockIdx.x;
    const unsigned tid = (threadIdx.z * blockDim.y + threadIdx.y) * blockDim.x + threadIdx.x;
    IndexRecord& r = out[block * threads + tid];
    r = IndexRecord{{threadIdx.x, threadIdx.y, threadIdx.z},
                    {blockIdx.x, blockIdx.y, blockIdx.z},
                    {blockDim.x, blockDim.y, blockDim.z},
                    {gridDim.x, gridDim.y, gridDim.z},
                    warpSize,
                    r.written + 1};
}

TEST_CASE("threadIdx, blockIdx, blockDim and gridDim cover a 3-D grid once", "[indices]") {
    const dim3 grid(3, 2, 4), block(4, 3, 5);
    const size_t threads = 4 * 3 * 5, blocks = 3 * 2 * 4;
    DeviceArray<IndexRecord> out(threads * blocks);
    IndexRecord* p = out.ptr;
    emu::launch("indexKernel", grid, block, 0, [=] { indexKernel(p); });
    REQUIRE(takeError().empty());
    const auto rec = out.get();
    size_t k = 0;
    for (unsigned bz = 0; bz < 4; ++bz)
        for (unsigned by = 0; by < 2; ++by)
            for (unsigned bx = 0; bx < 3; ++bx)
                for (unsigned tz = 0; tz < 5; ++tz)
                    for (unsigned ty = 0; ty < 3; ++ty)
                        for (unsigned tx = 0; tx < 4; ++tx, ++k) {
                            const IndexRecord& r = rec[k];
                            INFO("record " << k);
                            REQUIRE(r.written == 1);  // every thread ran exactly once
                            CHECK((r.t[0] == tx && r.t[1] == ty && r.t[2] == tz));
                            CHECK((r.b[0] == bx && r.b[1] == by && r.b[2] == bz));
                            CHECK((r.bd[0] == 4 && r.bd[1] == 3 && r.bd[2] == 5));
                            CHECK((r.gd[0] == 3 && r.gd[1] == 2 && r.gd[2] == 4));
                            CHECK(r.warp == 32);
                        }
}

// ---------------------------------------------------------------------------------
// Barriers.

// Tree reduction in static shared memory: wrong without working barriers.
__global__ void treeSumKernel(const int* in, int* out) {
    __shared__ int sh[256];
    const unsigned t = threadIdx.x;
    sh[t] = in[blockIdx.x * 256 + t];
    __syncthreads();
    for (unsigned s = 128; s > 0; s >>= 1) {
        if (t < s) sh[t] += sh[t + s];
        __syncthreads();
    }
    if (t == 0) out[blockIdx.x] = sh[0];
}

TEST_CASE("__syncthreads separates the phases of a tree reduction", "[barrier]") {
    const int blocks = 64;
    std::vector<int> in(blocks * 256);
    std::iota(in.begin(), in.end(), -1000);
    DeviceArray<int> din(in), dout(blocks);
    const int* pi = din.ptr;
    int* po = dout.ptr;
    for (uint64_t seed : {1u, 2u, 3u, 99u}) {
        ScheduleScope scope(seed, 2);
        emu::launch("treeSumKernel", dim3(blocks), dim3(256), 0, [=] { treeSumKernel(pi, po); });
        REQUIRE(takeError().empty());
        const auto got = dout.get();
        for (int b = 0; b < blocks; ++b) {
            const int expect = std::accumulate(in.begin() + b * 256, in.begin() + (b + 1) * 256, 0);
            REQUIRE(got[b] == expect);
        }
    }
}

__global__ void barrierReduceKernel(int* out) {
    const unsigned t = threadIdx.x;
    out[0] = __syncthreads_count(t % 3 == 0);
    const int all = __syncthreads_and(t < 1000);
    const int none = __syncthreads_and(t != 17);
    const int any = __syncthreads_or(t == 200);
    const int nobody = __syncthreads_or(t > 5000);
    if (t == 0) {
        out[1] = all;
        out[2] = none;
        out[3] = any;
        out[4] = nobody;
    }
}

TEST_CASE("__syncthreads_count/_and/_or reduce a predicate over the block", "[barrier]") {
    DeviceArray<int> out(5);
    int* p = out.ptr;
    emu::launch("barrierReduceKernel", dim3(1), dim3(300), 0, [=] { barrierReduceKernel(p); });
    REQUIRE(takeError().empty());
    const auto r = out.get();
    CHECK(r[0] == 100);
    CHECK(r[1] == 1);
    CHECK(r[2] == 0);
    CHECK(r[3] == 1);
    CHECK(r[4] == 0);
}

// ---------------------------------------------------------------------------------
// Shuffles and votes, against PTX's shfl.sync semantics computed on the host.

namespace {
enum Mode { kIdx, kUp, kDown, kXor };
int sourceLane(Mode m, int lane, int arg, int width) {
    const int base = lane & ~(width - 1), last = base + width - 1;
    switch (m) {
        case kIdx: return base + (arg & (width - 1));
        case kUp: return lane - arg >= base ? lane - arg : lane;
        case kDown: return lane + arg <= last ? lane + arg : lane;
        case kXor: return (lane ^ arg) <= last ? (lane ^ arg) : lane;
    }
    return lane;
}
}  // namespace

template <class T>
__global__ void shuffleKernel(const T* in, T* out, int mode, int arg, int width) {
    const unsigned t = threadIdx.x;
    const T v = in[t];
    T r{};
    switch (mode) {
        case kIdx: r = __shfl_sync(0xffffffffu, v, arg, width); break;
        case kUp: r = __shfl_up_sync(0xffffffffu, v, unsigned(arg), width); break;
        case kDown: r = __shfl_down_sync(0xffffffffu, v, unsigned(arg), width); break;
        case kXor: r = __shfl_xor_sync(0xffffffffu, v, arg, width); break;
    }
    out[t] = r;
}

TEMPLATE_TEST_CASE("shuffles move values between lanes as shfl.sync does", "[warp]", int,
                   unsigned, float, double, long long) {
    using T = TestType;
    const unsigned threads = 96;  // three warps
    std::vector<T> in(threads);
    for (unsigned i = 0; i < threads; ++i) in[i] = T(1000 + 3 * i);
    DeviceArray<T> din(in), dout(threads);
    const T* pi = din.ptr;
    T* po = dout.ptr;
    for (int mode : {kIdx, kUp, kDown, kXor}) {
        for (int width : {32, 16, 8, 2}) {
            for (int arg : {0, 1, 3, 7, 31}) {
                emu::launch("shuffleKernel", dim3(1), dim3(threads), 0,
                            [=] { shuffleKernel<T>(pi, po, mode, arg, width); });
                REQUIRE(takeError().empty());
                const auto got = dout.get();
                for (unsigned t = 0; t < threads; ++t) {
                    const int lane = int(t % 32);
                    const int src = sourceLane(Mode(mode), lane, arg, width);
                    INFO("mode " << mode << " width " << width << " arg " << arg << " thread " << t);
                    REQUIRE(got[t] == in[t - lane + src]);
                }
            }
        }
    }
}

__global__ void voteKernel(unsigned* out) {
    const unsigned t = threadIdx.x, lane = t % 32;
    // The two half-warps vote separately, each with its own mask.
    const unsigned half = lane < 16 ? 0x0000ffffu : 0xffff0000u;
    out[4 * t + 0] = __ballot_sync(0xffffffffu, lane % 3 == 0);
    out[4 * t + 1] = __ballot_sync(half, lane % 2 == 1);
    out[4 * t + 2] = unsigned(__any_sync(half, lane == 20));
    out[4 * t + 3] = unsigned(__all_sync(half, lane != 3));
}

TEST_CASE("votes: ballot, any and all over full and partial masks", "[warp]") {
    DeviceArray<unsigned> out(64 * 4);
    unsigned* p = out.ptr;
    emu::launch("voteKernel", dim3(1), dim3(64), 0, [=] { voteKernel(p); });
    REQUIRE(takeError().empty());
    const auto r = out.get();
    for (unsigned t = 0; t < 64; ++t) {
        const unsigned lane = t % 32;
        const unsigned half = lane < 16 ? 0x0000ffffu : 0xffff0000u;
        INFO("thread " << t);
        CHECK(r[4 * t + 0] == 0x49249249u);
        CHECK(r[4 * t + 1] == (0xaaaaaaaau & half));
        CHECK(r[4 * t + 2] == (lane >= 16 ? 1u : 0u));
        CHECK(r[4 * t + 3] == (lane >= 16 ? 1u : 0u));
    }
}

__global__ void syncwarpHalvesKernel(int* out) {
    // Each half-warp exchanges through shared memory, synchronized with its own mask.
    __shared__ int sh[32];
    const unsigned lane = threadIdx.x % 32;
    const unsigned mask = lane < 16 ? 0x0000ffffu : 0xffff0000u;
    sh[lane] = int(lane) * 10;
    __syncwarp(mask);
    const unsigned partner = (lane & 16) | (15 - (lane & 15));
    out[lane] = sh[partner];
    out[32 + lane] = int(__activemask() >> lane & 1);  // includes the caller
}

TEST_CASE("__syncwarp with disjoint masks synchronizes each group", "[warp]") {
    for (uint64_t seed : {5u, 6u, 7u}) {
        ScheduleScope scope(seed);
        DeviceArray<int> out(64);
        int* p = out.ptr;
        emu::launch("syncwarpHalvesKernel", dim3(1), dim3(32), 0, [=] { syncwarpHalvesKernel(p); });
        REQUIRE(takeError().empty());
        const auto r = out.get();
        for (unsigned lane = 0; lane < 32; ++lane) {
            const unsigned partner = (lane & 16) | (15 - (lane & 15));
            REQUIRE(r[lane] == int(partner) * 10);
            REQUIRE(r[32 + lane] == 1);
        }
    }
}

// __activemask(): the lanes that reach it together, as on a GPU (an H100 gave 0xffffffff
// in converged code: tests/conformance). The second warp of 48 threads has 16 lanes.
__global__ void activeMaskKernel(unsigned* out) {
    const unsigned t = threadIdx.x;
    out[t] = __activemask();
    if (t % 32 < 12) out[48 + t] = __activemask();  // the others exit meanwhile
}

TEST_CASE("__activemask answers the lanes that reach it together", "[warp]") {
    for (uint64_t seed : {1u, 2u, 3u, 4u}) {
        ScheduleScope scope(seed);
        DeviceArray<unsigned> out(96);
        unsigned* p = out.ptr;
        emu::launch("activeMaskKernel", dim3(1), dim3(48), 0, [=] { activeMaskKernel(p); });
        const std::string error = takeError();
        INFO(error);
        REQUIRE(error.empty());
        const auto r = out.get();
        for (unsigned t = 0; t < 48; ++t) {
            INFO("seed " << seed << ", thread " << t);
            REQUIRE(r[t] == (t < 32 ? 0xffffffffu : 0xffffu));
            if (t % 32 < 12) REQUIRE(r[48 + t] == 0xfffu);
        }
    }
}

// ---------------------------------------------------------------------------------
// Atomics, with several workers so that blocks really run at once.

__global__ void atomicsKernel(int* i32, unsigned* u32, unsigned long long* u64, float* f32,
                              int* mn, int* mx, unsigned* inc) {
    const int g = int(blockIdx.x * blockDim.x + threadIdx.x);
    atomicAdd(i32, 1);
    atomicSub(i32, 2);
    atomicAdd(u32, 3u);
    atomicAdd(u64, 1ull << 33);
    atomicAdd(f32, 1.0f);
    atomicMin(mn, 1000 - g);
    atomicMax(mx, g * 2);
    atomicInc(inc, 9u);  // counts modulo 10
}

TEST_CASE("atomics are atomic across threads and concurrently running blocks", "[atomics]") {
    ScheduleScope scope(11, 4);
    const unsigned blocks = 64, threads = 256, total = blocks * threads;
    DeviceArray<int> i32(1), mn(1), mx(1);
    DeviceArray<unsigned> u32(1), inc(1);
    DeviceArray<unsigned long long> u64(1);
    DeviceArray<float> f32(1);
    const int big = 1 << 30;
    cudaMemcpy(mn.ptr, &big, sizeof big, cudaMemcpyHostToDevice);
    int *a = i32.ptr, *b = mn.ptr, *c = mx.ptr;
    unsigned *d = u32.ptr, *e = inc.ptr;
    unsigned long long* f = u64.ptr;
    float* g = f32.ptr;
    emu::launch("atomicsKernel", dim3(blocks), dim3(threads), 0,
                [=] { atomicsKernel(a, d, f, g, b, c, e); });
    REQUIRE(takeError().empty());
    CHECK(i32.get()[0] == -int(total));
    CHECK(u32.get()[0] == 3 * total);
    CHECK(u64.get()[0] == (unsigned long long)total << 33);
    CHECK(f32.get()[0] == float(total));  // exact: integers below 2^24
    CHECK(mn.get()[0] == 1000 - int(total - 1));
    CHECK(mx.get()[0] == 2 * int(total - 1));
    CHECK(inc.get()[0] == total % 10);
}

// A spin lock taken by every thread: needs atomicCAS, atomicExch, fences, and threads
// that spin on a lock held by a thread of their own block must let it run.
__global__ void spinLockKernel(int* lock, volatile int* counter) {
    while (atomicCAS(lock, 0, 1) != 0) {
    }
    __threadfence();
    *counter = *counter + 1;
    __threadfence();
    atomicExch(lock, 0);
}

TEST_CASE("a spin lock over all threads: mutual exclusion and progress", "[atomics]") {
    ScheduleScope scope(12, 3);
    DeviceArray<int> lock(1), counter(1);
    int* l = lock.ptr;
    int* c = counter.ptr;
    emu::launch("spinLockKernel", dim3(12), dim3(64), 0, [=] { spinLockKernel(l, c); });
    REQUIRE(takeError().empty());
    CHECK(counter.get()[0] == 12 * 64);
}

// ---------------------------------------------------------------------------------
// Shared memory.

__global__ void sharedPerBlockKernel(int* bad, int* alignedOk, unsigned* poison, unsigned words) {
    __shared__ int tag[128];
    unsigned* dyn = reinterpret_cast<unsigned*>(emu::dynamicSharedMemory());
    const unsigned t = threadIdx.x, b = blockIdx.x;
    if (t == 0) {
        alignedOk[b] = int(reinterpret_cast<uintptr_t>(dyn) % 16 == 0);
        poison[b] = dyn[words - 1];  // before anyone writes: the poison pattern
    }
    __syncthreads();
    tag[t % 128] = int(b);
    for (unsigned i = t; i < words; i += blockDim.x) dyn[i] = b * 7919u + i;
    // Give the other blocks (running on other workers) time to interfere.
    for (int round = 0; round < 20; ++round) {
        __syncthreads();
        if (tag[(t + round) % 128] != int(b)) atomicAdd(&bad[b], 1);
        for (unsigned i = t; i < words; i += blockDim.x) {
            if (dyn[i] != b * 7919u + i) atomicAdd(&bad[b], 1);
        }
    }
}

TEST_CASE("static and dynamic shared memory belong to one block", "[shared]") {
    ScheduleScope scope(13, 4);
    const unsigned blocks = 48, words = 1000;
    DeviceArray<int> bad(blocks), aligned(blocks);
    DeviceArray<unsigned> poison(blocks);
    int *pb = bad.ptr, *pa = aligned.ptr;
    unsigned* pp = poison.ptr;
    emu::launch("sharedPerBlockKernel", dim3(blocks), dim3(128), words * 4,
                [=] { sharedPerBlockKernel(pb, pa, pp, words); });
    REQUIRE(takeError().empty());
    const auto b = bad.get(), a = aligned.get();
    const auto p = poison.get();
    for (unsigned i = 0; i < blocks; ++i) {
        INFO("block " << i);
        CHECK(b[i] == 0);
        CHECK(a[i] == 1);
        CHECK(p[i] == 0xffbadbadu);  // dynamic shared memory starts out poisoned
    }
}

TEST_CASE("large blocks: 1024 threads, full 48 KiB of dynamic shared memory", "[shared]") {
    const unsigned blocks = 16, words = 48 * 1024 / 4;
    DeviceArray<int> bad(blocks), aligned(blocks);
    DeviceArray<unsigned> poison(blocks);
    int *pb = bad.ptr, *pa = aligned.ptr;
    unsigned* pp = poison.ptr;
    emu::launch("sharedPerBlockKernel", dim3(blocks), dim3(1024), words * 4,
                [=] { sharedPerBlockKernel(pb, pa, pp, words); });
    REQUIRE(takeError().empty());
    const auto b = bad.get();
    CHECK(std::all_of(b.begin(), b.end(), [](int x) { return x == 0; }));
}

// ---------------------------------------------------------------------------------
// Runtime API.

__device__ int gSymbol[4];

__global__ void symbolKernel(int* out) {
    const unsigned t = threadIdx.x;
    out[t] = gSymbol[t];
    __syncthreads();
    gSymbol[t] = gSymbol[t] * 2 + 1;
}

TEST_CASE("cudaMemcpyToSymbol and cudaMemcpyFromSymbol", "[runtime]") {
    const int init[4] = {5, 6, 7, 8};
    REQUIRE(cudaMemcpyToSymbol(gSymbol, init, sizeof init) == cudaSuccess);
    const int nine = 9;
    REQUIRE(cudaMemcpyToSymbol(gSymbol, &nine, sizeof nine, 3 * sizeof(int)) == cudaSuccess);
    DeviceArray<int> out(4);
    int* p = out.ptr;
    emu::launch("symbolKernel", dim3(1), dim3(4), 0, [=] { symbolKernel(p); });
    REQUIRE(takeError().empty());
    CHECK(out.get() == std::vector<int>{5, 6, 7, 9});
    int back[4] = {};
    REQUIRE(cudaMemcpyFromSymbol(back, gSymbol, sizeof back) == cudaSuccess);
    CHECK((back[0] == 11 && back[1] == 13 && back[2] == 15 && back[3] == 19));
    int one = 0;
    REQUIRE(cudaMemcpyFromSymbol(&one, gSymbol, sizeof one, sizeof(int)) == cudaSuccess);
    CHECK(one == 13);

    // Past the end of the symbol.
    CHECK(cudaMemcpyToSymbol(gSymbol, init, 2 * sizeof(int), 3 * sizeof(int)) ==
          cudaErrorInvalidValue);
    CHECK_THAT(takeError(), Catch::Contains("do not fit in a 16-byte symbol"));
}

TEST_CASE("events measure wall-clock time between records", "[runtime]") {
    cudaEvent_t a{}, b{};
    REQUIRE(cudaEventCreate(&a) == cudaSuccess);
    REQUIRE(cudaEventCreate(&b) == cudaSuccess);
    float ms = -1;
    CHECK(cudaEventElapsedTime(&ms, a, b) == cudaErrorInvalidResourceHandle);  // not recorded
    takeError();
    REQUIRE(cudaEventRecord(a, 0) == cudaSuccess);
    std::this_thread::sleep_for(std::chrono::milliseconds(30));
    REQUIRE(cudaEventRecord(b) == cudaSuccess);
    REQUIRE(cudaEventSynchronize(b) == cudaSuccess);
    REQUIRE(cudaEventElapsedTime(&ms, a, b) == cudaSuccess);
    CHECK(ms >= 29.0f);
    CHECK(ms < 5000.0f);
    cudaEventDestroy(a);
    cudaEventDestroy(b);
}

TEST_CASE("device queries describe the emulated device", "[runtime]") {
    int count = 0;
    REQUIRE(cudaGetDeviceCount(&count) == cudaSuccess);
    CHECK(count == 1);
    int dev = -1;
    REQUIRE(cudaGetDevice(&dev) == cudaSuccess);
    CHECK(dev == 0);
    CHECK(cudaSetDevice(0) == cudaSuccess);
    CHECK(cudaSetDevice(1) == cudaErrorInvalidDevice);
    takeError();
    cudaDeviceProp prop{};
    REQUIRE(cudaGetDeviceProperties(&prop, 0) == cudaSuccess);
    CHECK(std::string(prop.name) == "scanlab CPU emulator");
    CHECK(prop.major == 9);
    CHECK(prop.minor == 0);
    CHECK(prop.warpSize == 32);
    CHECK(prop.maxThreadsPerBlock == 1024);
    CHECK(prop.sharedMemPerBlock == 48 * 1024);
    CHECK(prop.multiProcessorCount == int(emu::workerThreads()));
    CHECK(prop.totalGlobalMem > 0);
}

TEST_CASE("memory calls check their arguments", "[runtime]") {
    DeviceArray<int> a(16);
    std::vector<int> host(32, 1);
    CHECK(cudaMemcpy(a.ptr, host.data(), 32 * sizeof(int), cudaMemcpyHostToDevice) ==
          cudaErrorInvalidValue);
    CHECK_THAT(takeError(), Catch::Contains("runs past the end of its 64-byte device allocation"));
    CHECK(cudaMemcpy(host.data(), a.ptr + 8, 8 * sizeof(int), cudaMemcpyDeviceToHost) ==
          cudaSuccess);
    CHECK(cudaMemset(a.ptr + 1, 0, 16 * sizeof(int)) == cudaErrorInvalidValue);
    takeError();
    int local = 0;
    CHECK(cudaFree(&local) == cudaErrorInvalidValue);
    CHECK_THAT(takeError(), Catch::Contains("not a pointer returned by cudaMalloc"));
    CHECK(cudaFree(nullptr) == cudaSuccess);
    CHECK(cudaGetLastError() == cudaSuccess);
    // cudaGetLastError returns and clears; cudaPeekAtLastError only returns.
    cudaSetDevice(3);
    CHECK(cudaPeekAtLastError() == cudaErrorInvalidDevice);
    CHECK(cudaGetLastError() == cudaErrorInvalidDevice);
    CHECK(cudaGetLastError() == cudaSuccess);
}

// ---------------------------------------------------------------------------------
// The schedule.

__global__ void orderKernel(int* counter, int* order) {
    order[atomicAdd(counter, 1)] = int(threadIdx.x);
    __syncthreads();
    order[atomicAdd(counter, 1)] = int(threadIdx.x);
}

static std::vector<int> runOrder() {
    DeviceArray<int> counter(1), order(128);
    int *c = counter.ptr, *o = order.ptr;
    emu::launch("orderKernel", dim3(1), dim3(64), 0, [=] { orderKernel(c, o); });
    REQUIRE(takeError().empty());
    return order.get();
}

TEST_CASE("the schedule is random, and reproducible from the seed", "[schedule]") {
    std::vector<int> first, second, again, otherSeed;
    {
        ScheduleScope scope(42);
        CHECK(emu::scheduleSeed() == 42);
        first = runOrder();
        second = runOrder();  // the next launch of the sequence
    }
    {
        ScheduleScope scope(42);
        again = runOrder();
    }
    {
        ScheduleScope scope(43);
        otherSeed = runOrder();
    }
    // Each phase ran every thread once.
    for (int phase = 0; phase < 2; ++phase) {
        std::vector<int> ids(first.begin() + 64 * phase, first.begin() + 64 * (phase + 1));
        std::sort(ids.begin(), ids.end());
        std::vector<int> expect(64);
        std::iota(expect.begin(), expect.end(), 0);
        CHECK(ids == expect);
    }
    std::vector<int> inOrder(64);
    std::iota(inOrder.begin(), inOrder.end(), 0);
    CHECK(std::vector<int>(first.begin(), first.begin() + 64) != inOrder);
    CHECK(first == again);
    CHECK(first != second);
    CHECK(first != otherSeed);
}
