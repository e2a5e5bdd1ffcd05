// scanlab harness: students, do not edit (your code goes in student/); maintainers edit it here.
//
// The harness's own task 1, for `make grade-local` (harness/host/isolation.h): the grader
// builds each task with the reference's versions of the other files, and this stands in
// for them where another task calls scanIncWarp. It relies on the contract and nothing
// more: it reads the warp's 32 slots of sh AS SOON AS IT IS CALLED (a shared-memory
// Hillis-Steele scan does too), since the caller has written them and synchronized
// (__syncwarp() or __syncthreads()) before the call. A caller that forgets that barrier
// can pass with a warp scan of its own that begins with one, and fails here.
// (Correct and slow: lane 0 scans alone. It is not a solution of task 1.)
#pragma once
#include "harness/baselines.cuh"
#include "harness/ops.cuh"
#include "harness/platform.cuh"

namespace scanlab {

template <class Op>
__device__ typename Op::Element scanIncWarp(typename Op::Element* sh, unsigned idx) {
    return baseline::scanIncWarpSequential<Op>(sh, idx);
}

}  // namespace scanlab
