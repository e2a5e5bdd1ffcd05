// scanlab harness: DO NOT EDIT. Your code goes in student/.
//
// The host side of each task: how many blocks, how the input is split between them,
// and which kernels run in which order. Students write the kernels; these plans
// launch them (through launchKernel, so the CPU emulator runs them too).
#pragma once
#include <algorithm>
#include <cstddef>

#include "harness/launch.cuh"
#include "harness/ops.cuh"
#include "harness/policy.cuh"
#include "student/reduce.cuh"
#include "student/scan.cuh"
#include "student/warp_scan.cuh"

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

// Scratch the plans need besides input and output: one element per block.
template <class Op>
struct Workspace {
    DeviceBuffer<typename Op::Element> blockResults{kMaxBlocks};
};

// Task 1 driver kernel: every warp scans its own 32 consecutive elements.
template <class Op, bool kUseBaseline>
__global__ void warpScanKernel(const typename Op::Element* in, size_t n,
                               typename Op::Element* out) {
    using T = typename Op::Element;
    SCANLAB_DYNAMIC_SHARED(T, sh);
    const size_t i = blockIdx.x * size_t(blockDim.x) + threadIdx.x;
    sh[threadIdx.x] = i < n ? in[i] : Op::identity();
    __syncwarp();  // scanIncWarp may read the other lanes' elements at once
    T result;
    if constexpr (kUseBaseline) {
        result = baseline::scanIncWarpSequential<Op>(sh, threadIdx.x);
    } else {
        result = scanIncWarp<Op>(sh, threadIdx.x);
    }
    if (i < n) out[i] = result;
}

template <class Op, bool kUseBaseline = false>
void warpScan(const typename Op::Element* in, size_t n, typename Op::Element* out,
              unsigned blockSize) {
    const size_t grid = std::max<size_t>(1, (n + blockSize - 1) / blockSize);
    launchKernel(kUseBaseline ? "warpScanKernel(baseline)" : "warpScanKernel",
                 warpScanKernel<Op, kUseBaseline>, dim3(unsigned(grid)), dim3(blockSize),
                 blockSize * sizeof(typename Op::Element), in, n, out);
}

// Task 2: stage 1 over the input, stage 2 in one block over the per-block results.
template <class Op>
void reduce(const typename Op::Element* in, size_t n, typename Op::Element* result,
            unsigned blockSize, Workspace<Op>& ws) {
    using T = typename Op::Element;
    constexpr int kChunk = ChunkPolicy<T>::kItemsPerThread;
    const TilePlan plan = planTiles<T>(n, blockSize);
    const TilePlan single = planTiles<T>(plan.gridSize, blockSize, 1);
    launchKernel("reduceBlocksKernel", reduceBlocksKernel<Op, kChunk>, dim3(plan.gridSize),
                 dim3(blockSize), plan.sharedBytes, in, n, plan.itemsPerBlock,
                 ws.blockResults.data());
    launchKernel("reduceBlocksKernel(stage 2)", reduceBlocksKernel<Op, kChunk>, dim3(1),
                 dim3(blockSize), single.sharedBytes,
                 static_cast<const T*>(ws.blockResults.data()), size_t(plan.gridSize),
                 single.itemsPerBlock, result);
}

// Task 3: reduce each block's range, scan the block results in one block, then scan
// each range again starting from its block's carry-in.
template <class Op, bool kInclusive>
void scan(const typename Op::Element* in, size_t n, typename Op::Element* out,
          unsigned blockSize, Workspace<Op>& ws) {
    using T = typename Op::Element;
    constexpr int kChunk = ChunkPolicy<T>::kItemsPerThread;
    const TilePlan plan = planTiles<T>(n, blockSize);
    const T* carries = nullptr;
    if (plan.gridSize > 1) {
        T* blockResults = ws.blockResults.data();
        const TilePlan single = planTiles<T>(plan.gridSize, blockSize, 1);
        launchKernel("reduceBlocksKernel", reduceBlocksKernel<Op, kChunk>,
                     dim3(plan.gridSize), dim3(blockSize), plan.sharedBytes, in, n,
                     plan.itemsPerBlock, blockResults);
        launchKernel("scanBlocksKernel(block results)", scanBlocksKernel<Op, kChunk, true>,
                     dim3(1), dim3(blockSize), single.sharedBytes,
                     static_cast<const T*>(blockResults), blockResults,
                     size_t(plan.gridSize), single.itemsPerBlock, static_cast<const T*>(nullptr));
        carries = blockResults;
    }
    launchKernel("scanBlocksKernel", scanBlocksKernel<Op, kChunk, kInclusive>,
                 dim3(plan.gridSize), dim3(blockSize), plan.sharedBytes, in, out, n,
                 plan.itemsPerBlock, carries);
}

}  // namespace scanlab
