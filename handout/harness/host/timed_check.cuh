// scanlab harness: students, do not edit (your code goes in student/); maintainers edit it here.
//
// The inputs and the check of timed repetitions, on the device (harness only: the
// student unit never includes it). Every repetition of `run --time`, warm-ups
// included, gets an input of its own, drawn whole on the device from
// (seed, repetition) (timedInputSeed, harness/host/generate.h), and after it, outside the
// timed region, this trusted code checks that the input is unchanged and that the
// output is that input's: a kernel honest only now and then, or one that recognizes
// an input and replays an answer, fails the timing, naming the repetition.
//
// The expected output is recomputed from the generator, not read from anything a
// kernel could have written. What is expected is the task type's kTimedCheck
// (harness/tasks/task.cuh): for a fold or a scan from the left, each thread folds a segment of kSegment consecutive
// elements (exactly, for every operator: integers, MSSP, segmented sums); the segment
// totals are scanned in order, on the device a group of kGroup segments a thread and on
// the host the groups' totals (a few thousand: no megabytes copied each way for every
// repetition); and each thread then walks its segment again from its carry-in, comparing
// every output element. Integer operators and MSSP must
// match exactly; float elements are accumulated in double and pass within check.h's
// tolerance, tol(n) * S_i (S_i the sum of |x_j| over the inputs of output i). Any
// other task is checked on the host: its output against its CPU reference over the
// input drawn again on the host (generateInput draws the same elements), and its input
// against that too.
#pragma once
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <optional>
#include <string>
#include <type_traits>
#include <vector>

#include "harness/check.h"
#include "harness/generated/task_list.cuh"
#include "harness/host/generate.h"
#include "harness/host/tasks.h"
#include "harness/ops.cuh"
#include "harness/runtime.cuh"
#include "harness/tasks/launch.cuh"

