// scanlab-tune: variants of the reference's reduce (task 2) and look-back scan (task 4)
// against a device copy and CUB, int32 add at 2^24, 2^28 and 2^20 (add-f32 and mssp for
// the look-back at 2^24), each variant's output checked against the CPU reference. What
// is to choose the reference's reduce and look-back settings on the H200 (issue 61;
// tools/gpu_reference_perf.sh runs it).
//
//   scanlab-tune [CSV]     one row per (variant, n) into CSV, a table on stdout
//
// Reduce variants R<V>x<D><i|s> g<G>: V 16-byte loads per lane per warp step (4V
// consecutive int32 a lane), D warp steps in flight (register buffers), i: the warps of
// a block interleave (one block tile of numWarps warp steps at a time, combined in order
// through shared memory), s: each warp walks a contiguous slice; G blocks (a number, or
// "fit": SM count x resident blocks per SM).
#include <cub/device/device_reduce.cuh>
#include <cub/device/device_scan.cuh>
#include <cub/version.cuh>

#include <algorithm>
#include <cstdio>
#include <cstring>
#include <functional>
#include <string>
#include <vector>

#define SCANLAB_STUDENT_UNIT 1
#include "harness/check.h"
#include "harness/host/generate.h"
#include "harness/host/reference.h"
#include "harness/host/timing.h"
#include "harness/runtime.cuh"

using namespace scanlab;
using Op = Add<int32_t>;

