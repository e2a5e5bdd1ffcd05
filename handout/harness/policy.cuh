// scanlab harness: students, do not edit (your code goes in student/); maintainers edit it here.
//
// The knobs of the launch geometry, named for what they tune. The host plans (harness/tasks/)
// apply them; kernels receive the results as template and kernel arguments.
#pragma once
#include <cstddef>

#include "harness/platform.cuh"
#include "harness/tile_io.cuh"

namespace scanlab {

// CHUNK of the lecture: elements each thread folds or scans sequentially per tile.
// 32 bytes a thread keeps a tile of 1024 threads at 32 KiB of shared memory for any
// element type (8 for int32/float, 2 for the 16-byte MssTuple).
template <class T>
struct ChunkPolicy {
    static constexpr int kItemsPerThread = sizeof(T) >= 32 ? 1 : int(32 / sizeof(T));
};

// Brent's theorem in practice: launch at most this many blocks and let each block
// loop over a contiguous range of tiles. 1024 also lets one block finish phase 2.
constexpr unsigned kMaxBlocks = 1024;

}  // namespace scanlab

namespace scanlab {

// Dynamic shared memory every tile kernel (reduceBlocksKernel, scanBlocksKernel) is
// launched with: room to stage one tile of blockSize*CHUNK elements (tile_io.cuh)
// plus one slot per warp.
template <class T>
inline size_t tileSharedBytes(unsigned blockSize) {
    return (stagedSlots(blockSize * ChunkPolicy<T>::kItemsPerThread) + blockSize / kWarpSize) *
           sizeof(T);
}

}  // namespace scanlab

namespace scanlab {

// Task 4: elements each thread scans per tile (the kernel's CHUNK). A single-pass scan
// pays its tile id and its look-back once per tile, so a bigger tile spreads that
// latency over more elements; it also needs more shared memory (or registers) to hold
// the tile. Tuned on an H100 (sm_90; scanlab-bench --tune-lookback) for 256 threads:
// 80 bytes a thread, so 20 for 4-byte elements (a tile of 5120; moved as 16-byte
// vectors by the tile_io.cuh helpers) and 5 for the 16-byte MssTuple. 8 such tiles of
// 256 threads (20 KiB each) fit in an SM's shared memory at once. A block too wide for
// its tile's shared memory (the 48 KiB every GPU grants a block: 1024 threads of 20
// int32) takes kItemsPerThreadWide instead.
//
// kMinBlocksOf1024: lookbackScanKernel is compiled (__launch_bounds__) for blocks of up
// to 1024 threads with at least this many of them resident on an SM, so with at most
// 65536 / (1024 * kMinBlocksOf1024) registers a thread: 32 for 4-byte elements on GPUs
// whose SMs hold 2048 threads (sm_70, sm_80, sm_90, sm_100; the others hold fewer, and
// take 1), which lets 8 blocks of 256 threads share an SM (at 39 registers only 6
// fit). The more tiles are in flight, the more loads are in flight while other tiles
// look back.
#if defined(__CUDA_ARCH__) && (__CUDA_ARCH__ == 700 || __CUDA_ARCH__ == 800 || \
                               __CUDA_ARCH__ == 900 || __CUDA_ARCH__ == 1000)
constexpr int kBlocksOf1024PerSm = 2;
#else
constexpr int kBlocksOf1024PerSm = 1;
#endif

template <class T>
struct LookbackPolicy {
    static constexpr int kBytesPerThread = 80;
    static constexpr int kItemsPerThread = sizeof(T) >= kBytesPerThread ? 1 : int(kBytesPerThread / sizeof(T));
    static constexpr int kItemsPerThreadWide = ChunkPolicy<T>::kItemsPerThread;
    static constexpr int kMinBlocksOf1024 = sizeof(T) == 4 ? kBlocksOf1024PerSm : 1;
};

// Dynamic shared memory of lookbackScanKernel with `items` elements a thread: a tile's
// staging and warp totals as in task 3 (tileSharedBytes), then two spare slots (for
// the tile id and the tile's prefix, which one thread finds and every thread needs).
template <class T>
inline size_t lookbackSharedBytes(unsigned blockSize, int items) {
    return (stagedSlots(blockSize * unsigned(items)) + blockSize / kWarpSize + 2) * sizeof(T);
}

// The shared memory a block may always use (CUDA's default limit, the emulator's too).
constexpr size_t kDefaultSharedBytes = 48 * 1024;

// Task 4's CHUNK for blocks of blockSize threads (LookbackPolicy).
template <class T>
inline int lookbackItemsPerThread(unsigned blockSize) {
    constexpr int kItems = LookbackPolicy<T>::kItemsPerThread;
    return lookbackSharedBytes<T>(blockSize, kItems) <= kDefaultSharedBytes
               ? kItems
               : LookbackPolicy<T>::kItemsPerThreadWide;
}

// What the plan launches lookbackScanKernel with: lookbackItemsPerThread's tile.
template <class T>
inline size_t lookbackSharedBytes(unsigned blockSize) {
    return lookbackSharedBytes<T>(blockSize, lookbackItemsPerThread<T>(blockSize));
}

}  // namespace scanlab
