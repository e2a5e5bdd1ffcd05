// scanlab grader: the split exercise's contract in a task's build (grader/contract/README.md).
// harness/host/student_unit.cu names its kernels, and a task's cases never run them: the
// handout's stubs (the exercise's own build has the student's file).
#pragma once
#include <cstddef>
#include <cstdint>

#include "harness/platform.cuh"
#include "harness/runtime.cuh"

namespace scanlab {

__global__ void splitFlagsKernel(const uint32_t* __restrict__ keys, size_t n, int bit,
                                 int32_t* __restrict__ isZero) {
    notImplemented();
}

__global__ void splitScatterKernel(const uint32_t* __restrict__ keys,
                                   const int32_t* __restrict__ isZero,
                                   const int32_t* __restrict__ zerosBefore, size_t n, int bit,
                                   uint32_t* __restrict__ out) {
    notImplemented();
}

}  // namespace scanlab
