// scanlab harness: students, do not edit (your code goes in student/); maintainers edit it here.
//
// `test`: the suite (harness/generated/suite.h) over the selected tasks, operators, block
// sizes and sizes, in steps: what was selected, its cases, each case run and counted (a
// task whose stub is still in place reported once), the JUnit file and the summary.
#pragma once
#include <algorithm>
#include <cstdio>
#include <fstream>
#include <iterator>
#include <map>
#include <stdexcept>
#include <string>
#include <vector>

#include "harness/generated/operators.cuh"
#include "harness/generated/suite.h"
#include "harness/host/args.h"
#include "harness/host/local_grade.h"
#include "harness/host/report.h"
#include "harness/host/run.h"
#include "harness/host/tasks.h"

namespace scanlab {

// What `test` runs, from --tasks, --ops, --blocks, --max-n and --large (each: all when not given).
struct SuiteSelection {
    std::vector<const TaskInfo*> tasks;
    std::vector<std::string> ops;
    std::vector<unsigned> blocks;
    size_t maxN = ~size_t(0);
    bool large = false;
};

inline SuiteSelection suiteSelection(const Args& args) {
    SuiteSelection s;
    for (const auto& name : args.values.count("--tasks") ? splitList(args.get("--tasks", ""))
                                                         : std::vector<std::string>{})
        try {
            s.tasks.push_back(&parseTask(name));
        } catch (const std::invalid_argument& e) {
            throw UsageError(e.what());
        }
    if (s.tasks.empty())
        for (const auto& t : kTasks) s.tasks.push_back(&t);
    s.ops = splitList(args.get("--ops", ""));
    if (s.ops.empty()) s.ops.assign(std::begin(kOperatorNames), std::end(kOperatorNames));
    for (const auto& b : splitList(args.get("--blocks", ""))) {
        const auto v = parseCount(b, "--blocks");
        validateBlock(v);
        s.blocks.push_back(unsigned(v));
    }
    if (s.blocks.empty()) s.blocks.assign(std::begin(kSuiteBlocks), std::end(kSuiteBlocks));
    // The emulator is slower than a GPU: by default it leaves out the largest sizes.
    const bool emulated = std::string(SCANLAB_BACKEND) == "emulator";
    s.maxN = args.values.count("--max-n") ? parseCount(args.get("--max-n", ""), "--max-n")
             : emulated                   ? kSuiteEmulatorMaxN
                                          : ~size_t(0);
    s.large = args.flag("--large");
    return s;
}

// The identity-sensitive inputs: every value negative, for an operator whose identity is
// not T{} (max), at every size, with one block size (256 when selected).
inline void addIdentityCases(const SuiteSelection& s, const TaskInfo& task, const std::string& op,
                             std::vector<RunConfig>& cases) {
    bool identitySensitive = false;
    withOperator(op, [&](auto o) { identitySensitive = identityIsNotZero<decltype(o)>(); });
    if (!identitySensitive) return;
    for (size_t n : kSuiteSizes)
        if (n <= s.maxN) {
            const unsigned block =
                std::find(s.blocks.begin(), s.blocks.end(), 256u) != s.blocks.end() ? 256u : s.blocks[0];
            RunConfig c = suiteCase(task, op, n, block);
            c.dist = kIdentityDistribution;
            cases.push_back(c);
        }
}

inline std::vector<RunConfig> suiteCases(const SuiteSelection& s) {
    std::vector<RunConfig> cases;
    for (const auto& op : s.ops) validateOperator(op);
    for (const TaskInfo* task : s.tasks)
        for (const auto& op : s.ops) {
            if (!operatorApplies(op, task->task)) continue;
            for (unsigned block : s.blocks)
                for (size_t n : kSuiteSizes)
                    if (n <= s.maxN) cases.push_back(suiteCase(*task, op, n, block));
            if (s.large)
                for (size_t n : kSuiteLargeSizes)
                    if (n <= s.maxN) cases.push_back(suiteCase(*task, op, n, 256));
            addIdentityCases(s, *task, op, cases);
        }
    return cases;
}

// The bonus tasks whose file under --student DIR (default .) is still the handout's
// placeholder: not attempted, as `grade` says, and correct but very slow (block 0 scans
// everything), which would cost minutes of the emulator's suite. None with --all-cases.
inline std::vector<int> untouchedBonusTasks(const Args& args) {
    std::vector<int> out;
    if (args.flag("--all-cases")) return out;
    const std::string root = args.get("--student", ".");
    for (const grading::Task& t : grading::kTasks) {
        std::string text;
        if (t.bonus && readText(root + "/student/" + t.file, text) &&
            placeholderFingerprint(text) == t.placeholderFingerprint)
            out.push_back(t.number);
    }
    return out;
}

// The suite's counts so far, and its JUnit test cases.
struct SuiteTally {
    size_t passed = 0, failed = 0, notImplemented = 0, skipped = 0;
    std::vector<int> stubbedTasks;  // a task whose stub is still in place is reported once
    std::vector<int> untouched;     // untouchedBonusTasks: the first case runs, the rest are skipped
    std::map<int, size_t> runOf;    // cases run so far, by task
    std::map<int, size_t> skippedOf;
    std::string junitCases;
    Breakdown breakdown;

