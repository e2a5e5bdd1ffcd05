// scanlab harness: DO NOT EDIT. Your code goes in student/.
//
// Deterministic inputs: element i depends only on (seed, distribution, i), through
// splitmix64, so every machine and compiler generates the same array and a failure
// reproduces from the seed alone.
#pragma once
#include <cstddef>
#include <cstdint>
#include <stdexcept>
#include <string>
#include <vector>

#include "harness/ops.cuh"

namespace scanlab {

// Value distributions. Integer operators get small values (sums of 2^28 of them
// still fit in int32) except where the distribution says otherwise.
enum class Distribution { Random, Ones, Ascending, Descending };
inline const char* const kDistributionNames[] = {"random", "ones", "ascending", "descending"};

inline Distribution parseDistribution(const std::string& name) {
    for (int d = 0; d < 4; ++d)
        if (name == kDistributionNames[d]) return Distribution(d);
    throw std::invalid_argument("unknown distribution '" + name +
                                "' (expected random, ones, ascending or descending)");
}

inline uint64_t splitmix64(uint64_t x) {
    x += 0x9e3779b97f4a7c15ull;
    x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ull;
    x = (x ^ (x >> 27)) * 0x94d049bb133111ebull;
    return x ^ (x >> 31);
}

// A small signed integer for element i: in [-range, range] (Random), 1 (Ones), or a
// sawtooth i mod 1000 rising (Ascending) / falling (Descending).
inline int32_t sampleInt(Distribution d, uint64_t seed, size_t i, int32_t range) {
    switch (d) {
        case Distribution::Ones: return 1;
        case Distribution::Ascending: return int32_t(i % 1000) - 500;
        case Distribution::Descending: return 500 - int32_t(i % 1000);
        case Distribution::Random:
        default: {
            const uint64_t r = splitmix64(seed ^ splitmix64(i));
            return int32_t(r % uint64_t(2 * range + 1)) - range;
        }
    }
}

template <class Op>
typename Op::Element sampleElement(Distribution d, uint64_t seed, size_t i);

template <>
inline int32_t sampleElement<Add<int32_t>>(Distribution d, uint64_t seed, size_t i) {
    return sampleInt(d, seed, i, 1000);
}
template <>
inline float sampleElement<Add<float>>(Distribution d, uint64_t seed, size_t i) {
    if (d != Distribution::Random) return float(sampleInt(d, seed, i, 0)) / 8.0f;
    const uint64_t r = splitmix64(seed ^ splitmix64(i));
    return float(r >> 40) / float(1 << 23) - 1.0f;  // uniform in [-1, 1)
}
template <>
inline int32_t sampleElement<Max<int32_t>>(Distribution d, uint64_t seed, size_t i) {
    if (d != Distribution::Random) return sampleInt(d, seed, i, 0);
    return int32_t(uint32_t(splitmix64(seed ^ splitmix64(i))));  // the full int32 range
}
template <>
inline MssTuple sampleElement<Mssp>(Distribution d, uint64_t seed, size_t i) {
    const int32_t v = sampleInt(d, seed, i, 4);
    return Mssp::fromValue(d == Distribution::Random ? v : v % 5);
}

template <class Op>
std::vector<typename Op::Element> generateInput(size_t n, uint64_t seed, Distribution d) {
    std::vector<typename Op::Element> data(n);
    for (size_t i = 0; i < n; ++i) data[i] = sampleElement<Op>(d, seed, i);
    return data;
}

}  // namespace scanlab
