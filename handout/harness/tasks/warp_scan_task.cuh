// scanlab harness: students, do not edit (your code goes in student/); maintainers edit it here.
//
// Task 1's driver task (student/warp_scan.cuh): every warp scans its own 32
// consecutive elements (harness/tasks/task.cuh says what a task type holds).
#pragma once
#include <cstddef>
#include <vector>

#include "harness/baselines.cuh"
#include "harness/host/reference.h"
#include "harness/tasks/task.cuh"
#include "harness/tasks/tiling.cuh"
#include "harness/tasks/warp_tile.cuh"

namespace scanlab::tasks {

struct WarpScan {
    template <class Op>
    static std::vector<typename Op::Element> reference(const std::vector<typename Op::Element>& in) {
        return referenceSegmentedScan<Op>(in, kWarpSize);
    }

    static constexpr TimedCheck kTimedCheck = TimedCheck::scan(true, kWarpSize);

    template <class Op, class Baselines>
    static void baselines(Baselines& b) {
        // The handout's placeholder: lane 0 scans its warp's 32 elements alone.
        b.time("placeholder", [&] {
            launchWarpScan<Op, baseline::SequentialWarpScan>("warpScanKernel(placeholder)", b.in(),
                                                             b.n(), b.out(), b.block());
        });
    }
};

}  // namespace scanlab::tasks

#if defined(SCANLAB_STUDENT_UNIT)
#include "student/warp_scan.cuh"

namespace scanlab {

// The driver kernel of harness/tasks/warp_tile.cuh with your scanIncWarp.
struct StudentWarpScan {
    template <class Op>
    __device__ static typename Op::Element run(typename Op::Element* sh, unsigned idx) {
        return scanIncWarp<Op>(sh, idx);
    }
};

template <class Op>
void warpScan(const typename Op::Element* in, size_t n, typename Op::Element* out,
              unsigned blockSize) {
    // Named after your scanIncWarp too: the profile diagnoses it as your code
    // (harness/host/profile.h, isStudentKernel), not as the harness's.
    launchWarpScan<Op, StudentWarpScan>("warpScanKernel(scanIncWarp)", in, n, out, blockSize);
}

template <>
struct Plan<tasks::WarpScan> {
    template <class Op>
    static void launch(const typename Op::Element* in, size_t n, typename Op::Element* out,
                       unsigned blockSize, const Scratch<typename Op::Element>&) {
        warpScan<Op>(in, n, out, blockSize);
    }
};

}  // namespace scanlab
#endif