    bool stubbed(int task) const {
        return std::find(stubbedTasks.begin(), stubbedTasks.end(), task) != stubbedTasks.end();
    }
    bool skips(int task) const {
        return std::find(untouched.begin(), untouched.end(), task) != untouched.end() &&
               runOf.count(task) && runOf.at(task) > 0;
    }
};

// What was skipped of each untouched bonus task, one line each.
inline void printSkipped(const SuiteTally& tally) {
    for (const auto& [number, skipped] : tally.skippedOf)
        for (const grading::Task& t : grading::kTasks)
            if (t.number == number)
                std::printf("scanlab test: task %d (%s): student/%s is still the handout's placeholder "
                            "(a bonus not attempted; correct and very slow): its first case ran, %zu "
                            "skipped (--all-cases runs them)\n", number, t.name, t.file, skipped);
}

// One case run, counted, printed when it fails, and written to --json and the JUnit cases.
inline void runSuiteCase(const RunConfig& c, SuiteTally& tally, const std::string& jsonPath) {
    const std::string caseName = caseLabel(c);
    const std::string classname = "  <testcase classname=\"scanlab.task" + std::to_string(c.task->number) + "\"";
    if (tally.stubbed(c.task->number)) {
        ++tally.notImplemented;
        tally.junitCases += classname + " name=" + xmlQuote(caseName) +
                            "><failure message=\"not implemented\"/></testcase>\n";
        return;
    }
    if (tally.skips(c.task->number)) {
        ++tally.skipped;
        ++tally.skippedOf[c.task->number];
        tally.junitCases += classname + " name=" + xmlQuote(caseName) +
                            "><skipped message=\"the handout's placeholder (not attempted)\"/></testcase>\n";
        return;
    }
    ++tally.runOf[c.task->number];
    withOperator(c.op, [&](auto op) {
        using Op = decltype(op);
        const RunResult r = runTask<Op>(c);
        std::string failure;
        tally.breakdown.add(c.task->name, c.op, r.status == "pass", c.dist == kIdentityDistribution);
        if (r.status == "pass") {
            ++tally.passed;
        } else if (r.status == "not_implemented") {
            ++tally.notImplemented;
            tally.stubbedTasks.push_back(c.task->number);
            printResult<Op>(c, r);
            failure = r.message;
        } else {
            ++tally.failed;
            std::printf("FAIL %s\n", caseName.c_str());
            printResult<Op>(c, r);
            failure = r.status == "fail" && r.check.first
                          ? "index " + std::to_string(r.check.first->index) + ": expected " +
                                r.check.first->expected + ", got " + r.check.first->got
                          : r.message;
            failure += " (reproduce: " + reproduceCommand(c) + ")";
        }
        tally.junitCases += classname + " name=" + xmlQuote(caseName) + ">" +
                            (failure.empty() ? "" : "<failure message=" + xmlQuote(failure) + "/>") +
                            "</testcase>\n";
        if (!jsonPath.empty()) writeJson(jsonPath, resultJson<Op>(c, r).str(), true);
    });
}

inline void writeJunit(const std::string& path, size_t cases, const SuiteTally& tally) {
    std::ofstream f(path, std::ios::trunc);
    f << "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<testsuite name=\"scanlab ("
      << SCANLAB_BACKEND << ")\" tests=\"" << cases << "\" failures=\""
      << tally.failed + tally.notImplemented << "\" errors=\"0\">\n"
      << tally.junitCases << "</testsuite>\n";
    if (!f) throw std::runtime_error("cannot write " + path);
}

inline int cmdTest(const Args& args) {
    if (args.flag("--isolated")) return cmdTestIsolated(args);
    if (deviceCount() == 0) {
        std::printf("scanlab test: no CUDA device found: skipped (use the emulator build "
                    "without a GPU)\n");
        return kExitNoGpu;
    }
    const SuiteSelection selection = suiteSelection(args);
    const std::string jsonPath = args.get("--json", "");
    if (!jsonPath.empty() && jsonPath != "-") writeJson(jsonPath, "", false);  // truncate
    const std::vector<RunConfig> cases = suiteCases(selection);

    SuiteTally tally;
    tally.untouched = untouchedBonusTasks(args);
    Progress progress("scanlab test", cases.size());
    std::printf("scanlab test [%s]: %zu cases; a progress line every %.0f s\n", SCANLAB_BACKEND,
                cases.size(), progress.every());
    std::fflush(stdout);
    size_t done = 0;
    for (const RunConfig& c : cases) {
        progress.tick(done++);
        runSuiteCase(c, tally, jsonPath);
    }
    const std::string junitPath = args.get("--junit", "");
    if (!junitPath.empty()) writeJunit(junitPath, cases.size(), tally);
    std::printf("scanlab test [%s]: %zu cases: %zu passed, %zu failed", SCANLAB_BACKEND,
                cases.size(), tally.passed, tally.failed);
    if (tally.notImplemented) std::printf(", %zu not run (task not implemented)", tally.notImplemented);
    if (tally.skipped) std::printf(", %zu skipped (a bonus not attempted)", tally.skipped);
    std::printf("\n  (%.0f s)\n", progress.elapsed());
    printSkipped(tally);
    if (tally.failed) tally.breakdown.print();
    return tally.failed ? kExitFail : tally.notImplemented ? kExitNotImplemented : kExitPass;
}

}  // namespace scanlab