namespace {

// ---------------------------------------------------------------- reduce variants
// Staging of one warp step: 32*V vectors, one pad vector every 8 (so the striped
// stores and the chunked reads both hit 8 different 16-byte bank groups a quarter-warp).
__device__ __forceinline__ unsigned padVec(unsigned v) { return v + v / 8; }

template <class Op, int V, int D, bool INTERLEAVE>
__global__ void reduceVecKernel(const typename Op::Element* __restrict__ in, size_t n,
                                size_t itemsPerBlock, typename Op::Element* __restrict__ blockResults) {
    using T = typename Op::Element;
    static_assert(sizeof(T) == 4, "16-byte vectors of 4-byte elements");
    extern __shared__ uint4 sharedVec[];
    constexpr unsigned kVecs = kWarpSize * V;           // vectors a warp step
    constexpr unsigned kWarpTile = 4 * kVecs;           // elements a warp step
    constexpr unsigned kStaged = kVecs + kVecs / 8;     // padded vectors a warp
    const unsigned lane = laneId(), warp = warpId(), numWarps = blockDim.x / kWarpSize;
    uint4* staging = sharedVec + warp * kStaged;
    T* partials = reinterpret_cast<T*>(sharedVec + numWarps * kStaged);  // [2][numWarps]
    T* warpTotals = partials + 2 * numWarps;

    const size_t blockBegin = blockIdx.x * itemsPerBlock;
    const size_t blockEnd = n < blockBegin + itemsPerBlock ? n : blockBegin + itemsPerBlock;
    size_t first, step, end;
    if (INTERLEAVE) {
        first = blockBegin + warp * kWarpTile;
        step = size_t(numWarps) * kWarpTile;
        end = blockEnd;
    } else {
        const size_t itemsPerWarp = itemsPerBlock / numWarps;
        first = blockBegin + warp * itemsPerWarp;
        step = kWarpTile;
        end = n < first + itemsPerWarp ? n : first + itemsPerWarp;
    }
    const bool aligned = reinterpret_cast<unsigned long long>(in) % 16 == 0;
    uint4 ahead[D][V];
    auto fetch = [&](int d, size_t base) {
#pragma unroll
        for (int k = 0; k < V; ++k) {
            const size_t i = base + 4 * (k * kWarpSize + lane);
            if (aligned && i + 4 <= end) {
                ahead[d][k] = __ldg(reinterpret_cast<const uint4*>(in + i));
            } else {
                T part[4];
#pragma unroll
                for (int j = 0; j < 4; ++j) part[j] = i + j < end ? in[i + j] : Op::identity();
                memcpy(&ahead[d][k], part, 16);
            }
        }
    };
    T acc = Op::identity();  // lane 0 of warp (s) / warp 0 (i): in order
#pragma unroll
    for (int d = 0; d < D; ++d) fetch(d, first + d * step);
    // Iterations: uniform across the block when interleaved (block tiles).
    const size_t last = INTERLEAVE ? blockEnd : end;
    const size_t origin = INTERLEAVE ? blockBegin : first;
    unsigned parity = 0;
    for (size_t at = origin; at < last; at += D * step) {
#pragma unroll
        for (int d = 0; d < D; ++d) {
            const size_t stepAt = at + d * step;  // block tile (i) or warp step (s)
            if (stepAt < last) {
                const size_t base = INTERLEAVE ? stepAt + warp * kWarpTile : stepAt;
#pragma unroll
                for (int k = 0; k < V; ++k) staging[padVec(k * kWarpSize + lane)] = ahead[d][k];
                __syncwarp();
                fetch(d, base + D * step);
                T x = Op::identity();
#pragma unroll
                for (int k = 0; k < V; ++k) {
                    T part[4];
                    memcpy(part, &staging[padVec(lane * V + k)], 16);
#pragma unroll
                    for (int j = 0; j < 4; ++j) x = k == 0 && j == 0 ? part[0] : Op::apply(x, part[j]);
                }
                __syncwarp();
                x = reduceWarp<Op>(x);
                if (INTERLEAVE) {
                    if (lane == 0) partials[parity * numWarps + warp] = x;
                    __syncthreads();
                    if (warp == 0) {
                        T y = lane < numWarps ? partials[parity * numWarps + lane] : Op::identity();
                        y = reduceWarp<Op>(y);
                        if (lane == 0) acc = Op::apply(acc, y);
                    }
                    parity ^= 1;
                } else if (lane == 0) {
                    acc = Op::apply(acc, x);
                }
            }
        }
    }
    if (INTERLEAVE) {
        if (threadIdx.x == 0) blockResults[blockIdx.x] = acc;
    } else {
        const T blockAcc = reduceBlock<Op>(lane == 0 ? acc : Op::identity(), warpTotals);
        if (threadIdx.x == 0) blockResults[blockIdx.x] = blockAcc;
    }
}

template <int V>
size_t reduceVecShared(unsigned block) {
    const unsigned kVecs = kWarpSize * V;
    return (block / kWarpSize) * (kVecs + kVecs / 8) * 16 + 3 * (block / kWarpSize) * 4 + 16;
}

// ---------------------------------------------------------------- look-back variants
// The reference's scanTile (solution/student/lookback_scan.cuh) with switches:
// kPrefetch (prefetchL2 of the guessed tile), kStream (streaming stores, st.global.cs).
template <class Op, int CHUNK, class Wait, bool kPrefetch, bool kStream>
__device__ void scanTileX(const typename Op::Element* in, typename Op::Element* out, size_t n,
                          const lookback::TileState<typename Op::Element>& tiles) {
    using T = typename Op::Element;
    SCANLAB_DYNAMIC_SHARED(T, shared);
    const unsigned tid = threadIdx.x, lane = laneId(), warp = warpId();
    const unsigned numWarps = blockDim.x / kWarpSize;
    const unsigned tileItems = blockDim.x * CHUNK;
    T* staging = shared;
    T* warpTotals = shared + stagedSlots(tileItems);
    T* prefixSlot = warpTotals + numWarps;
    unsigned* tileSlot = reinterpret_cast<unsigned*>(prefixSlot + 1);
    const size_t guess = size_t(blockIdx.x) * tileItems;
    if (kPrefetch && guess < n)
        prefetchL2(in + guess, n - guess < tileItems ? n - guess : tileItems, tid, blockDim.x);
    if (tid == 0) *tileSlot = atomicAdd(tiles.tileCounter, 1u);
    __syncthreads();
    const unsigned tile = *tileSlot;
    const size_t base = size_t(tile) * tileItems;
    const size_t valid = n - base;
    stageTile<CHUNK>(in + base, valid, Op::identity(), staging, tid, blockDim.x);
    __syncthreads();
    T chunk[CHUNK];
    readStagedChunk<CHUNK>(staging, tid, chunk);
    T chunkTotal = chunk[0];
#pragma unroll
    for (int k = 1; k < CHUNK; ++k) chunkTotal = Op::apply(chunkTotal, chunk[k]);
    const T threadScan = lookback_reference::warpInclusiveScan<Op>(chunkTotal, lane);
    if (lane == kWarpSize - 1) warpTotals[warp] = threadScan;
    __syncthreads();
    T warpPrefix = Op::identity(), tileTotal = Op::identity();
    for (unsigned w = 0; w < numWarps; ++w) {
        const T t = warpTotals[w];
        if (w < warp) warpPrefix = Op::apply(warpPrefix, t);
        tileTotal = Op::apply(tileTotal, t);
    }
    const T earlierLanes = shuffleUp(threadScan, 1);
    const T inTile = lane > 0 ? Op::apply(warpPrefix, earlierLanes) : warpPrefix;
    if (warp == 0) {
        T tilePrefix = Op::identity();
        if (tile == 0) {
            if (lane == 0) lookback_reference::publish(tiles, 0, lookback::kTilePrefix, tileTotal);
        } else {
            if (lane == 0) lookback_reference::publish(tiles, tile, lookback::kTileAggregate, tileTotal);
            tilePrefix = lookback_reference::lookBack<Op, Wait>(tiles, tile, lane);
            if (lane == 0)
                lookback_reference::publish(tiles, tile, lookback::kTilePrefix, Op::apply(tilePrefix, tileTotal));
        }
        if (lane == 0) *prefixSlot = tilePrefix;
    }
    __syncthreads();
    readStagedChunk<CHUNK>(staging, tid, chunk);
    T running = Op::apply(*prefixSlot, inTile);
#pragma unroll
    for (int k = 0; k < CHUNK; ++k) {
        const T next = Op::apply(running, chunk[k]);
        chunk[k] = next;
        running = next;
    }
    writeStagedChunk<CHUNK>(chunk, staging, tid);
    __syncthreads();
    if constexpr (kStream && kVectorChunks<T, CHUNK>) {
        constexpr int kVectors = CHUNK / 4;
        const uint4* vectors = reinterpret_cast<const uint4*>(staging);
        T* o = out + base;
        const bool aligned = reinterpret_cast<unsigned long long>(o) % 16 == 0;
#pragma unroll
        for (int k = 0; k < kVectors; ++k) {
            const unsigned v = k * blockDim.x + tid;
            if (aligned && 4 * size_t(v) + 4 <= valid) {
                __stcs(reinterpret_cast<uint4*>(o) + v, vectors[v]);
            } else {
                T part[4];
                memcpy(part, &vectors[v], 16);
                for (int j = 0; j < 4; ++j)
                    if (4 * v + j < valid) o[4 * v + j] = part[j];
            }
        }
    } else {
        storeStaged<CHUNK>(staging, tid, blockDim.x, out + base, valid);
    }
}

template <class Op, int CHUNK, class Wait, bool kPrefetch, bool kStream, int kMinBlocks>
__global__ void __launch_bounds__(1024, kMinBlocks)
    lookbackX(const typename Op::Element* in, typename Op::Element* out, size_t n,
              lookback::TileState<typename Op::Element> tiles) {
    scanTileX<Op, CHUNK, Wait, kPrefetch, kStream>(in, out, n, tiles);
}

// ---------------------------------------------------------------- the harness
struct Contestant {
    std::string name;
    std::string kind;  // copy, cub-reduce, reduce, cub-scan, lookback
    double bytes;
    std::function<void()> launch;
    std::function<bool()> check;  // after one more launch: the output is right
    std::vector<double> ms{};
};

void measure(std::vector<Contestant>& cs, int rounds, int batch) {
    EventTimer timer;
    for (auto& c : cs)
        for (int i = 0; i < 3; ++i) c.launch();
    deviceSynchronize("warm-up");
    for (int r = 0; r < rounds; ++r)
        for (auto& c : cs) {
            timer.start();
            for (int i = 0; i < batch; ++i) c.launch();
            c.ms.push_back(timer.stop() / batch);
        }
}

template <class OpT>
struct Case {
    using T = typename OpT::Element;
    size_t n;
    std::vector<T> input;
    DeviceBuffer<T> in, out, copyBuf, result;
    DeviceBuffer<T> blockResults{4096};
    DeviceBuffer<unsigned char> state, cubTemp;
    lookback::TileState<T> tiles{};
    size_t stateClear = 0;

