// scanlab harness: students, do not edit (your code goes in student/); maintainers edit it here.
//
// How the driver reports a run: the terminal lines, the JSON object (--json), the
// command that reproduces it, and the exit status.
#pragma once
#include <cstdio>
#include <fstream>
#include <stdexcept>
#include <string>

#include "harness/generated/assignment.h"
#include "harness/host/json.h"
#include "harness/host/run.h"
#include "harness/host/tasks.h"

namespace scanlab {

// argv[0], for the commands printed to reproduce a run.
inline std::string& programName() {
    static std::string name = "scanlab";
    return name;
}

// "scan add-i32 n=1000 block=256": how suite and grade lines name a case.
inline std::string caseLabel(const RunConfig& c) {
    return std::string(c.task->name) + " " + c.op + " n=" + std::to_string(c.n) + " block=" +
           std::to_string(c.block) + (c.dist == "random" ? "" : " dist=" + c.dist);
}

inline std::string reproduceCommand(const RunConfig& c) {
    return reproducePrefix() + programName() + " run --task " + c.task->name + " --op " + c.op +
           " --n " + std::to_string(c.n) + " --block " + std::to_string(c.block) + " --seed " +
           std::to_string(c.seed) + " --dist " + c.dist;
}

inline int exitCodeFor(const RunResult& r) {
    if (r.status == "pass") return kExitPass;
    if (r.status == "fail") return kExitFail;
    if (r.status == "not_implemented") return kExitNotImplemented;
    if (r.status == "placeholder") return kExitPlaceholder;
    return kExitError;
}

inline JsonObject timingJson(const Timing& t) {
    JsonObject j;
    j.add("name", t.name).add("median_ms", t.medianMs).add("min_ms", t.minMs).add("max_ms", t.maxMs)
        .add("reps", t.reps);
    if (t.checked) j.add("checked", t.checked).add("check_ms", t.checkMs);
    if (t.repetitions) {
        JsonObject reps;
        reps.add("first", t.repetitions->first).add("last", t.repetitions->last)
            .add("warmup", t.repetitions->warmup).add("timed", t.repetitions->timed);
        j.add("repetitions", reps);
    }
    return j;
}

template <class Op>
JsonObject resultJson(const RunConfig& c, const RunResult& r) {
    using T = typename Op::Element;
    JsonObject j;
    j.add("scanlab", 1).add("backend", SCANLAB_BACKEND).add("task", c.task->name)
        .add("task_number", c.task->number).add("op", c.op).add("n", (unsigned long long)c.n)
        .add("block", c.block).add("seed", (unsigned long long)c.seed).add("dist", c.dist)
        .add("status", r.status).add("message", r.message).add("reproduce", reproduceCommand(c));
    if (r.checked) {
        j.add("mismatches", (unsigned long long)r.check.mismatches);
        if (r.check.first) {
            JsonObject m;
            m.add("index", (unsigned long long)r.check.first->index)
                .add("expected", r.check.first->expected).add("got", r.check.first->got);
            j.add("first_mismatch", m);
        }
    }
    if (!r.hint.empty()) j.add("hint", r.hint);
    if (r.timing) {
        const double bytes = double(c.task->bytesMoved) * sizeof(T) * double(c.n);
        JsonObject t = timingJson(*r.timing);
        t.add("bytes_per_element", int(c.task->bytesMoved * sizeof(T)))
            .add("gbps", bytes / (r.timing->medianMs * 1e6));
        j.add("timing", t);
        std::string list = "[";
        for (const auto& b : r.baselines) {
            JsonObject bj = timingJson(b);
            bj.add("speedup", b.medianMs / r.timing->medianMs);
            list += (list.size() > 1 ? ", " : "") + bj.str();
        }
        j.raw("baselines", list + "]");
    }
    return j;
}

template <class Op>
void printResult(const RunConfig& c, const RunResult& r) {
    using T = typename Op::Element;
    if (r.status == "not_implemented") {
        std::printf("  task %d: not implemented (student/%s still has its TODO stub)\n",
                    c.task->number, c.task->studentFile);
        return;
    }
    if (r.status == "placeholder") {
        std::printf("  task %d: %s\n", c.task->number, r.message.c_str());
        return;
    }
    if (r.status == "error") {
        std::printf("  ERROR   %s\n  reproduce: %s\n", r.message.c_str(), reproduceCommand(c).c_str());
        return;
    }
    if (r.checked) {
        if (r.check.passed()) {
            const size_t count = outputCount(*c.task, c.n);
            std::printf("  check   PASS (%zu %s the CPU reference)\n", count,
                        count == 1 ? "element matches" : "elements match");
        } else {
            const auto& m = *r.check.first;
            std::printf("  check   FAIL: %zu of %zu elements differ; first at index %zu: "
                        "expected %s, got %s\n",
                        r.check.mismatches, outputCount(*c.task, c.n),
                        m.index, m.expected.c_str(), m.got.c_str());
            if (!r.message.empty()) std::printf("  note    %s\n", r.message.c_str());
            if (!r.hint.empty()) std::printf("  hint    %s\n", r.hint.c_str());
            std::printf("  reproduce: %s\n", reproduceCommand(c).c_str());
        }
    } else {
        std::printf("  check   skipped (--no-check)\n");
    }
    if (r.timing && std::string(SCANLAB_BACKEND) == "emulator") {
        // The emulator's events time the CPU running the GPU's threads one by one: no
        // GB/s, which would read as a GPU figure.
        std::printf("  time    median %.4f ms (min %.4f, max %.4f, %d reps) of the CPU emulator: "
                    "CPU time, not a GPU figure (for an estimate of GPU speed: make profile)\n",
                    r.timing->medianMs, r.timing->minMs, r.timing->maxMs, r.timing->reps);
        for (const auto& b : r.baselines)
            std::printf("  vs %-20s %10.4f ms   (CPU emulator time)\n", b.name.c_str(), b.medianMs);
    } else if (r.timing) {
        const double bytes = double(c.task->bytesMoved) * sizeof(T) * double(c.n);
        std::printf("  time    median %.4f ms (min %.4f, max %.4f, %d reps)  %.1f GB/s "
                    "(%d B/element)\n",
                    r.timing->medianMs, r.timing->minMs, r.timing->maxMs, r.timing->reps,
                    bytes / (r.timing->medianMs * 1e6), int(c.task->bytesMoved * sizeof(T)));
        if (r.timing->checked)
            std::printf("  verify  every repetition (%d, warm-ups included): a fresh input, and its "
                        "output checked on the device (%.1f ms, untimed)\n",
                        r.timing->checked, r.timing->checkMs);
        for (const auto& b : r.baselines)
            std::printf("  vs %-20s %10.4f ms   speedup %.1fx\n", b.name.c_str(), b.medianMs,
                        b.medianMs / r.timing->medianMs);
    }
}

inline std::string xmlQuote(const std::string& text) {
    std::string out = "\"";
    for (char ch : text) {
        switch (ch) {
            case '&': out += "&amp;"; break;
            case '<': out += "&lt;"; break;
            case '>': out += "&gt;"; break;
            case '"': out += "&quot;"; break;
            default: out += (unsigned char)ch < 0x20 ? ' ' : ch;
        }
    }
    return out + "\"";
}

inline void writeJson(const std::string& path, const std::string& json, bool append = false) {
    if (path.empty()) return;
    if (path == "-") {
        std::printf("%s\n", json.c_str());
        return;
    }
    std::ofstream f(path, append ? std::ios::app : std::ios::trunc);
    if (!f) throw std::runtime_error("cannot write " + path);
    if (!json.empty()) f << json << "\n";
}

}  // namespace scanlab
