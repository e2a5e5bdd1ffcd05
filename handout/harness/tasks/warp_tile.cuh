// scanlab harness: students, do not edit (your code goes in student/); maintainers edit it here.
//
// The task 1 driver kernel, over any warp scan: every warp scans segments of 32
// consecutive elements, staged in shared memory. The plans run it with your
// scanIncWarp (tasks/warp_scan_task.cuh); the harness times it with the placeholder's
// (baselines.cuh).
#pragma once
#include <algorithm>
#include <cstddef>

#include "harness/platform.cuh"
#include "harness/tasks/launch.cuh"

namespace scanlab {

// Segments of 32 elements each warp scans per launch: 16 bytes a thread (4 int32, 1
// MssTuple). One element a thread leaves 4 bytes a thread in flight, too little to
// cover the memory's latency (0.72x of a copy on an H100); with 4 segments a warp
// issues all its loads before its first scan (1.0x of a copy at 2^28). 8 segments were
// no faster, and there the lecture's shared-memory scan took 1.27x the shuffle scan's
// time (1.09x with 4): root README, "Performance of the reference".
template <class T>
struct WarpScanPolicy {
    static constexpr int kSegmentsPerWarp = sizeof(T) >= 16 ? 1 : int(16 / sizeof(T));
};

// WarpScan::run<Op>(sh, idx) has the contract of scanIncWarp (student/warp_scan.cuh).
// Segment k of a block covers elements base + k*blockDim.x .. + blockDim.x - 1, so each
// warp's 32 elements of it are consecutive, and each segment has its own blockDim.x
// slots of shared memory: run() gets sh + k*blockDim.x and idx = threadIdx.x.
template <class Op, class WarpScan>
__global__ void warpScanKernel(const typename Op::Element* in, size_t n,
                               typename Op::Element* out) {
    using T = typename Op::Element;
    constexpr int kSegments = WarpScanPolicy<T>::kSegmentsPerWarp;
    SCANLAB_DYNAMIC_SHARED(T, sh);
    const size_t base = blockIdx.x * size_t(blockDim.x) * kSegments + threadIdx.x;
    T element[kSegments];
#pragma unroll
    for (int k = 0; k < kSegments; ++k) {  // every load issued before the first scan
        const size_t i = base + size_t(k) * blockDim.x;
        element[k] = i < n ? in[i] : Op::identity();
    }
#pragma unroll
    for (int k = 0; k < kSegments; ++k) sh[k * blockDim.x + threadIdx.x] = element[k];
    __syncwarp();  // the scan may read the other lanes' elements at once
#pragma unroll
    for (int k = 0; k < kSegments; ++k) {
        const size_t i = base + size_t(k) * blockDim.x;
        const T result = WarpScan::template run<Op>(sh + k * blockDim.x, threadIdx.x);
        if (i < n) out[i] = result;
    }
}

// Launches warpScanKernel<Op, WarpScan>, kSegmentsPerWarp elements a thread; `name` is
// what error messages call it.
template <class Op, class WarpScan>
void launchWarpScan(const char* name, const typename Op::Element* in, size_t n,
                    typename Op::Element* out, unsigned blockSize) {
    constexpr int kSegments = WarpScanPolicy<typename Op::Element>::kSegmentsPerWarp;
    const size_t perBlock = size_t(blockSize) * kSegments;
    const size_t grid = std::max<size_t>(1, (n + perBlock - 1) / perBlock);
    launchKernel(name, warpScanKernel<Op, WarpScan>, dim3(unsigned(grid)), dim3(blockSize),
                 perBlock * sizeof(typename Op::Element), in, n, out);
}

}  // namespace scanlab
