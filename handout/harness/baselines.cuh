// scanlab harness: students, do not edit (your code goes in student/); maintainers edit it here.
//
// Slow but correct versions the handout starts from and the benchmarks compare
// against: your speedup is measured against these.
//
// In a grade they do nothing: the grader compiles your files with SCANLAB_GRADING_BUILD,
// and there each placeholder below, however your code reaches it, records which one it
// is (harness/runtime.cuh, placeholderReached) and returns without doing its work; the
// case ends "calls the handout's placeholder", and the task earns no points. In your own
// builds (make, make test, make grade-local) they run as they are. The harness's own
// timed baselines are compiled apart from your files and always run.
#pragma once
#include <cstddef>

#include "harness/platform.cuh"
#include "harness/runtime.cuh"
#include "harness/tasks/warp_tile.cuh"

namespace scanlab::baseline {
#if defined(SCANLAB_STUDENT_UNIT)
// The student unit's own copies (internal linkage): the linker never merges them with the
// harness's timed ones, which always do the work and, on the emulator, are not checked for
// races (a merged copy hid the race of a scan.cuh that calls the isolation check's warp
// scan without a __syncwarp()).
namespace {
#if defined(SCANLAB_GRADING_BUILD)
inline constexpr bool kPlaceholdersDoNothing = true;
#else
inline constexpr bool kPlaceholdersDoNothing = false;
#endif
#else
inline constexpr bool kPlaceholdersDoNothing = false;
#endif

// Task 1 placeholder: lane 0 scans the warp's 32 elements one after another.
// Same contract as scanIncWarp (student/warp_scan.cuh).
template <class Op>
__device__ typename Op::Element scanIncWarpSequential(typename Op::Element* sh, unsigned idx) {
    using T = typename Op::Element;
    if constexpr (kPlaceholdersDoNothing) {
        placeholderReached(kPlaceholderWarpScan);
        return sh[idx];
    }
    const unsigned lane = idx % kWarpSize;
    if (lane == 0) {
        T acc = sh[idx];
        for (unsigned l = 1; l < kWarpSize; ++l) {
            acc = Op::apply(acc, sh[idx + l]);
            sh[idx + l] = acc;
        }
    }
    __syncwarp();  // lane 0's writes are visible to the other lanes
    const T result = sh[idx];
    __syncwarp();  // every lane has read before anyone reuses sh
    return result;
}

// The task 1 driver kernel (harness/tasks/warp_tile.cuh) with the placeholder: what the
// harness times as the "placeholder" baseline of task 1.
struct SequentialWarpScan {
    template <class Op>
    __device__ static typename Op::Element run(typename Op::Element* sh, unsigned idx) {
        return scanIncWarpSequential<Op>(sh, idx);
    }
};

// Task 2 placeholder: thread 0 of each block folds the block's whole range.
template <class Op>
__device__ void reduceBlocksSequential(const typename Op::Element* in, size_t n,
                                       size_t itemsPerBlock,
                                       typename Op::Element* blockResults) {
    if constexpr (kPlaceholdersDoNothing) {
        placeholderReached(kPlaceholderReduce);
        return;
    }
    if (threadIdx.x != 0) return;
    const size_t begin = blockIdx.x * itemsPerBlock;
    const size_t end = n < begin + itemsPerBlock ? n : begin + itemsPerBlock;
    typename Op::Element acc = Op::identity();
    for (size_t i = begin; i < end; ++i) acc = Op::apply(acc, in[i]);
    blockResults[blockIdx.x] = acc;
}

template <class Op>
__global__ void reduceBlocksSequentialKernel(const typename Op::Element* in, size_t n,
                                             size_t itemsPerBlock,
                                             typename Op::Element* blockResults) {
    reduceBlocksSequential<Op>(in, n, itemsPerBlock, blockResults);
}

// The lecture's first reduction: one launch per tree level, each thread combining
// two neighbours in global memory. level[i] = in[2i] (+) in[2i+1].
template <class Op>
__global__ void treeReduceLevelKernel(const typename Op::Element* in, size_t m,
                                      typename Op::Element* out) {
    if constexpr (kPlaceholdersDoNothing) {
        placeholderReached(kPlaceholderNaiveKernel);
        return;
    }
    const size_t i = blockIdx.x * size_t(blockDim.x) + threadIdx.x;
    if (2 * i + 1 < m) {
        out[i] = Op::apply(in[2 * i], in[2 * i + 1]);
    } else if (2 * i < m) {
        out[i] = in[2 * i];
    }
}

// Hillis-Steele on global memory: one launch per step, out[i] = in[i-h] (+) in[i].
template <class Op>
__global__ void hillisSteeleStepKernel(const typename Op::Element* in, size_t n, size_t h,
                                       typename Op::Element* out) {
    if constexpr (kPlaceholdersDoNothing) {
        placeholderReached(kPlaceholderNaiveKernel);
        return;
    }
    const size_t i = blockIdx.x * size_t(blockDim.x) + threadIdx.x;
    if (i < n) out[i] = i >= h ? Op::apply(in[i - h], in[i]) : in[i];
}

// Task 4 placeholder: block 0 scans the whole array, blockDim.x elements at a time
// (Hillis-Steele in shared memory, one element per thread), carrying the running
// total from one stretch to the next; every other block has nothing to do. Correct,
// and as fast as one multiprocessor. Needs blockDim.x elements of dynamic shared memory.
template <class Op, bool INCLUSIVE>
__device__ void scanInOneBlock(const typename Op::Element* in, typename Op::Element* out,
                               size_t n) {
    using T = typename Op::Element;
    if constexpr (kPlaceholdersDoNothing) {
        placeholderReached(kPlaceholderOneBlockScan);
        return;
    }
    if (blockIdx.x != 0) return;
    SCANLAB_DYNAMIC_SHARED(T, sh);
    const unsigned tid = threadIdx.x;
    T carry = Op::identity();
    for (size_t base = 0; base < n; base += blockDim.x) {
        const size_t i = base + tid;
        T x = i < n ? in[i] : Op::identity();
        sh[tid] = x;
        __syncthreads();
        for (unsigned h = 1; h < blockDim.x; h *= 2) {
            const T left = tid >= h ? sh[tid - h] : Op::identity();
            __syncthreads();
            if (tid >= h) x = Op::apply(left, x);
            sh[tid] = x;
            __syncthreads();
        }
        const T before = tid > 0 ? Op::apply(carry, sh[tid - 1]) : carry;
        if (i < n) out[i] = INCLUSIVE ? Op::apply(carry, x) : before;
        carry = Op::apply(carry, sh[blockDim.x - 1]);
        __syncthreads();  // everyone has read sh before the next stretch overwrites it
    }
}

template <class Op, bool INCLUSIVE>
__global__ void scanInOneBlockKernel(const typename Op::Element* in, typename Op::Element* out,
                                     size_t n) {
    scanInOneBlock<Op, INCLUSIVE>(in, out, n);
}

#if defined(SCANLAB_STUDENT_UNIT)
}  // namespace
#endif
}  // namespace scanlab::baseline
