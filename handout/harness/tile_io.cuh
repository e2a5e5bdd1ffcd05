// scanlab harness: students, do not edit (your code goes in student/); maintainers edit it here.
//
// Coalesced loads and stores through shared memory (the "staging buffer" of the
// lecture). A thread wants CHUNK *consecutive* elements in registers, but a warp
// reading that way touches 32 scattered places per load. So the threads first copy
// the data striped (thread t takes elements t, t+W, t+2W, ...: consecutive threads
// read consecutive words, one transaction per warp), then each reads its own
// consecutive chunk back from shared memory.
//
// Shared layout: one pad slot every 32 elements (paddedIndex), so the striped and
// the chunked accesses both hit 32 different banks for 4-byte elements; or, for
// 4-byte elements in chunks of 4, 12, 20 or 28, 16-byte vectors without padding
// (kVectorChunks below). Either fits in stagedSlots(width*CHUNK) elements.
//
// loadChunks and storeChunks do the whole trip. A kernel that keeps its tile in shared
// memory while it waits (task 4's reference, across the look-back) takes the steps
// apart: stageTile, readStagedChunk / writeStagedChunk, storeStaged.
#pragma once
#include <cstddef>
#include <cstring>

#include "harness/platform.cuh"

namespace scanlab {

SCANLAB_HD unsigned paddedIndex(unsigned i) { return i + i / kWarpSize; }

// Shared elements needed to stage `items` (>= 1) elements.
SCANLAB_HD unsigned stagedSlots(unsigned items) { return paddedIndex(items - 1) + 1; }

// Elements of 4 bytes in chunks of 4, 12, 20, 28 (CHUNK % 8 == 4) travel as 16-byte
// vectors (uint4): one load instruction moves 4 elements, so a warp moves 512
// consecutive bytes at once, and a quarter-warp's 16-byte reads of its chunks from
// shared memory (chunks CHUNK words apart, CHUNK/4 odd) hit 32 different banks
// without padding. Other elements and chunks take the padded path, one element at a
// time. Both use at most stagedSlots(width*CHUNK) elements of staging.
template <class T, int CHUNK>
constexpr bool kVectorChunks = sizeof(T) == 4 && CHUNK % 8 == 4;

namespace detail {
template <class T>
__device__ __forceinline__ uint4 packVector(const T* v) {
    uint4 word;
    memcpy(&word, v, sizeof word);
    return word;
}
template <class T>
__device__ __forceinline__ void unpackVector(uint4 word, T* v) {
    memcpy(v, &word, sizeof word);
}
// One 16-byte copy from global to shared memory, asynchronous where the GPU can
// (cp.async, compute capability >= 8.0): the data does not pass through registers.
// waitCopiesAsync waits for this thread's copies. Elsewhere (older GPUs, the
// emulator) a plain copy, and nothing to wait for.
__device__ __forceinline__ void copyAsync16(uint4* shared, const uint4* global) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 800
    const unsigned to = static_cast<unsigned>(__cvta_generic_to_shared(shared));
    asm volatile("cp.async.cg.shared.global [%0], [%1], 16;" ::"r"(to), "l"(global) : "memory");
#else
    *shared = *global;
#endif
}
__device__ __forceinline__ void waitCopiesAsync() {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 800
    asm volatile("cp.async.wait_all;" ::: "memory");
#endif
}
// Whether `p` may be read and written as 16-byte vectors.
template <class T>
__device__ __forceinline__ bool vectorAligned(const T* p) {
    return reinterpret_cast<unsigned long long>(p) % sizeof(uint4) == 0;
}
}  // namespace detail

// The four steps of a staged tile, for a group of `width` threads numbered `rank` =
// 0..width-1 (a warp, or a whole block) and a tile of width*CHUNK elements. `staging`
// holds stagedSlots(width*CHUNK) elements and belongs to these threads alone; between
// two steps that touch other threads' elements comes the group's barrier.
//
// stageTile: the tile from `in` into `staging`, coalesced (striped: consecutive threads
// copy consecutive words); elements at or past `valid` read as `fill`. Each thread
// waits for its own copies before it returns; the barrier after it makes them visible
// to the group. On GPUs of compute capability 8.0 and later the 16-byte copies go from
// global to shared memory without passing through registers (cp.async), so a thread
// can have the whole of its part of the tile in flight at once.
template <int CHUNK, class T>
__device__ __forceinline__ void stageTile(const T* __restrict__ in, size_t valid, T fill,
                                          T* staging, unsigned rank, unsigned width) {
    if constexpr (kVectorChunks<T, CHUNK>) {
        constexpr int kVectors = CHUNK / 4;
        uint4* vectors = reinterpret_cast<uint4*>(staging);
        const bool aligned = detail::vectorAligned(in);
#pragma unroll
        for (int k = 0; k < kVectors; ++k) {
            const unsigned v = k * width + rank;  // striped: a warp reads 512 bytes in a row
            if (aligned && 4 * size_t(v) + 4 <= valid) {
                detail::copyAsync16(&vectors[v], &reinterpret_cast<const uint4*>(in)[v]);
            } else {
                T part[4];
#pragma unroll
                for (int j = 0; j < 4; ++j) part[j] = 4 * v + j < valid ? in[4 * v + j] : fill;
                vectors[v] = detail::packVector(part);
            }
        }
        detail::waitCopiesAsync();
    } else {
#pragma unroll
        for (int k = 0; k < CHUNK; ++k) {
            const unsigned i = k * width + rank;
            staging[paddedIndex(i)] = i < valid ? in[i] : fill;
        }
    }
}

