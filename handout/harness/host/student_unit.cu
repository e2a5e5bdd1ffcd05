// scanlab harness: students, do not edit (your code goes in student/); maintainers edit it here.
//
// The student unit: the student files and the plans that launch their kernels, in a
// translation unit of their own, compiled apart from the harness and linked after it.
// It defines the entry points of harness/host/student_api.h, once per operator of the
// manifest (SCANLAB_FOR_EACH_OPERATOR, harness/generated/operators.cuh).
//
// SCANLAB_STUDENT_UNIT lets each task header (harness/tasks/) include its student file
// and define its plan (Plan<T>, harness/tasks/task.cuh): here only, never in the harness.
#define SCANLAB_STUDENT_UNIT 1

#include "harness/host/student_api.h"
#include "harness/host/unit_entry.h"

#include <stdexcept>
#include <string>

#include "harness/generated/operators.cuh"
#include "harness/generated/task_list.cuh"
#include "harness/policy.cuh"
#include "harness/runtime.cuh"
#include "harness/tasks/launch.cuh"
#include "student/split.cuh"

// The tasks whose plans this unit compiles: a bit per Task (1 << int(Task::X)), all of
// them unless the build says otherwise. A build that runs one task's cases need not
// instantiate the other tasks' kernels for every operator.
#ifndef SCANLAB_BUILD_TASKS
#define SCANLAB_BUILD_TASKS (~0ull)
#endif

namespace scanlab::student {

constexpr bool built(Task task) { return ((SCANLAB_BUILD_TASKS) >> unsigned(task)) & 1ull; }

// (The attribute on a line of its own: the grader reads this file's host functions from
// lines that start with their type.)
[[noreturn]]
static void notBuilt(Task task) {
    throw std::logic_error("task " + std::to_string(int(task)) + " is not compiled into this build "
                           "(SCANLAB_BUILD_TASKS)");
}

// The plan of the task's type (DriverTasks, harness/generated/task_list.cuh, generated from the
// manifest): a task whose type has no plan does not compile; one left out of the build
// is not instantiated at all (`if constexpr`).
template <class Op>
void launchTask(Task task, const typename Op::Element* in, size_t n,
                typename Op::Element* out, unsigned blockSize,
                const Scratch<typename Op::Element>& scratch) {
    withTask(task, [&](auto type) {
        using Type = decltype(type);
        if constexpr (built(TaskTraits<Type>::kTask))
            Plan<Type>::template launch<Op>(in, n, out, blockSize, scratch);
        else
            notBuilt(task);
    });
}

#define SCANLAB_INSTANTIATE_LAUNCH_TASK(Op)                                                 \
    template void launchTask<Op>(Task, const Op::Element*, size_t, Op::Element*, unsigned, \
                                 const Scratch<Op::Element>&);
SCANLAB_FOR_EACH_OPERATOR(SCANLAB_INSTANTIATE_LAUNCH_TASK)
#undef SCANLAB_INSTANTIATE_LAUNCH_TASK

static unsigned splitBlocks(size_t n, unsigned blockSize) {
    const size_t blocks = (n + blockSize - 1) / blockSize;
    return unsigned(blocks < kMaxBlocks ? blocks : kMaxBlocks);
}

void launchSplitFlags(const uint32_t* keys, size_t n, int bit, int32_t* isZero, unsigned blockSize) {
    launchKernel("splitFlagsKernel", splitFlagsKernel, dim3(splitBlocks(n, blockSize)), dim3(blockSize),
                 0, keys, n, bit, isZero);
}

void launchSplitScatter(const uint32_t* keys, const int32_t* isZero, const int32_t* zerosBefore,
                        size_t n, int bit, uint32_t* out, unsigned blockSize) {
    launchKernel("splitScatterKernel", splitScatterKernel, dim3(splitBlocks(n, blockSize)),
                 dim3(blockSize), 0, keys, isZero, zerosBefore, n, bit, out);
}

void resetNotImplemented() {
    const int zero = 0;
    checkCuda(cudaMemcpyToSymbol(scanlabNotImplementedFlag, &zero, sizeof zero),
              "cudaMemcpyToSymbol");
    checkCuda(cudaMemcpyToSymbol(scanlabPlaceholderFlag, &zero, sizeof zero),
              "cudaMemcpyToSymbol");
}

int placeholderReached() {
    int flag = 0;
    checkCuda(cudaMemcpyFromSymbol(&flag, scanlabPlaceholderFlag, sizeof flag),
              "cudaMemcpyFromSymbol");
    return flag;
}

// A kernel of this unit: the harness finds the device module of the student's kernels
// through it, to restore the module's variables before every launch
// (harness/host/student_state.h).
__global__ void deviceModuleAnchorKernel() {}

const void* deviceModuleAnchor() {
    return reinterpret_cast<const void*>(&deviceModuleAnchorKernel);
}

bool wasNotImplemented() {
    int flag = 0;
    checkCuda(cudaMemcpyFromSymbol(&flag, scanlabNotImplementedFlag, sizeof flag),
              "cudaMemcpyFromSymbol");
    return flag != 0;
}

// The entry points as a shared object exports them (harness/host/unit_entry.h).
template <class Op>
static void launchTaskErased(Task task, const void* in, size_t n, void* out, unsigned blockSize,
                             const void* scratch) {
    using T = typename Op::Element;
    launchTask<Op>(task, static_cast<const T*>(in), n, static_cast<T*>(out), blockSize,
                   *static_cast<const Scratch<T>*>(scratch));
}

#define SCANLAB_COUNT_OPERATOR(Op) +1
static_assert(0 SCANLAB_FOR_EACH_OPERATOR(SCANLAB_COUNT_OPERATOR) <= UnitEntry::kMaxOperators,
              "more operators than UnitEntry holds: raise kMaxOperators (and kVersion)");
#undef SCANLAB_COUNT_OPERATOR

UnitEntry unitEntry() {
    UnitEntry e{};
    e.version = UnitEntry::kVersion;
#define SCANLAB_UNIT_ENTRY_OPERATOR(Op)                                    \
    e.operatorNames[e.operators] = OperatorTraits<Op>::kName;             \
    e.launchTask[e.operators++] = &launchTaskErased<Op>;
    SCANLAB_FOR_EACH_OPERATOR(SCANLAB_UNIT_ENTRY_OPERATOR)
#undef SCANLAB_UNIT_ENTRY_OPERATOR
    e.launchSplitFlags = &launchSplitFlags;
    e.launchSplitScatter = &launchSplitScatter;
    e.resetNotImplemented = &resetNotImplemented;
    e.wasNotImplemented = &wasNotImplemented;
    e.placeholderReached = &placeholderReached;
    return e;
}

}  // namespace scanlab::student
