// Exercise: the split pass of a radix sort (application radix-sort).  YOUR FILE: edit it.
//
// A least-significant-digit radix sort orders 32-bit keys one bit at a time, from bit 0
// up to bit 31. Each pass is a split: a STABLE partition of the keys by one bit, the
// keys whose bit is 0 first, in the order they came, then the keys whose bit is 1, in
// the order they came. Stability is what makes the passes add up: after the pass on
// bit b, the keys are sorted by their b+1 lowest bits.
//
// A split is two stream compactions in one (handout/apps/compaction.h shows one).
// For one pass on bit `bit` (harness/host/student_unit.cu runs the three steps):
//   1. splitFlagsKernel:   isZero[i] = 1 where bit `bit` of keys[i] is 0, else 0.
//   2. your exclusive scan (task 3) of isZero gives zerosBefore[i], the number of
//      0-keys before key i.
//   3. splitScatterKernel: with totalZeros = zerosBefore[n-1] + isZero[n-1] (the last
//      key counts too), key i goes to
//          out[zerosBefore[i]]                       if its bit is 0,
//          out[totalZeros + (i - zerosBefore[i])]    if its bit is 1
//      (i - zerosBefore[i] keys before it have their bit set).
//
// Both kernels are launched with enough threads for n elements, up to 1024 blocks
// (harness/policy.cuh: kMaxBlocks): loop over i with a grid-stride loop, as the map
// kernels of apps/compaction.h do. n < 2^31, so the counts fit in int32_t.
//
// Check it: `make apps` (or `scanlab-emu app radix-sort --n 4099`) sorts random keys
// and names the first wrong index after the first pass and after all 32.
#pragma once
#include <cstddef>
#include <cstdint>

#include "harness/platform.cuh"
#include "harness/runtime.cuh"

namespace scanlab {

__global__ void splitFlagsKernel(const uint32_t* __restrict__ keys, size_t n, int bit,
                                 int32_t* __restrict__ isZero) {
    // TODO(exercise split): isZero[i] = 1 where bit `bit` of keys[i] is 0 (step 1).
    notImplemented();
}

__global__ void splitScatterKernel(const uint32_t* __restrict__ keys,
                                   const int32_t* __restrict__ isZero,
                                   const int32_t* __restrict__ zerosBefore, size_t n, int bit,
                                   uint32_t* __restrict__ out) {
    // TODO(exercise split): write each key to its place (step 3).
    notImplemented();
}

}  // namespace scanlab
