// scanlab grader: task 4's contract in the build of another task (grader/contract/README.md):
// its kernel declared, never defined here (no plan of another task launches it).
#pragma once
#include <cstddef>

#include "harness/platform.cuh"
#include "harness/tile_state.cuh"
#include "student/warp_scan.cuh"

namespace scanlab {

template <class Op, int CHUNK, bool INCLUSIVE>
__global__ void lookbackScanKernel(const typename Op::Element* in, typename Op::Element* out,
                                   size_t n, lookback::TileState<typename Op::Element> tiles);

}  // namespace scanlab
