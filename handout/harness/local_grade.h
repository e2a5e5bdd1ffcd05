// scanlab harness: DO NOT EDIT. Your code goes in student/.
//
// What the driver's `test` and `grade` commands print about a whole run: the failed
// cases by task and operator (with the operand-order hint), and `grade`, the grader's
// visible cases scored by its rubric (harness/grading.h).
#pragma once
#include <algorithm>
#include <cstdio>
#include <map>
#include <string>
#include <utility>
#include <vector>

#include "harness/args.h"
#include "harness/grading.h"
#include "harness/json.h"
#include "harness/operators.cuh"
#include "harness/report.h"
#include "harness/run.h"
#include "harness/runtime.cuh"
#include "harness/tasks.h"
#include "harness/timing.h"

namespace scanlab {

// Where the suite's failures are, by task and operator: printed after a failing suite,
// with a hint when only the non-commutative operators fail.
class Breakdown {
public:
    void add(const std::string& task, const std::string& op, bool passed) {
        Count& c = counts_[{task, op}];
        ++c.total;
        c.failed += !passed;
    }

    void print() const {
        std::printf("failed cases by task and operator:\n");
        for (auto it = counts_.begin(); it != counts_.end();) {
            const std::string task = it->first.first;
            bool commutativeFails = false;
            std::vector<std::string> otherFails;  // the non-commutative operators that fail
            std::printf("  %-16s", task.c_str());
            for (; it != counts_.end() && it->first.first == task; ++it) {
                const std::string& op = it->first.second;
                std::printf("  %s %zu/%zu", op.c_str(), it->second.failed, it->second.total);
                if (it->second.failed == 0) continue;
                withOperator(op, [&](auto o) {
                    if (OperatorTraits<decltype(o)>::kCommutative)
                        commutativeFails = true;
                    else
                        otherFails.push_back(op);
                });
            }
            std::printf("\n");
            if (!otherFails.empty() && !commutativeFails) {
                std::string names = otherFails[0];
                for (size_t i = 1; i < otherFails.size(); ++i)
                    names += (i + 1 == otherFails.size() ? " and " : ", ") + otherFails[i];
                std::printf("hint: %s fails only with %s, whose operator%s not commutative: the "
                            "result depends on which side of apply() each value is on. Keep "
                            "apply(earlier, later) everywhere, in the shuffles and across warps "
                            "and blocks too.\n",
                            task.c_str(), names.c_str(), otherFails.size() > 1 ? "s are" : " is");
            }
        }
    }

private:
    struct Count {
        size_t total = 0, failed = 0;
    };
    std::map<std::pair<std::string, std::string>, Count> counts_;
};


// The rubric's arithmetic, as grader/score.py does it (correctness_points and
// performance_credit); tests/grader/test_grade_local.py checks the correctness points
// against the grader's.
inline double correctnessPoints(size_t passed, size_t total, double points) {
    if (total == 0) return 0;
    if (grading::kAllOrNothing) return passed == total ? points : 0;
    return points * double(passed) / double(total);
}
inline double performanceCredit(double slowdown) {
    return slowdown <= grading::kFullCreditSlowdown ? 1.0 : grading::kFullCreditSlowdown / slowdown;
}

// The size the grader times `driverTask` at (its perf case), or 0 when it is not timed.
inline size_t gradedPerfN(const char* driverTask) {
    for (const grading::Task& t : grading::kTasks)
        for (size_t i = 0; i < t.perfCount; ++i)
            if (std::string(t.perf[i].driverTask) == driverTask) return t.perf[i].n;
    return 0;
}

// `grade`: the grader's visible cases (harness/grading.h, from data/rubric.toml and
// data/cases.toml) on this build, and the points the rubric gives for them. Hidden
// cases are not in the handout: the points they could move are shown as a range.
inline int cmdGrade(const Args& args) {
    if (deviceCount() == 0) {
        std::printf("scanlab grade: no CUDA device found: nothing was run (use the emulator "
                    "build without a GPU: build/scanlab-emu grade)\n");
        return kExitNoGpu;
    }
    const bool emulated = std::string(SCANLAB_BACKEND) == "emulator";
    struct Tally {
        size_t passed = 0, total = 0;
        bool notImplemented = false;
    };
    std::map<int, Tally> tallies;
    Breakdown breakdown;
    for (const grading::Case& g : grading::kCases) {
        if (emulated && g.n > grading::kEmulatorMaxN) continue;
        Tally& tally = tallies[g.task];
        ++tally.total;
        if (tally.notImplemented) continue;
        RunConfig c = suiteCase(parseTask(g.driverTask), g.op, g.n, g.block);
        c.seed = g.seed;
        c.dist = g.dist;
        withOperator(c.op, [&](auto op) {
            using Op = decltype(op);
            const RunResult r = runTask<Op>(c);
            breakdown.add(c.task->name, c.op, r.status == "pass");
            if (r.status == "pass") {
                ++tally.passed;
                return;
            }
            if (r.status == "not_implemented") tally.notImplemented = true;
            else std::printf("FAIL %s %s (%s)\n", caseLabel(c).c_str(), c.dist.c_str(), g.group);
            printResult<Op>(c, r);
        });
    }

    // Performance: the reference's time on the grading GPU, scaled to this one by the
    // ratio of copy bandwidths (an estimate: the grader times both on one GPU).
    const bool estimate = !emulated && grading::kReferenceCopyGbps > 0 && !args.flag("--no-perf");
    const double copyGbps = estimate ? measureCopyGbps() : 0;

    std::printf("\nscanlab grade [%s]: the grader's visible cases, scored by its rubric\n",
                SCANLAB_BACKEND);
    std::printf("  %-4s %-12s %9s %15s %18s\n", "task", "", "cases", "correctness", "performance");
    double total = 0, totalMax = 0, low = 0, high = 0;
    bool anyHidden = false;
    const std::string jsonPath = args.get("--json", "");
    if (!jsonPath.empty() && jsonPath != "-") writeJson(jsonPath, "", false);  // truncate
    for (const grading::Task& t : grading::kTasks) {
        const Tally tally = tallies[t.number];
        const size_t hidden = emulated ? t.hiddenCasesEmulator : t.hiddenCases;
        const double points = correctnessPoints(tally.passed, tally.total, t.correctnessPoints);
        // Hidden cases all failing / all passing.
        const double lo = correctnessPoints(tally.passed, tally.total + hidden, t.correctnessPoints);
        const double hi = tally.notImplemented
                              ? 0.0
                              : correctnessPoints(tally.passed + hidden, tally.total + hidden,
                                                  t.correctnessPoints);
        anyHidden |= hidden > 0;
        std::string perf = "not estimated";
        double perfPoints = 0;
        bool estimated = false;
        if (tally.notImplemented) {
            perf = "-";
        } else if (tally.passed < tally.total) {
            perf = "0 (a case fails)";
        } else if (estimate && t.perfCount > 0) {
            double credit = 0;
            for (size_t i = 0; i < t.perfCount; ++i) {
                const grading::PerfCase& p = t.perf[i];
                RunConfig c = suiteCase(parseTask(p.driverTask), p.op, p.n, p.block);
                c.time = true;
                c.warmup = grading::kWarmup;
                c.reps = grading::kReps;
                double ms = 0;
                withOperator(c.op, [&](auto op) {
                    const RunResult r = runTask<decltype(op)>(c);
                    if (r.timing) ms = r.timing->medianMs;
                });
                const double referenceHere = p.referenceMs * grading::kReferenceCopyGbps / copyGbps;
                if (ms > 0 && p.referenceMs > 0) {
                    credit += performanceCredit(ms / referenceHere);
                    std::printf("  task %d timed: %s %s n=%zu: %.4f ms; the reference, estimated "
                                "here: %.4f ms (slowdown %.2fx)\n",
                                t.number, p.driverTask, p.op, p.n, ms, referenceHere, ms / referenceHere);
                }
            }
            perfPoints = t.performancePoints * credit / double(t.perfCount);
            estimated = true;
            char buf[64];
            std::snprintf(buf, sizeof buf, "%.1f / %g (est.)", perfPoints, t.performancePoints);
            perf = buf;
        }
        char cases[32], corr[48];
        std::snprintf(cases, sizeof cases, "%zu/%zu", tally.passed, tally.total);
        std::snprintf(corr, sizeof corr, "%.1f / %g", points, t.correctnessPoints);
        std::printf("  %-4d %-12s %9s %15s %18s%s\n", t.number, t.name, cases, corr, perf.c_str(),
                    tally.notImplemented ? "   not implemented" : "");
        JsonObject j;
        j.add("task", t.number).add("name", t.name).add("passed", tally.passed)
            .add("cases", tally.total).add("hidden_cases", hidden)
            .add("not_implemented", tally.notImplemented).add("correctness", points)
            .add("correctness_max", t.correctnessPoints).add("correctness_low", lo)
            .add("correctness_high", hi);
        if (estimated) j.add("performance_estimate", perfPoints);
        writeJson(jsonPath, j.str(), true);
        total += points + perfPoints;
        totalMax += t.correctnessPoints + t.performancePoints;
        low += lo;
        high += hi;
    }
    std::printf("  total %.1f / %g%s\n", total, totalMax,
                estimate ? "" : " (performance not estimated)");
    if (anyHidden)
        std::printf("The grader also runs hidden cases that are not in the handout: with them, "
                    "correctness is between %.1f (all failing) and %.1f (all passing).\n", low, high);
    std::printf("Each task here runs with your files for the others; the grader pairs each task "
                "with the reference's files for the other tasks.\n");
    if (grading::kZeroForPlaceholders)
        std::printf("A task whose file is still the handout's placeholder (changed at most in "
                    "comments and spacing) earns 0 points from the grader, though its cases pass.\n");
    if (emulated)
        std::printf("The emulator leaves out the cases above %zu elements (the grader runs them on "
                    "a GPU); performance is not estimated without a GPU.\n", grading::kEmulatorMaxN);
    else if (estimate)
        std::printf("Performance is an estimate: the reference's time on %s (%.0f GB/s copy), "
                    "scaled by this GPU's copy bandwidth (%.0f GB/s).\n",
                    grading::kReferenceDevice, grading::kReferenceCopyGbps, copyGbps);
    const bool allPassed = std::all_of(tallies.begin(), tallies.end(), [](const auto& t) {
        return t.second.passed == t.second.total;
    });
    return allPassed ? kExitPass : kExitFail;
}


}  // namespace scanlab
