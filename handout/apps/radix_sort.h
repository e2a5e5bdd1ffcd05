// scanlab harness: students, do not edit. Radix sort: your split (the exercise, student/split.cuh)
// on top of your exclusive scan (task 3).
//
// A least-significant-digit radix sort of 32-bit keys: 32 split passes, one per bit,
// from bit 0 up. Each pass is a stable partition by its bit (the keys whose bit is 0
// first), made of a map (your splitFlagsKernel), your exclusive scan and a scatter
// (your splitScatterKernel). The output is the keys after the first pass and after
// the last, so a wrong split is caught at its first pass, where it is easy to read.
#pragma once
#include <algorithm>

#include "apps/app.h"
#include "harness/host/generate.h"
#include "harness/host/timing.h"

namespace scanlab::apps {

constexpr int kKeyBits = 32;

inline std::vector<uint32_t> radixSortInput(const AppConfig& c) {
    // Every int32 value, as unsigned keys.
    const std::vector<int32_t> values = generateInput<Max<int32_t>>(c.n, c.seed, Distribution::Random);
    return std::vector<uint32_t>(values.begin(), values.end());
}

// What a pass on bit `bit` must give: the stable partition of the keys by that bit.
inline std::vector<uint32_t> splitByBit(const std::vector<uint32_t>& keys, int bit) {
    std::vector<uint32_t> out(keys);
    std::stable_partition(out.begin(), out.end(), [bit](uint32_t k) { return !((k >> bit) & 1u); });
    return out;
}

// The exercise's stub, or task 3's, found on the first pass (nothing else runs then).
inline bool stubFound(AppOutput& result, const char* kernels, const std::string& needs) {
    deviceSynchronize(kernels);
    if (!student::wasNotImplemented()) return false;
    result.needs = needs;
    return true;
}

inline AppOutput runRadixSort(const AppConfig& c) {
    const Exercise& split = exercise("split");
    DeviceBuffer<uint32_t> keys(c.n, "keys"), other(c.n, "out");
    DeviceBuffer<int32_t> isZero(c.n, "isZero"), zerosBefore(c.n, "zerosBefore");
    AppOutput result;
    std::vector<uint32_t> afterFirstPass;
    EventTimer timer;
    // Twice: the first sort is checked (its first pass is kept), the second is timed.
    for (int sort = 0; sort < 2; ++sort) {
        keys.upload(radixSortInput(c));
        if (sort == 1) timer.start();
        for (int bit = 0; bit < kKeyBits; ++bit) {
            DeviceBuffer<uint32_t>& from = bit % 2 ? other : keys;
            DeviceBuffer<uint32_t>& to = bit % 2 ? keys : other;
            const bool probe = sort == 0 && bit == 0;
            studentState().restore();  // (harness/host/student_state.h)
            student::launchSplitFlags(from.data(), c.n, bit, isZero.data(), c.block);
            if (probe && stubFound(result, "splitFlagsKernel",
                                   std::string("the exercise ") + split.name + " (student/" + split.file + ")"))
                return result;
            runStudentTask<Add<int32_t>>(Task::ScanExclusive, isZero, zerosBefore, c.block);
            if (probe && stubFound(result, "scan", "task " + std::to_string(taskInfo(split.uses).number) +
                                                       " (" + taskInfo(split.uses).name + ")"))
                return result;
            studentState().restore();
            student::launchSplitScatter(from.data(), isZero.data(), zerosBefore.data(), c.n, bit,
                                        to.data(), c.block);
            if (probe && stubFound(result, "splitScatterKernel",
                                   std::string("the exercise ") + split.name + " (student/" + split.file + ")"))
                return result;
            if (probe) afterFirstPass = to.download();
        }
        if (sort == 1) result.ms = timer.stop();
    }
    // An even number of passes ends where it started.
    std::vector<uint32_t> both = afterFirstPass, sorted = keys.download();
    both.insert(both.end(), sorted.begin(), sorted.end());
    result.bytes = asBytes(both);
    // Per pass: the flags map reads keys and writes flags (8 bytes an element), the scan
    // reads and writes (8), the scatter reads keys, flags and places and writes keys (16).
    result.bytesMoved = double(c.n) * 32 * kKeyBits;
    return result;
}

// The first index where `got` differs from `expected`, said for a person.
inline std::string firstWrongIndex(const std::vector<uint32_t>& got, const std::vector<uint32_t>& expected,
                                   const std::string& when) {
    for (size_t i = 0; i < expected.size(); ++i) {
        if (got[i] == expected[i]) continue;
        std::string message = when + ", first wrong index " + std::to_string(i) + " of " +
                              std::to_string(expected.size()) + ": key " + std::to_string(got[i]) +
                              ", expected " + std::to_string(expected[i]);
        std::vector<uint32_t> gotSorted(got), expectedSorted(expected);
        std::sort(gotSorted.begin(), gotSorted.end());
        std::sort(expectedSorted.begin(), expectedSorted.end());
        if (gotSorted != expectedSorted)
            message += "; the keys are no longer those of the input: some written twice and others never "
                       "(a place of the scatter is wrong, or the count of 0-keys)";
        return message;
    }
    return "";
}

inline AppVerdict checkRadixSort(const AppConfig& c, const std::vector<unsigned char>& bytes) {
    AppVerdict v;
    std::vector<uint32_t> got;
    if (!fromBytes(bytes, 2 * c.n, got)) {
        v.message = "the output is not the keys after the first pass and after the last";
        return v;
    }
    const std::vector<uint32_t> keys = radixSortInput(c);
    std::vector<uint32_t> sorted(keys);
    std::sort(sorted.begin(), sorted.end());
    const std::vector<uint32_t> firstPass(got.begin(), got.begin() + std::ptrdiff_t(c.n)),
        lastPass(got.begin() + std::ptrdiff_t(c.n), got.end());
    v.figures = {{"keys", std::to_string(c.n)}, {"passes (one per bit)", std::to_string(kKeyBits)}};
    v.message = firstWrongIndex(firstPass, splitByBit(keys, 0), "after the split on bit 0");
    if (v.message.empty())
        v.message = firstWrongIndex(lastPass, sorted, "after all " + std::to_string(kKeyBits) +
                                                          " passes (the first was right)");
    v.passed = v.message.empty();
    return v;
}

}  // namespace scanlab::apps
