// Task 3: inclusive (and exclusive) scan of an array of any length.
//                                                                  YOUR FILE: edit it.
//
// The three phases (harness/tasks/scan_task.cuh launches them):
//   1. reduceBlocksKernel (task 2): block b reduces its range -> blockResults[b].
//   2. scanBlocksKernel with ONE block, inclusive, in place over blockResults.
//   3. scanBlocksKernel with gridDim.x blocks: block b scans its range
//      [b*itemsPerBlock, (b+1)*itemsPerBlock), starting from the carry-in
//      blockPrefixes[b-1] (block 0, or blockPrefixes == nullptr: the identity).
//
// Per tile of blockDim.x*CHUNK elements: load CHUNK consecutive elements per thread
// (loadChunks), scan them sequentially, scan the per-thread totals across the block
// (scanIncWarp from task 1 in each warp, then the warp totals), combine, and store
// coalesced (storeChunks). Carry the running total from one tile to the next.
// INCLUSIVE = false asks for the exclusive scan: out[i] = in[0] (+) ... (+) in[i-1],
// out[0] = identity.
//
// Non-commutative operators: always apply(earlier, later).
// Shared memory: tileSharedBytes<Element>(blockDim.x) bytes of dynamic shared
// memory (harness/policy.cuh). blockDim.x is a multiple of 32, from 32 to 1024.
#pragma once
#include <cstddef>

#include "harness/ops.cuh"
#include "harness/platform.cuh"
#include "harness/runtime.cuh"
#include "harness/tile_io.cuh"
#include "harness/warp.cuh"
#include "student/reduce.cuh"
#include "student/warp_scan.cuh"

namespace scanlab {

template <class Op, int CHUNK, bool INCLUSIVE>
__global__ void scanBlocksKernel(const typename Op::Element* in, typename Op::Element* out,
                                 size_t n, size_t itemsPerBlock,
                                 const typename Op::Element* blockPrefixes) {
    // TODO(task 3): implement the tile loop described at the top of this file.
    notImplemented();
}

}  // namespace scanlab