namespace scanlab::timed {

// The check accumulates in Wide<Op> (harness/check.h), as the CPU reference does.
using scanlab::Wide;

constexpr size_t kSegment = 256;  // elements a thread folds; a multiple of the warp size
constexpr size_t kGroup = 64;     // segment totals a thread of the carries' scan folds

template <class T>
SCANLAB_HD bool sameBits(const T& a, const T& b) {
    static_assert(sizeof(T) % sizeof(unsigned) == 0, "element size must be a multiple of 4");
    unsigned x[sizeof(T) / sizeof(unsigned)], y[sizeof(T) / sizeof(unsigned)];
    memcpy(x, &a, sizeof(T));
    memcpy(y, &b, sizeof(T));
    for (size_t w = 0; w < sizeof(T) / sizeof(unsigned); ++w)
        if (x[w] != y[w]) return false;
    return true;
}

template <class T>
SCANLAB_HD double absolute(const T& x) {
    if constexpr (std::is_floating_point_v<T>) return x < 0 ? -double(x) : double(x);
    else return 0.0;
}

// Where the check found something: the first index and how many (one atomic per
// thread that found any).
struct Findings {
    unsigned long long firstWrong, wrong, firstChanged, changed;
};

__device__ inline void report(unsigned long long* first, unsigned long long* count,
                                  unsigned long long index, unsigned long long found) {
    if (found == 0) return;
    atomicMin(first, index);
    atomicAdd(count, found);
}

// This thread's run of `per` consecutive items among `count` (segments of elements,
// groups of segments): its index and [begin, end); false for a thread past the last item.
struct ThreadRun {
    size_t index, begin, end;
};

__device__ inline bool threadRun(size_t count, size_t per, ThreadRun& r) {
    r.index = blockIdx.x * size_t(blockDim.x) + threadIdx.x;
    r.begin = r.index * per;
    if (r.begin >= count) return false;
    r.end = r.begin + per < count ? r.begin + per : count;
    return true;
}

// in[i] = element i of the input drawn from `seed` (generateInput's element i).
template <class Op>
__global__ void timedInputKernel(typename Op::Element* in, size_t n, uint64_t seed, Distribution d) {
    for (size_t i = blockIdx.x * size_t(blockDim.x) + threadIdx.x; i < n;
         i += size_t(gridDim.x) * blockDim.x)
        in[i] = sampleElement<Op>(d, seed, i);
}

// The input drawn from `seed` into device memory: the same n elements as generateInput,
// without a host copy to make and upload (asynchronous, on the default stream).
template <class Op>
void generateOnDevice(typename Op::Element* in, size_t n, uint64_t seed, Distribution d) {
    const size_t blocks = std::min<size_t>((n + 1023) / 1024, 4096);
    launchKernel("timedInputKernel", timedInputKernel<Op>, dim3(unsigned(blocks ? blocks : 1)), dim3(256),
                 0, in, n, seed, d);
}

// Segment s: the fold of its elements (and of their magnitudes), and, when `in` is given,
// whether the kernels left its input as the harness wrote it.
template <class Op>
__global__ void foldSegmentsKernel(const typename Op::Element* in, size_t n, uint64_t seed,
                                   Distribution d, typename Wide<Op>::type::Element* totals,
                                   double* magnitudes, Findings* found) {
    using W = typename Wide<Op>::type;
    ThreadRun run;
    if (!threadRun(n, kSegment, run)) return;
    const size_t s = run.index, begin = run.begin, end = run.end;
    typename W::Element acc = W::identity();
    double magnitude = 0;
    unsigned long long changed = 0, first = ~0ull;
    for (size_t i = begin; i < end; ++i) {
        const auto x = sampleElement<Op>(d, seed, i);
        if (in && !sameBits(in[i], x)) {
            if (!changed) first = i;
            ++changed;
        }
        acc = W::apply(acc, typename W::Element(x));
        magnitude += absolute(x);
    }
    totals[s] = acc;
    magnitudes[s] = magnitude;
    report(&found->firstChanged, &found->changed, first, changed);
}

// Group g of kGroup consecutive segments, walked in order from its carry-in (groupCarries[g],
// or the identity where none are given yet): each segment's carry-in into `carries`, where
// given, and the group's total into `groupTotals`, where given; the magnitudes alike. Run
// twice: the groups' totals (which the host scans), then the segments' carry-ins.
template <class Op>
__global__ void walkGroupsKernel(const typename Wide<Op>::type::Element* totals, const double* magnitudes,
                                 size_t segments, const typename Wide<Op>::type::Element* groupCarries,
                                 const double* groupMagnitudeCarries, typename Wide<Op>::type::Element* carries,
                                 double* magnitudeCarries, typename Wide<Op>::type::Element* groupTotals,
                                 double* groupMagnitudes) {
    using W = typename Wide<Op>::type;
    ThreadRun run;
    if (!threadRun(segments, kGroup, run)) return;
    const size_t g = run.index;
    typename W::Element acc = groupCarries ? groupCarries[g] : W::identity();
    double magnitude = groupCarries ? groupMagnitudeCarries[g] : 0.0;
    for (size_t s = run.begin; s < run.end; ++s) {
        if (carries) {
            carries[s] = acc;
            magnitudeCarries[s] = magnitude;
        }
        acc = W::apply(acc, totals[s]);
        magnitude += magnitudes[s];
    }
    if (groupTotals) {
        groupTotals[g] = acc;
        groupMagnitudes[g] = magnitude;
    }
}

// Segment s again, from its carry-in: every output element against the expected one.
// `restart` (the warp scan: 32) restarts the scan every that many elements; `in`, when
// given, is checked as foldSegmentsKernel does.
template <class Op>
__global__ void checkSegmentsKernel(const typename Op::Element* out, size_t n, uint64_t seed,
                                    Distribution d, bool inclusive, unsigned restart,
                                    const typename Wide<Op>::type::Element* carries,
                                    const double* magnitudeCarries, double tol,
                                    const typename Op::Element* in, Findings* found) {
    using T = typename Op::Element;
    using W = typename Wide<Op>::type;
    ThreadRun run;
    if (!threadRun(n, kSegment, run)) return;
    const size_t s = run.index, begin = run.begin, end = run.end;
    typename W::Element acc = carries ? carries[s] : W::identity();
    double magnitude = carries ? magnitudeCarries[s] : 0.0;
    unsigned long long wrong = 0, firstWrong = ~0ull, changed = 0, firstChanged = ~0ull;
    for (size_t i = begin; i < end; ++i) {
        if (restart && i % restart == 0) {
            acc = W::identity();
            magnitude = 0;
        }
        const T x = sampleElement<Op>(d, seed, i);
        if (in && !sameBits(in[i], x)) {
            if (!changed) firstChanged = i;
            ++changed;
        }
        typename W::Element expected = acc;
        double scale = magnitude;
        acc = W::apply(acc, typename W::Element(x));
        magnitude += absolute(x);
        if (inclusive) {
            expected = acc;
            scale = magnitude;
        }
        const T got = out[i];
        bool ok;
        if constexpr (std::is_floating_point_v<T>) {
            const double diff = double(got) - double(expected);
            ok = (diff < 0 ? -diff : diff) <= tol * scale;
        } else {
            ok = sameBits(got, T(expected));
        }
        if (!ok) {
            if (!wrong) firstWrong = i;
            ++wrong;
        }
    }
    report(&found->firstWrong, &found->wrong, firstWrong, wrong);
    report(&found->firstChanged, &found->changed, firstChanged, changed);
}

// The trusted side of timed repetitions for one run: generate() before a repetition,
// check() after it. Owns its scratch (segment totals, carries, findings).
template <class Op>
class RepetitionCheck {
  public:
    using T = typename Op::Element;
    using W = typename Wide<Op>::type;
    using WT = typename W::Element;

