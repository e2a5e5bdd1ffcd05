// The reference solution over the whole suite of data/cases.toml ([suite], compiled
// into harness/suite.h): every task x operator x size x block size, checked against
// the CPU reference. Built twice: with nvcc for the GPU (CTest reports it skipped
// without one) and with g++ for the CPU emulator (sizes capped by emulator_max_n).
#define CATCH_CONFIG_RUNNER
#include <catch2/catch.hpp>

#include <string>

#include "harness/operators.cuh"
#include "harness/run.h"
#include "harness/suite.h"

using namespace scanlab;

namespace {

void runSuite(const char* taskName) {
    const bool emulated = std::string(SCANLAB_BACKEND) == "emulator";
    size_t cases = 0;
    for (const char* op : kOperatorNames)
        if (operatorApplies(op, parseTask(taskName).task))
        for (unsigned block : kSuiteBlocks)
            for (size_t n : kSuiteSizes) {
                if (emulated && n > kSuiteEmulatorMaxN) continue;
                const RunConfig c = suiteCase(parseTask(taskName), op, n, block);
                withOperator(op, [&](auto opTag) {
                    const RunResult r = runTask<decltype(opTag)>(c);
                    INFO(taskName << " " << op << " n=" << n << " block=" << block << ": "
                                  << r.status << " " << r.message
                                  << (r.check.first ? " first mismatch at index " +
                                                          std::to_string(r.check.first->index) +
                                                          ": expected " + r.check.first->expected +
                                                          ", got " + r.check.first->got
                                                    : std::string()));
                    CHECK(r.status == "pass");
                });
                ++cases;
            }
    CHECK(cases >= 100);
}

}  // namespace

TEST_CASE("warp-scan: reference over the suite", "[warp-scan]") { runSuite("warp-scan"); }
TEST_CASE("reduce: reference over the suite", "[reduce]") { runSuite("reduce"); }
TEST_CASE("scan: reference over the suite", "[scan]") { runSuite("scan"); }
TEST_CASE("scan-exclusive: reference over the suite", "[scan-exclusive]") {
    runSuite("scan-exclusive");
}
TEST_CASE("lookback-scan: reference over the suite", "[lookback-scan]") {
    runSuite("lookback-scan");
}
TEST_CASE("lookback-scan-exclusive: reference over the suite", "[lookback-scan-exclusive]") {
    runSuite("lookback-scan-exclusive");
}

int main(int argc, char** argv) {
    if (deviceCount() == 0) {
        std::printf("no CUDA device: skipped\n");
        return kExitNoGpu;  // CTest's SKIP_RETURN_CODE
    }
    return Catch::Session().run(argc, argv);
}
