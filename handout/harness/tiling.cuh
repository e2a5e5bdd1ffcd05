// scanlab harness: DO NOT EDIT. Your code goes in student/.
//
// How the tile kernels cover an array: the launch geometry the plans (plans.cuh) use,
// and that the harness's own baselines share.
#pragma once
#include <algorithm>
#include <cstddef>

#include "harness/policy.cuh"
#include "harness/runtime.cuh"

namespace scanlab {

// How a tile kernel covers n elements: gridSize blocks of blockSize threads, block b
// taking the contiguous range [b*itemsPerBlock, (b+1)*itemsPerBlock).
struct TilePlan {
    unsigned blockSize = 0;
    unsigned gridSize = 0;
    size_t itemsPerBlock = 0;  // a multiple of the tile, blockSize * CHUNK
    size_t sharedBytes = 0;
};

template <class T>
TilePlan planTiles(size_t n, unsigned blockSize, unsigned maxBlocks = kMaxBlocks) {
    const size_t tileItems = size_t(blockSize) * ChunkPolicy<T>::kItemsPerThread;
    const size_t tiles = std::max<size_t>(1, (n + tileItems - 1) / tileItems);
    const size_t tilesPerBlock = (tiles + maxBlocks - 1) / maxBlocks;
    const size_t grid = (tiles + tilesPerBlock - 1) / tilesPerBlock;
    return TilePlan{blockSize, unsigned(grid), tilesPerBlock * tileItems,
                    tileSharedBytes<T>(blockSize)};
}

// Scratch the plans need besides input and output: one element per block
// (kMaxBlocks of them), owned by the caller.
template <class Op>
struct Workspace {
    DeviceBuffer<typename Op::Element> blockResults{kMaxBlocks, "blockResults"};
};

}  // namespace scanlab
