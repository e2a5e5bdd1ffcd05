// A student's task 1 written for lockstep warps (the pre-Volta textbook version):
// no __syncwarp between reading a neighbour's slot and writing one's own. Used by
// test_harness.cpp to check that the harness, run on the emulator, rejects it.
// reduce.cuh and scan.cuh come from solution/ (next on the include path); scan.cuh
// picks up this file for its per-warp scans.
#pragma once
#include "harness/ops.cuh"
#include "harness/platform.cuh"

namespace scanlab {

template <class Op>
__device__ typename Op::Element scanIncWarp(typename Op::Element* sh, unsigned idx) {
    const unsigned lane = idx % kWarpSize;
    for (unsigned h = 1; h < kWarpSize; h <<= 1) {
        if (lane >= h) sh[idx] = Op::apply(sh[idx - h], sh[idx]);  // races with lane idx+h
    }
    return sh[idx];
}

}  // namespace scanlab
