// scanlab harness: students, do not edit (your code goes in student/); maintainers edit it here.
//
// The one door between the harness and the student's code. The student files are
// compiled in a translation unit of their own (harness/host/student_unit.cu) that defines
// these functions; the harness (driver.cu, run.h) sees only these declarations. So
// no macro, specialization or static object in a student file reaches the code that
// generates inputs, times the kernels, checks and writes their output.
#pragma once
#include <cstddef>
#include <cstdint>

#include "harness/generated/assignment.h"
#include "harness/tasks/tiling.cuh"

namespace scanlab::student {

// Launches the kernels of `task` (asynchronously, on the default stream) over the
// n elements of `in` into `out`, with the caller's scratch (Workspace::forRun,
// harness/tasks/tiling.cuh).
template <class Op>
void launchTask(Task task, const typename Op::Element* in, size_t n,
                typename Op::Element* out, unsigned blockSize,
                const Scratch<typename Op::Element>& scratch);

// The exercise split (student/split.cuh, application radix-sort): each launches one
// kernel (asynchronously), with enough threads for n elements.
void launchSplitFlags(const uint32_t* keys, size_t n, int bit, int32_t* isZero, unsigned blockSize);
void launchSplitScatter(const uint32_t* keys, const int32_t* isZero, const int32_t* zerosBefore,
                        size_t n, int bit, uint32_t* out, unsigned blockSize);

// The "not implemented" flag that the handout's stubs set (harness/runtime.cuh); the
// reset also clears the placeholder flag.
void resetNotImplemented();
bool wasNotImplemented();
// The handout's placeholder a grading build's launch reached (a PlaceholderId of
// harness/runtime.cuh; 0: none): there it does no work.
int placeholderReached();

// A kernel of the student unit: where the GPU build finds the device module of the
// student's kernels, to restore its variables before every launch
// (harness/host/student_state.h).
const void* deviceModuleAnchor();

}  // namespace scanlab::student
