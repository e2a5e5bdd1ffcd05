// The reference solution over the whole suite of data/cases.toml ([suite], compiled
// into harness/generated/suite.h): every task x operator x size x block size, checked against
// the CPU reference. Built twice: with nvcc for the GPU (CTest reports it skipped
// without one) and with g++ for the CPU emulator (sizes capped by emulator_max_n).
#define CATCH_CONFIG_RUNNER
#include <catch2/catch.hpp>

#include <string>

#include "harness/generated/operators.cuh"
#include "harness/generated/suite.h"
#include "harness/generated/task_list.cuh"
#include "harness/host/run.h"

using namespace scanlab;

namespace {

void runSuite(const char* taskName) {
    const bool emulated = std::string(SCANLAB_BACKEND) == "emulator";
#if !defined(__CUDACC__)
    const emu::RaceCheckScope watch;  // the check of shared memory, asked for every case
#endif
    size_t cases = 0;
    for (const char* op : kOperatorNames)
        if (operatorApplies(op, parseTask(taskName).task))
        for (unsigned block : kSuiteBlocks)
            for (size_t n : kSuiteSizes) {
                if (emulated && n > kSuiteEmulatorMaxN) continue;
                const RunConfig c = suiteCase(parseTask(taskName), op, n, block);
                withOperator(op, [&](auto opTag) {
#if !defined(__CUDACC__)
                    emu::clearRaces();
#endif
                    const RunResult r = runTask<decltype(opTag)>(c);
                    INFO(taskName << " " << op << " n=" << n << " block=" << block << ": "
                                  << r.status << " " << r.message
                                  << (r.check.first ? " first mismatch at index " +
                                                          std::to_string(r.check.first->index) +
                                                          ": expected " + r.check.first->expected +
                                                          ", got " + r.check.first->got
                                                    : std::string()));
                    CHECK(r.status == "pass");
#if !defined(__CUDACC__)
                    // It never fires on the reference.
                    const std::string race = emu::firstRace();
                    CHECK(race == "");
#endif
                });
                ++cases;
            }
    CHECK(cases >= 100);
}

// One TEST_CASE per driver task of the manifest (DriverTasks, harness/generated/task_list.cuh),
// tagged with its name: CTest runs each by its tag (tests/CMakeLists.txt), so a task
// added to data/assignment.toml is registered here with nothing to write.
template <class T>
void runSuiteOf() {
    runSuite(taskInfo(TaskTraits<T>::kTask).name);
}

template <class... Ts>
void registerSuites(TaskList<Ts...>) {
    auto add = [](void (*test)(), const std::string& task) {
        const std::string name = task + ": reference over the suite", tags = "[" + task + "]";
        // Catch copies the name and tags (what its TEST_CASE macro does, at run time).
        Catch::AutoReg(Catch::makeTestInvoker(test), CATCH_INTERNAL_LINEINFO, Catch::StringRef(),
                       Catch::NameAndTags{name, tags});
    };
    (add(&runSuiteOf<Ts>, taskInfo(TaskTraits<Ts>::kTask).name), ...);
}

}  // namespace

int main(int argc, char** argv) {
    if (deviceCount() == 0) {
        std::printf("no CUDA device: skipped\n");
        return kExitNoGpu;  // CTest's SKIP_RETURN_CODE
    }
    registerSuites(DriverTasks{});
    return Catch::Session().run(argc, argv);
}