    RepetitionCheck(Task task, size_t n, Distribution d)
        : task_(task), shape_(timedCheckOf(task)), n_(n), dist_(d), segments_((n + kSegment - 1) / kSegment),
          groups_((segments_ + kGroup - 1) / kGroup), totals_(segments_), magnitudes_(segments_),
          carries_(segments_), magnitudeCarries_(segments_), groupTotals_(groups_), groupMagnitudes_(groups_),
          groupCarries_(groups_), groupMagnitudeCarries_(groups_), found_(1) {
        groupMagnitudeCarries_.fillBytes(0);  // stays 0 where no tolerance applies (not floats)
    }

    static unsigned blocksFor(size_t threads) { return unsigned((threads + 127) / 128); }

    // walkGroupsKernel over the segment totals: from the group carries once the host has
    // them (`carries` given), else from the identity.
    void walkGroups(WT* carries, double* magnitudeCarries, WT* groupTotals, double* groupMagnitudes) {
        const bool fromCarries = carries != nullptr;
        launchKernel("walkGroupsKernel", walkGroupsKernel<Op>, dim3(blocksFor(groups_)), dim3(128), 0,
                     static_cast<const WT*>(totals_.data()), static_cast<const double*>(magnitudes_.data()),
                     segments_, fromCarries ? static_cast<const WT*>(groupCarries_.data()) : nullptr,
                     fromCarries ? static_cast<const double*>(groupMagnitudeCarries_.data()) : nullptr,
                     carries, magnitudeCarries, groupTotals, groupMagnitudes);
    }

    void generate(T* in, uint64_t seed) const { generateOnDevice<Op>(in, n_, seed, dist_); }

    // Whether this task's outputs are checked on the device (a fold or a scan from the
    // left); else check() compares on the host and examine() is not available.
    bool onDevice() const { return shape_.kind != TimedCheck::Kind::Host; }

    // What the device check found: the output's mismatches as checkOutput counts them
    // (exact for integer operators and MSSP), and how many input elements differ from
    // the input drawn from `seed` (none looked at when `in` is null).
    struct Found {
        CheckResult output;
        unsigned long long changed = 0, firstChanged = 0;
    };

