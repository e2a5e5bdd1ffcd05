// scanlab harness: DO NOT EDIT. Your code goes in student/.
//
// The one door between the harness and the student's code. The student files are
// compiled in a translation unit of their own (harness/student_unit.cu) that defines
// these functions; the harness (driver.cu, run.h) sees only these declarations. So
// no macro, specialization or static object in a student file reaches the code that
// generates inputs, times the kernels, checks and writes their output.
#pragma once
#include <cstddef>

#include "harness/assignment.h"

namespace scanlab::student {

// Launches the kernels of `task` (asynchronously, on the default stream) over the
// n elements of `in` into `out`. `blockResults`: scratch of kMaxBlocks elements.
template <class Op>
void launchTask(Task task, const typename Op::Element* in, size_t n,
                typename Op::Element* out, unsigned blockSize,
                typename Op::Element* blockResults);

// The "not implemented" flag that the handout's stubs set (harness/runtime.cuh).
void resetNotImplemented();
bool wasNotImplemented();

}  // namespace scanlab::student
