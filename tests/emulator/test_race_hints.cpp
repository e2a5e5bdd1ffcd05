// The race hints of a failed case (harness/host/run.h), end to end on the emulator with a
// lockstep-style task 1 (lockstep_student/student/warp_scan.cuh: reads a neighbour's slot,
// writes its own, no __syncwarp) and the reference for the rest (issue 42, item 6).
#include <algorithm>
#include <functional>
#include <vector>

#include <catch2/catch.hpp>

#include "emu_test_util.h"
#include "harness/host/run.h"

TEST_CASE("a lockstep warp scan's failure, run again in lockstep order, names the missing "
          "__syncwarp", "[harness][lockstep][hint]") {
    using Op = scanlab::Add<int32_t>;
    const scanlab::TaskInfo& task = scanlab::parseTask("warp-scan");
    const scanlab::RunConfig c = scanlab::suiteCase(task, "add-i32", 4096, 256);
    // End to end: the case fails with a race hint (the plain re-run's, or the lockstep one's).
    const scanlab::RunResult r = scanlab::runTask<Op>(c);
    REQUIRE(r.status == "fail");
    CHECK_THAT(r.hint, Catch::Contains("race"));
    // The re-run watches shared memory (emulator/emu_race.h): the hint names the race's
    // line (the read and the write of lockstep_student's line 16) and the missing barrier.
    CHECK_THAT(r.hint, Catch::StartsWith("a ") && Catch::Contains(" race on shared memory in kernel "));
    CHECK_THAT(r.hint, Catch::Matches(".* at student/warp_scan\\.cuh:16, then thread \\([0-9]+,0,0\\) "
                                      "(read|wrote) it at student/warp_scan\\.cuh:16 \\(lanes of warp "
                                      "[0-9]+\\) with no synchronization between them: likely a "
                                      "missing __syncwarp\\(\\) between those two lines.*"));
    CHECK(scanlab::emu::laneOrder() == scanlab::emu::LaneOrder::Random);  // restored
    // The lockstep re-run alone (what runs when a second random schedule repeats the
    // failure): the lane order changes the output and the hint names __syncwarp().
    scanlab::TaskRunner<Op> runner(c);
    runner.in.upload(scanlab::generateInput<Op>(c.n, c.seed, scanlab::parseDistribution(c.dist)));
    const auto got = runner.runOnce();
    const std::string hint = scanlab::raceInLockstepOrder<int32_t>(runner, got);
    CHECK_THAT(hint, Catch::Contains("lockstep order") && Catch::Contains("__syncwarp()"));
    CHECK(scanlab::emu::laneOrder() == scanlab::emu::LaneOrder::Random);
}

TEST_CASE("the reference passes in either fixed lane order", "[harness][lockstep][hint]") {
    // Task 2 (reduce): the reference's own (task 3 would run this binary's lockstep task 1).
    const scanlab::TaskInfo& task = scanlab::parseTask("reduce");
    for (auto order : {scanlab::emu::LaneOrder::LanesInOrder, scanlab::emu::LaneOrder::WarpsInOrder}) {
        scanlab::emu::setLaneOrder(order);
        scanlab::RunConfig c = scanlab::suiteCase(task, "mssp", 5000, 128);
        const scanlab::RunResult r = scanlab::runTask<scanlab::Mssp>(c);
        scanlab::emu::setLaneOrder(scanlab::emu::LaneOrder::Random);
        CHECK(r.status == "pass");
    }
}

TEST_CASE("only the first few wrong outputs of a task in one process are re-run for a hint",
          "[harness][hint]") {
    // The hint's re-runs cost up to three runs of the case each (run.h, kHintedWrongOutputs):
    // a kernel wrong in every case gets its hints on its first failures, not on all of them.
    using Op = scanlab::Add<int32_t>;
    const scanlab::TaskInfo& task = scanlab::parseTask("warp-scan");
    std::vector<bool> hinted;
    for (int k = 0; k < scanlab::kHintedWrongOutputs + 2; ++k) {
        const scanlab::RunResult r = scanlab::runTask<Op>(scanlab::suiteCase(task, "add-i32", 1024 + 32 * k, 64));
        REQUIRE(r.status == "fail");
        hinted.push_back(!r.hint.empty());
    }
    // The hinted ones come first (another test of this process may have used some), and
    // none after the budget.
    const auto given = std::count(hinted.begin(), hinted.end(), true);
    CHECK(hinted.front());
    CHECK(given <= scanlab::kHintedWrongOutputs);
    CHECK(std::is_sorted(hinted.begin(), hinted.end(), std::greater<bool>()));
    CHECK_FALSE(hinted.back());
}
