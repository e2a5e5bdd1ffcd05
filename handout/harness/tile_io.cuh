// scanlab harness: DO NOT EDIT. Your code goes in student/.
//
// Coalesced loads and stores through shared memory (the "staging buffer" of the
// lecture). A thread wants CHUNK *consecutive* elements in registers, but a warp
// reading that way touches 32 scattered places per load. So the threads first copy
// the data striped (thread t takes elements t, t+W, t+2W, ...: consecutive threads
// read consecutive words, one transaction per warp), then each reads its own
// consecutive chunk back from shared memory.
//
// Shared layout: one pad slot every 32 elements (paddedIndex), so the striped and
// the chunked accesses both hit 32 different banks for 4-byte elements.
#pragma once
#include <cstddef>

#include "harness/platform.cuh"

namespace scanlab {

SCANLAB_HD unsigned paddedIndex(unsigned i) { return i + i / kWarpSize; }

// Shared elements needed to stage `items` (>= 1) elements.
SCANLAB_HD unsigned stagedSlots(unsigned items) { return paddedIndex(items - 1) + 1; }

// The `width` threads numbered `rank` = 0..width-1 (a warp, or a whole block) load
// width*CHUNK elements starting at `in` into `chunk`: thread `rank` gets elements
// rank*CHUNK .. rank*CHUNK+CHUNK-1. Elements at or past `valid` read as `fill`.
// `staging` must hold stagedSlots(width*CHUNK) elements and belong to these threads
// alone. `sync` is the barrier of the group (__syncwarp or __syncthreads); it runs
// once between the two copies and once at the end, so `staging` may be reused at once.
template <int CHUNK, class T, class Sync>
__device__ __forceinline__ void loadChunks(const T* __restrict__ in, size_t valid, T fill,
                                           T* staging, unsigned rank, unsigned width,
                                           T (&chunk)[CHUNK], Sync sync) {
#pragma unroll
    for (int k = 0; k < CHUNK; ++k) {
        const unsigned i = k * width + rank;
        staging[paddedIndex(i)] = i < valid ? in[i] : fill;
    }
    sync();
#pragma unroll
    for (int k = 0; k < CHUNK; ++k) chunk[k] = staging[paddedIndex(rank * CHUNK + k)];
    sync();
}

// The reverse of loadChunks: thread `rank` holds elements rank*CHUNK.. in `chunk`;
// the first `valid` of the group's width*CHUNK elements are written to `out`.
template <int CHUNK, class T, class Sync>
__device__ __forceinline__ void storeChunks(const T (&chunk)[CHUNK], T* staging,
                                            unsigned rank, unsigned width, T* __restrict__ out,
                                            size_t valid, Sync sync) {
#pragma unroll
    for (int k = 0; k < CHUNK; ++k) staging[paddedIndex(rank * CHUNK + k)] = chunk[k];
    sync();
#pragma unroll
    for (int k = 0; k < CHUNK; ++k) {
        const unsigned i = k * width + rank;
        if (i < valid) out[i] = staging[paddedIndex(i)];
    }
    sync();
}

// The barriers to pass as `sync`.
struct BlockSync {
    __device__ void operator()() const { __syncthreads(); }
};
struct WarpSync {
    __device__ void operator()() const { __syncwarp(); }
};

}  // namespace scanlab
