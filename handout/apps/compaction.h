// scanlab harness: students, do not edit. Stream compaction, with your exclusive scan (task 3).
//
// Keep the elements that satisfy a predicate, in order, packed at the front. A map
// writes a flag per element (1: keep), the exclusive scan of the flags gives each
// kept element its place in the output, and a scatter writes it there. The number
// kept is the last place plus the last flag. Every step is one pass over n elements:
// the pattern behind radix sort's split, quicksort's partition and find_repeats.
#pragma once
#include "apps/app.h"
#include "harness/host/generate.h"
#include "harness/host/timing.h"

namespace scanlab::apps {

// The predicate: keep the positive values (about half of a random input).
SCANLAB_HD bool keep(int32_t x) { return x > 0; }

__global__ void keepFlagsKernel(const int32_t* in, int32_t* flags, size_t n) {
    for (size_t i = size_t(blockIdx.x) * blockDim.x + threadIdx.x; i < n;
         i += size_t(gridDim.x) * blockDim.x)
        flags[i] = keep(in[i]) ? 1 : 0;
}

__global__ void scatterKeptKernel(const int32_t* in, const int32_t* flags,
                                         const int32_t* places, int32_t* out, size_t n) {
    for (size_t i = size_t(blockIdx.x) * blockDim.x + threadIdx.x; i < n;
         i += size_t(gridDim.x) * blockDim.x)
        // A wrong scan may give places out of range: they are dropped, not written.
        if (flags[i] && places[i] >= 0 && size_t(places[i]) < n) out[places[i]] = in[i];
}

inline std::vector<int32_t> compactionInput(const AppConfig& c) {
    return generateInput<Add<int32_t>>(c.n, c.seed, Distribution::Random);
}

inline AppOutput runCompaction(const AppConfig& c) {
    DeviceBuffer<int32_t> in(c.n, "input"), flags(c.n, "flags"), places(c.n, "places"),
        out(c.n, "output");
    in.upload(compactionInput(c));
    const dim3 grid(mapBlocks(c.n, c.block)), block(c.block);
    EventTimer timer;
    AppOutput result;
    for (int pass = 0; pass < 2; ++pass) {
        timer.start();
        launchKernel("keepFlagsKernel", keepFlagsKernel, grid, block, 0,
                     static_cast<const int32_t*>(in.data()), flags.data(), c.n);
        runStudentTask<Add<int32_t>>(Task::ScanExclusive, flags, places, c.block);
        launchKernel("scatterKeptKernel", scatterKeptKernel, grid, block, 0,
                     static_cast<const int32_t*>(in.data()), static_cast<const int32_t*>(flags.data()),
                     static_cast<const int32_t*>(places.data()), out.data(), c.n);
        result.ms = timer.stop();
    }
    // Count, then the kept elements: the count from the last place and flag.
    const std::vector<int32_t> placesHost = places.download(), flagsHost = flags.download();
    const int64_t count = int64_t(placesHost.back()) + flagsHost.back();
    std::vector<int32_t> kept = out.download();
    kept.resize(size_t(count < 0 ? 0 : count > int64_t(c.n) ? int64_t(c.n) : count));
    kept.insert(kept.begin(), int32_t(count));
    result.bytes = asBytes(kept);
    // A perfect compaction reads n and writes the kept ones; this one also writes and
    // reads the flags and the places.
    result.bytesMoved = double(c.n) * sizeof(int32_t) * 7;
    return result;
}

inline AppVerdict checkCompaction(const AppConfig& c, const std::vector<unsigned char>& bytes) {
    AppVerdict v;
    std::vector<int32_t> expected;
    for (int32_t x : compactionInput(c))
        if (keep(x)) expected.push_back(x);
    std::vector<int32_t> got;
    const size_t count = bytes.size() / sizeof(int32_t);
    if (count == 0 || !fromBytes(bytes, count, got)) {
        v.message = "the output is not a count followed by the kept elements";
        return v;
    }
    v.figures = {{"elements", std::to_string(c.n)}, {"kept (expected)", std::to_string(expected.size())},
                 {"kept (yours)", std::to_string(got[0])}};
    if (size_t(got[0]) != expected.size() || got.size() != expected.size() + 1) {
        v.message = "kept " + std::to_string(got[0]) + " elements, expected " +
                    std::to_string(expected.size()) +
                    " (the count is the last place of the exclusive scan plus the last flag)";
        return v;
    }
    for (size_t i = 0; i < expected.size(); ++i)
        if (got[i + 1] != expected[i]) {
            v.message = "first wrong element: output index " + std::to_string(i) + " is " +
                        std::to_string(got[i + 1]) + ", expected " + std::to_string(expected[i]);
            return v;
        }
    v.passed = true;
    return v;
}

}  // namespace scanlab::apps