    explicit Case(size_t count)
        : n(count), input(generateInput<OpT>(n, 7, Distribution::Random)), in(n), out(n), copyBuf(n), result(1) {
        in.upload(input);
        // Tile state for the most tiles any variant makes (tiles of >= 32*4 elements).
        const size_t maxTiles = n / 128 + 2;
        const size_t packedAt = ((maxTiles + 1) * 4 + 7) / 8 * 8;
        const size_t valuesAt = (packedAt + maxTiles * 8 + 15) / 16 * 16;
        state = DeviceBuffer<unsigned char>(valuesAt + 2 * maxTiles * sizeof(T));
        unsigned* words = reinterpret_cast<unsigned*>(state.data());
        T* values = reinterpret_cast<T*>(state.data() + valuesAt);
        tiles = lookback::TileState<T>{words, words + 1, values, values + maxTiles,
                                       reinterpret_cast<unsigned long long*>(state.data() + packedAt),
                                       unsigned(maxTiles)};
        stateClear = packedAt + maxTiles * 8;
    }
    // The CPU reference once; exact operators compared element by element after that.
    std::vector<T> expected;
    bool scanRight() {
        if constexpr (std::is_floating_point_v<T>) {
            return checkOutput<OpT>(Task::LookbackScan, input, out.download()).passed();
        } else {
            if (expected.empty()) expected = referenceOutput<OpT>(Task::LookbackScan, input);
            const auto got = out.download();
            for (size_t i = 0; i < n; ++i)
                if (!OpT::equal(got[i], expected[i], 0.0)) return false;
            return true;
        }
    }
    std::vector<T> reduced;
    bool reduceRight() {
        if (reduced.empty()) reduced = referenceOutput<OpT>(Task::Reduce, input);
        return OpT::equal(result.download()[0], reduced[0], 0.0);
    }

