// scanlab harness: students, do not edit (your code goes in student/); maintainers edit it here.
//
// What the driver's `test` and `grade` commands share about a whole run: the failed cases
// by task and operator (with the operand-order hint), progress lines, the rubric's
// arithmetic and the student's files; `test --isolated`. The `grade` command: grade.h.
#pragma once
#include <algorithm>
#include <chrono>
#include <cmath>
#include <random>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <map>
#include <string>
#include <utility>
#include <vector>
#include <sys/wait.h>

#include "harness/generated/grading.h"
#include "harness/generated/operators.cuh"
#include "harness/host/args.h"
#include "harness/host/isolation.h"
#include "harness/host/json.h"
#include "harness/host/perf_estimate.h"
#include "harness/host/random_cases.h"
#include "harness/host/report.h"
#include "harness/host/run.h"
#include "harness/host/tasks.h"
#include "harness/host/timing.h"
#include "harness/runtime.cuh"

namespace scanlab {

// Where the suite's failures are, by task and operator: printed after a failing suite,
// with a hint when only the non-commutative operators fail.
class Breakdown {
public:
    // `identityCase`: an input on which a fold started from T{} instead of the
    // operator's identity goes wrong (max over all-negative values).
    void add(const std::string& task, const std::string& op, bool passed, bool identityCase = false) {
        Count& c = counts_[{task, op}];
        ++c.total;
        c.failed += !passed;
        c.identityTotal += identityCase;
        c.identityFailed += !passed && identityCase;
    }

