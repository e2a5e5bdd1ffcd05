// scanlab grader: task 2's contract in the build of another task (grader/contract/README.md).
//
// reduceBlocksKernel is declared only: task 3's plan launches it as its phase 1, and
// the trusted reference unit (grader/contract/reference/reference_unit.cu, compiled
// apart) defines it for every operator of the manifest; a launch calls its host stub,
// so no -rdc and no speed lost. reduceWarp and reduceBlock, which scan.cuh may call
// (handout README, section 2), are the grader's own definitions (a __device__ function
// is inlined only from its own unit): the lecture's shuffle tree and two-level block
// reduction, as fast as the reference's, so a scan that calls them is timed as the
// reference's is. Not solution/'s file; none of its other code.
#pragma once
#include <cstddef>

#include "harness/ops.cuh"
#include "harness/platform.cuh"
#include "harness/warp.cuh"

namespace scanlab {

// Lane 0: value[lane 0] (+) ... (+) value[lane 31]; after the step with distance d,
// lane l (a multiple of 2d) holds lanes l .. l+2d-1, in order.
template <class Op>
__device__ typename Op::Element reduceWarp(typename Op::Element value) {
    const unsigned lane = laneId();
#pragma unroll
    for (unsigned d = 1; d < kWarpSize; d *= 2) {
        const typename Op::Element right = shuffleDown(value, d);
        if (lane + d < kWarpSize) value = Op::apply(value, right);
    }
    return value;
}

// Thread 0: the fold of every thread's value, in thread order. warpTotals: blockDim.x/32
// elements of shared memory, free again on return.
template <class Op>
__device__ typename Op::Element reduceBlock(typename Op::Element value,
                                            typename Op::Element* warpTotals) {
    const unsigned lane = laneId();
    value = reduceWarp<Op>(value);
    if (lane == 0) warpTotals[warpId()] = value;
    __syncthreads();
    if (warpId() == 0) {
        value = lane < blockDim.x / kWarpSize ? warpTotals[lane] : Op::identity();
        value = reduceWarp<Op>(value);
    }
    __syncthreads();
    return value;
}

template <class Op, int CHUNK>
__global__ void reduceBlocksKernel(const typename Op::Element* __restrict__ in, size_t n,
                                   size_t itemsPerBlock,
                                   typename Op::Element* __restrict__ blockResults);

}  // namespace scanlab