    // The output `out` (and the input `in`, if given) of the input drawn from `seed`,
    // checked on the device; only when onDevice(). The device is synchronized first.
    Found examine(const T* in, const T* out, uint64_t seed) {
        deviceSynchronize("the run before its check");
        const Findings none{~0ull, 0, ~0ull, 0};
        found_.upload({none});
        const bool inclusive = shape_.inclusive;
        bool carriesOnDevice = false;  // the segments' carry-ins, for a mismatch's expected value
        const double tol = floatTolerance(n_);
        Found result;
        if (restarts()) {
            // Segments of `restart` elements, each scanned from the identity: no carries.
            launchKernel("checkSegmentsKernel", checkSegmentsKernel<Op>, dim3(blocksFor(segments_)),
                         dim3(128), 0, out, n_, seed, dist_, inclusive, shape_.restart,
                         static_cast<const WT*>(nullptr), static_cast<const double*>(nullptr), tol,
                         in, found_.data());
        } else {
            launchKernel("foldSegmentsKernel", foldSegmentsKernel<Op>, dim3(blocksFor(segments_)),
                         dim3(128), 0, in, n_, seed, dist_, totals_.data(), magnitudes_.data(),
                         found_.data());
            walkGroups(nullptr, nullptr, groupTotals_.data(), groupMagnitudes_.data());
            const std::vector<WT> totals = groupTotals_.download();
            constexpr bool kFloat = std::is_floating_point_v<T>;  // only floats need the magnitudes
            const std::vector<double> magnitudes = kFloat ? groupMagnitudes_.download()
                                                          : std::vector<double>(groups_, 0.0);
            std::vector<WT> groupCarries(groups_);
            std::vector<double> groupMagnitudeCarries(groups_);
            WT acc = W::identity();
            double magnitude = 0;
            for (size_t g = 0; g < groups_; ++g) {
                groupCarries[g] = acc;
                groupMagnitudeCarries[g] = magnitude;
                acc = W::apply(acc, totals[g]);
                magnitude += magnitudes[g];
            }
            if (shape_.kind == TimedCheck::Kind::Scan) {
                groupCarries_.upload(groupCarries);
                if (kFloat) groupMagnitudeCarries_.upload(groupMagnitudeCarries);
                walkGroups(carries_.data(), magnitudeCarries_.data(), nullptr, nullptr);
                launchKernel("checkSegmentsKernel", checkSegmentsKernel<Op>,
                             dim3(blocksFor(segments_)), dim3(128), 0, out, n_, seed, dist_,
                             inclusive, 0u, static_cast<const WT*>(carries_.data()),
                             static_cast<const double*>(magnitudeCarries_.data()), tol,
                             static_cast<const T*>(nullptr), found_.data());
                carriesOnDevice = true;
            } else {
                const T got = elementAt(out, 0);
                if (!agrees(got, acc, magnitude, tol))
                    result.output = CheckResult{1, Mismatch{0, Op::format(narrow(acc)), Op::format(got)}};
            }
        }
        deviceSynchronize("the check on the device");
        const Findings f = found_.download()[0];
        result.changed = f.changed;
        result.firstChanged = f.firstChanged;
        if (f.wrong) {
            const size_t i = size_t(f.firstWrong);
            const std::vector<WT> carries = carriesOnDevice ? carries_.download() : std::vector<WT>();
            result.output = CheckResult{size_t(f.wrong),
                                        Mismatch{i, Op::format(narrow(expectedAt(i, seed, inclusive, carries))),
                                                 Op::format(elementAt(out, i))}};
        }
        return result;
    }

    // "" when repetition `seed`'s output is right and its input unchanged; else what
    // was wrong. The device is synchronized first.
    std::string check(const T* in, const T* out, uint64_t seed) {
        if (!onDevice()) {
            deviceSynchronize("the timed repetition");
            return checkOnHost(in, out, seed);
        }
        const Found f = examine(in, out, seed);
        const bool fold = shape_.kind == TimedCheck::Kind::Fold;
        if (fold && !f.output.passed())  // the one result first: it says the most
            return "the result is wrong: expected " + f.output.first->expected + ", got " + f.output.first->got;
        if (f.changed)
            return "the kernels changed their input, which is read-only: " +
                   std::to_string(f.changed) + " element(s) differ from what the harness wrote, "
                   "first in[" + std::to_string(f.firstChanged) + "] (expected " +
                   Op::format(sampleElement<Op>(dist_, seed, size_t(f.firstChanged))) + ")";
        if (!f.output.passed())
            return std::to_string(f.output.mismatches) + " of " + std::to_string(n_) +
                   " element(s) differ; first at index " + std::to_string(f.output.first->index) +
                   ": expected " + f.output.first->expected + ", got " + f.output.first->got;
        return "";
    }