    void print() const {
        std::printf("failed cases by task and operator:\n");
        for (auto it = counts_.begin(); it != counts_.end();) {
            const std::string task = it->first.first;
            bool commutativeFails = false;
            std::vector<std::string> otherFails;  // the non-commutative operators that fail
            std::string identityOps;              // operators failing only on identity cases
            bool identityOnly = true;
            std::printf("  %-16s", task.c_str());
            for (; it != counts_.end() && it->first.first == task; ++it) {
                const std::string& op = it->first.second;
                std::printf("  %s %zu/%zu", op.c_str(), it->second.failed, it->second.total);
                if (it->second.failed == 0) continue;
                // Identity cases failing far more often than the others (a fold from T{}
                // fails the random inputs only now and then, by luck).
                const Count& k = it->second;
                const size_t others = k.total - k.identityTotal, othersFailed = k.failed - k.identityFailed;
                if (k.identityFailed > 0 && 2 * k.identityFailed >= k.identityTotal &&
                    4 * othersFailed < others)
                    identityOps += (identityOps.empty() ? "" : ", ") + op;
                else
                    identityOnly = false;
                withOperator(op, [&](auto o) {
                    if (OperatorTraits<decltype(o)>::kCommutative)
                        commutativeFails = true;
                    else
                        otherFails.push_back(op);
                });
            }
            std::printf("\n");
            if (!identityOps.empty() && identityOnly)
                std::printf("hint: %s fails mostly on the identity-sensitive inputs (%s over all-negative "
                            "values, dist=negative): a fold that starts from T{} (0) instead of Op::identity() "
                            "gives 0 where the answer is negative. Start every fold, and fill every "
                            "position past n, with Op::identity().\n",
                            task.c_str(), identityOps.c_str());
            else if (!otherFails.empty() && !commutativeFails) {
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
        size_t total = 0, failed = 0, identityTotal = 0, identityFailed = 0;
    };
    std::map<std::pair<std::string, std::string>, Count> counts_;
};

// Whether the operator's identity differs from a value-initialized element (max: the
// lowest int, not 0): the inputs where a fold started from T{} goes wrong matter.
template <class Op>
bool identityIsNotZero() {
    using T = typename Op::Element;
    const T id = Op::identity();
    const T zero{};
    return std::memcmp(&id, &zero, sizeof(T)) != 0;
}

// A distribution on which a fold from T{} instead of the identity is wrong (every value
// negative: the max is negative, T{} is 0).
inline constexpr const char* kIdentityDistribution = "negative";

// A line every SCANLAB_PROGRESS_SECONDS (default 10) seconds of a long run (the
// emulator's suite takes minutes): cases done of all, and the time so far.
class Progress {
public:
    Progress(const char* what, size_t total) : what_(what), total_(total) {
        const char* env = std::getenv("SCANLAB_PROGRESS_SECONDS");
        if (env != nullptr && *env != '\0') every_ = std::atof(env);
    }
    void tick(size_t done) {
        const auto now = std::chrono::steady_clock::now();
        if (seconds(last_, now) < every_ || done >= total_) return;
        last_ = now;
        std::printf("  %s: %zu/%zu cases done, %.0f s elapsed\n", what_, done, total_,
                    seconds(start_, now));
        std::fflush(stdout);
    }
    double elapsed() const { return seconds(start_, std::chrono::steady_clock::now()); }
    double every() const { return every_; }

private:
    static double seconds(std::chrono::steady_clock::time_point a, std::chrono::steady_clock::time_point b) {
        return std::chrono::duration<double>(b - a).count();
    }
    const char* what_;
    size_t total_;
    double every_ = 10;
    std::chrono::steady_clock::time_point start_ = std::chrono::steady_clock::now();
    std::chrono::steady_clock::time_point last_ = start_;
};


// The rubric's arithmetic, as grader/grading/score.py does it (correctness_points and
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

// The size the grader times the rubric task `number` at (its first perf case), or 0
// when it is not timed. Every driver task of one rubric task (scan, scan-exclusive)
// gets the same size.
inline size_t gradedPerfN(int number) {
    for (const grading::Task& t : grading::kTasks)
        if (t.number == number && t.perfCount > 0) return t.perf[0].n;
    return 0;
}

// What the student's file of a task is, for the grader's rule on placeholders.
struct FileState {
    bool checked = false;      // --student DIR given and the file read
    bool missing = false;      // --student DIR given, no such file
    bool placeholder = false;  // the handout's, changed at most in comments and spacing
    bool refused = false;      // named by --refused: breaks a code rule (tools/code_rules.py)
    std::string text;
};

inline FileState studentFile(const Args& args, const grading::Task& t) {
    FileState f;
    for (const auto& name : splitList(args.get("--refused", "")))
        if (name == t.file || name == std::string("student/") + t.file) f.refused = true;
    // Calls the handout's placeholder (baseline::...), however wrapped: tools/code_rules.py
    // finds it as the grader does.
    bool callsPlaceholder = false;
    for (const auto& name : splitList(args.get("--placeholders", "")))
        if (name == t.file || name == std::string("student/") + t.file) callsPlaceholder = true;
    f.placeholder = callsPlaceholder;
    if (!args.has("--student")) return f;
    f.checked = true;
    const std::string path = args.get("--student", ".") + "/student/" + t.file;
    if (!readText(path, f.text)) {
        f.missing = true;
        return f;
    }
    f.placeholder = callsPlaceholder || placeholderFingerprint(f.text) == t.placeholderFingerprint;
    return f;
}

inline bool taskSelected(const Args& args, const grading::Task& t) {
    if (!args.has("--tasks")) return true;
    for (const auto& name : splitList(args.get("--tasks", "")))
        if (name == t.name || name == std::to_string(t.number)) return true;
    return false;
}

// `test --isolated [--student DIR]`: the suite of each task that includes another
// student file, run by the driver built with the harness's version of that file
// (harness/host/isolation.h), as the grader pairs the task with the other files' contracts.
inline int cmdTestIsolated(const Args& args) {
    const std::string root = args.get("--student", ".");
    std::string options;
    for (const char* o : {"--ops", "--blocks", "--max-n"})
        if (args.has(o)) options += std::string(" ") + o + " '" + args.get(o, "") + "'";
    if (args.flag("--large")) options += " --large";
    const std::vector<std::string> only = splitList(args.get("--tasks", ""));
    int worst = kExitPass;
    size_t runs = 0;
    for (const grading::Task& t : grading::kTasks) {
        std::string driverTasks;
        for (const TaskInfo& d : kTasks)
            if (d.number == t.number &&
                (only.empty() || std::find(only.begin(), only.end(), d.name) != only.end()))
                driverTasks += (driverTasks.empty() ? "" : ",") + std::string(d.name);
        std::string text;
        if (driverTasks.empty() || !readText(root + "/student/" + t.file, text)) continue;
        for (const std::string& used : studentIncludes(text)) {
            const std::string driver = isolationDriver(used);
            if (driver.empty()) {
                std::printf("scanlab test --isolated: task %d with the harness's student/%s: not built "
                            "(make grade-local builds it)\n", t.number, used.c_str());
                worst = worst == kExitPass ? kExitError : worst;
                continue;
            }
            std::printf("scanlab test --isolated: task %d (%s) with the harness's student/%s: %s test "
                        "--tasks %s%s\n", t.number, t.name, used.c_str(), driver.c_str(),
                        driverTasks.c_str(), options.c_str());
            std::fflush(stdout);
            ++runs;
            const int status = std::system(("'" + driver + "' test --tasks " + driverTasks + options).c_str());
            const int code = WIFEXITED(status) ? WEXITSTATUS(status) : kExitError;
            std::printf("scanlab test --isolated: task %d with the harness's student/%s: %s\n", t.number,
                        used.c_str(), code == kExitPass ? "pass" : code == kExitFail
                            ? "FAILS: it passes only with your own version of that file?" : "not passed");
            if (code != kExitPass && (worst == kExitPass || code == kExitFail)) worst = code;
        }
    }
    if (runs == 0) std::printf("scanlab test --isolated: no task of %s/student includes another student file\n",
                               root.c_str());
    return worst;
}

}  // namespace scanlab
