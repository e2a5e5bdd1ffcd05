// scanlab harness: students, do not edit (your code goes in student/); maintainers edit it here.
//
// `sweep`: one task timed over n = 2^a .. 2^b: your kernels, the task's baselines
// (the handout's placeholder, the lecture's naive kernels, the CPU) and a device copy
// of the same elements, each size checked first. Writes CSV (and JSON lines) that
// tools/plot_sweep.py draws as GB/s against n (make plot).
#pragma once
#include <cmath>
#include <cstdio>
#include <fstream>
#include <string>
#include <vector>

#include "harness/generated/suite.h"
#include "harness/host/args.h"
#include "harness/host/json.h"
#include "harness/host/report.h"
#include "harness/host/run.h"
#include "harness/host/timing.h"

namespace scanlab {

struct SweepRow {
    std::string series;  // --label (default "yours"), a baseline's name, or "device copy"
    std::string kind;    // kernel | baseline | copy
    size_t n = 0;
    std::string status = "pass";  // of the kernel: pass | fail | not_implemented | error
    double ms = 0;                 // median; 0 when not timed
    double bytes = 0;              // what a perfect kernel for it moves
};

inline const char* const kSweepCsvHeader =
    "series,kind,backend,device,task,op,block,n,status,median_ms,gbps,elements_per_s";

class SweepWriter {
#if defined(__CUDACC__)
    static constexpr bool kEmulated = false;
#else
    static constexpr bool kEmulated = true;
#endif

public:
    SweepWriter(const RunConfig& c, std::string device, const std::string& csvPath,
                std::string jsonPath)
        : c_(c), device_(std::move(device)), jsonPath_(std::move(jsonPath)) {
        if (!csvPath.empty()) {
            csv_.open(csvPath, std::ios::trunc);
            if (!csv_) throw std::runtime_error("cannot write " + csvPath);
            csv_ << kSweepCsvHeader << "\n";
        }
        if (!jsonPath_.empty() && jsonPath_ != "-") writeJson(jsonPath_, "", false);  // truncate
    }

