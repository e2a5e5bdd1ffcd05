// scanlab harness: students, do not edit (your code goes in student/); maintainers edit it here.
//
// `grade --random N` (harness/host/grade.h): configurations drawn at random over what
// the assignment allows, run and reported apart from the points.
#pragma once

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <random>
#include <string>
#include <vector>

#include "harness/generated/grading.h"
#include "harness/generated/operators.cuh"
#include "harness/host/args.h"
#include "harness/host/report.h"
#include "harness/host/run.h"
#include "harness/host/tasks.h"
#include "harness/runtime.cuh"

namespace scanlab {

// `grade --random N`: N configurations a task drawn at random over what the assignment
// allows, as the grader's hidden cases are (grader/config/draw.py draws those from a secret
// seed): a random driver task, operator and block size (any multiple of the warp in
// [kMinBlockSize, kMaxBlockSize]), a size from one of the classes (tiny, warp, block and
// tile boundaries +-1, many tiles a block, large) up to --random-max-n (default: 2^22 on a
// GPU, the emulator's grading limit on the emulator). --random-seed S repeats a draw.
// Reported apart from the points: each failure prints its `run` command.
struct RandomTally {
    size_t passed = 0, total = 0;
};

inline size_t randomSize(std::mt19937_64& rng, unsigned block, size_t elementBytes, size_t maxN) {
    auto pick = [&](size_t lo, size_t hi) {
        return lo >= hi ? lo : lo + size_t(rng() % (hi - lo + 1));
    };
    const size_t tile = size_t(block) * std::max<size_t>(1, 32 / elementBytes);
    const long long nudge = (long long)(rng() % 3) - 1;
    size_t n = 1;
    switch (rng() % 6) {
        case 0: n = pick(1, 2 * kWarpSize); break;                                         // tiny
        case 1: n = size_t((long long)(kWarpSize * pick(1, 2 * block / kWarpSize)) + nudge); break;
        case 2: n = size_t((long long)(block * pick(1, 12)) + nudge); break;               // blocks
        case 3: n = size_t((long long)(tile * pick(1, 24)) + nudge); break;                // tiles
        case 4: n = tile * pick(kMaxBlocks + 1, 4 * kMaxBlocks) + pick(1, tile - 1); break;  // many tiles
        default: n = size_t(std::exp2(std::uniform_real_distribution<double>(10, std::log2(double(maxN)))(rng)));
    }
    n = std::max<size_t>(1, n);
    return n > maxN ? pick(std::max<size_t>(1, maxN / 2), maxN) : n;
}

template <class Selected, class Skip>
RandomTally runRandomCases(const Args& args, const Selected& selected, const Skip& skip, bool emulated) {
    RandomTally tally;
    const size_t perTask = size_t(parseCount(args.get("--random", "0"), "--random"));
    if (perTask == 0) return tally;
    const size_t maxN = size_t(parseCount(
        args.get("--random-max-n", std::to_string(emulated ? grading::kEmulatorMaxN : size_t(1) << 22)),
        "--random-max-n"));
    const uint64_t seed = args.has("--random-seed")
                              ? parseCount(args.get("--random-seed", "1"), "--random-seed")
                              : uint64_t(std::chrono::steady_clock::now().time_since_epoch().count());
    std::mt19937_64 rng(seed);
    std::printf("\nscanlab grade --random %zu: configurations drawn over every block size and size "
                "class up to n = %zu (--random-seed %llu repeats them)\n",
                perTask, maxN, (unsigned long long)seed);
    for (const grading::Task& t : grading::kTasks) {
        if (!selected(t) || skip(t)) continue;
        std::vector<const TaskInfo*> drivers;
        for (const TaskInfo& d : kTasks)
            if (d.number == t.number) drivers.push_back(&d);
        if (drivers.empty()) continue;
        size_t passed = 0;
        for (size_t i = 0; i < perTask; ++i) {
            const TaskInfo& driver = *drivers[rng() % drivers.size()];
            std::vector<std::string> ops;
            for (const char* name : kOperatorNames)
                if (operatorApplies(name, driver.task)) ops.push_back(name);
            const std::string op = ops[rng() % ops.size()];
            const unsigned block = kMinBlockSize + kWarpSize * unsigned(rng() % ((kMaxBlockSize - kMinBlockSize) / kWarpSize + 1));
            size_t bytes = 4;
            withOperator(op, [&](auto o) { bytes = sizeof(typename decltype(o)::Element); });
            RunConfig c = suiteCase(driver, op, randomSize(rng, block, bytes, maxN), block);
            c.seed = rng() % 1000000007ull + 1;
            withOperator(c.op, [&](auto o) {
                const RunResult r = runTask<decltype(o)>(c);
                if (r.status == "pass") {
                    ++passed;
                    return;
                }
                std::printf("FAIL random: %s\n  reproduce: %s\n", caseLabel(c).c_str(),
                            reproduceCommand(c).c_str());
            });
        }
        std::printf("  task %d (%s): %zu/%zu random configurations passed\n", t.number, t.name, passed,
                    perTask);
        tally.passed += passed;
        tally.total += perTask;
    }
    std::fflush(stdout);
    return tally;
}

}  // namespace scanlab