    template <int CHUNK, class Wait, bool kPrefetch = true, bool kStream = false, int kMinBlocks = -1>
    Contestant lookback(const std::string& name, unsigned block) {
        // The device pass's LookbackPolicy (the host pass sees 1 for every GPU).
        constexpr int kMin = kMinBlocks < 0 ? (sizeof(T) == 4 ? 2 : 1) : kMinBlocks;
        return {name, "lookback", 2.0 * sizeof(T) * n, [this, block] {
                    const size_t tileItems = size_t(block) * CHUNK;
                    lookback::TileState<T> s = tiles;
                    s.tiles = unsigned((n + tileItems - 1) / tileItems);
                    checkCuda(cudaMemsetAsync(s.tileCounter, 0, stateClear), "memset");
                    launchKernel("lookbackX", lookbackX<OpT, CHUNK, Wait, kPrefetch, kStream, kMin>,
                                 dim3(s.tiles), dim3(block), lookbackSharedBytes<T>(block, CHUNK),
                                 static_cast<const T*>(in.data()), out.data(), n, s);
                }, [this] { return scanRight(); }};
    }
};

template <int V, int D, bool IL>
Contestant reduceVariant(Case<Op>& c, unsigned block, int gridArg) {
    auto kernel = reduceVecKernel<Op, V, D, IL>;
    const size_t shared = reduceVecShared<V>(block);
    if (shared > 48 * 1024)
        checkCuda(cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, int(shared)), "attr");
    int perSm = 0;
    checkCuda(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&perSm, kernel, int(block), shared), "occupancy");
    const unsigned fit = unsigned(perSm) * unsigned(queryDevice().multiprocessors);
    const unsigned maxBlocks = gridArg > 0 ? unsigned(gridArg) : fit * unsigned(-gridArg);
    const size_t tileItems = size_t(block) * 4 * V;  // a block tile: numWarps warp steps
    const size_t tilesTotal = std::max<size_t>(1, (c.n + tileItems - 1) / tileItems);
    const size_t perBlock = (tilesTotal + maxBlocks - 1) / maxBlocks;
    const unsigned grid = unsigned((tilesTotal + perBlock - 1) / perBlock);
    char name[96];
    std::snprintf(name, sizeof name, "R%dx%d%s g%s%u(%u/SM)", V, D, IL ? "i" : "s",
                  gridArg > 0 ? "" : (gridArg == -1 ? "fit=" : "2fit="), grid, unsigned(perSm));
    const size_t itemsPerBlock = perBlock * tileItems;
    return {name, "reduce", 4.0 * c.n, [&c, kernel, grid, block, shared, itemsPerBlock] {
                launchKernel("reduceVec", kernel, dim3(grid), dim3(block), shared,
                             static_cast<const int32_t*>(c.in.data()), c.n, itemsPerBlock, c.blockResults.data());
                // Stage 2: the plan's own single block over the grid's results.
                const TilePlan single = planTiles<int32_t>(grid, block, 1);
                launchKernel("reduceBlocksKernel(stage 2)", reduceBlocksKernel<Op, 8>, dim3(1), dim3(block),
                             single.sharedBytes, static_cast<const int32_t*>(c.blockResults.data()),
                             size_t(grid), single.itemsPerBlock, c.result.data());
            }, [&c] { return c.reduceRight(); }};
}

