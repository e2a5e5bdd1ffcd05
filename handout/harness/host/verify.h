// scanlab harness: students, do not edit (your code goes in student/); maintainers edit it here.
// The trusted check of an output file (`verify`), and the --cases FILE that `batch` and
// `verify --cases` read: the options of one `run` a line.
#pragma once

#include <fstream>
#include <optional>
#include <sstream>
#include <string>
#include <vector>

#include "harness/host/args.h"
#include "harness/host/generate.h"
#include "harness/host/report.h"
#include "harness/host/run.h"
#include "harness/host/timed_check.cuh"

namespace scanlab {

// The cases of a --cases FILE: the options of one `run` a line (blank lines skipped).
inline std::vector<RunConfig> readCaseLines(const std::string& casesPath) {
    std::ifstream f(casesPath);
    if (!f) throw UsageError("cannot read " + casesPath);
    std::vector<RunConfig> cases;
    for (std::string line; std::getline(f, line);) {
        std::vector<std::string> words{"scanlab", "run"};
        std::istringstream s(line);
        for (std::string w; s >> w;) words.push_back(w);
        if (words.size() == 2) continue;  // blank line
        std::vector<char*> argv;
        for (auto& w : words) argv.push_back(w.data());
        cases.push_back(parseRunConfig(parseArgs(int(argv.size()), argv.data())));
    }
    return cases;
}

// With --on-device: the output file checked on the GPU against the input drawn
// there again, where the check is exact and the device has room: a fold or a scan from the
// left (harness/host/timed_check.cuh) of an operator without rounding. Its verdict and first
// mismatch are checkOutput's, without n elements drawn and scanned on one CPU core. Floats
// stay on the CPU: their reference sums in float, the device check in double. nullopt: check
// on the CPU. (The emulator runs it too, which is how the CPU tests compare the two checks.)
template <class Op>
std::optional<CheckResult> checkFileOnDevice(const RunConfig& c, uint64_t seed) {
    using T = typename Op::Element;
    if constexpr (std::is_floating_point_v<T>) {
        return std::nullopt;
    } else {
        if (!c.checkOnDevice) return std::nullopt;
        std::optional<timed::RepetitionCheck<Op>> checker;
        std::optional<DeviceBuffer<T>> out;
        try {
            checker.emplace(c.task->task, c.n, parseDistribution(c.dist));
            if (!checker->onDevice()) return std::nullopt;
            out.emplace(outputCount(*c.task, c.n));
        } catch (const CudaError&) {
            return std::nullopt;  // no GPU here, or no room on it: the CPU checks it
        }
        readRaw(c.outputFile, *out);
        return checker->examine(nullptr, out->data(), seed).output;
    }
}

// One output file against the CPU reference: its JSON (with "case" when caseNumber >= 0)
// goes to jsonPath; printed only when `print`.
inline int verifyOne(const RunConfig& c, const std::string& jsonPath, bool appendJson, long caseNumber,
              bool print) {
    if (c.outputFile.empty()) throw UsageError("verify needs --output FILE");
    int code = kExitError;
    withOperator(c.op, [&](auto op) {
        using Op = decltype(op);
        using T = typename Op::Element;
        RunResult r;
        try {
            const uint64_t seed = c.timedRep ? timedInputSeed(c.seed, *c.timedRep) : c.seed;
            if (auto onDevice = checkFileOnDevice<Op>(c, seed)) {
                r.check = *onDevice;
            } else {
                const auto input = generateInput<Op>(c.n, seed, parseDistribution(c.dist));
                const auto got = readRaw<T>(c.outputFile, outputCount(*c.task, c.n));
                r.check = checkOutput<Op>(c.task->task, input, got);
            }
            r.checked = true;
            if (!r.check.passed()) r.status = "fail";
        } catch (const std::runtime_error& e) {
            r.status = "error";
            r.message = e.what();
        }
        if (print) printResult<Op>(c, r);
        JsonObject j = resultJson<Op>(c, r);
        if (caseNumber >= 0) j.add("case", (long long)caseNumber);
        writeJson(jsonPath, j.str(), appendJson);
        code = exitCodeFor(r);
    });
    return code;
}

}  // namespace scanlab
