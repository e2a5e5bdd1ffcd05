// scanlab harness: students, do not edit. The applications and the two commands that run them:
//
//   scanlab app [NAME|all] [--n N] [--block B] [--seed S] [--output FILE] [--json FILE]
//       runs the application on your kernels, checks it on the CPU, prints its figures
//   scanlab verify-app NAME --output FILE [--n N] [--seed S]
//       checks an output file written by `app --output` (CPU only; the grader runs
//       the reference's build of it, so your build never judges itself)
#pragma once
#include <algorithm>
#include <cinttypes>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <iterator>
#include <string>
#include <unistd.h>
#include <vector>

#include "apps/app.h"
#include "apps/compaction.h"
#include "apps/normal_cdf.h"
#include "apps/pi.h"
#include "apps/radix_sort.h"
#include "harness/generated/grading.h"
#include "harness/host/args.h"
#include "harness/host/isolation.h"
#include "harness/host/json.h"
#include "harness/host/report.h"

namespace scanlab::apps {

inline std::string formatG(double x, int digits) {
    char text[48];
    std::snprintf(text, sizeof text, "%.*g", digits, x);
    return text;
}

inline const App kApps[] = {
    {"pi", "pi by map-reduce: the trapezoid rule on 4/(1+x^2) over [0,1]", Task::Reduce,
     nullptr, size_t(1) << 26, size_t(1) << 16, runPi, checkPi},
    {"normal-cdf", "the standard normal CDF by scan of its density (trapezoids on [-5,5])",
     Task::Scan, nullptr, size_t(1) << 24, size_t(1) << 14, runNormalCdf, checkNormalCdf},
    {"compaction", "stream compaction: keep the positive values, by exclusive scan and scatter",
     Task::ScanExclusive, nullptr, size_t(1) << 26, size_t(1) << 16, runCompaction, checkCompaction},
    {"radix-sort", "radix sort of 32-bit keys: 32 passes of your split (the exercise) on your scan",
     Task::ScanExclusive, "split", size_t(1) << 24, size_t(1) << 12, runRadixSort, checkRadixSort},
};

inline const App* findApp(const std::string& name) {
    for (const App& a : kApps)
        if (name == a.name) return &a;
    return nullptr;
}

inline std::string appList() {
    std::string out;
    for (const App& a : kApps) out += (out.empty() ? "" : ", ") + std::string(a.name);
    return out;
}

inline AppConfig appConfig(const Args& args, const App& app, bool emulated) {
    AppConfig c;
    c.n = args.has("--n") ? parseCount(args.get("--n", ""), "--n")
                        : (emulated ? app.emulatorN : app.defaultN);
    const auto block = parseCount(args.get("--block", std::to_string(kDefaultBlockSize)), "--block");
    validateBlock(block);
    c.block = unsigned(block);
    c.seed = parseCount(args.get("--seed", "1"), "--seed");
    if (c.n < 1 || c.n > (size_t(1) << 30))
        throw UsageError("--n of an application must be in [1, 2^30]");
    return c;
}

// The other tasks whose code runs inside task `number`'s kernels (the manifest's `uses`:
// the scan runs the warp scan in its kernel and the reduce as its phase 1).
inline std::vector<const grading::Task*> usedTasks(int number) {
    std::vector<const grading::Task*> out;
    for (const grading::Task& t : grading::kTasks) {
        if (t.number != number) continue;
        std::string uses = t.uses;
        for (size_t at = 0; at < uses.size();) {
            const size_t end = std::min(uses.find(',', at), uses.size());
            for (const grading::Task& u : grading::kTasks)
                if (uses.compare(at, end - at, u.name) == 0 && std::strlen(u.name) == end - at) out.push_back(&u);
            at = end + 1;
        }
    }
    return out;
}

// The application again in the emulator driver built with the harness's own `file` in place
// of the student's (harness/isolation/: make grade-local builds them): 1 it passes, 0 it
// fails, -1 not run (no such driver here).
inline int appWithHarnessFile(const App& app, const AppConfig& c, const std::string& file) {
    const std::string driver = isolationDriver(file);
    if (driver.empty()) return -1;
    const std::string json = "/tmp/scanlab-app-" + std::to_string(getpid()) + ".json";
    const std::string command = "'" + driver + "' app " + app.name + " --n " + std::to_string(c.n) +
                                " --block " + std::to_string(c.block) + " --seed " + std::to_string(c.seed) +
                                " --no-isolation --json '" + json + "' >/dev/null 2>&1";
    (void)std::system(command.c_str());
    std::string text;
    const bool read = readText(json, text);
    std::remove(json.c_str());
    if (!read) return -1;
    if (text.find("\"status\": \"pass\"") != std::string::npos) return 1;
    return text.find("\"status\": \"fail\"") != std::string::npos ? 0 : -1;
}

// Which of the student's tasks a failed application points at. Where the harness's own
// versions of the files the task uses are built here (emulator; make grade-local), the
// application runs again with each in place of the student's: one that passes so names the
// task at fault (as the grader does with its stand-ins). Else it says every task it ran.
inline void printTaskAtFault(const App& app, const AppConfig& c, bool isolate) {
    const TaskInfo& t = taskInfo(app.uses);
    const std::vector<const grading::Task*> used = usedTasks(t.number);
    if (used.empty()) {
        std::printf("  It uses your %s (task %d, student/%s): run `scanlab test --tasks %s` to find "
                    "the case that fails.\n", t.name, t.number, t.studentFile, t.name);
        return;
    }
    std::string others, tried, names = t.name;
    bool found = false, all = isolate;
    for (const grading::Task* u : used) {
        others += std::string(others.empty() ? "" : " and ") + "your " + u->name + " (task " +
                  std::to_string(u->number) + ", student/" + u->file + ")";
        names += std::string(",") + u->name;
        const int with = isolate ? appWithHarnessFile(app, c, u->file) : -1;
        if (with < 0) all = false;
        if (with == 1) {
            found = true;
            std::printf("  With the harness's student/%s in place of yours it passes: the fault is in your "
                        "%s (task %d), as your %s (task %d) uses it; run `scanlab test --tasks %s`.\n",
                        u->file, u->name, u->number, t.name, t.number, u->name);
        }
        if (with == 0) tried += std::string(tried.empty() ? "" : ", and with its ") + "student/" + u->file;
    }
    if (found) return;
    if (all)
        std::printf("  It still fails with the harness's %s in place of yours: look at your %s (task %d, "
                    "student/%s) first (`scanlab test --tasks %s`); or both of the others are wrong.\n",
                    tried.c_str(), t.name, t.number, t.studentFile, t.name);
    else
        std::printf("  It uses your %s (task %d, student/%s) and, inside it, %s: `make grade-local` "
                    "(with the harness's versions of those files) or `scanlab test --tasks %s` finds which.\n",
                    t.name, t.number, t.studentFile, others.c_str(), names.c_str());
}

inline void printVerdict(const App& app, const AppVerdict& v, const AppConfig& c, bool isolate) {
    for (const auto& [what, value] : v.figures) std::printf("  %-34s %s\n", what.c_str(), value.c_str());
    if (v.passed) {
        std::printf("  check   PASS\n");
    } else {
        const TaskInfo& t = taskInfo(app.uses);
        std::printf("  check   FAIL: %s\n", v.message.c_str());
        if (app.exercise)
            std::printf("  It runs your %s (the exercise, student/%s) on your %s (task %d): check the "
                        "exercise first, then `scanlab test --tasks %s`.\n",
                        exercise(app.exercise).name, exercise(app.exercise).file, t.name, t.number, t.name);
        else
            printTaskAtFault(app, c, isolate);
    }
}

// `scanlab app`: one application, or all of them (exit status: the worst).
inline int cmdApp(const Args& args, bool emulated) {
    const std::string name = args.positional.empty() ? "all" : args.positional[0];
    if (name != "all" && !findApp(name))
        throw UsageError("unknown application '" + name + "' (expected " + appList() + " or all)");
    if (name == "all" && args.has("--output")) throw UsageError("--output needs one application");
    int status = kExitPass;
    for (const App& app : kApps) {
        if (name != "all" && name != app.name) continue;
        const AppConfig c = appConfig(args, app, emulated);
        const TaskInfo& t = taskInfo(app.uses);
        const std::string alsoUses =
            app.exercise ? std::string(" and your ") + exercise(app.exercise).name + " (the exercise, student/" +
                               exercise(app.exercise).file + ")"
                         : "";
        std::printf("scanlab app %s: %s\n  n %zu, block %u, uses your %s (task %d)%s%s\n", app.name,
                    app.summary, c.n, c.block, t.name, t.number, alsoUses.c_str(),
                    emulated ? " [CPU emulator]" : "");
        student::resetNotImplemented();
        const AppOutput out = app.run(c);
        JsonObject j;
        j.add("app", app.name).add("n", c.n).add("task", t.number);
        if (!out.needs.empty() || student::wasNotImplemented()) {
            if (!out.needs.empty())
                std::printf("  needs %s: its TODO stub is still in place\n", out.needs.c_str());
            else
                std::printf("  needs task %d (%s): its TODO stub is still in place in student/%s\n",
                            t.number, t.name, t.studentFile);
            j.add("status", "not_implemented")
                .add("needs", out.needs.empty() ? "task " + std::to_string(t.number) : out.needs);
            writeJson(args.get("--json", ""), j.str(), true);
            status = std::max(status, int(kExitNotImplemented));
            continue;
        }
        if (const int id = student::placeholderReached()) {
            // A grading build (harness/baselines.cuh): the placeholder did no work.
            std::printf("  calls the handout's placeholder (%s), which does no work in a grading "
                        "build\n", placeholderName(id));
            j.add("status", "placeholder").add("placeholder", placeholderName(id));
            writeJson(args.get("--json", ""), j.str(), true);
            status = std::max(status, int(kExitPlaceholder));
            continue;
        }
        if (args.has("--output")) {
            std::ofstream f(args.get("--output", ""), std::ios::binary);
            f.write(reinterpret_cast<const char*>(out.bytes.data()), std::streamsize(out.bytes.size()));
            if (!f) throw std::runtime_error("cannot write " + args.get("--output", ""));
        }
        const AppVerdict v = app.check(c, out.bytes);
        printVerdict(app, v, c, emulated && !args.flag("--no-isolation"));
        if (emulated)
            std::printf("  %.3g elements/s on the CPU emulator (not GPU performance)\n",
                        out.ms > 0 ? double(c.n) / (out.ms * 1e-3) : 0.0);
        else
            std::printf("  %.3f ms, %.0f GB/s (map, your kernels and scatter together)\n", out.ms,
                        out.ms > 0 ? out.bytesMoved / (out.ms * 1e6) : 0.0);
        j.add("status", v.passed ? "pass" : "fail").add("message", v.message).add("ms", out.ms);
        writeJson(args.get("--json", ""), j.str(), true);
        if (!v.passed) status = std::max(status, int(kExitFail));
    }
    return status;
}

// `scanlab verify-app NAME --output FILE`: the trusted check of an output file.
inline int cmdVerifyApp(const Args& args) {
    const std::string name = args.positional.empty() ? "" : args.positional[0];
    const App* app = findApp(name);
    if (!app) throw UsageError("verify-app: name one application (" + appList() + ")");
    if (!args.has("--output")) throw UsageError("verify-app needs --output FILE");
    if (!args.has("--n")) throw UsageError("verify-app needs --n N (what `app` ran)");
    std::ifstream f(args.get("--output", ""), std::ios::binary);
    if (!f) throw std::runtime_error("cannot read " + args.get("--output", ""));
    const std::vector<unsigned char> bytes{std::istreambuf_iterator<char>(f), {}};
    const AppConfig c = appConfig(args, *app, false);
    const AppVerdict v = app->check(c, bytes);
    std::printf("scanlab verify-app %s:\n", app->name);
    printVerdict(*app, v, c, false);
    JsonObject j;
    j.add("app", app->name).add("status", v.passed ? "pass" : "fail").add("message", v.message);
    writeJson(args.get("--json", ""), j.str(), true);
    return v.passed ? kExitPass : kExitFail;
}

}  // namespace scanlab::apps