void report(std::FILE* csv, const char* group, size_t n, std::vector<Contestant>& cs) {
    double copyMs = 0, cubReduce = 0, cubScan = 0;
    for (auto& c : cs) {
        if (c.kind == "copy") copyMs = median(c.ms);
        if (c.kind == "cub-reduce") cubReduce = median(c.ms);
        if (c.kind == "cub-scan") cubScan = median(c.ms);
    }
    std::printf("\n== %s n=%zu (copy %.4f ms)\n", group, n, copyMs);
    for (auto& c : cs) {
        c.launch();
        const bool right = c.check ? c.check() : true;
        const double ms = median(c.ms);
        const double lo = *std::min_element(c.ms.begin(), c.ms.end());
        const double hi = *std::max_element(c.ms.begin(), c.ms.end());
        const double vsCub = c.kind == "reduce" ? cubReduce / ms : c.kind == "lookback" ? cubScan / ms : 0;
        // Against the copy: the time a copy of the same bytes (read + written) takes.
        const double copyBytes = 8.0 * n;
        const double vsCopy = copyMs > 0 ? (copyMs * c.bytes / copyBytes) / ms : 0;
        std::printf("  %-44s %9.4f ms [%7.4f..%7.4f] %7.1f GB/s  %5.3fx cub  %5.1f%% copy%s\n", c.name.c_str(),
                    ms, lo, hi, c.bytes / (ms * 1e6), vsCub, 100 * vsCopy, right ? "" : "  WRONG");
        std::fprintf(csv, "%s,%s,%zu,%s,%.6f,%.6f,%.6f,%.4f,%.4f,%d\n", group, c.kind.c_str(), n, c.name.c_str(), ms,
                     lo, hi, vsCub, vsCopy, right ? 1 : 0);
    }
    std::fflush(csv);
    std::fflush(stdout);
}

