// scanlab harness: DO NOT EDIT. Your code goes in student/.
//
// The host side of each task: how many blocks, how the input is split between them,
// and which kernels run in which order. Students write the kernels; these plans
// launch them (through launchKernel, so the CPU emulator runs them too). They are
// compiled with the student files, in the student unit (harness/student_unit.cu).
// `blockResults` is scratch of kMaxBlocks elements, and task 4's tile state is
// scratch too (both a Workspace's, harness/tiling.cuh).
#pragma once
#include <algorithm>
#include <cstddef>

#include "harness/launch.cuh"
#include "harness/ops.cuh"
#include "harness/policy.cuh"
#include "harness/tiling.cuh"
#include "harness/warp_tile.cuh"
#include "student/lookback_scan.cuh"
#include "student/reduce.cuh"
#include "student/scan.cuh"
#include "student/warp_scan.cuh"

namespace scanlab {

// Task 1: the driver kernel of harness/warp_tile.cuh with your scanIncWarp.
struct StudentWarpScan {
    template <class Op>
    __device__ static typename Op::Element run(typename Op::Element* sh, unsigned idx) {
        return scanIncWarp<Op>(sh, idx);
    }
};

template <class Op>
void warpScan(const typename Op::Element* in, size_t n, typename Op::Element* out,
              unsigned blockSize) {
    launchWarpScan<Op, StudentWarpScan>("warpScanKernel", in, n, out, blockSize);
}

// Task 2: stage 1 over the input, stage 2 in one block over the per-block results.
template <class Op>
void reduce(const typename Op::Element* in, size_t n, typename Op::Element* result,
            unsigned blockSize, typename Op::Element* blockResults) {
    using T = typename Op::Element;
    constexpr int kChunk = ChunkPolicy<T>::kItemsPerThread;
    const TilePlan plan = planTiles<T>(n, blockSize);
    const TilePlan single = planTiles<T>(plan.gridSize, blockSize, 1);
    launchKernel("reduceBlocksKernel", reduceBlocksKernel<Op, kChunk>, dim3(plan.gridSize),
                 dim3(blockSize), plan.sharedBytes, in, n, plan.itemsPerBlock, blockResults);
    launchKernel("reduceBlocksKernel(stage 2)", reduceBlocksKernel<Op, kChunk>, dim3(1),
                 dim3(blockSize), single.sharedBytes, static_cast<const T*>(blockResults),
                 size_t(plan.gridSize), single.itemsPerBlock, result);
}

// Task 3: reduce each block's range, scan the block results in one block, then scan
// each range again starting from its block's carry-in.
template <class Op, bool kInclusive>
void scan(const typename Op::Element* in, size_t n, typename Op::Element* out,
          unsigned blockSize, typename Op::Element* blockResults) {
    using T = typename Op::Element;
    constexpr int kChunk = ChunkPolicy<T>::kItemsPerThread;
    const TilePlan plan = planTiles<T>(n, blockSize);
    const T* carries = nullptr;
    if (plan.gridSize > 1) {
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

// Task 4: the tile counter and every status word cleared (a kernel of the harness),
// then ONE launch of your kernel, one tile of blockSize * CHUNK elements per block
// (CHUNK: lookbackItemsPerThread, harness/policy.cuh); blocks take tile ids from the
// counter in the order they start (student/lookback_scan.cuh). `room`: the
// Workspace's tile state, for >= our tiles.
template <class Op, int kItems, bool kInclusive>
void launchLookbackScan(const typename Op::Element* in, size_t n, typename Op::Element* out,
                        unsigned blockSize, const lookback::TileState<typename Op::Element>& room) {
    using T = typename Op::Element;
    const unsigned tiles = lookbackTiles<T>(n, blockSize);
    lookback::TileState<T> state = room;
    state.tiles = tiles;
    // The counter, the status words and the packed words lie together, in that order.
    const size_t clearWords = size_t(reinterpret_cast<unsigned*>(state.packed + tiles) - state.tileCounter);
    launchKernel("clearTileStateKernel", lookback::clearTileStateKernel<unsigned>,
                 dim3(unsigned(std::min<size_t>(clearWords / 1024 + 1, kMaxBlocks))), dim3(256), 0,
                 state.tileCounter, clearWords);
    launchKernel("lookbackScanKernel", lookbackScanKernel<Op, kItems, kInclusive>, dim3(tiles),
                 dim3(blockSize), lookbackSharedBytes<T>(blockSize, kItems), in, out, n, state);
}

template <class Op, bool kInclusive>
void lookbackScan(const typename Op::Element* in, size_t n, typename Op::Element* out,
                  unsigned blockSize, const lookback::TileState<typename Op::Element>& room) {
    using Policy = LookbackPolicy<typename Op::Element>;
    if constexpr (Policy::kItemsPerThreadWide != Policy::kItemsPerThread) {
        if (lookbackItemsPerThread<typename Op::Element>(blockSize) != Policy::kItemsPerThread) {
            launchLookbackScan<Op, Policy::kItemsPerThreadWide, kInclusive>(in, n, out, blockSize, room);
            return;
        }
    }
    launchLookbackScan<Op, Policy::kItemsPerThread, kInclusive>(in, n, out, blockSize, room);
}

}  // namespace scanlab
