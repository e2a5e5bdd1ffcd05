// Task 2: block-level reduce and the two-stage reduction of a whole array.
//                                                                  YOUR FILE: edit it.
//
// reduceBlocksKernel runs twice (harness/tasks/reduce_task.cuh):
//   stage 1: gridDim.x blocks; block b reduces its contiguous range of the input
//            [b*itemsPerBlock, (b+1)*itemsPerBlock) and writes blockResults[b];
//   stage 2: one block reduces those per-block results into the final value.
// Each thread folds CHUNK *consecutive* elements sequentially (Brent's theorem:
// sequential work per thread, then a short parallel tree), and the block loops over
// its range one tile at a time. Read through shared memory (loadChunks in
// harness/tile_io.cuh) so that global loads are coalesced.
//
// The operator may be non-commutative (MSSP): the result must be
// in[begin] (+) in[begin+1] (+) ... in this order. Never reorder operands.
//
// Shared memory: the kernel is launched with tileSharedBytes<Element>(blockDim.x)
// bytes of dynamic shared memory (harness/policy.cuh); get it with
// SCANLAB_DYNAMIC_SHARED. blockDim.x is a multiple of 32, from 32 to 1024.
#pragma once
#include <cstddef>

#include "harness/baselines.cuh"
#include "harness/ops.cuh"
#include "harness/platform.cuh"
#include "harness/runtime.cuh"
#include "harness/tile_io.cuh"
#include "harness/warp.cuh"

