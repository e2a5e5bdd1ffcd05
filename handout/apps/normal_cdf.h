// scanlab harness: students, do not edit. The standard normal CDF by scan, with your inclusive
// scan (task 3).
//
// Phi(x) = integral from -infinity to x of the density exp(-t^2/2) / sqrt(2 pi).
// The density is negligible below -5 (Phi(-5) is 2.9e-7), so on the grid
// x_i = -5 + i*h, h = 10/n, i = 0..n, Phi(x_i) is Phi(-5) plus the trapezoids up to
// x_i: element 0 is Phi(-5), element i >= 1 the trapezoid (f(x_{i-1}) + f(x_i)) h/2,
// and an inclusive scan turns them into the table.
#pragma once
#include <cmath>

#include "apps/app.h"
#include "harness/check.h"
#include "harness/host/timing.h"

namespace scanlab::apps {

constexpr double kCdfFrom = -5.0, kCdfTo = 5.0;

SCANLAB_HD double normalDensity(double x) { return 0.39894228040143267794 * exp(-0.5 * x * x); }

SCANLAB_HD float cdfTerm(size_t i, double h) {
    if (i == 0) return float(0.5 * erfc(-kCdfFrom / 1.41421356237309504880));
    const double x = kCdfFrom + double(i) * h;
    return float(0.5 * h * (normalDensity(x - h) + normalDensity(x)));
}

__global__ void cdfTermsKernel(float* terms, size_t points, double h) {
    for (size_t i = size_t(blockIdx.x) * blockDim.x + threadIdx.x; i < points;
         i += size_t(gridDim.x) * blockDim.x)
        terms[i] = cdfTerm(i, h);
}

inline AppOutput runNormalCdf(const AppConfig& c) {
    const size_t points = c.n + 1;
    const double h = (kCdfTo - kCdfFrom) / double(c.n);
    DeviceBuffer<float> terms(points, "terms"), table(points, "table");
    EventTimer timer;
    AppOutput out;
    for (int pass = 0; pass < 2; ++pass) {
        timer.start();
        launchKernel("cdfTermsKernel", cdfTermsKernel, dim3(mapBlocks(points, c.block)),
                     dim3(c.block), 0, terms.data(), points, h);
        runStudentTask<Add<float>>(Task::Scan, terms, table, c.block);
        out.ms = timer.stop();
    }
    out.bytes = asBytes(table.download());
    out.bytesMoved = double(points) * sizeof(float) * 3;  // map writes; scan reads, writes
    return out;
}

inline AppVerdict checkNormalCdf(const AppConfig& c, const std::vector<unsigned char>& bytes) {
    AppVerdict v;
    std::vector<float> got;
    const size_t points = c.n + 1;
    if (!fromBytes(bytes, points, got)) {
        v.message = "the output is not " + std::to_string(points) + " floats";
        return v;
    }
    const double h = (kCdfTo - kCdfFrom) / double(c.n);
    const double tolerance = floatTolerance(points);
    double running = 0, worstRule = 0, worstYours = 0;
    for (size_t i = 0; i < points; ++i) {
        running += cdfTerm(i, h);  // the same float terms, summed in double
        const double phi = 0.5 * std::erfc(-(kCdfFrom + double(i) * h) / std::sqrt(2.0));
        worstRule = std::fmax(worstRule, std::fabs(running - phi));
        worstYours = std::fmax(worstYours, std::fabs(double(got[i]) - phi));
        if (!v.message.empty()) continue;
        if (!std::isfinite(got[i]) || std::fabs(double(got[i]) - running) > tolerance * running)
            v.message = "Phi(" + formatG(kCdfFrom + double(i) * h, 6) + ") (row " +
                        std::to_string(i) + ") is " + formatG(got[i], 9) + ", expected " +
                        formatG(running, 9);
    }
    v.passed = v.message.empty();
    v.figures = {{"rows", std::to_string(points)},
                 {"Phi(" + formatG(kCdfFrom + double(c.n / 2) * h, 3) + ") (your scan)", formatG(got[c.n / 2], 9)},
                 {"Phi(5) (your scan; 0.9999997)", formatG(got[c.n], 9)},
                 {"largest |table - erfc form|", formatG(worstYours, 3)},
                 {"of which the rule (in double)", formatG(worstRule, 3)}};
    return v;
}

}  // namespace scanlab::apps
