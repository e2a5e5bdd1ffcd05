// scanlab harness: students, do not edit (your code goes in student/); maintainers edit it here.
//
// Deterministic inputs: element i depends only on (seed, distribution, i), through
// splitmix64, so every machine and compiler generates the same array and a failure
// reproduces from the seed alone. That also lets slices of a large input be generated
// on all cores at once: the same array, in a fraction of the time.
#pragma once
#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <iterator>
#include <stdexcept>
#include <string>
#include <system_error>
#include <thread>
#include <type_traits>
#include <vector>

#include "harness/generated/assignment.h"
#include "harness/generated/operators.cuh"

namespace scanlab {

// Value distributions, in the order of [distributions] in data/assignment.toml.
// Integer operators get small values (sums of 2^28 of them still fit in int32)
// except where the distribution or the operator's sampling says otherwise.
enum class Distribution { Random, Ones, Ascending, Descending, Negative };
static_assert(sizeof(kDistributionNames) / sizeof(kDistributionNames[0]) == 5,
              "data/assignment.toml [distributions] and enum Distribution disagree");

inline Distribution parseDistribution(const std::string& name) {
    for (int d = 0; d < int(std::size(kDistributionNames)); ++d)
        if (name == kDistributionNames[d]) return Distribution(d);
    throw std::invalid_argument("unknown distribution '" + name + "' (expected " +
                                kDistributionList + ")");
}

SCANLAB_HD uint64_t splitmix64(uint64_t x) {
    x += 0x9e3779b97f4a7c15ull;
    x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ull;
    x = (x ^ (x >> 27)) * 0x94d049bb133111ebull;
    return x ^ (x >> 31);
}

// A small signed integer for element i: in [-range, range] (Random), in [-range, -1]
// (Negative), 1 (Ones), or a sawtooth i mod 1000 rising (Ascending) / falling
// (Descending).
SCANLAB_HD int32_t sampleInt(Distribution d, uint64_t seed, size_t i, int32_t range) {
    switch (d) {
        case Distribution::Ones: return 1;
        case Distribution::Ascending: return int32_t(i % 1000) - 500;
        case Distribution::Descending: return 500 - int32_t(i % 1000);
        case Distribution::Negative: {
            const uint64_t r = splitmix64(seed ^ splitmix64(i));
            return -1 - int32_t(r % uint64_t(range > 0 ? range : 1000));
        }
        case Distribution::Random:
        default: {
            const uint64_t r = splitmix64(seed ^ splitmix64(i));
            return int32_t(r % uint64_t(2 * range + 1)) - range;
        }
    }
}

// An element from an int: the operator's own mapping (Op::fromValue) where its element
// is not a number.
template <class Op, class = void>
struct FromInt {
    SCANLAB_HD static typename Op::Element make(int32_t v) { return typename Op::Element(v); }
};
template <class Op>
struct FromInt<Op, std::void_t<decltype(Op::fromValue(int32_t(0)))>> {
    SCANLAB_HD static typename Op::Element make(int32_t v) { return Op::fromValue(v); }
};

// Whether element i starts a segment, for operators with segment heads (Segmented<Op>
// of harness/ops.cuh): the layouts listed under [distributions] in data/assignment.toml.
SCANLAB_HD bool segmentHead(Distribution d, uint64_t seed, size_t i) {
    switch (d) {
        case Distribution::Ones: return i == 0;
        case Distribution::Ascending: return true;
        case Distribution::Descending: return i % 3001 == 3000;
        case Distribution::Negative: return false;
        case Distribution::Random:
        default: return splitmix64(seed ^ 0x7365676dull ^ splitmix64(i)) % 97 == 0;
    }
}

template <class Op, class = void>
struct HasSegments : std::false_type {};
template <class Op>
struct HasSegments<Op, std::void_t<decltype(Op::fromValue(int32_t(0), false))>> : std::true_type {};

// Element i of an input, drawn as the operator's `sample` in data/assignment.toml says.
template <class Op>
SCANLAB_HD typename Op::Element sampleElement(Distribution d, uint64_t seed, size_t i) {
    using Traits = OperatorTraits<Op>;
    using T = typename Op::Element;
    const uint64_t r = splitmix64(seed ^ splitmix64(i));
    if constexpr (HasSegments<Op>::value) {
        static_assert(Traits::kSample == Sample::SmallInt, "segmented operators sample small-int");
        const int32_t v = sampleInt(d, seed, i, Traits::kRange);
        const bool drawn = d == Distribution::Random || d == Distribution::Negative;
        return Op::fromValue(drawn ? v : v % (Traits::kRange + 1), segmentHead(d, seed, i));
    } else if constexpr (Traits::kSample == Sample::UnitFloat) {
        if (d == Distribution::Negative) return T(-0.5f - float(r >> 41) / float(1 << 23));  // [-1.5, -0.5)
        if (d != Distribution::Random) return T(float(sampleInt(d, seed, i, 0)) / 8.0f);
        return T(float(r >> 40) / float(1 << 23) - 1.0f);  // uniform in [-1, 1)
    } else if constexpr (Traits::kSample == Sample::FullInt) {
        if (d == Distribution::Negative) return FromInt<Op>::make(int32_t(uint32_t(r) | 0x80000000u));
        if (d != Distribution::Random) return FromInt<Op>::make(sampleInt(d, seed, i, 0));
        return FromInt<Op>::make(int32_t(uint32_t(r)));  // every int32 value
    } else {
        const int32_t v = sampleInt(d, seed, i, Traits::kRange);
        const bool drawn = d == Distribution::Random || d == Distribution::Negative;
        return FromInt<Op>::make(drawn ? v : v % (Traits::kRange + 1));
    }
}

// body(begin, end) over [0, n) in slices, one thread each (up to the cores, at least
// `grain` elements a slice). A thread that cannot be started (a process limit) leaves
// its slice to the caller: the result is the same, only slower.
template <class Body>
void forEachSlice(size_t n, Body body, size_t grain = size_t(1) << 18) {
    const size_t cores = std::max(1u, std::thread::hardware_concurrency());
    const size_t slices = std::min({cores, size_t(16), (n + grain - 1) / std::max<size_t>(grain, 1)});
    if (slices <= 1) {
        body(size_t(0), n);
        return;
    }
    std::vector<std::thread> threads;
    std::vector<std::pair<size_t, size_t>> leftover;
    for (size_t s = 1; s < slices; ++s) {
        const size_t begin = n * s / slices, end = n * (s + 1) / slices;
        try {
            threads.emplace_back(body, begin, end);
        } catch (const std::system_error&) {
            leftover.emplace_back(begin, end);
        }
    }
    body(size_t(0), n / slices);
    for (const auto& [begin, end] : leftover) body(begin, end);
    for (auto& t : threads) t.join();
}

template <class Op>
std::vector<typename Op::Element> generateInput(size_t n, uint64_t seed, Distribution d) {
    std::vector<typename Op::Element> data(n);
    forEachSlice(n, [&data, seed, d](size_t begin, size_t end) {
        for (size_t i = begin; i < end; ++i) data[i] = sampleElement<Op>(d, seed, i);
    });
    return data;
}

// ---- inputs of timed repetitions ----------------------------------------------------
// Timed repetition r (warm-ups counted, from 0, and counted on across the rounds of a
// served run) sees an input of its own, drawn whole from timedInputSeed(seed, r) on the
// device by the harness (harness/host/timed_check.cuh), outside the timed region: no element
// of it follows from an earlier repetition's, so nothing a kernel remembers or
// recognizes is right on it. `verify --rep R` rebuilds the input repetition R saw (it
// is generateInput with that seed).
SCANLAB_HD uint64_t timedInputSeed(uint64_t seed, uint64_t rep) {
    // 63 bits: a seed `--seed` takes back (`run --seed S` draws this input).
    return splitmix64(seed ^ 0x74696d6564ull ^ splitmix64(rep + 1)) >> 1;  // "timed"
}

}  // namespace scanlab
