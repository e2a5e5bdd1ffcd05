// scanlab harness: students, do not edit (your code goes in student/); maintainers edit it here.
//
// The performance estimate of `grade` (harness/host/grade.h): the profile build's
// estimates it is given, their stated error, and the total line that keeps the estimate
// apart from the measured correctness points.
#pragma once

#include <cstdio>
#include <cstdlib>
#include <map>
#include <string>

#include "harness/host/args.h"

namespace scanlab {

// `grade --perf-estimates "warp-scan=0.19,reduce=0.10,..."`: the profile build's estimate
// (make profile: ms on the grading GPU at the size the grader times) of each timed driver
// task; make grade-local passes them on the emulator, which cannot time a GPU.
inline std::map<std::string, double> perfEstimates(const Args& args) {
    std::map<std::string, double> out;
    for (const std::string& item : splitList(args.get("--perf-estimates", ""))) {
        const size_t eq = item.find('=');
        if (eq == std::string::npos) throw UsageError("--perf-estimates: '" + item + "' is not TASK=MS");
        char* end = nullptr;
        const double ms = std::strtod(item.c_str() + eq + 1, &end);
        if (end == item.c_str() + eq + 1 || *end != '\0' || !(ms > 0))
            throw UsageError("--perf-estimates: '" + item + "' is not TASK=MS with MS > 0");
        out[item.substr(0, eq)] = ms;
    }
    return out;
}

// The stated error of the profile's estimate (harness/host/profile.h): figures/README.md
// times the reference, the placeholders and fixtures of known speed on the grading H100,
// and 10 of its 12 estimates are within this factor of the measured time, either way.
constexpr double kProfileErrorFactor = 1.5;

// What `grade` estimated of the performance points (the bonus task's apart), and from what.
struct PerfEstimate {
    double points = 0, low = 0, high = 0, max = 0;
    double bonus = 0, bonusLow = 0, bonusHigh = 0, bonusMax = 0;
};
enum class TotalSource { None, Profile, Gpu };

// The local total, in the rubric's parts: correctness as measured here, performance as
// an estimate with its stated error, never one sum that mixes them.
inline std::string totalLine(double correct, double correctMax, double bonusCorrect, double bonusCorrectMax,
                             const PerfEstimate& p, TotalSource source) {
    char buf[1024];
    int at = std::snprintf(buf, sizeof buf, "  total: correctness %.1f/%g", correct, correctMax);
    if (bonusCorrectMax > 0) at += std::snprintf(buf + at, sizeof buf - at, ", bonus %.1f/%g", bonusCorrect, bonusCorrectMax);
    if (source == TotalSource::None) {
        std::snprintf(buf + at, sizeof buf - at,
                      "; performance: not estimated (make grade-local estimates it: from the profile on "
                      "the emulator, timed on a GPU)\n");
        return buf;
    }
    at += std::snprintf(buf + at, sizeof buf - at, "; performance: about %.1f/%g", p.points, p.max);
    if (p.bonusMax > 0) at += std::snprintf(buf + at, sizeof buf - at, ", bonus about %.1f/%g", p.bonus, p.bonusMax);
    if (source == TotalSource::Profile) {
        at += std::snprintf(buf + at, sizeof buf - at,
                            " (estimated from the profile; a GPU measures it). The profile's stated error "
                            "is a time within %.1fx of a GPU's: between %.1f and %.1f", kProfileErrorFactor,
                            p.low, p.high);
        if (p.bonusMax > 0) at += std::snprintf(buf + at, sizeof buf - at, ", bonus %.1f and %.1f", p.bonusLow, p.bonusHigh);
        std::snprintf(buf + at, sizeof buf - at, "\n");
    } else {
        std::snprintf(buf + at, sizeof buf - at,
                      " (estimated: timed on this GPU against the reference's time scaled by the copy "
                      "bandwidths; the grader times both on one GPU)\n");
    }
    return buf;
}

}  // namespace scanlab