namespace scanlab {

// Reduces `value` over the 32 lanes of a warp (all lanes call it). Lane 0 returns
// value[lane 0] (+) value[lane 1] (+) ... (+) value[lane 31]; other lanes return
// partial results.
template <class Op>
__device__ typename Op::Element reduceWarp(typename Op::Element value) {
    //@@ solution
    // Tree with growing distance: after the step with distance h, lane l (l a
    // multiple of 2h) holds lanes [l, l+2h) in order, so lane 0 ends with all 32.
    const unsigned lane = laneId();
#pragma unroll
    for (unsigned h = 1; h < kWarpSize; h <<= 1) {
        const auto right = shuffleDown(value, h);
        if (lane + h < kWarpSize) value = Op::apply(value, right);
    }
    return value;
    //@@ placeholder
    //| // TODO(task 2): a tree over the warp's lanes (shuffleDown in harness/warp.cuh).
    //| notImplemented();
    //| return value;
    //@@ end
}

// Reduces one value per thread over the whole block (all threads call it, in
// thread order). Thread 0 returns the result. `warpTotals` is shared memory of
// blockDim.x/32 elements; it is free for reuse when the function returns.
template <class Op>
__device__ typename Op::Element reduceBlock(typename Op::Element value,
                                            typename Op::Element* warpTotals) {
    //@@ solution
    const unsigned lane = laneId();
    const unsigned warp = warpId();
    const unsigned numWarps = blockDim.x / kWarpSize;
    value = reduceWarp<Op>(value);
    if (lane == 0) warpTotals[warp] = value;
    __syncthreads();
    if (warp == 0) {
        value = lane < numWarps ? warpTotals[lane] : Op::identity();
        value = reduceWarp<Op>(value);
    }
    __syncthreads();  // everyone has read warpTotals before the caller reuses it
    return value;
    //@@ placeholder
    //| // TODO(task 2): reduce each warp, combine the warp totals through warpTotals.
    //| notImplemented();
    //| return value;
    //@@ end
}

//@@ solution
// The reference's helpers, in a namespace of their own (each task is graded with the
// reference's other files, whose names must not clash with a student's).
namespace reduce_reference {
// 4-byte elements in chunks of a multiple of 4 may travel as 16-byte vectors: a lane
// loads CHUNK/4 vectors a warp step (a warp moves 512 bytes a load instruction, a
// quarter of the instructions of 4-byte loads), and kStepsInFlight warp steps are
// loaded ahead, so each warp keeps kStepsInFlight * 32 * CHUNK * 4 bytes in flight
// while it folds. 0: the 4-byte path below for every element type (the reference's
// measured one; issue 61 measures the others: bench/tune_kernels.cu).
#ifndef SCANLAB_REDUCE_STEPS_IN_FLIGHT
#define SCANLAB_REDUCE_STEPS_IN_FLIGHT 0
#endif
constexpr int kStepsInFlight = SCANLAB_REDUCE_STEPS_IN_FLIGHT;
template <class T, int CHUNK>
constexpr bool kVectorSteps = kStepsInFlight > 0 && sizeof(T) == 4 && CHUNK % 4 == 0;

// Where vector v of a warp step of V vectors a lane lies in the warp's staging (32*V
// vectors, no padding, so 16-byte aligned): for V a power of two, v's bits 0-2 are
// XORed with bits 3.. of it, so the striped stores (v = k*32 + lane) and the chunked
// reads (v = lane*V + k) of a quarter-warp each hit 8 different 16-byte bank groups.
// For odd V the chunked reads already do.
template <int V>
__device__ __forceinline__ unsigned swizzledVector(unsigned v) {
    constexpr unsigned kMask = (V & (V - 1)) == 0 ? unsigned(V - 1) & 7u : 0u;
    return v ^ ((v >> 3) & kMask);
}

// The fold of in[begin, end), in order, by the 32 lanes of one warp (all call it);
// lane 0 returns it. `staging`: 32*CHUNK elements of the warp's, 16-byte aligned.
template <class Op, int CHUNK>
__device__ typename Op::Element foldSliceVectors(const typename Op::Element* __restrict__ in,
                                                 size_t begin, size_t end,
                                                 typename Op::Element* staging, unsigned lane) {
    using T = typename Op::Element;
    constexpr int V = CHUNK / 4;
    constexpr int D = kStepsInFlight;
    constexpr size_t kStep = size_t(kWarpSize) * CHUNK;
    uint4* vectors = reinterpret_cast<uint4*>(staging);
    const bool aligned = detail::vectorAligned(in + begin);
    uint4 ahead[D][V];  // D warp steps, striped: vector k of step d at k*32 + lane
    auto fetch = [&](int d, size_t base) {
#pragma unroll
        for (int k = 0; k < V; ++k) {
            const size_t i = base + 4 * (size_t(k) * kWarpSize + lane);
            if (aligned && i + 4 <= end) {
                ahead[d][k] = *reinterpret_cast<const uint4*>(in + i);
            } else {
                T part[4];
#pragma unroll
                for (int j = 0; j < 4; ++j) part[j] = i + j < end ? in[i + j] : Op::identity();
                ahead[d][k] = detail::packVector(part);
            }
        }
    };
#pragma unroll
    for (int d = 0; d < D; ++d) fetch(d, begin + d * kStep);
    T acc = Op::identity();
    for (size_t at = begin; at < end; at += D * kStep) {
#pragma unroll
        for (int d = 0; d < D; ++d) {
            const size_t base = at + d * kStep;
            if (base < end) {
#pragma unroll
                for (int k = 0; k < V; ++k) vectors[swizzledVector<V>(k * kWarpSize + lane)] = ahead[d][k];
                __syncwarp();
                fetch(d, base + D * kStep);  // the step D ahead, into the registers just freed
                // This lane's CHUNK consecutive elements, folded in order.
                T x = Op::identity();
#pragma unroll
                for (int k = 0; k < V; ++k) {
                    T part[4];
                    detail::unpackVector(vectors[swizzledVector<V>(lane * V + k)], part);
#pragma unroll
                    for (int j = 0; j < 4; ++j) x = k == 0 && j == 0 ? part[0] : Op::apply(x, part[j]);
                }
                __syncwarp();  // all lanes have read before the next step overwrites staging
                x = reduceWarp<Op>(x);
                if (lane == 0) acc = Op::apply(acc, x);
            }
        }
    }
    return acc;
}
}  // namespace reduce_reference
//@@ placeholder
//| // Helpers of your own may go here, best in a namespace of your own: each task is
//| // graded with only the contracts of the other files.
//@@ end

// Stage 1 and stage 2 of the reduction (see the top of this file).
template <class Op, int CHUNK>
__global__ void reduceBlocksKernel(const typename Op::Element* __restrict__ in, size_t n,
                                   size_t itemsPerBlock,
                                   typename Op::Element* __restrict__ blockResults) {
    //@@ solution
    // Each warp takes a contiguous slice of the block's range, so it can walk its
    // slice with only warp barriers; the block combines the warps' results once,
    // in warp order, at the end.
    using T = typename Op::Element;
    SCANLAB_DYNAMIC_SHARED(T, shared);
    const unsigned lane = laneId();
    const unsigned warp = warpId();
    const unsigned numWarps = blockDim.x / kWarpSize;
    constexpr unsigned kWarpTile = kWarpSize * CHUNK;
    T* staging = shared + warp * stagedSlots(kWarpTile);
    T* warpTotals = shared + numWarps * stagedSlots(kWarpTile);

    const size_t itemsPerWarp = itemsPerBlock / numWarps;
    const size_t begin = blockIdx.x * itemsPerBlock + warp * itemsPerWarp;
    const size_t limit = begin + itemsPerWarp;
    const size_t end = n < limit ? n : limit;
    T warpAcc = Op::identity();  // meaningful in lane 0
    if constexpr (reduce_reference::kVectorSteps<T, CHUNK>) {
        // Unpadded staging, 16-byte aligned: 32*CHUNK elements a warp (of its
        // stagedSlots(kWarpTile)).
        warpAcc = reduce_reference::foldSliceVectors<Op, CHUNK>(in, begin, end, shared + warp * kWarpTile,
                                                                lane);
    } else {
        // Software pipelining: the global loads of the next warp tile are issued before
        // this tile is folded, so the memory system always has a tile in flight per warp.
        // (The same staging as loadChunks in harness/tile_io.cuh, split in two.)
        T ahead[CHUNK];  // the next tile, striped: ahead[k] = in[base + k*32 + lane]
        auto fetch = [&](size_t base) {
#pragma unroll
            for (int k = 0; k < CHUNK; ++k) {
                const size_t i = base + k * kWarpSize + lane;
                ahead[k] = i < end ? in[i] : Op::identity();
            }
        };
        if (begin < end) fetch(begin);
        for (size_t base = begin; base < end; base += kWarpTile) {
#pragma unroll
            for (int k = 0; k < CHUNK; ++k) staging[paddedIndex(k * kWarpSize + lane)] = ahead[k];
            __syncwarp();
            if (base + kWarpTile < end) fetch(base + kWarpTile);
            // This lane's CHUNK consecutive elements, folded in order.
            T x = staging[paddedIndex(lane * CHUNK)];
#pragma unroll
            for (int k = 1; k < CHUNK; ++k) x = Op::apply(x, staging[paddedIndex(lane * CHUNK + k)]);
            __syncwarp();  // all lanes have read before the next tile overwrites staging
            x = reduceWarp<Op>(x);
            if (lane == 0) warpAcc = Op::apply(warpAcc, x);
        }
    }
    const T blockAcc = reduceBlock<Op>(lane == 0 ? warpAcc : Op::identity(), warpTotals);
    if (threadIdx.x == 0) blockResults[blockIdx.x] = blockAcc;
    //@@ placeholder
    //| // TODO(task 2): replace this placeholder (thread 0 folds the whole range).
    //| baseline::reduceBlocksSequential<Op>(in, n, itemsPerBlock, blockResults);
    //@@ end
}

}  // namespace scanlab
