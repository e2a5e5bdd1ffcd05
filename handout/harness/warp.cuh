// scanlab harness: students, do not edit (your code goes in student/); maintainers edit it here.
//
// Warp shuffles for any element type: CUDA's __shfl_*_sync move 32-bit words, so an
// element (a float, or a 16-byte MssTuple) is moved one word at a time. All lanes
// named in `mask` must call these together (default: the whole warp). The emulator's
// messages name the line that called them (SCANLAB_CALLER_SITE), then the line here.
#pragma once
#include <cstring>

#include "harness/platform.cuh"

namespace scanlab {

namespace detail {
template <class T, class Shuffle>
__device__ __forceinline__ T shuffleWords(T value, Shuffle shuffle) {
    static_assert(sizeof(T) % sizeof(unsigned) == 0, "element size must be a multiple of 4");
    constexpr int kWords = sizeof(T) / sizeof(unsigned);
    unsigned words[kWords];
    memcpy(words, &value, sizeof(T));
#pragma unroll
    for (int w = 0; w < kWords; ++w) words[w] = shuffle(words[w]);
    memcpy(&value, words, sizeof(T));
    return value;
}
}  // namespace detail

// The value of lane (lane - delta); lanes below `delta` get their own value back.
template <class T>
__device__ __forceinline__ T shuffleUp(T value, unsigned delta, unsigned mask = kFullMask,
                                   SCANLAB_CALLER_SITE) {
    return detail::shuffleWords(value,
                                [=](unsigned w) { return __shfl_up_sync(mask, w, delta); });
}

// The value of lane (lane + delta); lanes past 31 - delta get their own value back.
template <class T>
__device__ __forceinline__ T shuffleDown(T value, unsigned delta, unsigned mask = kFullMask,
                                   SCANLAB_CALLER_SITE) {
    return detail::shuffleWords(value,
                                [=](unsigned w) { return __shfl_down_sync(mask, w, delta); });
}

// The value of lane `source`.
template <class T>
__device__ __forceinline__ T shuffleIndex(T value, int source, unsigned mask = kFullMask,
                                   SCANLAB_CALLER_SITE) {
    return detail::shuffleWords(value,
                                [=](unsigned w) { return __shfl_sync(mask, w, source); });
}

__device__ __forceinline__ unsigned laneId() { return threadIdx.x % kWarpSize; }
__device__ __forceinline__ unsigned warpId() { return threadIdx.x / kWarpSize; }

}  // namespace scanlab
