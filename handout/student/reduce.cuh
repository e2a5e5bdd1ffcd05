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
    // TODO(task 2): a tree over the warp's lanes (shuffleDown in harness/warp.cuh).
    notImplemented();
    return value;
}

// Reduces one value per thread over the whole block (all threads call it, in
// thread order). Thread 0 returns the result. `warpTotals` is shared memory of
// blockDim.x/32 elements; it is free for reuse when the function returns.
template <class Op>
__device__ typename Op::Element reduceBlock(typename Op::Element value,
                                            typename Op::Element* warpTotals) {
    // TODO(task 2): reduce each warp, combine the warp totals through warpTotals.
    notImplemented();
    return value;
}

// Stage 1 and stage 2 of the reduction (see the top of this file).
template <class Op, int CHUNK>
__global__ void reduceBlocksKernel(const typename Op::Element* __restrict__ in, size_t n,
                                   size_t itemsPerBlock,
                                   typename Op::Element* __restrict__ blockResults) {
    // TODO(task 2): replace this placeholder (thread 0 folds the whole range).
    baseline::reduceBlocksSequential<Op>(in, n, itemsPerBlock, blockResults);
}

}  // namespace scanlab
