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
    //@@ solution
    using T = typename Op::Element;
    SCANLAB_DYNAMIC_SHARED(T, shared);
    const unsigned tid = threadIdx.x;
    const unsigned lane = laneId();
    const unsigned warp = warpId();
    const unsigned numWarps = blockDim.x / kWarpSize;
    const unsigned tileItems = blockDim.x * CHUNK;
    T* staging = shared;
    T* warpTotals = shared + stagedSlots(tileItems);

    const size_t begin = blockIdx.x * itemsPerBlock;
    const size_t limit = begin + itemsPerBlock;
    const size_t end = n < limit ? n : limit;
    T carry = (blockPrefixes != nullptr && blockIdx.x > 0) ? blockPrefixes[blockIdx.x - 1]
                                                            : Op::identity();

    for (size_t base = begin; base < end; base += tileItems) {
        const size_t valid = end - base;
        T chunk[CHUNK];
        loadChunks<CHUNK>(in + base, valid, Op::identity(), staging, tid, blockDim.x, chunk,
                          BlockSync{});

        // Sequential inclusive scan of this thread's chunk.
#pragma unroll
        for (int k = 1; k < CHUNK; ++k) chunk[k] = Op::apply(chunk[k - 1], chunk[k]);

        // Inclusive scan of the per-thread totals: within each warp, then across warps.
        staging[tid] = chunk[CHUNK - 1];
        __syncwarp();
        const T threadScan = scanIncWarp<Op>(staging, tid);
        if (lane == kWarpSize - 1) warpTotals[warp] = threadScan;
        __syncthreads();
        T warpPrefix = Op::identity();
        T tileTotal = Op::identity();
        for (unsigned w = 0; w < numWarps; ++w) {
            const T t = warpTotals[w];
            if (w < warp) warpPrefix = Op::apply(warpPrefix, t);
            tileTotal = Op::apply(tileTotal, t);
        }
        // Everything before this thread's chunk: earlier tiles, earlier warps,
        // earlier lanes of this warp.
        const T earlierLanes = shuffleUp(threadScan, 1);
        T prefix = Op::apply(carry, warpPrefix);
        if (lane > 0) prefix = Op::apply(prefix, earlierLanes);

        if constexpr (INCLUSIVE) {
#pragma unroll
            for (int k = 0; k < CHUNK; ++k) chunk[k] = Op::apply(prefix, chunk[k]);
        } else {
#pragma unroll
            for (int k = CHUNK - 1; k > 0; --k) chunk[k] = Op::apply(prefix, chunk[k - 1]);
            chunk[0] = prefix;
        }
        storeChunks<CHUNK>(chunk, staging, tid, blockDim.x, out + base, valid, BlockSync{});
        carry = Op::apply(carry, tileTotal);
    }
    //@@ placeholder
    //| // TODO(task 3): implement the tile loop described at the top of this file.
    //| notImplemented();
    //@@ end
}

}  // namespace scanlab
