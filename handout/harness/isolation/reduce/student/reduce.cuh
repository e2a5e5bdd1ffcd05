// scanlab harness: students, do not edit (your code goes in student/); maintainers edit it here.
//
// The harness's own task 2, for `make grade-local` (harness/host/isolation.h): it
// stands in for the reference's reduce where another task (task 3's phase 1, or a
// scan that calls reduceWarp / reduceBlock) uses it, holding to the contracts of
// student/reduce.cuh and no more: lanes other than 0 (threads other than 0) return
// values that are not the total, and warpTotals is overwritten. Correct and slow (one
// lane gathers the warp, one warp at a time, thread 0 folds a block's range): it is not
// a solution of task 2.
#pragma once
#include <cstddef>

#include "harness/baselines.cuh"
#include "harness/ops.cuh"
#include "harness/platform.cuh"
#include "harness/warp.cuh"

namespace scanlab {

template <class Op>
__device__ typename Op::Element reduceWarp(typename Op::Element value) {
    using T = typename Op::Element;
    T acc = shuffleIndex(value, 0);
    for (int lane = 1; lane < kWarpSize; ++lane) acc = Op::apply(acc, shuffleIndex(value, lane));
    // Lane 0's answer; the others return something partial, as the contract allows.
    return laneId() == 0 ? acc : Op::apply(value, value);
}

template <class Op>
__device__ typename Op::Element reduceBlock(typename Op::Element value,
                                            typename Op::Element* warpTotals) {
    using T = typename Op::Element;
    const unsigned warps = blockDim.x / kWarpSize;
    const T mine = reduceWarp<Op>(value);
    if (laneId() == 0) warpTotals[warpId()] = mine;
    __syncthreads();
    T acc = Op::identity();
    if (threadIdx.x == 0)
        for (unsigned w = 0; w < warps; ++w) acc = Op::apply(acc, warpTotals[w]);
    __syncthreads();  // everyone is done with warpTotals ...
    if (threadIdx.x < warps) warpTotals[threadIdx.x] = Op::apply(value, value);  // ... which is junk now
    __syncthreads();
    return threadIdx.x == 0 ? acc : Op::apply(value, value);
}

template <class Op, int CHUNK>
__global__ void reduceBlocksKernel(const typename Op::Element* __restrict__ in, size_t n,
                                   size_t itemsPerBlock,
                                   typename Op::Element* __restrict__ blockResults) {
    baseline::reduceBlocksSequential<Op>(in, n, itemsPerBlock, blockResults);
}

}  // namespace scanlab
