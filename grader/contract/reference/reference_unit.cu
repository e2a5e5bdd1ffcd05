// scanlab grader: the reference unit (grader/contract/README.md). Trusted, compiled once per
// machine into the prebuilt harness (grader/grading/prebuilt.py) with the student unit's own
// command, student/ being solution/'s files; linked into the build of every task but
// task 2. It defines what a task's plan launches from another task's file, for every
// operator of the manifest (SCANLAB_FOR_EACH_OPERATOR): reduceBlocksKernel, which task
// 3's plan runs as its phase 1 (harness/tasks/scan_task.cuh). The student unit sees its
// declaration only (grader/contract/student/reduce.cuh), and no line of the reference.
#include <cstddef>
#include <cstdint>

#include "harness/baselines.cuh"
#include "harness/generated/operators.cuh"
#include "harness/ops.cuh"
#include "harness/platform.cuh"
#include "harness/policy.cuh"
#include "harness/runtime.cuh"
#include "harness/tile_io.cuh"
#include "harness/tile_state.cuh"
#include "harness/warp.cuh"

#if defined(__CUDACC__)
// nvcc without -rdc: each unit's device code is a module of its own, so the reference's
// device functions never meet the student's; only the kernels' host stubs are linked
// across units (a launch calls the stub, which launches this unit's kernel).
#include "student/reduce.cuh"

namespace scanlab {
#define SCANLAB_EXPORT_REDUCE(Op)                                                               \
    template __global__ void reduceBlocksKernel<Op, ChunkPolicy<Op::Element>::kItemsPerThread>( \
        const Op::Element* __restrict__, size_t, size_t, Op::Element* __restrict__);
SCANLAB_FOR_EACH_OPERATOR(SCANLAB_EXPORT_REDUCE)
#undef SCANLAB_EXPORT_REDUCE
}  // namespace scanlab
#else
// The emulator's kernels are host functions, and a template the student unit defines
// too (reduceWarp<Op>: the student's own, or the grader's stand-in) would be ONE symbol
// after the link, the linker's pick. So the reference is compiled into a namespace of
// internal linkage (every header it includes is already included above, so only its
// own code lands there), and only the exported kernels, explicit specializations that
// call it, are visible outside.
namespace scanlab {
// As grader/contract/student/reduce.cuh declares it (that header is not included here:
// its device functions would make the reference's calls to its own ambiguous).
template <class Op, int CHUNK>
void reduceBlocksKernel(const typename Op::Element* __restrict__ in, size_t n,
                        size_t itemsPerBlock, typename Op::Element* __restrict__ blockResults);
}  // namespace scanlab

namespace {
namespace reference_unit {
namespace scanlab {
using namespace ::scanlab;
}  // namespace scanlab
#include "student/reduce.cuh"
}  // namespace reference_unit
}  // namespace

namespace scanlab {
#define SCANLAB_EXPORT_REDUCE(Op)                                                                \
    template <>                                                                                  \
    void reduceBlocksKernel<Op, ChunkPolicy<Op::Element>::kItemsPerThread>(                      \
        const Op::Element* __restrict__ in, size_t n, size_t itemsPerBlock,                      \
        Op::Element* __restrict__ blockResults) {                                                \
        reference_unit::scanlab::reduceBlocksKernel<Op, ChunkPolicy<Op::Element>::kItemsPerThread>( \
            in, n, itemsPerBlock, blockResults);                                                 \
    }
SCANLAB_FOR_EACH_OPERATOR(SCANLAB_EXPORT_REDUCE)
#undef SCANLAB_EXPORT_REDUCE
}  // namespace scanlab
#endif
