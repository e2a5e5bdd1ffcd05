// scanlab harness: students, do not edit (your code goes in student/); maintainers edit it here.
//
// Task 4's driver tasks (student/lookback_scan.cuh): the single-pass scan with
// decoupled look-back, inclusive and exclusive (harness/tasks/task.cuh says what a task
// type holds).
#pragma once
#include <algorithm>
#include <cstddef>

#include "harness/baselines.cuh"
#include "harness/tasks/launch.cuh"
#include "harness/tasks/task.cuh"
#include "harness/tasks/tiling.cuh"
#if defined(SCANLAB_CUB_BASELINE)
#include "harness/host/cub_baseline.h"
#endif

namespace scanlab::tasks {

struct LookbackScan : ScanFromLeft<true> {
    template <class Op, class Baselines>
    static void baselines(Baselines& b) {
        using T = typename Op::Element;
        // The handout's task 4 placeholder: block 0 alone scans everything.
        b.time("placeholder", [&] {
            launchKernel("scanInOneBlockKernel", baseline::scanInOneBlockKernel<Op, true>, dim3(1),
                         dim3(b.block()), b.block() * sizeof(T), b.in(), b.out(), b.n());
        });
#if defined(SCANLAB_CUB_BASELINE)
        size_t bytes = 0;
        baseline::cubInclusiveScan<Op>(nullptr, bytes, b.in(), b.out(), b.n());
        DeviceBuffer<unsigned char> temp(bytes ? bytes : 1);
        b.time("cub", [&] {
            size_t room = bytes;
            baseline::cubInclusiveScan<Op>(temp.data(), room, b.in(), b.out(), b.n());
        });
#else
        b.notBuilt("cub");  // CUB's scan: only in drivers built with SCANLAB_CUB_BASELINE
#endif
    }
};

struct LookbackScanExclusive : ScanFromLeft<false> {
    template <class Op, class Baselines>
    static void baselines(Baselines&) {}  // the CPU reference only
};

}  // namespace scanlab::tasks

#if defined(SCANLAB_STUDENT_UNIT)
#include "harness/policy.cuh"
#include "student/lookback_scan.cuh"

namespace scanlab {

// The tile counter and every status word cleared (a kernel of the harness), then ONE
// launch of your kernel, one tile of blockSize * CHUNK elements per block (CHUNK:
// lookbackItemsPerThread, harness/policy.cuh); blocks take tile ids from the counter in
// the order they start (student/lookback_scan.cuh). `room`: the Workspace's tile state,
// for >= our tiles.
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

// The inclusive and the exclusive scan: one plan, told which.
template <bool kInclusive>
struct LookbackScanPlan {
    template <class Op>
    static void launch(const typename Op::Element* in, size_t n, typename Op::Element* out,
                       unsigned blockSize, const Scratch<typename Op::Element>& scratch) {
        lookbackScan<Op, kInclusive>(in, n, out, blockSize, scratch.tiles);
    }
};

template <>
struct Plan<tasks::LookbackScan> : LookbackScanPlan<true> {};
template <>
struct Plan<tasks::LookbackScanExclusive> : LookbackScanPlan<false> {};

}  // namespace scanlab
#endif
