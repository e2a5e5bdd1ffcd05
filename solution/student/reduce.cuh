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
    T warpAcc = Op::identity();  // meaningful in lane 0
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
    const T blockAcc = reduceBlock<Op>(lane == 0 ? warpAcc : Op::identity(), warpTotals);
    if (threadIdx.x == 0) blockResults[blockIdx.x] = blockAcc;
    //@@ placeholder
    //| // TODO(task 2): replace this placeholder (thread 0 folds the whole range).
    //| baseline::reduceBlocksSequential<Op>(in, n, itemsPerBlock, blockResults);
    //@@ end
}

}  // namespace scanlab