// readStagedChunk: thread `rank`'s CHUNK consecutive elements (rank*CHUNK ..) of a
// staged tile into registers.
template <int CHUNK, class T>
__device__ __forceinline__ void readStagedChunk(const T* staging, unsigned rank, T (&chunk)[CHUNK]) {
    if constexpr (kVectorChunks<T, CHUNK>) {
        constexpr int kVectors = CHUNK / 4;
        const uint4* vectors = reinterpret_cast<const uint4*>(staging);
#pragma unroll
        for (int k = 0; k < kVectors; ++k)
            detail::unpackVector(vectors[rank * kVectors + k], &chunk[4 * k]);
    } else {
#pragma unroll
        for (int k = 0; k < CHUNK; ++k) chunk[k] = staging[paddedIndex(rank * CHUNK + k)];
    }
}

// writeStagedChunk: the reverse, into the same places.
template <int CHUNK, class T>
__device__ __forceinline__ void writeStagedChunk(const T (&chunk)[CHUNK], T* staging, unsigned rank) {
    if constexpr (kVectorChunks<T, CHUNK>) {
        constexpr int kVectors = CHUNK / 4;
        uint4* vectors = reinterpret_cast<uint4*>(staging);
#pragma unroll
        for (int k = 0; k < kVectors; ++k)
            vectors[rank * kVectors + k] = detail::packVector(&chunk[4 * k]);
    } else {
#pragma unroll
        for (int k = 0; k < CHUNK; ++k) staging[paddedIndex(rank * CHUNK + k)] = chunk[k];
    }
}

// storeStaged: the first `valid` elements of a staged tile to `out`, coalesced.
template <int CHUNK, class T>
__device__ __forceinline__ void storeStaged(const T* staging, unsigned rank, unsigned width,
                                            T* __restrict__ out, size_t valid) {
    if constexpr (kVectorChunks<T, CHUNK>) {
        constexpr int kVectors = CHUNK / 4;
        const uint4* vectors = reinterpret_cast<const uint4*>(staging);
        const bool aligned = detail::vectorAligned(out);
#pragma unroll
        for (int k = 0; k < kVectors; ++k) {
            const unsigned v = k * width + rank;
            if (aligned && 4 * size_t(v) + 4 <= valid) {
                reinterpret_cast<uint4*>(out)[v] = vectors[v];
            } else {
                T part[4];
                detail::unpackVector(vectors[v], part);
#pragma unroll
                for (int j = 0; j < 4; ++j)
                    if (4 * v + j < valid) out[4 * v + j] = part[j];
            }
        }
    } else {
#pragma unroll
        for (int k = 0; k < CHUNK; ++k) {
            const unsigned i = k * width + rank;
            if (i < valid) out[i] = staging[paddedIndex(i)];
        }
    }
}

// The `width` threads load width*CHUNK elements starting at `in` into `chunk`: thread
// `rank` gets elements rank*CHUNK .. rank*CHUNK+CHUNK-1 (stageTile, then
// readStagedChunk). Elements at or past `valid` read as `fill`. `sync` is the barrier of
// the group (__syncwarp or __syncthreads); it runs once between the two steps and once
// at the end, so `staging` may be reused at once.
template <int CHUNK, class T, class Sync>
__device__ __forceinline__ void loadChunks(const T* __restrict__ in, size_t valid, T fill,
                                           T* staging, unsigned rank, unsigned width,
                                           T (&chunk)[CHUNK], Sync sync) {
    stageTile<CHUNK>(in, valid, fill, staging, rank, width);
    sync();
    readStagedChunk<CHUNK>(staging, rank, chunk);
    sync();
}

// The reverse of loadChunks: thread `rank` holds elements rank*CHUNK.. in `chunk`;
// the first `valid` of the group's width*CHUNK elements are written to `out`.
template <int CHUNK, class T, class Sync>
__device__ __forceinline__ void storeChunks(const T (&chunk)[CHUNK], T* staging,
                                            unsigned rank, unsigned width, T* __restrict__ out,
                                            size_t valid, Sync sync) {
    writeStagedChunk<CHUNK>(chunk, staging, rank);
    sync();
    storeStaged<CHUNK>(staging, rank, width, out, valid);
    sync();
}

// A hint, not a load: asks the L2 cache to start fetching elements [0, count) of `p`,
// one 128-byte line per thread of the group, and returns at once. It changes no value
// anywhere, so it is right whatever the kernel reads next; it pays when the lines are
// read soon after (a tile a block will most likely be given). No-op on the emulator.
template <class T>
__device__ __forceinline__ void prefetchL2(const T* p, size_t count, unsigned rank, unsigned width) {
#if defined(__CUDA_ARCH__)
    constexpr size_t kLine = 128;
    const char* first = reinterpret_cast<const char*>(p);
    const size_t bytes = count * sizeof(T);
    for (size_t at = size_t(rank) * kLine; at < bytes; at += size_t(width) * kLine)
        asm volatile("prefetch.global.L2 [%0];" ::"l"(first + at));
#else
    (void)p, (void)count, (void)rank, (void)width;
#endif
}

// The barriers to pass as `sync`.
struct BlockSync {
    __device__ void operator()() const { __syncthreads(); }
};
struct WarpSync {
    __device__ void operator()() const { __syncwarp(); }
};

}  // namespace scanlab
