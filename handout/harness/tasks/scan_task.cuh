// scanlab harness: students, do not edit (your code goes in student/); maintainers edit it here.
//
// Task 3's driver tasks (student/scan.cuh): the three-phase scan of an array of any
// length, inclusive and exclusive (harness/tasks/task.cuh says what a task type holds).
#pragma once
#include <cstddef>

#include "harness/baselines.cuh"
#include "harness/runtime.cuh"
#include "harness/tasks/launch.cuh"
#include "harness/tasks/task.cuh"
#include "harness/tasks/tiling.cuh"

namespace scanlab::tasks {

struct Scan : ScanFromLeft<true> {
    template <class Op, class Baselines>
    static void baselines(Baselines& b) {
        using T = typename Op::Element;
        const size_t n = b.n();
        const unsigned block = b.block();
        // The lecture's Hillis-Steele on global memory: one launch per step.
        DeviceBuffer<T> tmp(n);
        b.time("naive-hillis-steele", [&] {
            const T* src = b.in();
            T* bufs[2] = {b.out(), tmp.data()};
            int step = 0;
            for (size_t h = 1; h < n || step == 0; h *= 2, ++step) {
                T* dst = bufs[step % 2];
                launchKernel("hillisSteeleStepKernel", baseline::hillisSteeleStepKernel<Op>,
                             dim3(unsigned((n + block - 1) / block)), dim3(block), 0, src, n, h, dst);
                src = dst;
            }
        });
    }
};

struct ScanExclusive : ScanFromLeft<false> {
    template <class Op, class Baselines>
    static void baselines(Baselines&) {}  // the CPU reference only
};

}  // namespace scanlab::tasks

#if defined(SCANLAB_STUDENT_UNIT)
#include "harness/policy.cuh"
#include "student/reduce.cuh"  // reduceBlocksKernel: phase 1 is task 2's kernel
#include "student/scan.cuh"

namespace scanlab {

// Reduce each block's range, scan the block results in one block, then scan each range
// again starting from its block's carry-in.
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

// The inclusive and the exclusive scan: one plan, told which.
template <bool kInclusive>
struct ScanPlan {
    template <class Op>
    static void launch(const typename Op::Element* in, size_t n, typename Op::Element* out,
                       unsigned blockSize, const Scratch<typename Op::Element>& scratch) {
        scan<Op, kInclusive>(in, n, out, blockSize, scratch.blockResults);
    }
};

template <>
struct Plan<tasks::Scan> : ScanPlan<true> {};
template <>
struct Plan<tasks::ScanExclusive> : ScanPlan<false> {};

}  // namespace scanlab
#endif
