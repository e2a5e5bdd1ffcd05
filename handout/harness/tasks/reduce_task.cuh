// scanlab harness: students, do not edit (your code goes in student/); maintainers edit it here.
//
// Task 2's driver task (student/reduce.cuh): the fold of the whole input, one element
// (harness/tasks/task.cuh says what a task type holds).
#pragma once
#include <cstddef>
#include <vector>

#include "harness/baselines.cuh"
#include "harness/host/reference.h"
#include "harness/policy.cuh"
#include "harness/runtime.cuh"
#include "harness/tasks/launch.cuh"
#include "harness/tasks/task.cuh"
#include "harness/tasks/tiling.cuh"

namespace scanlab::tasks {

struct Reduce {
    template <class Op>
    static std::vector<typename Op::Element> reference(const std::vector<typename Op::Element>& in) {
        return {referenceReduce<Op>(in)};
    }

    static constexpr TimedCheck kTimedCheck = TimedCheck::fold();

    template <class Op, class Baselines>
    static void baselines(Baselines& b) {
        using T = typename Op::Element;
        const size_t n = b.n();
        const unsigned block = b.block();
        const TilePlan plan = planTiles<T>(n, block);
        // The handout's task 2 placeholder: thread 0 of each block folds its range.
        b.time("placeholder", [&] {
            launchKernel("reduceBlocksSequentialKernel", baseline::reduceBlocksSequentialKernel<Op>,
                         dim3(plan.gridSize), dim3(block), 0, b.in(), n, plan.itemsPerBlock,
                         b.blockResults());
            launchKernel("reduceBlocksSequentialKernel(stage 2)",
                         baseline::reduceBlocksSequentialKernel<Op>, dim3(1), dim3(block), 0,
                         static_cast<const T*>(b.blockResults()), size_t(plan.gridSize),
                         size_t(plan.gridSize), b.out());
        });
        // The lecture's first reduction: one launch per tree level, in global memory.
        DeviceBuffer<T> half((n + 1) / 2), quarter((n + 3) / 4 + 1);
        b.time("naive-tree", [&] {
            const T* src = b.in();
            size_t m = n;
            T* bufs[2] = {half.data(), quarter.data()};
            for (int level = 0; m > 1; ++level) {
                const size_t next = (m + 1) / 2;
                T* dst = bufs[level % 2];
                launchKernel("treeReduceLevelKernel", baseline::treeReduceLevelKernel<Op>,
                             dim3(unsigned((next + block - 1) / block)), dim3(block), 0, src, m, dst);
                src = dst;
                m = next;
            }
        });
    }
};

}  // namespace scanlab::tasks

#if defined(SCANLAB_STUDENT_UNIT)
#include "student/reduce.cuh"

namespace scanlab {

// Stage 1 over the input, stage 2 in one block over the per-block results.
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

template <>
struct Plan<tasks::Reduce> {
    template <class Op>
    static void launch(const typename Op::Element* in, size_t n, typename Op::Element* result,
                       unsigned blockSize, const Scratch<typename Op::Element>& scratch) {
        reduce<Op>(in, n, result, blockSize, scratch.blockResults);
    }
};

}  // namespace scanlab
#endif
