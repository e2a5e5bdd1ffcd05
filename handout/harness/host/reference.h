// scanlab harness: students, do not edit (your code goes in student/); maintainers edit it here.
//
// Sequential CPU versions of the three tasks: the ground truth every result is
// checked against, and the "CPU sequential" baseline of the benchmarks.
#pragma once
#include <cstddef>
#include <vector>

#include "harness/platform.cuh"

namespace scanlab {

// Inclusive scan of each aligned segment of `segment` elements (segment = 32: task 1).
template <class Op>
std::vector<typename Op::Element> referenceSegmentedScan(
    const std::vector<typename Op::Element>& in, size_t segment) {
    std::vector<typename Op::Element> out(in.size());
    typename Op::Element acc = Op::identity();
    for (size_t i = 0; i < in.size(); ++i) {
        acc = (i % segment == 0) ? in[i] : Op::apply(acc, in[i]);
        out[i] = acc;
    }
    return out;
}

template <class Op>
typename Op::Element referenceReduce(const std::vector<typename Op::Element>& in) {
    typename Op::Element acc = Op::identity();
    for (const auto& x : in) acc = Op::apply(acc, x);
    return acc;
}

template <class Op>
std::vector<typename Op::Element> referenceScan(const std::vector<typename Op::Element>& in,
                                                bool inclusive) {
    std::vector<typename Op::Element> out(in.size());
    typename Op::Element acc = Op::identity();
    for (size_t i = 0; i < in.size(); ++i) {
        if (inclusive) {
            acc = Op::apply(acc, in[i]);
            out[i] = acc;
        } else {
            out[i] = acc;
            acc = Op::apply(acc, in[i]);
        }
    }
    return out;
}

}  // namespace scanlab
