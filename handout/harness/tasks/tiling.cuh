// scanlab harness: students, do not edit (your code goes in student/); maintainers edit it here.
//
// How the tile kernels cover an array: the launch geometry the plans (harness/tasks/) use,
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

// Task 4's tiles for n elements: one per blockSize * lookbackItemsPerThread items (at
// least one).
template <class T>
unsigned lookbackTiles(size_t n, unsigned blockSize) {
    const size_t tileItems = size_t(blockSize) * lookbackItemsPerThread<T>(blockSize);
    return unsigned(std::max<size_t>(1, (n + tileItems - 1) / tileItems));
}

// The scratch a plan gets besides input and output (device pointers, owned by a
// Workspace): one element per block (kMaxBlocks of them), and task 4's tile state
// (room for at least as many tiles as the run needs; the plan clears it).
template <class T>
struct Scratch {
    T* blockResults;
    lookback::TileState<T> tiles;
};

// The owner of a run's scratch, on the harness's side: allocation stays out of the
// student unit. Task 4's tile state is allocated at the first run that needs it (an
// untimed warm-up run) and grown when a run needs more tiles.
template <class Op>
struct Workspace {
    using T = typename Op::Element;
    DeviceBuffer<T> blockResults{kMaxBlocks, "blockResults"};
    DeviceBuffer<unsigned char> tileStateBytes;

    // Layout: counter, status[tiles], packed[tiles], aggregate[tiles],
    // inclusivePrefix[tiles]; TileState::clearedBytes of it is cleared before a launch.
    Scratch<T> forRun(size_t n, unsigned blockSize) {
        const size_t tiles = lookbackTiles<T>(n, blockSize);
        const size_t packedAt = ((tiles + 1) * sizeof(unsigned) + 7) / 8 * 8;
        const size_t valuesAt = (packedAt + tiles * 8 + 15) / 16 * 16;
        const size_t bytes = valuesAt + 2 * tiles * sizeof(T);
        if (tileStateBytes.size() < bytes) tileStateBytes = DeviceBuffer<unsigned char>(bytes, "tileState");
        unsigned char* base = tileStateBytes.data();
        T* values = reinterpret_cast<T*>(base + valuesAt);
        unsigned* words = reinterpret_cast<unsigned*>(base);
        return Scratch<T>{blockResults.data(),
                          lookback::TileState<T>{words, words + 1, values, values + tiles,
                                       reinterpret_cast<unsigned long long*>(base + packedAt),
                                       unsigned(tiles)}};
    }
};

}  // namespace scanlab
