// Task 1: warp-level inclusive scan (scanIncWarp).                 YOUR FILE: edit it.
//
// Implement scanIncWarp with the Hillis-Steele pattern of the lecture: log2(32) = 5
// steps; in step d every lane i with i >= 2^d combines the value 2^d lanes to its
// left into its own. Use the lane index (threadIdx.x % 32), not the thread index.
//
// Since Volta the lanes of a warp are scheduled independently: they do NOT run in
// lockstep. Code that reads a neighbour's shared-memory slot and then writes its own
// needs a __syncwarp() between the read and the write, or use register shuffles
// (shuffleUp in harness/warp.cuh). The CPU emulator (make emu-test) runs the lanes
// in a random order and catches code that forgets this.
//
// Operators need not be commutative: always apply(earlier, later).
#pragma once
#include "harness/ops.cuh"
#include "harness/platform.cuh"
#include "harness/warp.cuh"
#include "harness/baselines.cuh"

namespace scanlab {

// Called by all 32 lanes of a warp, with idx = threadIdx.x. On entry sh[idx] holds
// this lane's element, and the warp's 32 elements sh[idx - lane .. idx - lane + 31]
// are visible to all its lanes (the caller has synchronized).
// Returns the inclusive scan of those elements up to and including this lane's.
// The warp's 32 slots of sh may be used as scratch and are left unspecified.
template <class Op>
__device__ typename Op::Element scanIncWarp(typename Op::Element* sh, unsigned idx) {
    //@@ solution
    // Register version: one shuffle per step, no shared-memory traffic. The
    // shuffles synchronize the warp, so no lane can run ahead of another.
    using T = typename Op::Element;
    const unsigned lane = idx % kWarpSize;
    T x = sh[idx];
#pragma unroll
    for (unsigned h = 1; h < kWarpSize; h <<= 1) {
        const T left = shuffleUp(x, h);
        if (lane >= h) x = Op::apply(left, x);
    }
    return x;
    //@@ placeholder
    //| // TODO(task 1): replace this placeholder (one lane scans sequentially) with
    //| // the 5-step parallel scan.
    //| return baseline::scanIncWarpSequential<Op>(sh, idx);
    //@@ end
}

}  // namespace scanlab
