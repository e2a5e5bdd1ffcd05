// scanlab harness: students, do not edit (your code goes in student/); maintainers edit it here.
//
// Task 4's scratch: what the tiles of a single-pass scan tell each other while the
// kernel runs (student/lookback_scan.cuh), and the loads and stores to do it with.
//
// Before each launch the harness poisons the whole tile state (harness/host/run.h), and the
// plan (harness/tasks/lookback_scan_task.cuh) then clears the tile counter, every status word and every
// packed word; a value read before its status says it is there is garbage, never
// right by luck, and nothing a launch writes here survives to the next one.
#pragma once
#include <cstring>

#include "harness/platform.cuh"

// Everything here is in namespace scanlab::lookback, so that it cannot clash with a
// helper of the same name in your files (a loadVolatile of your own, say).
namespace scanlab::lookback {

// What tile t has published so far (TileState::status[t]).
enum TileStatus : unsigned {
    kTileInvalid = 0,    // nothing yet
    kTileAggregate = 1,  // aggregate[t]: the combination of tile t's own elements
    kTilePrefix = 2,     // inclusivePrefix[t]: of every element up to tile t's last
};

template <class T>
struct TileState {
    unsigned* tileCounter;  // the next tile id to hand out: 0 before the launch
    unsigned* status;       // one TileStatus per tile: kTileInvalid before the launch
    T* aggregate;           // valid once status[t] >= kTileAggregate
    T* inclusivePrefix;     // valid once status[t] == kTilePrefix
    // For elements of 4 bytes, another way (use one or the other): a status and a value
    // in ONE 8-byte word per tile (packTile), written and read in one access, so no
    // reader can see the one without the other and no fence is needed between them.
    // 0 (kTileInvalid) before the launch.
    unsigned long long* packed;
    unsigned tiles;         // how many tiles the launch covers
};

// A slot of shared memory typed as the element (a spare slot of lookbackSharedBytes) as
// the place of an unsigned tile id: every element is at least 4 bytes and 4-byte aligned,
// so the slot holds one. Thread 0 writes it, and after a __syncthreads() every thread reads:
//     unsigned* tileSlot = lookback::tileIdSlot(spare);
//     if (threadIdx.x == 0) *tileSlot = atomicAdd(tiles.tileCounter, 1u);
//     __syncthreads();
//     const unsigned tile = *tileSlot;
template <class T>
__device__ __forceinline__ unsigned* tileIdSlot(T* slot) {
    static_assert(sizeof(T) >= sizeof(unsigned) && alignof(T) >= alignof(unsigned),
                  "a slot holds an unsigned tile id");
    return reinterpret_cast<unsigned*>(slot);
}

// The 8-byte word of a status and a 4-byte value: the status in the low half.
template <class T>
__host__ __device__ __forceinline__ unsigned long long packTile(TileStatus status, const T& value) {
    static_assert(sizeof(T) == 4, "packed tile words hold 4-byte elements");
    unsigned bits;
    memcpy(&bits, &value, 4);
    return (static_cast<unsigned long long>(bits) << 32) | status;
}
__host__ __device__ __forceinline__ TileStatus statusOf(unsigned long long word) {
    return static_cast<TileStatus>(static_cast<unsigned>(word));
}
template <class T>
__host__ __device__ __forceinline__ T valueOf(unsigned long long word) {
    static_assert(sizeof(T) == 4, "packed tile words hold 4-byte elements");
    const unsigned bits = static_cast<unsigned>(word >> 32);
    T value;
    memcpy(&value, &bits, 4);
    return value;
}

// Loads and stores for what another block of the same launch reads or writes while
// it runs. They are volatile, so they go to the memory system every time: a plain
// load may be served from the SM's L1 cache, which is not coherent between SMs, and
// the compiler may keep a plain value in a register across a spin loop.
// Volatile orders nothing by itself: between writing a value and publishing the status
// that says it is there, and between reading a status and reading the value it
// announces, comes a __threadfence().
// An 8-byte word (a packed tile) is one access, so it is read or written whole.
__device__ __forceinline__ unsigned long long loadVolatile(const unsigned long long* p) {
    return *reinterpret_cast<const volatile unsigned long long*>(p);
}
__device__ __forceinline__ void storeVolatile(unsigned long long* p, unsigned long long word) {
    *reinterpret_cast<volatile unsigned long long*>(p) = word;
}

template <class T>
__device__ __forceinline__ T loadVolatile(const T* p) {
    static_assert(sizeof(T) % sizeof(unsigned) == 0, "element size must be a multiple of 4");
    constexpr int kWords = sizeof(T) / sizeof(unsigned);
    unsigned words[kWords];
    const volatile unsigned* src = reinterpret_cast<const volatile unsigned*>(p);
#pragma unroll
    for (int w = 0; w < kWords; ++w) words[w] = src[w];
    T value;
    memcpy(&value, words, sizeof(T));
    return value;
}

template <class T>
__device__ __forceinline__ void storeVolatile(T* p, const T& value) {
    static_assert(sizeof(T) % sizeof(unsigned) == 0, "element size must be a multiple of 4");
    constexpr int kWords = sizeof(T) / sizeof(unsigned);
    unsigned words[kWords];
    memcpy(words, &value, sizeof(T));
    volatile unsigned* dst = reinterpret_cast<volatile unsigned*>(p);
#pragma unroll
    for (int w = 0; w < kWords; ++w) dst[w] = words[w];
}

// Zeroes words[0 .. count): the tile counter, the status words and the packed words,
// before each launch.
template <class Word>
__global__ void clearTileStateKernel(Word* words, size_t count) {
    for (size_t i = blockIdx.x * size_t(blockDim.x) + threadIdx.x; i < count;
         i += size_t(gridDim.x) * blockDim.x)
        words[i] = 0;
}

}  // namespace scanlab::lookback