template <class OpT>
struct CubOp {
    __device__ typename OpT::Element operator()(const typename OpT::Element& a,
                                                const typename OpT::Element& b) const {
        return OpT::apply(a, b);
    }
};

template <class OpT>
void addCub(Case<OpT>& c, std::vector<Contestant>& cs, bool reduce) {
    using T = typename OpT::Element;
    size_t bytes = 0, r = 0;
    if constexpr (std::is_same_v<OpT, Op>) {
        cub::DeviceReduce::Sum(nullptr, r, c.in.data(), c.result.data(), int64_t(c.n));
        cub::DeviceScan::InclusiveSum(nullptr, bytes, c.in.data(), c.out.data(), int64_t(c.n));
    } else {
        cub::DeviceScan::InclusiveScan(nullptr, bytes, c.in.data(), c.out.data(),
                                       CubOp<OpT>{},
                                       int64_t(c.n));
    }
    c.cubTemp = DeviceBuffer<unsigned char>(std::max<size_t>(std::max(bytes, r), 1));
    cs.push_back({"device-to-device copy", "copy", 8.0 * c.n * sizeof(T) / 4, [&c] { c.copyBuf.copyFrom(c.in); }, {}});
    if constexpr (std::is_same_v<OpT, Op>) {
        if (reduce)
            cs.push_back({"cub::DeviceReduce::Sum", "cub-reduce", 4.0 * c.n, [&c, r] {
                              size_t t = r;
                              cub::DeviceReduce::Sum(c.cubTemp.data(), t, c.in.data(), c.result.data(), int64_t(c.n));
                          }, [&c] { return c.reduceRight(); }});
        else
            cs.push_back({"cub::DeviceScan::InclusiveSum", "cub-scan", 8.0 * c.n, [&c, bytes] {
                              size_t t = bytes;
                              cub::DeviceScan::InclusiveSum(c.cubTemp.data(), t, c.in.data(), c.out.data(), int64_t(c.n));
                          }, [&c] { return c.scanRight(); }});
    } else {
        cs.push_back({"cub InclusiveScan", "cub-scan", 2.0 * sizeof(T) * c.n, [&c, bytes] {
                          size_t t = bytes;
                          cub::DeviceScan::InclusiveScan(c.cubTemp.data(), t, c.in.data(), c.out.data(),
                                                         CubOp<OpT>{},
                                                         int64_t(c.n));
                      }, [&c] { return c.scanRight(); }});
    }
}

void reduceGroup(std::FILE* csv, size_t n, int rounds, int batch) {
    Case<Op> c(n);
    const unsigned block = 256;
    std::vector<Contestant> cs;
    addCub(c, cs, true);
    Workspace<Op> ws;
    cs.push_back({"plan reduce (main)", "reduce", 4.0 * n, [&c, &ws, block] {
                      reduce<Op>(c.in.data(), c.n, c.result.data(), block, ws.blockResults.data());
                  }, [&c] { return c.reduceRight(); }});
    for (int g : {1024, -1}) {
        cs.push_back(reduceVariant<2, 1, false>(c, block, g));
        cs.push_back(reduceVariant<2, 2, false>(c, block, g));
        cs.push_back(reduceVariant<2, 4, false>(c, block, g));
        cs.push_back(reduceVariant<4, 1, false>(c, block, g));
        cs.push_back(reduceVariant<4, 2, false>(c, block, g));
        cs.push_back(reduceVariant<8, 1, false>(c, block, g));
        cs.push_back(reduceVariant<2, 2, true>(c, block, g));
        cs.push_back(reduceVariant<2, 4, true>(c, block, g));
        cs.push_back(reduceVariant<4, 2, true>(c, block, g));
    }
    measure(cs, rounds, batch);
    report(csv, "reduce", n, cs);
}

