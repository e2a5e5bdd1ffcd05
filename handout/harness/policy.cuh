// scanlab harness: DO NOT EDIT. Your code goes in student/.
//
// The knobs of the launch geometry, named for what they tune. The host plans in
// plans.cuh apply them; kernels receive the results as template and kernel arguments.
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

// Task 4: elements each thread scans per tile; task 3's CHUNK. A single-pass scan
// pays its tile id and its look-back once per tile, so a bigger tile spreads that
// latency over more elements, but it also takes more registers and shared memory. On
// an H100 (scanlab-bench --tune-lookback) tiles of 8 to 24 int32 a thread at 256
// threads ran within 10% of each other at 2^28: the tile size is not what limits this
// kernel (the repository's README, "Performance of the reference").
template <class T>
struct LookbackPolicy {
    static constexpr int kItemsPerThread = ChunkPolicy<T>::kItemsPerThread;
};

// Dynamic shared memory of lookbackScanKernel: a tile's staging and warp totals as in
// task 3 (tileSharedBytes), then two spare slots (for the tile id and the tile's
// prefix, which one thread finds and every thread needs).
template <class T>
inline size_t lookbackSharedBytes(unsigned blockSize) {
    return (stagedSlots(blockSize * LookbackPolicy<T>::kItemsPerThread) + blockSize / kWarpSize + 2) *
           sizeof(T);
}

}  // namespace scanlab
