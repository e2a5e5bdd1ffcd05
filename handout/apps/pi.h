// scanlab harness: students, do not edit. Pi by map-reduce, with your reduce (task 2).
//
// pi = integral over [0, 1] of 4 / (1 + x^2). The composite trapezoid rule with n
// intervals of width h = 1/n sums n + 1 terms, w_i * h * f(i*h), with w = 1/2 at
// the two ends and 1 inside: a map (one term per thread) then a reduce. Its error,
// T_n - pi, is about h^2 (f'(1) - f'(0)) / -12 = 1/(6 n^2) in exact arithmetic; in
// float, rounding of the n + 1 additions soon costs more than that.
#pragma once
#include <cmath>

#include "apps/app.h"
#include "harness/check.h"
#include "harness/host/timing.h"

namespace scanlab::apps {

struct PiIntegrand {
    SCANLAB_HD double operator()(double x) const { return 4.0 / (1.0 + x * x); }
};

// Term i of the trapezoid rule with `intervals` intervals of [a, a + intervals*h].
template <class F>
SCANLAB_HD float trapezoidTerm(F f, double a, double h, size_t i, size_t intervals) {
    const double w = (i == 0 || i == intervals) ? 0.5 : 1.0;
    return float(w * h * f(a + double(i) * h));
}

template <class F>
__global__ void trapezoidTermsKernel(float* terms, size_t intervals, double a, double h, F f) {
    for (size_t i = size_t(blockIdx.x) * blockDim.x + threadIdx.x; i <= intervals;
         i += size_t(gridDim.x) * blockDim.x)
        terms[i] = trapezoidTerm(f, a, h, i, intervals);
}

inline AppOutput runPi(const AppConfig& c) {
    const size_t points = c.n + 1;
    const double h = 1.0 / double(c.n);
    DeviceBuffer<float> terms(points, "terms"), sum(1, "sum");
    EventTimer timer;
    AppOutput out;
    for (int pass = 0; pass < 2; ++pass) {  // the first pass warms up
        timer.start();
        launchKernel("trapezoidTermsKernel", trapezoidTermsKernel<PiIntegrand>,
                     dim3(mapBlocks(points, c.block)), dim3(c.block), 0, terms.data(), c.n, 0.0, h,
                     PiIntegrand{});
        runStudentTask<Add<float>>(Task::Reduce, terms, sum, c.block);
        out.ms = timer.stop();
    }
    out.bytes = asBytes(sum.download());
    out.bytesMoved = double(points) * sizeof(float) * 2;  // the map writes, the reduce reads
    return out;
}

inline AppVerdict checkPi(const AppConfig& c, const std::vector<unsigned char>& bytes) {
    AppVerdict v;
    std::vector<float> got;
    if (!fromBytes(bytes, 1, got)) {
        v.message = "the output is not one float";
        return v;
    }
    // The same float terms summed in double: the trapezoid rule, without float sums.
    const double h = 1.0 / double(c.n);
    double exact = 0, magnitude = 0;
    for (size_t i = 0; i <= c.n; ++i) {
        const float t = trapezoidTerm(PiIntegrand{}, 0.0, h, i, c.n);
        exact += t;
        magnitude += std::fabs(t);
    }
    const double pi = 3.14159265358979323846;
    v.figures = {{"pi (your reduce, float)", formatG(got[0], 9)},
                 {"error of your pi", formatG(double(got[0]) - pi, 3)},
                 {"error of the rule, 1/(6 n^2)", formatG(1.0 / (6.0 * double(c.n) * double(c.n)), 3)},
                 {"float rounding of your sum", formatG(double(got[0]) - exact, 3)}};
    v.passed = std::isfinite(got[0]) &&
               std::fabs(double(got[0]) - exact) <= floatTolerance(c.n + 1) * magnitude;
    if (!v.passed)
        v.message = "pi is " + formatG(got[0], 9) + ", but the terms sum to " + formatG(exact, 9);
    return v;
}

}  // namespace scanlab::apps