using lookback_reference::LookbackWait;
template <int F, int P, int M = P>
using W = LookbackWait<1, F, P, M>;

void lookbackGroup(std::FILE* csv, size_t n, int rounds, int batch) {
    Case<Op> c(n);
    std::vector<Contestant> cs;
    addCub(c, cs, false);
    Workspace<Op> ws;
    cs.push_back({"plan look-back (main: 256x20 w3000/648)", "lookback", 8.0 * n, [&c, &ws] {
                      lookbackScan<Op, true>(c.in.data(), c.n, c.out.data(), 256, ws.forRun(c.n, 256).tiles);
                  }, [&c] { return c.scanRight(); }});
    cs.push_back(c.lookback<20, W<3000, 648>>("256x20 f3000 p648 (memset)", 256));
    cs.push_back(c.lookback<20, W<2000, 648>>("256x20 f2000 p648", 256));
    cs.push_back(c.lookback<20, W<1000, 648>>("256x20 f1000 p648", 256));
    cs.push_back(c.lookback<20, W<500, 648>>("256x20 f500 p648", 256));
    cs.push_back(c.lookback<20, W<0, 648>>("256x20 f0 p648", 256));
    cs.push_back(c.lookback<20, W<1000, 300>>("256x20 f1000 p300", 256));
    cs.push_back(c.lookback<20, W<1000, 200, 1600>>("256x20 f1000 p200-1600", 256));
    cs.push_back(c.lookback<20, W<0, 100, 1600>>("256x20 f0 p100-1600", 256));
    cs.push_back(c.lookback<20, LookbackWait<2, 1000, 648, 648>>("256x20 f1000 p648 w64", 256));
    cs.push_back(c.lookback<20, LookbackWait<2, 0, 648, 648>>("256x20 f0 p648 w64", 256));
    cs.push_back(c.lookback<20, LookbackWait<4, 0, 648, 648>>("256x20 f0 p648 w128", 256));
    cs.push_back(c.lookback<20, LookbackWait<4, 1000, 648, 648>>("256x20 f1000 p648 w128", 256));
    cs.push_back(c.lookback<20, LookbackWait<4, 3000, 648, 648>>("256x20 f3000 p648 w128", 256));
    cs.push_back(c.lookback<20, LookbackWait<4, 0, 200, 1600>>("256x20 f0 p200-1600 w128", 256));
    cs.push_back(c.lookback<20, LookbackWait<4, 500, 300, 300>>("256x20 f500 p300 w128", 256));
    cs.push_back(c.lookback<20, LookbackWait<8, 0, 648, 648>>("256x20 f0 p648 w256", 256));
    cs.push_back(c.lookback<20, LookbackWait<8, 1000, 648, 648>>("256x20 f1000 p648 w256", 256));
    cs.push_back(c.lookback<12, LookbackWait<4, 0, 648, 648>>("256x12 f0 p648 w128", 256));
    cs.push_back(c.lookback<20, LookbackWait<4, 0, 648, 648>, false, true>("256x20 f0 w128 noprefetch stcs", 256));
    cs.push_back(c.lookback<20, LookbackWait<4, 0, 648, 648>>("512x20 f0 w128", 512));
    cs.push_back(c.lookback<20, W<1000, 648>, false>("256x20 f1000 noprefetch", 256));
    cs.push_back(c.lookback<20, W<1000, 648>, true, true>("256x20 f1000 stcs", 256));
    cs.push_back(c.lookback<20, W<1000, 648>, false, true>("256x20 f1000 noprefetch stcs", 256));
    cs.push_back(c.lookback<20, W<1000, 648>, true, false, 1>("256x20 f1000 nobound", 256));
    cs.push_back(c.lookback<12, W<1000, 648>>("256x12 f1000", 256));
    cs.push_back(c.lookback<12, W<0, 648>>("256x12 f0", 256));
    cs.push_back(c.lookback<28, W<1000, 648>>("256x28 f1000", 256));
    cs.push_back(c.lookback<28, W<3000, 648>>("256x28 f3000", 256));
    cs.push_back(c.lookback<20, W<1000, 648>>("128x20 f1000", 128));
    cs.push_back(c.lookback<28, W<1000, 648>>("128x28 f1000", 128));
    cs.push_back(c.lookback<20, W<1000, 648>>("512x20 f1000", 512));
    cs.push_back(c.lookback<12, W<1000, 648>>("512x12 f1000", 512));
    cs.push_back(c.lookback<20, W<1000, 648>, true, false, 1>("512x20 f1000 nobound", 512));
    measure(cs, rounds, batch);
    report(csv, "lookback", n, cs);
}

