// scanlab grader: task 3's stand-in, in the builds that find the task at fault of a failing
// integration case or application (grader/grading/fault.py; grader/contract/README.md).
//
// There, the student's code of ONE other task runs with this scan: it calls scanIncWarp
// (task 1) exactly as student/warp_scan.cuh's contract says, and the harness's plan
// launches reduceBlocksKernel (task 2) as its phase 1. Written for the grader, correct
// and slow (one element per thread per tile, CHUNK unused): not solution/'s file.
#pragma once
#include <cstddef>

#include "harness/ops.cuh"
#include "harness/platform.cuh"
#include "harness/warp.cuh"
#include "student/reduce.cuh"
#include "student/warp_scan.cuh"

namespace scanlab {

template <class Op, int CHUNK, bool INCLUSIVE>
__global__ void scanBlocksKernel(const typename Op::Element* in, typename Op::Element* out,
                                 size_t n, size_t itemsPerBlock,
                                 const typename Op::Element* blockPrefixes) {
    using T = typename Op::Element;
    SCANLAB_DYNAMIC_SHARED(T, shared);
    T* slots = shared;                      // one per thread (the launch gives CHUNK per thread)
    T* warpTotals = shared + blockDim.x;    // one per warp
    const unsigned tid = threadIdx.x;
    const unsigned warps = blockDim.x / kWarpSize;
    const size_t begin = blockIdx.x * itemsPerBlock;
    const size_t end = n < begin + itemsPerBlock ? n : begin + itemsPerBlock;
    T carry = blockPrefixes != nullptr && blockIdx.x > 0 ? blockPrefixes[blockIdx.x - 1] : Op::identity();
    for (size_t base = begin; base < end; base += blockDim.x) {
        const size_t i = base + tid;
        slots[tid] = i < end ? in[i] : Op::identity();
        __syncwarp();
        const T inclusive = scanIncWarp<Op>(slots, tid);   // the warp's slots are scratch now
        __syncthreads();
        slots[tid] = inclusive;
        if (laneId() == kWarpSize - 1) warpTotals[warpId()] = inclusive;
        __syncthreads();
        T before = carry;                   // everything before this thread's warp
        for (unsigned w = 0; w < warpId(); ++w) before = Op::apply(before, warpTotals[w]);
        const T value = INCLUSIVE ? Op::apply(before, inclusive)
                                  : laneId() == 0 ? before : Op::apply(before, slots[tid - 1]);
        if (i < end) out[i] = value;
        for (unsigned w = 0; w < warps; ++w) carry = Op::apply(carry, warpTotals[w]);
        __syncthreads();                    // slots and warpTotals are the next tile's
    }
}

}  // namespace scanlab
