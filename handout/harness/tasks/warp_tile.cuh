// scanlab harness: DO NOT EDIT. Your code goes in student/.
//
// The task 1 driver kernel, over any warp scan: every warp scans its own 32
// consecutive elements, staged in shared memory. The plans run it with your
// scanIncWarp (tasks/warp_scan_task.cuh); the harness times it with the placeholder's
// (baselines.cuh).
#pragma once
#include <algorithm>
#include <cstddef>

#include "harness/platform.cuh"
#include "harness/tasks/launch.cuh"

namespace scanlab {

// WarpScan::run<Op>(sh, idx) has the contract of scanIncWarp (student/warp_scan.cuh).
template <class Op, class WarpScan>
__global__ void warpScanKernel(const typename Op::Element* in, size_t n,
                               typename Op::Element* out) {
    using T = typename Op::Element;
    SCANLAB_DYNAMIC_SHARED(T, sh);
    const size_t i = blockIdx.x * size_t(blockDim.x) + threadIdx.x;
    sh[threadIdx.x] = i < n ? in[i] : Op::identity();
    __syncwarp();  // the scan may read the other lanes' elements at once
    const T result = WarpScan::template run<Op>(sh, threadIdx.x);
    if (i < n) out[i] = result;
}

// Launches warpScanKernel<Op, WarpScan> with one thread per element; `name` is what
// error messages call it.
template <class Op, class WarpScan>
void launchWarpScan(const char* name, const typename Op::Element* in, size_t n,
                    typename Op::Element* out, unsigned blockSize) {
    const size_t grid = std::max<size_t>(1, (n + blockSize - 1) / blockSize);
    launchKernel(name, warpScanKernel<Op, WarpScan>, dim3(unsigned(grid)), dim3(blockSize),
                 blockSize * sizeof(typename Op::Element), in, n, out);
}

}  // namespace scanlab
