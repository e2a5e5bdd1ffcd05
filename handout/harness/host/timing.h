// scanlab harness: students, do not edit (your code goes in student/); maintainers edit it here.
//
// Timing: CUDA events around GPU work, a steady clock around CPU work, the median
// of the repetitions. Harness-only: the student unit never includes it, so nothing
// in student code can change how a time is taken.
#pragma once
#include <algorithm>
#include <chrono>
#include <optional>
#include <string>
#include <vector>

#include "harness/platform.cuh"
#include "harness/runtime.cuh"

namespace scanlab {

// Times GPU work between start() and stop() with CUDA events.
class EventTimer {
public:
    EventTimer() {
        checkCuda(cudaEventCreate(&start_), "cudaEventCreate");
        checkCuda(cudaEventCreate(&stop_), "cudaEventCreate");
    }
    EventTimer(const EventTimer&) = delete;
    EventTimer& operator=(const EventTimer&) = delete;
    ~EventTimer() {
        (void)cudaEventDestroy(start_);
        (void)cudaEventDestroy(stop_);
    }
    void start() { checkCuda(cudaEventRecord(start_, 0), "cudaEventRecord"); }
    // Returns milliseconds since start().
    float stop() {
        checkCuda(cudaEventRecord(stop_, 0), "cudaEventRecord");
        checkCuda(cudaEventSynchronize(stop_), "cudaEventSynchronize");
        float ms = 0.0f;
        checkCuda(cudaEventElapsedTime(&ms, start_, stop_), "cudaEventElapsedTime");
        return ms;
    }

private:
    cudaEvent_t start_{};
    cudaEvent_t stop_{};
};

// A timed round's repetitions (run --time), numbered on across the rounds of one process,
// warm-ups included: `verify --rep R` rebuilds the input of repetition R. The grader reads
// them from the JSON report ("repetitions") rather than counting them again.
struct Repetitions {
    unsigned long long first = 0, last = 0;  // the round's first and last repetition
    int warmup = 0;                          // of them, untimed (the first `warmup`)
    int timed = 0;                           // and timed
};

struct Timing {
    std::string name;
    double medianMs = 0, minMs = 0, maxMs = 0;
    int reps = 0;
    int checked = 0;       // repetitions checked on the device (run --time: all, warm-ups too)
    double checkMs = 0;    // host time spent drawing their inputs and checking them (untimed)
    std::optional<Repetitions> repetitions;  // run --time's; none for the baselines
};

inline double median(std::vector<double> v) {
    std::sort(v.begin(), v.end());
    const size_t m = v.size() / 2;
    return v.size() % 2 ? v[m] : 0.5 * (v[m - 1] + v[m]);
}

// Times `work` (which launches GPU work) with CUDA events; `reset` runs untimed
// before each repetition.
template <class Work, class Reset>
Timing timeGpu(const std::string& name, int warmup, int reps, Work&& work, Reset&& reset) {
    EventTimer timer;
    for (int i = 0; i < warmup; ++i) {
        reset();
        work();
    }
    deviceSynchronize(name.c_str());
    std::vector<double> ms;
    for (int i = 0; i < reps; ++i) {
        reset();
        timer.start();
        work();
        ms.push_back(timer.stop());
    }
    deviceSynchronize(name.c_str());
    return Timing{name, median(ms), *std::min_element(ms.begin(), ms.end()),
                  *std::max_element(ms.begin(), ms.end()), reps};
}

// A synchronize of an idle device returns within microseconds; one that waits longer
// than this after a timed launch's stop event found work still running.
constexpr double kIdleWaitMs = 0.05;

// One timed launch of `work`, in milliseconds: the device synchronized before it (so
// nothing earlier runs into it) and after its stop event. The events measure the
// launch on the default stream; work that outlives them (on a stream of its own, or
// anything else still running when the stop event fires) makes that second
// synchronize wait, and the launch is then timed by the host clock, from before the
// launch to the device idle: work done elsewhere is timed all the same.
template <class Work>
double timeLaunch(EventTimer& timer, const char* name, Work&& work) {
    using Clock = std::chrono::steady_clock;
    deviceSynchronize(name);
    const auto before = Clock::now();
    timer.start();
    work();
    const double eventMs = timer.stop();
    const auto stopped = Clock::now();
    deviceSynchronize(name);
    const auto idle = Clock::now();
    const double waitedMs = std::chrono::duration<double, std::milli>(idle - stopped).count();
    if (waitedMs <= kIdleWaitMs) return eventMs;
    return std::max(eventMs, std::chrono::duration<double, std::milli>(idle - before).count());
}

template <class Work>
Timing timeCpu(const std::string& name, int reps, Work&& work) {
    std::vector<double> ms;
    for (int i = 0; i < reps; ++i) {
        const auto t0 = std::chrono::steady_clock::now();
        work();
        const auto t1 = std::chrono::steady_clock::now();
        ms.push_back(std::chrono::duration<double, std::milli>(t1 - t0).count());
    }
    return Timing{name, median(ms), *std::min_element(ms.begin(), ms.end()),
                  *std::max_element(ms.begin(), ms.end()), reps};
}

// Copy bandwidth: the ceiling every memory-bound kernel here is measured against
// (device to device, 256 MiB, bytes read + written).
inline double measureCopyGbps() {
    const size_t n = size_t(1) << 26;
    DeviceBuffer<int32_t> a(n), b(n);
    a.fillBytes(1);
    const Timing t = timeGpu("copy", 3, 20, [&] { b.copyFrom(a); }, [] {});
    return 2.0 * double(n) * sizeof(int32_t) / (t.medianMs * 1e6);
}

}  // namespace scanlab
