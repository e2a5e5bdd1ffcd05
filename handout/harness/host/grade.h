// scanlab harness: students, do not edit (your code goes in student/); maintainers edit it here.
//
// `grade` (make grade-local): the grader's visible cases (harness/generated/grading.h, from
// data/rubric.toml and data/cases.toml) on this build, scored by its rubric, in steps: the
// cases each task runs, their results, the runs with the harness's student files, then each
// task's row (correctness measured, performance estimated), the total and the notes.
#pragma once
#include <algorithm>
#include <cstdio>
#include <map>
#include <string>
#include <vector>

#include "harness/generated/grading.h"
#include "harness/host/local_grade.h"

namespace scanlab {

// What `grade` found of one rubric task's cases.
struct GradeTally {
    size_t passed = 0, total = 0;
    bool notImplemented = false;
    std::string isolationNote;  // set when a case fails only with the harness's files
};

// What `grade` learns before it scores: the student's file of each task, and its cases.
struct GradeRun {
    const Args& args;
    bool emulated;
    std::map<int, FileState> files;
    std::map<int, GradeTally> tallies;

    // A bonus task whose file is missing or still the handout's placeholder: not attempted.
    bool notAttempted(const grading::Task& t) {
        const FileState& f = files[t.number];
        return t.bonus && (f.missing || f.placeholder);
    }
    // Whether the grader builds the task's file (not unattempted, missing or refused).
    bool built(const grading::Task& t) {
        return !notAttempted(t) && !files[t.number].missing && !files[t.number].refused;
    }
};

// The visible cases this build runs: the selected, built tasks' (on the emulator, the small ones).
inline std::vector<const grading::Case*> gradeCasesToRun(GradeRun& run) {
    std::vector<const grading::Case*> todo;
    for (const grading::Case& g : grading::kCases) {
        const grading::Task* t = nullptr;
        for (const grading::Task& x : grading::kTasks)
            if (x.number == g.task) t = &x;
        if (run.emulated && g.n > grading::kEmulatorMaxN) continue;
        // A boundary case of the other backend only (their sizes differ).
        if ((g.on & (run.emulated ? grading::kOnEmulator : grading::kOnGpu)) == 0) continue;
        if (t == nullptr || !taskSelected(run.args, *t) || !run.built(*t)) continue;
        todo.push_back(&g);
    }
    return todo;
}

// Runs the cases into their task's tally; a task's first not-implemented case ends its run.
inline void runGradeCases(GradeRun& run, const std::vector<const grading::Case*>& todo, Progress& progress) {
    Breakdown breakdown;
    size_t done = 0;
    for (const grading::Case* gp : todo) {
        const grading::Case& g = *gp;
        progress.tick(done++);
        GradeTally& tally = run.tallies[g.task];
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
}

// Task t's cases again with the harness's version of `used`, a student file it includes;
// where some fail there, its points are the ones it earns so, and a note says why.
inline void rerunWithHarnessFile(const grading::Task& t, GradeTally& tally, const std::string& used) {
    const std::string driver = isolationDriver(used);
    if (driver.empty()) {
        std::printf("  task %d (%s): not run with the harness's student/%s (no %s-with-harness-%s: "
                    "make grade-local builds it)\n",
                    t.number, t.name, used.c_str(), programName().c_str(),
                    used.substr(0, used.find('.')).c_str());
        return;
    }
    std::printf("  task %d (%s): its cases again with the harness's student/%s, as the "
                "grader pairs it with the other files' contracts ...\n", t.number, t.name, used.c_str());
    std::fflush(stdout);
    const IsolationResult r = runIsolated(driver, t.name);
    if (r.cases > 0 && r.passed == r.cases) return;
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

// The grader's pairing: a task whose own cases all pass is run again with the harness's
// version of each student file it includes (with --student, unless --no-isolation).
inline void pairWithHarnessFiles(GradeRun& run) {
    if (run.args.flag("--no-isolation") || !run.args.has("--student")) return;
    for (const grading::Task& t : grading::kTasks) {
        GradeTally& tally = run.tallies[t.number];
        if (!taskSelected(run.args, t) || !run.built(t) || tally.notImplemented || tally.total == 0 ||
            tally.passed < tally.total)
            continue;
        for (const std::string& used : studentIncludes(run.files[t.number].text))
            rerunWithHarnessFile(t, tally, used);
    }
}

// Where `grade` gets performance from: on a GPU, the reference's time on the grading GPU
// scaled to this one by the ratio of copy bandwidths (an estimate: the grader times both on
// one GPU); on the emulator, the profile's estimates (--perf-estimates), with their stated error.
struct PerfSource {
    bool estimate = false;                   // timed here, on a GPU
    double copyGbps = 0;
    std::map<std::string, double> profiled;  // by driver task: the profile's ms
    bool fromProfile() const { return !profiled.empty(); }
};

inline PerfSource perfSource(const Args& args, bool emulated) {
    PerfSource s;
    s.estimate = !emulated && grading::kReferenceCopyGbps > 0 && !args.flag("--no-perf");
    s.copyGbps = s.estimate ? measureCopyGbps() : 0;
    if (emulated) s.profiled = perfEstimates(args);
    return s;
}

// A task's estimated performance points, and what its row shows.
struct TaskPerf {
    std::string text = "not estimated";
    double points = 0, low = 0, high = 0;
    bool estimated = false;
};

inline TaskPerf estimatedPerf(const grading::Task& t, double points, double low, double high) {
    TaskPerf p{"", points, low, high, true};
    char buf[64];
    std::snprintf(buf, sizeof buf, "about %.1f / %g", points, t.performancePoints);
    p.text = buf;
    return p;
}

// On a GPU: each perf case timed here against the reference's time scaled to this GPU.
inline TaskPerf timedPerf(const grading::Task& t, double copyGbps) {
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
    const double points = t.performancePoints * credit / double(t.perfCount);
    return estimatedPerf(t, points, points, points);
}

// On the emulator: the profile's estimate on the grading GPU, against the reference's time
// there (not estimated unless the profile has every perf case).
inline TaskPerf profiledPerf(const grading::Task& t, const std::map<std::string, double>& profiled) {
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
    if (found != t.perfCount) return TaskPerf{};
    const double scale = t.performancePoints / double(t.perfCount);
    return estimatedPerf(t, credit * scale, creditLo * scale, creditHi * scale);
}

// One task's points as the grader would give them, and what decided them.
struct TaskScore {
    double points = 0, low = 0, high = 0;  // correctness: visible cases; hidden all failing, all passing
    size_t hidden = 0;                     // hidden cases the grader adds
    bool skipped = false;                  // not attempted
    bool zero = false;                     // the handout's placeholder: 0 from the grader
    TaskPerf perf;
};

inline TaskPerf taskPerf(const grading::Task& t, const GradeTally& tally, const FileState& f, const TaskScore& s,
                         const PerfSource& source) {
    TaskPerf p;
    if (tally.notImplemented || s.skipped || f.missing || f.refused) p.text = "-";
    else if (s.zero) p.text = "0 (placeholder)";
    else if (tally.passed < tally.total) p.text = "0 (a case fails)";
    else if (source.estimate && t.perfCount > 0) p = timedPerf(t, source.copyGbps);
    else if (source.fromProfile() && t.perfCount > 0) p = profiledPerf(t, source.profiled);
    return p;
}

inline TaskScore scoreTask(GradeRun& run, const grading::Task& t, const PerfSource& source) {
    const GradeTally tally = run.tallies[t.number];
    const FileState& f = run.files[t.number];
    TaskScore s;
    s.skipped = run.notAttempted(t) && !f.refused;
    s.zero = f.placeholder && grading::kZeroForPlaceholders;
    s.hidden = s.skipped || f.missing ? 0 : run.emulated ? t.hiddenCasesEmulator : t.hiddenCases;
    s.points = correctnessPoints(tally.passed, tally.total, t.correctnessPoints);
    s.low = correctnessPoints(tally.passed, tally.total + s.hidden, t.correctnessPoints);
    s.high = tally.notImplemented
                 ? 0.0
                 : correctnessPoints(tally.passed + s.hidden, tally.total + s.hidden, t.correctnessPoints);
    if (s.zero || s.skipped || f.missing || f.refused) s.points = s.low = s.high = 0;
    s.perf = taskPerf(t, tally, f, s, source);
    return s;
}

inline const char* taskStatus(const GradeTally& tally, const FileState& f, const TaskScore& s) {
    return f.refused                     ? "   breaks a code rule (above): the grader gives 0, not built"
           : s.skipped                   ? "   not attempted (still the handout's: not built by the grader)"
           : f.missing                   ? "   missing (no student file)"
           : tally.notImplemented        ? "   not implemented"
           : s.zero                      ? "   still the handout's placeholder: the grader gives 0"
           : !tally.isolationNote.empty() ? "   fails with the harness's files (below)"
                                         : "";
}

inline void printTaskRow(const grading::Task& t, const GradeTally& tally, const FileState& f, const TaskScore& s) {
    char cases[32], corr[48];
    std::snprintf(cases, sizeof cases, "%zu/%zu", tally.passed, tally.total);
    std::snprintf(corr, sizeof corr, "%.1f / %g", s.points, t.correctnessPoints);
    std::printf("  %-4d %-14s %9s %15s %18s%s\n", t.number, t.name, s.skipped ? "-" : cases, corr,
                s.perf.text.c_str(), taskStatus(tally, f, s));
}

inline void writeTaskJson(const std::string& path, const grading::Task& t, const GradeTally& tally,
                          const FileState& f, const TaskScore& s) {
    JsonObject j;
    j.add("task", t.number).add("name", t.name).add("passed", tally.passed)
        .add("cases", tally.total).add("hidden_cases", s.hidden)
        .add("not_implemented", tally.notImplemented).add("placeholder", f.placeholder)
        .add("not_attempted", s.skipped).add("isolation_failed", !tally.isolationNote.empty())
        .add("refused", f.refused)
        .add("correctness", s.points).add("correctness_max", t.correctnessPoints)
        .add("correctness_low", s.low).add("correctness_high", s.high);
    if (s.perf.estimated)
        j.add("performance_estimate", s.perf.points).add("performance_low", s.perf.low)
            .add("performance_high", s.perf.high);
    writeJson(path, j.str(), true);
}

// The total keeps apart what the grader's rubric keeps apart: correctness (measured
// here), performance (estimated here) and the bonus task's share of each.
struct GradeTotals {
    double correct = 0, correctMax = 0, bonusCorrect = 0, bonusCorrectMax = 0;
    double perf = 0, perfMax = 0, perfLow = 0, perfHigh = 0;
    double bonusPerf = 0, bonusPerfMax = 0, bonusPerfLow = 0, bonusPerfHigh = 0;
    bool perfEstimated = false;
    double low = 0, high = 0;  // correctness with the hidden cases all failing, all passing
    bool anyHidden = false, anyPlaceholder = false;
    std::string notes;

    void add(const grading::Task& t, const GradeTally& tally, const TaskScore& s) {
        anyPlaceholder |= s.zero && !s.skipped;
        anyHidden |= s.hidden > 0;
        notes += tally.isolationNote;
        perfEstimated |= s.perf.estimated;
        (t.bonus ? bonusCorrect : correct) += s.points;
        (t.bonus ? bonusCorrectMax : correctMax) += t.correctnessPoints;
        (t.bonus ? bonusPerf : perf) += s.perf.points;
        (t.bonus ? bonusPerfLow : perfLow) += s.perf.low;
        (t.bonus ? bonusPerfHigh : perfHigh) += s.perf.high;
        (t.bonus ? bonusPerfMax : perfMax) += t.performancePoints;
        low += s.low;
        high += s.high;
    }

    std::string line(bool fromProfile) const {
        return totalLine(correct, correctMax, bonusCorrect, bonusCorrectMax,
                         perfEstimated ? PerfEstimate{perf, perfLow, perfHigh, perfMax, bonusPerf,
                                                      bonusPerfLow, bonusPerfHigh, bonusPerfMax}
                                       : PerfEstimate{},
                         !perfEstimated ? TotalSource::None : fromProfile ? TotalSource::Profile
                                                                          : TotalSource::Gpu);
    }
};

// Each selected task's row (and --json line), and the totals.
inline GradeTotals scoreTasks(GradeRun& run, const PerfSource& source) {
    std::printf("\nscanlab grade [%s]: the grader's visible cases, scored by its rubric\n",
                SCANLAB_BACKEND);
    std::printf("  %-4s %-14s %9s %15s %18s\n", "task", "", "cases", "correctness", "performance");
    GradeTotals totals;
    const std::string jsonPath = run.args.get("--json", "");
    if (!jsonPath.empty() && jsonPath != "-") writeJson(jsonPath, "", false);  // truncate
    for (const grading::Task& t : grading::kTasks) {
        if (!taskSelected(run.args, t)) continue;
        const TaskScore s = scoreTask(run, t, source);
        const GradeTally& tally = run.tallies[t.number];
        const FileState& f = run.files[t.number];
        printTaskRow(t, tally, f, s);
        writeTaskJson(jsonPath, t, tally, f, s);
        totals.add(t, tally, s);
    }
    return totals;
}

// What the total means: the hidden cases, the pairing, placeholders, what the backend leaves out.
inline void printGradeNotes(const GradeRun& run, const GradeTotals& totals, const PerfSource& source) {
    const Args& args = run.args;
    std::printf("%s", totals.line(source.fromProfile()).c_str());
    if (!totals.notes.empty()) std::printf("\n%s", totals.notes.c_str());
    if (totals.anyHidden)
        std::printf("The grader also runs hidden cases that are not in the handout: with them, "
                    "correctness is between %.1f (all failing) and %.1f (all passing).\n", totals.low, totals.high);
    if (args.has("--student") && !args.flag("--no-isolation"))
        std::printf("Each task ran with your files for the others, and again with the harness's own "
                    "version of each student file it includes (the grader pairs it with the "
                    "other files' contracts).\n");
    else
        std::printf("Each task here runs with your files for the others; the grader pairs each task "
                    "with only the contracts of the other files (make grade-local checks that).\n");
    if (totals.anyPlaceholder)
        std::printf("A task whose file is still the handout's placeholder (changed at most in "
                    "comments and spacing) earns 0 points from the grader, though its cases pass.\n");
    else if (grading::kZeroForPlaceholders && !args.has("--student"))
        std::printf("A task whose file is still the handout's placeholder earns 0 points from the "
                    "grader (not checked here: make grade-local passes --student).\n");
    if (run.emulated)
        std::printf("The emulator leaves out the cases above %zu elements (the grader runs them on "
                    "a GPU).\n", grading::kEmulatorMaxN);
    else if (source.estimate)
        std::printf("Performance is an estimate: the reference's time on %s (%.0f GB/s copy), "
                    "scaled by this GPU's copy bandwidth (%.0f GB/s).\n",
                    grading::kReferenceDevice, grading::kReferenceCopyGbps, source.copyGbps);
}

// `grade`: the points the rubric gives this build's visible cases. Hidden cases are not in
// the handout: the points they could move are shown as a range. With --student DIR (make
// grade-local passes it): a file still the handout's placeholder gets the grader's points
// (0; a bonus: not attempted, not run), and each task that includes another student file is
// run again with the harness's version of that file (harness/host/isolation.h), as the
// grader pairs it with the other files' contracts.
inline int cmdGrade(const Args& args) {
    if (deviceCount() == 0) {
        std::printf("scanlab grade: no CUDA device found: nothing was run (use the emulator "
                    "build without a GPU: build/scanlab-emu grade)\n");
        return kExitNoGpu;
    }
    GradeRun run{args, std::string(SCANLAB_BACKEND) == "emulator", {}, {}};
    for (const grading::Task& t : grading::kTasks) run.files[t.number] = studentFile(args, t);
    const std::vector<const grading::Case*> todo = gradeCasesToRun(run);
    Progress progress("scanlab grade", todo.size());
    std::printf("scanlab grade [%s]: %zu visible cases of the grader; a progress line every %.0f s\n",
                SCANLAB_BACKEND, todo.size(), progress.every());
    std::fflush(stdout);
    runGradeCases(run, todo, progress);
    const RandomTally random = runRandomCases(
        args, [&](const grading::Task& t) { return taskSelected(args, t); },
        [&](const grading::Task& t) { return !run.built(t) || run.tallies[t.number].notImplemented; },
        run.emulated);
    pairWithHarnessFiles(run);
    const PerfSource source = perfSource(args, run.emulated);
    const GradeTotals totals = scoreTasks(run, source);
    printGradeNotes(run, totals, source);
    std::printf("(%.0f s)\n", progress.elapsed());
    const bool allPassed = std::all_of(run.tallies.begin(), run.tallies.end(), [](const auto& t) {
        return t.second.passed == t.second.total;
    });
    if (random.total > 0)
        std::printf("Random configurations (--random): %zu/%zu passed (not scored here; the "
                    "grader's hidden cases sample the same space).\n", random.passed, random.total);
    return allPassed && random.passed == random.total ? kExitPass : kExitFail;
}

}  // namespace scanlab
