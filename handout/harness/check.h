// scanlab harness: students, do not edit (your code goes in student/); maintainers edit it here.
//
// Compares a task's output with the sequential CPU reference.
//
// Integers and MSSP must match exactly. Float sums depend on the order of the
// additions, so a float result y_i passes when |y_i - r_i| <= tol(n) * S_i, where
// r_i is the CPU result (summed in double, rounded to float), S_i the sum of |x_j| over
// the inputs that make up output i,
// and tol(n) = 2^-23 * (16 + 2*sqrt(n)): a few rounding errors per addition along
// any reasonable summation tree, growing with n. (Integer operators are the ones
// that catch a missing or doubled element; floats check that float code works.)
#pragma once
#include <cmath>
#include <cstddef>
#include <optional>
#include <string>
#include <type_traits>
#include <vector>

#include "harness/generated/task_list.cuh"
#include "harness/host/tasks.h"
#include "harness/ops.cuh"

namespace scanlab {

struct Mismatch {
    size_t index = 0;
    std::string expected;
    std::string got;
};

struct CheckResult {
    size_t mismatches = 0;
    std::optional<Mismatch> first;
    bool passed() const { return mismatches == 0; }
};

inline double floatTolerance(size_t n) {
    return std::ldexp(1.0, -23) * (16.0 + 2.0 * std::sqrt(double(n)));
}

// The operator the reference accumulates in: the operator itself, but a float sum in
// double (Add<float> -> Add<double>). A maximum or minimum rounds nothing, and over double
// its identity (the lowest double) would become -inf in float, not the float operator's.
template <class Op>
struct Wide {
    using type = Op;
};
template <>
struct Wide<Add<float>> {
    using type = Add<double>;
};

// The CPU reference output of `task` (its type's reference(), harness/tasks/). Float
// elements are accumulated in double and rounded once at the end: a float running sum
// stops growing at 2^24 when it adds ones (from about 2^24 elements on it would be the
// reference that is wrong, by more than any tolerance).
template <class Op>
std::vector<typename Op::Element> referenceOutput(Task task,
                                                  const std::vector<typename Op::Element>& in) {
    using T = typename Op::Element;
    using W = typename Wide<Op>::type;
    std::vector<T> out;
    if constexpr (std::is_same_v<W, Op>) {
        withTask(task, [&](auto type) { out = decltype(type)::template reference<Op>(in); });
    } else {
        const std::vector<typename W::Element> wide(in.begin(), in.end());
        std::vector<typename W::Element> exact;
        withTask(task, [&](auto type) { exact = decltype(type)::template reference<W>(wide); });
        out.assign(exact.begin(), exact.end());
    }
    return out;
}

template <class Op>
CheckResult checkOutput(Task task, const std::vector<typename Op::Element>& in,
                        const std::vector<typename Op::Element>& got) {
    const auto expected = referenceOutput<Op>(task, in);
    // S_i (float operators only): the same task over |x|, in double.
    std::vector<double> scale;
    if constexpr (std::is_floating_point_v<typename Op::Element>) {
        std::vector<double> magnitudes(in.size());
        for (size_t i = 0; i < in.size(); ++i) magnitudes[i] = Op::magnitude(in[i]);
        scale = referenceOutput<Add<double>>(task, magnitudes);
    }
    const double tol = floatTolerance(in.size());

    CheckResult result;
    if (got.size() != expected.size()) {
        result.mismatches = expected.size();
        result.first = Mismatch{0, std::to_string(expected.size()) + " elements",
                                std::to_string(got.size()) + " elements"};
        return result;
    }
    for (size_t i = 0; i < expected.size(); ++i) {
        if (!Op::equal(expected[i], got[i], scale.empty() ? 0.0 : tol * scale[i])) {
            if (!result.first)
                result.first = Mismatch{i, Op::format(expected[i]), Op::format(got[i])};
            ++result.mismatches;
        }
    }
    return result;
}

}  // namespace scanlab