    // On the emulator, GB/s would be the CPU's: it is left empty there.
    void add(const SweepRow& r) {
        const bool timed = r.ms > 0;
        const double gbps = timed && !kEmulated ? r.bytes / (r.ms * 1e6) : 0;
        const double perSecond = timed ? double(r.n) / (r.ms * 1e-3) : 0;
        std::printf("  %-24s %-16s", r.series.c_str(), r.status.c_str());
        if (timed) std::printf(" %10.4f ms", r.ms);
        if (gbps > 0) std::printf(" %9.1f GB/s", gbps);
        if (timed) std::printf(" %10.3g elements/s", perSecond);
        std::printf("\n");
        if (csv_.is_open()) {
            char numbers[96] = ",,";
            if (gbps > 0) std::snprintf(numbers, sizeof numbers, "%.6f,%.3f,%.6g", r.ms, gbps, perSecond);
            else if (timed) std::snprintf(numbers, sizeof numbers, "%.6f,,%.6g", r.ms, perSecond);
            csv_ << csvField(r.series) << "," << r.kind << "," << SCANLAB_BACKEND << ","
                 << csvField(device_) << "," << c_.task->name << "," << c_.op << "," << c_.block
                 << "," << r.n << "," << r.status << "," << numbers << "\n";
            csv_.flush();  // a sweep stopped half way keeps the sizes it finished
        }
        JsonObject j;
        j.add("series", r.series).add("kind", r.kind).add("backend", SCANLAB_BACKEND)
            .add("device", device_).add("task", c_.task->name).add("op", c_.op).add("block", c_.block)
            .add("n", (unsigned long long)r.n).add("status", r.status);
        if (timed) j.add("median_ms", r.ms).add("elements_per_s", perSecond);
        if (gbps > 0) j.add("gbps", gbps);
        if (!jsonPath_.empty()) writeJson(jsonPath_, j.str(), true);
    }

private:
    static std::string csvField(const std::string& s) {
        if (s.find_first_of(",\"\n") == std::string::npos) return s;
        std::string q = "\"";
        for (char ch : s) q += ch == '"' ? std::string("\"\"") : std::string(1, ch);
        return q + "\"";
    }
    const RunConfig& c_;
    std::string device_;
    std::string jsonPath_;
    std::ofstream csv_;
};

// One size: your kernels first (checked, then timed only if right), then the baselines
// and the copy, which are timed at every size. Returns your kernels' exit status.
template <class Op>
int sweepOne(RunConfig c, const std::string& label, SweepWriter& out) {
    using T = typename Op::Element;
    const double taskBytes = double(c.task->bytesMoved) * sizeof(T) * double(c.n);
    c.time = true;
    c.baselines = false;
    const RunResult r = runTask<Op>(c);
    if (r.status != "pass" && r.status != "not_implemented") printResult<Op>(c, r);
    out.add({label, "kernel", c.n, r.status, r.timing ? r.timing->medianMs : 0, taskBytes});

    const auto input = generateInput<Op>(c.n, c.seed, parseDistribution(c.dist));
    TaskRunner<Op> runner(c);
    runner.in.upload(input);
    for (const Timing& t : timeBaselines<Op>(runner, input))
        out.add({t.name, "baseline", c.n, "pass", t.medianMs, taskBytes});
    DeviceBuffer<T> copy(c.n);
    const Timing t = timeGpu("device copy", 1, c.reps, [&] { copy.copyFrom(runner.in); }, [] {});
    out.add({"device copy", "copy", c.n, "pass", t.medianMs, 2.0 * sizeof(T) * double(c.n)});
    return exitCodeFor(r);
}

inline size_t sweepSizeArg(const Args& args, const char* name, size_t fallback) {
    if (!args.has(name)) return fallback;
    const size_t n = parseCount(args.get(name, ""), name);
    if (n < 1 || n > kMaxN) throw UsageError(std::string(name) + " must be in [1, 2^32]");
    return n;
}

// `sweep --task T [--op O] [--block B] [--min-n N] [--max-n N] [--label L] [--csv FILE]
// [--json FILE] [--reps R]`: the sizes are the powers of two from min-n to max-n.
inline int cmdSweep(const Args& args, const DeviceInfo& dev) {
    const bool emulated = std::string(SCANLAB_BACKEND) == "emulator";
    Args runArgs = args;
    if (!runArgs.has("--reps")) runArgs.values["--reps"] = emulated ? "1" : "10";
    if (!runArgs.has("--warmup")) runArgs.values["--warmup"] = "1";
    RunConfig c = parseRunConfig(runArgs);
    // The emulator runs a GPU's threads one after another on the CPU: small sizes only.
    const size_t minN = sweepSizeArg(args, "--min-n", size_t(1) << 10);
    const size_t emulatorMaxN = size_t(1) << size_t(std::log2(double(kSuiteEmulatorMaxN)));
    const size_t maxN = sweepSizeArg(args, "--max-n", emulated ? emulatorMaxN : size_t(1) << 28);
    if (minN > maxN) throw UsageError("--min-n is above --max-n");
    const std::string label = args.get("--label", "yours");
    SweepWriter out(c, dev.name, args.get("--csv", ""), args.get("--json", ""));
    std::printf("scanlab sweep: task %s (task %d), op %s, block %u, n = %zu .. %zu (powers of two), "
                "median of %d reps [%s: %s]\n",
                c.task->name, c.task->number, c.op.c_str(), c.block, minN, maxN, c.reps,
                SCANLAB_BACKEND, dev.name.c_str());
    if (emulated)
        std::printf("On the CPU emulator: elements per second of the emulator, not GPU "
                    "performance (so no GB/s). Use it to try the sweep; time on a GPU.\n");
    int code = kExitPass;
    for (size_t n = size_t(1) << size_t(std::ceil(std::log2(double(minN)))); n <= maxN; n *= 2) {
        c.n = n;
        c.seed = n * 7919 + c.block;
        std::printf("n = %zu (2^%d)\n", n, int(std::log2(double(n))));
        withOperator(c.op, [&](auto op) {
            const int sized = sweepOne<decltype(op)>(c, label, out);
            if (code == kExitPass) code = sized;
        });
        std::fflush(stdout);
    }
    if (code == kExitNotImplemented)
        std::printf("task %d is not implemented: only its baselines and the copy were timed\n",
                    c.task->number);
    return code;
}

}  // namespace scanlab
