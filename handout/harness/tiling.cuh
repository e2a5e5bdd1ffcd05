// scanlab harness: DO NOT EDIT. Your code goes in student/.
//
// How the tile kernels cover an array: the launch geometry the plans (plans.cuh) use,
// and that the harness's own baselines share.
#pragma once
#include <algorithm>
#include <cstddef>

#include "harness/policy.cuh"
#include "harness/runtime.cuh"
#include "harness/tile_state.cuh"

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

// Scratch the plans need besides input and output, owned by the caller: one element
// per block (kMaxBlocks of them), and task 4's tile state, allocated at its first use
// (so an untimed warm-up run allocates it) and grown when a launch needs more tiles.
template <class Op>
struct Workspace {
    using T = typename Op::Element;
    DeviceBuffer<T> blockResults{kMaxBlocks, "blockResults"};
    DeviceBuffer<unsigned char> tileStateBytes;

    // Room for `tiles` tiles; the caller clears the counter and the status words.
    TileState<T> tileState(unsigned tiles) {
        const size_t words = (size_t(tiles) + 1) * sizeof(unsigned);  // counter + status
        const size_t valuesAt = (words + alignof(T) - 1) / alignof(T) * alignof(T);
        const size_t bytes = valuesAt + 2 * size_t(tiles) * sizeof(T);
        if (tileStateBytes.size() < bytes) tileStateBytes = DeviceBuffer<unsigned char>(bytes, "tileState");
        unsigned char* base = tileStateBytes.data();
        T* values = reinterpret_cast<T*>(base + valuesAt);
        return TileState<T>{reinterpret_cast<unsigned*>(base), reinterpret_cast<unsigned*>(base) + 1,
                            values, values + tiles, tiles};
    }
};

}  // namespace scanlab
