// The performance model of `make profile` (harness/host/profile.h): the estimate at the
// graded size from two profiled sizes, its limiting factor, and the flag on an
// estimate above the copy bandwidth (no kernel that moves what a task needs beats a copy).
#include <catch2/catch.hpp>

#include <vector>

#include "harness/host/profile.h"

namespace {
// A launch that moves `elements` 4-byte elements, read and written once, coalesced
// (4 sectors a request of 32 lanes), its longest warp chain `chain` requests.
scanlab::emu::KernelProfile coalescedLaunch(uint64_t elements, uint64_t chain) {
    scanlab::emu::KernelProfile p;
    p.name = "someKernel";
    p.grid = dim3(1024);
    p.block = dim3(256);
    auto& c = p.counters;
    c.globalLoadRequests = c.globalStoreRequests = elements / 32;
    c.globalLoadSectors = c.globalStoreSectors = elements / 8;
    c.globalLoadIdealSectors = c.globalStoreIdealSectors = elements / 8;
    c.maxWarpGlobalRequests = 2 * chain;
    c.maxWarpLoadRequests = c.maxWarpMissRequests = chain;
    c.dramSectors = c.globalLoadSectors + c.globalStoreSectors;
    return p;
}
}  // namespace

TEST_CASE("the profile model estimates at the graded size and names its limit", "[profile]") {
    const size_t n1 = size_t(1) << 21, n2 = n1 * 2, target = size_t(1) << 26;
    const std::vector<scanlab::emu::KernelProfile> a{coalescedLaunch(n1, 32)}, b{coalescedLaunch(n2, 64)};
    const scanlab::Prediction p = scanlab::printPrediction(a, n1, b, n2, 8.0, target, "the graded size");
    CHECK(p.n == target);
    CHECK(p.limit == "bandwidth");
    CHECK_FALSE(p.impossible);
    // 8 bytes an element at the copy bandwidth, plus one launch's overhead.
    const scanlab::GpuModel m;
    CHECK(p.seconds == Approx(8.0 * double(target) / (m.copyGbps * 1e9) + m.launchSeconds).epsilon(0.01));
}

TEST_CASE("an estimate above the copy bandwidth is flagged impossible", "[profile]") {
    const size_t n1 = size_t(1) << 21, n2 = n1 * 2, target = size_t(1) << 26;
    // Counters that miss nearly all the traffic: 1/1000 of the elements seen.
    const std::vector<scanlab::emu::KernelProfile> a{coalescedLaunch(n1 / 1024, 4)},
        b{coalescedLaunch(n2 / 1024, 4)};
    const scanlab::Prediction p = scanlab::printPrediction(a, n1, b, n2, 8.0, target, "the graded size");
    CHECK(p.impossible);
    CHECK(p.gbps > scanlab::GpuModel{}.copyGbps);
}

TEST_CASE("16-byte shared accesses are no bank conflict: wavefronts against the width's fewest",
          "[profile]") {
    // 32 lanes each reading 16 consecutive bytes: 128 words, 4 in every bank, 4 wavefronts,
    // which is the fewest such a request can take (issue 42, item 7).
    scanlab::emu::KernelCounters vector;
    vector.sharedRequests = 100;
    vector.sharedWavefronts = 400;
    vector.sharedIdealWavefronts = 400;
    CHECK(scanlab::sharedConflictWays(vector) == Approx(1.0));
    // The same width with a stride that puts two of a request's words in each slot.
    scanlab::emu::KernelCounters conflicted = vector;
    conflicted.sharedWavefronts = 800;
    CHECK(scanlab::sharedConflictWays(conflicted) == Approx(2.0));
    // 4-byte accesses: 1 wavefront at the fewest.
    scanlab::emu::KernelCounters scalar;
    scalar.sharedRequests = scalar.sharedIdealWavefronts = 100;
    scalar.sharedWavefronts = 300;
    CHECK(scanlab::sharedConflictWays(scalar) == Approx(3.0));
}

TEST_CASE("the profile diagnoses the student's kernels, never the harness's", "[profile]") {
    // The same uncoalesced stores (8 sectors a request where 4 would do) in a launch of
    // the student's kernel and in the harness's clearTileStateKernel (issue 42, item 7).
    auto uncoalesced = [](const char* name) {
        scanlab::emu::KernelProfile p = coalescedLaunch(1 << 20, 32);
        p.name = name;
        p.counters.globalStoreSectors = 2 * p.counters.globalStoreIdealSectors;
        p.counters.laneSlots = 32 * (p.counters.globalLoadRequests + p.counters.globalStoreRequests);
        return p;
    };
    CHECK(scanlab::isStudentKernel("reduceBlocksKernel"));
    CHECK(scanlab::isStudentKernel("reduceBlocksKernel(stage 2)"));
    CHECK(scanlab::isStudentKernel("warpScanKernel(scanIncWarp)"));
    CHECK(scanlab::isStudentKernel("splitScatterKernel"));
    CHECK_FALSE(scanlab::isStudentKernel("clearTileStateKernel"));
    CHECK_FALSE(scanlab::isStudentKernel("warpScanKernel(placeholder)"));
    CHECK_FALSE(scanlab::isStudentKernel("myreduceBlocksKernel"));
    const auto harness = scanlab::profileNotes({uncoalesced("clearTileStateKernel")});
    CHECK(harness.empty());
    const auto mine = scanlab::profileNotes({uncoalesced("clearTileStateKernel"), uncoalesced("lookbackScanKernel")});
    REQUIRE(mine.size() == 1);
    CHECK(mine[0].rfind("lookbackScanKernel: ", 0) == 0);
}
