// The harness plans (Plan<T>, in the task headers harness/tasks/) on the emulator, with the reference reduce
// and scan but a lockstep-style task 1 (lockstep_student/student/warp_scan.cuh):
// the randomized schedule must reject the lockstep warp scan end to end, while the
// reference kernels pass under every schedule tried.
#include <catch2/catch.hpp>

#include <vector>

#include "emu_test_util.h"
// The task headers' plans with this test's student files: a student unit of its own.
#define SCANLAB_STUDENT_UNIT 1
#include "harness/generated/task_list.cuh"

using emutest::ScheduleScope;
using Op = scanlab::Add<int32_t>;

namespace {
std::vector<int32_t> input(size_t n) {
    std::vector<int32_t> in(n);
    for (size_t i = 0; i < n; ++i) in[i] = int32_t((i * 2654435761u) % 23) - 11;
    return in;
}
std::vector<int32_t> scanEvery(const std::vector<int32_t>& in, size_t group) {
    std::vector<int32_t> out(in.size());
    for (size_t i = 0; i < in.size(); ++i) out[i] = (i % group ? out[i - 1] : 0) + in[i];
    return out;
}
}  // namespace

TEST_CASE("harness warpScan rejects a lockstep scanIncWarp on the emulator", "[harness][lockstep]") {
    const size_t n = 4096;
    const auto in = input(n);
    const auto expect = scanEvery(in, 32);
    scanlab::DeviceBuffer<int32_t> din(n), dout(n);
    din.upload(in);
    scanlab::Workspace<Op> ws;
    using WarpScan = scanlab::Plan<scanlab::tasks::WarpScan>;
    for (uint64_t seed : {1u, 2u}) {
        INFO("seed " << seed);
        std::vector<int32_t> first, again;
        {
            ScheduleScope scope(seed);
            WarpScan::launch<Op>(din.data(), n, dout.data(), 256, ws.forRun(n, 256));
            first = dout.download();
        }
        {
            ScheduleScope scope(seed);
            WarpScan::launch<Op>(din.data(), n, dout.data(), 256, ws.forRun(n, 256));
            again = dout.download();
        }
        CHECK(first != expect);
        CHECK(first == again);
        // The baseline (lane 0 scans, with __syncwarp) is right under the same schedule.
        ScheduleScope scope(seed);
        scanlab::launchWarpScan<Op, scanlab::baseline::SequentialWarpScan>(
            "warpScanKernel(placeholder)", din.data(), n, dout.data(), 256);
        CHECK(dout.download() == expect);
    }
}

TEST_CASE("harness reduce runs the reference kernels correctly on the emulator", "[harness]") {
    const size_t n = 100003;
    const auto in = input(n);
    const int32_t expect = scanEvery(in, n).back();
    scanlab::DeviceBuffer<int32_t> din(n), result(1);
    din.upload(in);
    scanlab::Workspace<Op> ws;
    for (unsigned block : {32u, 256u, 1024u}) {
        for (uint64_t seed : {3u, 4u}) {
            ScheduleScope scope(seed, 2);
            scanlab::Plan<scanlab::tasks::Reduce>::launch<Op>(din.data(), n, result.data(), block,
                                                              ws.forRun(n, block));
            INFO("block " << block << " seed " << seed);
            CHECK(result.download()[0] == expect);
        }
    }
}
