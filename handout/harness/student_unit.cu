// scanlab harness: DO NOT EDIT. Your code goes in student/.
//
// The student unit: the student files and the plans that launch their kernels, in a
// translation unit of their own, compiled apart from the harness and linked after it.
// It defines the entry points of harness/student_api.h, once per operator of the
// manifest (SCANLAB_FOR_EACH_OPERATOR, harness/operators.cuh).
#include "harness/student_api.h"

#include "harness/operators.cuh"
#include "harness/plans.cuh"
#include "harness/launch.cuh"
#include "harness/policy.cuh"
#include "harness/runtime.cuh"
#include "student/split.cuh"

namespace scanlab::student {

template <class Op>
void launchTask(Task task, const typename Op::Element* in, size_t n,
                typename Op::Element* out, unsigned blockSize,
                const Scratch<typename Op::Element>& scratch) {
    typename Op::Element* blockResults = scratch.blockResults;
    switch (task) {
        case Task::WarpScan: warpScan<Op>(in, n, out, blockSize); break;
        case Task::Reduce: reduce<Op>(in, n, out, blockSize, blockResults); break;
        case Task::Scan: scan<Op, true>(in, n, out, blockSize, blockResults); break;
        case Task::ScanExclusive: scan<Op, false>(in, n, out, blockSize, blockResults); break;
        case Task::LookbackScan: lookbackScan<Op, true>(in, n, out, blockSize, scratch.tiles); break;
        case Task::LookbackScanExclusive:
            lookbackScan<Op, false>(in, n, out, blockSize, scratch.tiles);
            break;
    }
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
}

bool wasNotImplemented() {
    int flag = 0;
    checkCuda(cudaMemcpyFromSymbol(&flag, scanlabNotImplementedFlag, sizeof flag),
              "cudaMemcpyFromSymbol");
    return flag != 0;
}

}  // namespace scanlab::student
