// scanlab grader: task 1's contract in the build of another task (grader/contract/README.md).
//
// scanIncWarp, the grader's own: the other tasks' kernels (task 3's scanBlocksKernel,
// task 4's look-back) call it, so it is a definition (a __device__ function is inlined
// only from its own translation unit without -rdc). The register scan of the lecture,
// as fast as the reference's, so a task 3 or 4 timed with it is timed as the reference
// is; it is not solution/'s file, and nothing else of task 1 is here.
#pragma once
#include "harness/ops.cuh"
#include "harness/platform.cuh"
#include "harness/warp.cuh"

namespace scanlab {

template <class Op>
__device__ typename Op::Element scanIncWarp(typename Op::Element* sh, unsigned idx) {
    using T = typename Op::Element;
    const unsigned lane = idx % kWarpSize;
    T x = sh[idx];
#pragma unroll
    for (unsigned d = 1; d < kWarpSize; d *= 2) {
        const T from = shuffleUp(x, d);
        if (lane >= d) x = Op::apply(from, x);
    }
    return x;
}

}  // namespace scanlab
