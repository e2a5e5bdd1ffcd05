// scanlab harness: students, do not edit (your code goes in student/); maintainers edit it here.
//
// What the driver's `test` and `grade` commands print about a whole run: the failed
// cases by task and operator (with the operand-order hint), and `grade`, the grader's
// visible cases scored by its rubric (harness/generated/grading.h).
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

// `grade`: the grader's visible cases (harness/generated/grading.h, from data/rubric.toml and
// data/cases.toml) on this build, and the points the rubric gives for them. Hidden
// cases are not in the handout: the points they could move are shown as a range.
// With --student DIR (make grade-local passes it): a file still the handout's
// placeholder gets the grader's points (0; a bonus: not attempted, not run), and each
// task that includes another student file is run again with the harness's version of
// that file (harness/host/isolation.h), as the grader pairs it with the other files' contracts.
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
        std::string isolationNote;  // set when a case fails only with the harness's files
    };
    std::map<int, Tally> tallies;
    std::map<int, FileState> files;
    for (const grading::Task& t : grading::kTasks) files[t.number] = studentFile(args, t);
    auto notAttempted = [&](const grading::Task& t) {
        const FileState& f = files[t.number];
        return t.bonus && (f.missing || f.placeholder);
    };
    std::vector<const grading::Case*> todo;
    for (const grading::Case& g : grading::kCases) {
        const grading::Task* t = nullptr;
        for (const grading::Task& x : grading::kTasks)
            if (x.number == g.task) t = &x;
        if (emulated && g.n > grading::kEmulatorMaxN) continue;
        if (t == nullptr || !taskSelected(args, *t) || notAttempted(*t) || files[t->number].missing ||
            files[t->number].refused)
            continue;
        todo.push_back(&g);
    }
    Breakdown breakdown;
    Progress progress("scanlab grade", todo.size());
    std::printf("scanlab grade [%s]: %zu visible cases of the grader; a progress line every %.0f s\n",
                SCANLAB_BACKEND, todo.size(), progress.every());
    std::fflush(stdout);
    size_t done = 0;
    for (const grading::Case* gp : todo) {
        const grading::Case& g = *gp;
        progress.tick(done++);
        Tally& tally = tallies[g.task];
        ++tally.total;
        if (tally.notImplemented) continue;
        RunConfig c = suiteCase(parseTask(g.driverTask), g.op, g.n, g.block);
        c.seed = g.seed;
        c.dist = g.dist;
        withOperator(c.op, [&](auto op) {
            using Op = decltype(op);
            const RunResult r = runTask<Op>(c);
            breakdown.add(c.task->name, c.op, r.status == "pass", c.dist == kIdentityDistribution);
            if (r.status == "pass") {
                ++tally.passed;
                return;
            }
            if (r.status == "not_implemented") tally.notImplemented = true;
            else std::printf("FAIL %s (%s)\n", caseLabel(c).c_str(), g.group);
            printResult<Op>(c, r);
        });
    }

    const RandomTally random = runRandomCases(
        args, [&](const grading::Task& t) { return taskSelected(args, t); },
        [&](const grading::Task& t) {
            return notAttempted(t) || files[t.number].missing || files[t.number].refused ||
                   tallies[t.number].notImplemented;
        },
        emulated);

    // The grader's pairing: a task whose own cases all pass is run again with the
    // harness's version of each student file it includes.
    if (!args.flag("--no-isolation") && args.has("--student")) {
        for (const grading::Task& t : grading::kTasks) {
            Tally& tally = tallies[t.number];
            const FileState& f = files[t.number];
            if (!taskSelected(args, t) || notAttempted(t) || f.missing || f.refused || tally.notImplemented ||
                tally.total == 0 || tally.passed < tally.total)
                continue;
            for (const std::string& used : studentIncludes(f.text)) {
                const std::string driver = isolationDriver(used);
                if (driver.empty()) {
                    std::printf("  task %d (%s): not run with the harness's student/%s (no %s-with-harness-%s: "
                                "make grade-local builds it)\n",
                                t.number, t.name, used.c_str(), programName().c_str(),
                                used.substr(0, used.find('.')).c_str());
                    continue;
                }
                std::printf("  task %d (%s): its cases again with the harness's student/%s, as the "
                            "grader pairs it with the other files' contracts ...\n", t.number, t.name, used.c_str());
                std::fflush(stdout);
                const IsolationResult r = runIsolated(driver, t.name);
                if (r.cases > 0 && r.passed == r.cases) continue;
                char note[4096];
                std::snprintf(note, sizeof note,
                              "task %d (%s) passes only with your own student/%s: with the harness's "
                              "version of that file, which relies on nothing its contract does not "
                              "promise, %zu of %zu cases fail. The grader builds %s with the "
                              "contract of student/%s instead of yours, and scores what your file "
                              "does with it, not with your own. %s\n"
                              "  see the failures: %s test --tasks %s\n",
                              t.number, t.name, used.c_str(), r.cases - r.passed, r.cases, t.file,
                              used.c_str(), isolationHint(used), driver.c_str(), t.name);
                tally.isolationNote += note;
                if (r.cases == tally.total) tally.passed = std::min(tally.passed, r.passed);
                else tally.passed = 0;
            }
        }
    }

    // Performance: on a GPU, the reference's time on the grading GPU scaled to this one by
    // the ratio of copy bandwidths (an estimate: the grader times both on one GPU); on the
    // emulator, the profile's estimates (--perf-estimates), with their stated error.
    const bool estimate = !emulated && grading::kReferenceCopyGbps > 0 && !args.flag("--no-perf");
    const double copyGbps = estimate ? measureCopyGbps() : 0;
    const std::map<std::string, double> profiled = emulated ? perfEstimates(args) : std::map<std::string, double>{};
    const bool fromProfile = !profiled.empty();

    std::printf("\nscanlab grade [%s]: the grader's visible cases, scored by its rubric\n",
                SCANLAB_BACKEND);
    std::printf("  %-4s %-14s %9s %15s %18s\n", "task", "", "cases", "correctness", "performance");
    // The total keeps apart what the grader's rubric keeps apart: correctness (measured
    // here), performance (estimated here) and the bonus task's share of each.
    double correct = 0, correctMax = 0, bonusCorrect = 0, bonusCorrectMax = 0;
    double perf_ = 0, perfMax = 0, perfLow = 0, perfHigh = 0;
    double bonusPerf = 0, bonusPerfMax = 0, bonusPerfLow = 0, bonusPerfHigh = 0;
    bool perfEstimated = false;
    double low = 0, high = 0;
    bool anyHidden = false, anyPlaceholder = false;
    std::string notes;
    const std::string jsonPath = args.get("--json", "");
    if (!jsonPath.empty() && jsonPath != "-") writeJson(jsonPath, "", false);  // truncate
    for (const grading::Task& t : grading::kTasks) {
        if (!taskSelected(args, t)) continue;
        const Tally tally = tallies[t.number];
        const FileState& f = files[t.number];
        const bool skipped = notAttempted(t) && !f.refused;
        const bool zero = f.placeholder && grading::kZeroForPlaceholders;
        anyPlaceholder |= zero && !skipped;
        const size_t hidden = skipped || f.missing ? 0 : emulated ? t.hiddenCasesEmulator : t.hiddenCases;
        double points = correctnessPoints(tally.passed, tally.total, t.correctnessPoints);
        // Hidden cases all failing / all passing.
        double lo = correctnessPoints(tally.passed, tally.total + hidden, t.correctnessPoints);
        double hi = tally.notImplemented
                        ? 0.0
                        : correctnessPoints(tally.passed + hidden, tally.total + hidden, t.correctnessPoints);
        if (zero || skipped || f.missing || f.refused) points = lo = hi = 0;
        anyHidden |= hidden > 0;
        std::string perf = "not estimated";
        double perfPoints = 0, perfLo = 0, perfHi = 0;
        bool estimated = false;
        if (tally.notImplemented || skipped || f.missing || f.refused) {
            perf = "-";
        } else if (zero) {
            perf = "0 (placeholder)";
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
            perfPoints = perfLo = perfHi = t.performancePoints * credit / double(t.perfCount);
            estimated = true;
            char buf[64];
            std::snprintf(buf, sizeof buf, "about %.1f / %g", perfPoints, t.performancePoints);
            perf = buf;
        } else if (fromProfile && t.perfCount > 0) {
            // The profile's estimate on the grading GPU, against the reference's time there.
            double credit = 0, creditLo = 0, creditHi = 0;
            size_t found = 0;
            for (size_t i = 0; i < t.perfCount; ++i) {
                const grading::PerfCase& p = t.perf[i];
                const auto it = profiled.find(p.driverTask);
                if (it == profiled.end() || !(p.referenceMs > 0)) continue;
                ++found;
                const double slowdown = it->second / p.referenceMs;
                credit += performanceCredit(slowdown);
                creditLo += performanceCredit(slowdown * kProfileErrorFactor);
                creditHi += performanceCredit(slowdown / kProfileErrorFactor);
                std::printf("  task %d estimated: %s %s n=%zu: %.4f ms by the profile; the reference "
                            "measured on %s: %.4f ms (slowdown %.2fx)\n",
                            t.number, p.driverTask, p.op, p.n, it->second, grading::kReferenceDevice,
                            p.referenceMs, slowdown);
            }
            if (found == t.perfCount) {
                const double scale = t.performancePoints / double(t.perfCount);
                perfPoints = credit * scale;
                perfLo = creditLo * scale;
                perfHi = creditHi * scale;
                estimated = true;
                char buf[64];
                std::snprintf(buf, sizeof buf, "about %.1f / %g", perfPoints, t.performancePoints);
                perf = buf;
            }
        }
        char cases[32], corr[48];
        std::snprintf(cases, sizeof cases, "%zu/%zu", tally.passed, tally.total);
        std::snprintf(corr, sizeof corr, "%.1f / %g", points, t.correctnessPoints);
        const char* status = f.refused ? "   breaks a code rule (above): the grader gives 0, not built"
                             : skipped              ? "   not attempted (still the handout's: not built by the grader)"
                             : f.missing          ? "   missing (no student file)"
                             : tally.notImplemented ? "   not implemented"
                             : zero               ? "   still the handout's placeholder: the grader gives 0"
                             : !tally.isolationNote.empty() ? "   fails with the harness's files (below)"
                                                  : "";
        std::printf("  %-4d %-14s %9s %15s %18s%s\n", t.number, t.name, skipped ? "-" : cases, corr,
                    perf.c_str(), status);
        notes += tally.isolationNote;
        JsonObject j;
        j.add("task", t.number).add("name", t.name).add("passed", tally.passed)
            .add("cases", tally.total).add("hidden_cases", hidden)
            .add("not_implemented", tally.notImplemented).add("placeholder", f.placeholder)
            .add("not_attempted", skipped).add("isolation_failed", !tally.isolationNote.empty())
            .add("refused", f.refused)
            .add("correctness", points).add("correctness_max", t.correctnessPoints)
            .add("correctness_low", lo).add("correctness_high", hi);
        if (estimated)
            j.add("performance_estimate", perfPoints).add("performance_low", perfLo).add("performance_high", perfHi);
        writeJson(jsonPath, j.str(), true);
        perfEstimated |= estimated;
        (t.bonus ? bonusCorrect : correct) += points;
        (t.bonus ? bonusCorrectMax : correctMax) += t.correctnessPoints;
        (t.bonus ? bonusPerf : perf_) += perfPoints;
        (t.bonus ? bonusPerfLow : perfLow) += perfLo;
        (t.bonus ? bonusPerfHigh : perfHigh) += perfHi;
        (t.bonus ? bonusPerfMax : perfMax) += t.performancePoints;
        low += lo;
        high += hi;
    }
    std::printf("%s", totalLine(correct, correctMax, bonusCorrect, bonusCorrectMax,
                                perfEstimated ? PerfEstimate{perf_, perfLow, perfHigh, perfMax, bonusPerf,
                                                             bonusPerfLow, bonusPerfHigh, bonusPerfMax}
                                              : PerfEstimate{},
                                !perfEstimated ? TotalSource::None : fromProfile ? TotalSource::Profile
                                                                                  : TotalSource::Gpu)
                          .c_str());
    if (!notes.empty()) std::printf("\n%s", notes.c_str());
    if (anyHidden)
        std::printf("The grader also runs hidden cases that are not in the handout: with them, "
                    "correctness is between %.1f (all failing) and %.1f (all passing).\n", low, high);
    if (args.has("--student") && !args.flag("--no-isolation"))
        std::printf("Each task ran with your files for the others, and again with the harness's own "
                    "version of each student file it includes (the grader pairs it with the "
                    "other files' contracts).\n");
    else
        std::printf("Each task here runs with your files for the others; the grader pairs each task "
                    "with only the contracts of the other files (make grade-local checks that).\n");
    if (anyPlaceholder)
        std::printf("A task whose file is still the handout's placeholder (changed at most in "
                    "comments and spacing) earns 0 points from the grader, though its cases pass.\n");
    else if (grading::kZeroForPlaceholders && !args.has("--student"))
        std::printf("A task whose file is still the handout's placeholder earns 0 points from the "
                    "grader (not checked here: make grade-local passes --student).\n");
    if (emulated)
        std::printf("The emulator leaves out the cases above %zu elements (the grader runs them on "
                    "a GPU).\n", grading::kEmulatorMaxN);
    else if (estimate)
        std::printf("Performance is an estimate: the reference's time on %s (%.0f GB/s copy), "
                    "scaled by this GPU's copy bandwidth (%.0f GB/s).\n",
                    grading::kReferenceDevice, grading::kReferenceCopyGbps, copyGbps);
    std::printf("(%.0f s)\n", progress.elapsed());
    const bool allPassed = std::all_of(tallies.begin(), tallies.end(), [](const auto& t) {
        return t.second.passed == t.second.total;
    });
    if (random.total > 0)
        std::printf("Random configurations (--random): %zu/%zu passed (not scored here; the "
                    "grader's hidden cases sample the same space).\n", random.passed, random.total);
    return allPassed && random.passed == random.total ? kExitPass : kExitFail;
}


}  // namespace scanlab