template <class OpT, int CHUNK>
void operatorGroup(std::FILE* csv, const char* name, size_t n, int rounds, int batch) {
    Case<OpT> c(n);
    std::vector<Contestant> cs;
    addCub(c, cs, false);
    Workspace<OpT> ws;
    cs.push_back({"plan look-back (main)", "lookback", 2.0 * sizeof(typename OpT::Element) * n, [&c, &ws] {
                      lookbackScan<OpT, true>(c.in.data(), c.n, c.out.data(), 256, ws.forRun(c.n, 256).tiles);
                  }, [&c] { return c.scanRight(); }});
    cs.push_back(c.template lookback<CHUNK, W<3000, 648>>("256 f3000 p648", 256));
    cs.push_back(c.template lookback<CHUNK, W<1000, 648>>("256 f1000 p648", 256));
    cs.push_back(c.template lookback<CHUNK, W<500, 648>>("256 f500 p648", 256));
    cs.push_back(c.template lookback<CHUNK, W<0, 648>>("256 f0 p648", 256));
    cs.push_back(c.template lookback<CHUNK, W<1000, 200, 1600>>("256 f1000 p200-1600", 256));
    cs.push_back(c.template lookback<CHUNK, LookbackWait<4, 0, 648, 648>>("256 f0 p648 w128", 256));
    cs.push_back(c.template lookback<CHUNK, LookbackWait<4, 1000, 648, 648>>("256 f1000 p648 w128", 256));
    cs.push_back(c.template lookback<CHUNK, LookbackWait<8, 0, 648, 648>>("256 f0 p648 w256", 256));
    measure(cs, rounds, batch);
    report(csv, name, n, cs);
}

}  // namespace

int main(int argc, char** argv) {
    if (deviceCount() == 0) {
        std::printf("scanlab-tune: no CUDA device\n");
        return 77;
    }
    const DeviceInfo dev = queryDevice();
    std::printf("scanlab-tune on %s (%d SMs), CUB %d.%d.%d\n", dev.name.c_str(), dev.multiprocessors,
                CUB_MAJOR_VERSION, CUB_MINOR_VERSION, CUB_SUBMINOR_VERSION);
    std::FILE* csv = std::fopen(argc > 1 ? argv[1] : "tune.csv", "w");
    if (!csv) return 2;
    std::fprintf(csv, "group,kind,n,name,median_ms,min_ms,max_ms,vs_cub,vs_copy,right\n");
    const char* only = argc > 2 ? argv[2] : "";
    const int rounds = 25;
    for (int log2n : {24, 28, 20}) {
        const size_t n = size_t(1) << log2n;
        const int batch = std::max(1, int((size_t(1) << 24) / n));
        if (!std::strstr(only, "noreduce")) reduceGroup(csv, n, rounds, batch);
        if (!std::strstr(only, "nolookback")) lookbackGroup(csv, n, rounds, batch);
    }
    for (int log2n : {24}) {  // one size: the bench binaries time every size
        const size_t n = size_t(1) << log2n;
        operatorGroup<Add<float>, 20>(csv, "add-f32", n, rounds, 1);
        operatorGroup<Mssp, 5>(csv, "mssp", n, rounds, 1);
    }
    std::fclose(csv);
    return 0;
}