  private:
    static TimedCheck timedCheckOf(Task task) {
        TimedCheck shape = TimedCheck::onHost();
        withTask(task, [&](auto type) { shape = decltype(type)::kTimedCheck; });
        // The device walk restarts only on its own segments' boundaries; other restarts
        // are checked exactly on the host.
        if (shape.kind == TimedCheck::Kind::Scan && shape.restart && kSegment % shape.restart)
            return TimedCheck::onHost();
        return shape;
    }

    bool restarts() const { return shape_.kind == TimedCheck::Kind::Scan && shape_.restart != 0; }

    // TimedCheck::onHost(): the whole output against the task's CPU reference.
    std::string checkOnHost(const T* in, const T* out, uint64_t seed) const {
        const std::vector<T> input = generateInput<Op>(n_, seed, dist_);
        std::vector<T> seen(n_);
        checkCuda(cudaMemcpy(seen.data(), in, n_ * sizeof(T), cudaMemcpyDeviceToHost),
                  "cudaMemcpy device to host");
        size_t changed = 0, firstChanged = 0;
        for (size_t i = 0; i < n_; ++i)
            if (!sameBits(seen[i], input[i]) && changed++ == 0) firstChanged = i;
        if (changed)
            return "the kernels changed their input, which is read-only: " + std::to_string(changed) +
                   " element(s) differ from what the harness wrote, first in[" +
                   std::to_string(firstChanged) + "] (expected " + Op::format(input[firstChanged]) + ")";
        std::vector<T> got(outputCount(taskInfo(task_), n_));
        checkCuda(cudaMemcpy(got.data(), out, got.size() * sizeof(T), cudaMemcpyDeviceToHost),
                  "cudaMemcpy device to host");
        const CheckResult r = checkOutput<Op>(task_, input, got);
        if (r.passed()) return "";
        return std::to_string(r.mismatches) + " of " + std::to_string(got.size()) +
               " element(s) differ; first at index " + std::to_string(r.first->index) +
               ": expected " + r.first->expected + ", got " + r.first->got;
    }

    static T narrow(const WT& x) { return T(x); }

    static T elementAt(const T* out, size_t i) {
        T x;
        checkCuda(cudaMemcpy(&x, out + i, sizeof(T), cudaMemcpyDeviceToHost), "cudaMemcpy device to host");
        return x;
    }

    static bool agrees(const T& got, const WT& expected, double scale, double tol) {
        if constexpr (std::is_floating_point_v<T>)
            return std::fabs(double(got) - double(expected)) <= tol * scale;
        else
            return sameBits(got, T(expected));
    }

    // The expected output element i (on the host, from its segment's carry-in).
    WT expectedAt(size_t i, uint64_t seed, bool inclusive, const std::vector<WT>& carries) const {
        const size_t begin = restarts() ? i / shape_.restart * shape_.restart : i / kSegment * kSegment;
        WT acc = restarts() ? W::identity() : carries[i / kSegment];
        for (size_t j = begin; j < i; ++j) acc = W::apply(acc, WT(sampleElement<Op>(dist_, seed, j)));
        return inclusive ? W::apply(acc, WT(sampleElement<Op>(dist_, seed, i))) : acc;
    }

    Task task_;
    TimedCheck shape_;
    size_t n_;
    Distribution dist_;
    size_t segments_;
    size_t groups_;
    DeviceBuffer<WT> totals_;
    DeviceBuffer<double> magnitudes_;
    DeviceBuffer<WT> carries_;
    DeviceBuffer<double> magnitudeCarries_;
    DeviceBuffer<WT> groupTotals_;
    DeviceBuffer<double> groupMagnitudes_;
    DeviceBuffer<WT> groupCarries_;
    DeviceBuffer<double> groupMagnitudeCarries_;
    DeviceBuffer<Findings> found_;
};

}  // namespace scanlab::timed
