// scanlab harness: students, do not edit (your code goes in student/); maintainers edit it here.
//
// Performance feedback without a GPU: the counters of the emulator's profile build
// (build/scanlab-emu-profile, `make profile`) for one run, what they mean for a GPU,
// and a predicted bandwidth from a simple model (handout appendix B.2, "make profile").
#pragma once
#if !defined(__CUDACC__)
#include <algorithm>
#include <cctype>
#include <cstdio>
#include <string>
#include <vector>

#include "harness/generated/diagnoses.h"
#include "harness/generated/grading.h"
#include "harness/host/json.h"
#include "harness/platform.cuh"

namespace scanlab {

// The model: a launch takes the longest of moving its sectors at the copy bandwidth
// (each warp's recently touched sectors counted once), issuing its requests and
// wavefronts, and one warp's chain of global loads (misses at the memory latency, a
// few in flight between two barriers; hits at the cache's) with the busiest block's
// barriers; plus a launch overhead. The
// constants are an H100's (132 SMs at 1.755 GHz), the bandwidth the copy bandwidth
// measured with the reference timings. It sees no caches and no instruction costs:
// it ranks kernels, it does not time them.
struct GpuModel {
    double copyGbps = grading::kReferenceCopyGbps > 0 ? grading::kReferenceCopyGbps : 2900.0;
    double requestsPerSecond = 132 * 1.755e9;  // one request or wavefront per SM per clock
    double latencySeconds = 600e-9;            // a global load's round trip
    double hitSeconds = 35e-9;                 // a load the cache serves
    double barrierSeconds = 20e-9;             // a __syncthreads() of a block
    double requestsInFlight = 4;               // per warp, overlapping
    double launchSeconds = 2e-6;
};

// The size of the write-up's tables (handout appendix, "The write-up"): `make profile`
// predicts there as well as at the size the grader times (--predict-n).
constexpr size_t kWriteupN = size_t(1) << 24;

struct PredictedTime {
    double seconds = 0;
    const char* limit = "";  // "bandwidth", "issue", "latency"
};

// One launch's time from its counts (at the size to predict).
inline PredictedTime predictLaunch(const emu::KernelCounters& c, const GpuModel& m = {}) {
    // The sectors that go to memory (each warp's recent sectors once: a cache, roughly),
    // and one warp's chain: its misses at the memory latency, its hits at the cache's.
    const double sectors = double(c.dramSectors);
    const double issue = double(c.globalLoadRequests + c.globalStoreRequests + c.sharedWavefronts);
    // Loads that miss overlap a few at a time, and not across a barrier; a warp's hits
    // follow one another (a thread's loop over what it just fetched); stores are not
    // waited for; the barriers of the busiest block are on the way too.
    const double misses = double(c.maxWarpMissRequests);
    const double waits = std::max(misses / m.requestsInFlight, double(c.maxWarpMissEpochs));
    const double hits = std::max(0.0, double(c.maxWarpLoadRequests) - misses);
    const double times[3] = {sectors * 32 / (m.copyGbps * 1e9), issue / m.requestsPerSecond,
                             waits * m.latencySeconds + hits * m.hitSeconds +
                                 double(c.maxBlockBarriers) * m.barrierSeconds};
    const char* names[3] = {"bandwidth", "issue", "latency"};
    const int worst = int(std::max_element(times, times + 3) - times);
    return PredictedTime{times[worst] + m.launchSeconds, names[worst]};
}

// The counts of one launch at `target` elements, from the same launch profiled at n1
// and n2 (> n1): each count is taken to be a + b*n (the work per element plus what
// does not grow with n: stage 2, phase 2, per-block set-up), which holds once the grid
// has reached its cap of blocks; the longest warp chains alike.
inline emu::KernelCounters extrapolate(const emu::KernelCounters& a, size_t n1, const emu::KernelCounters& b,
                                       size_t n2, size_t target) {
    const double t = (double(target) - double(n1)) / (double(n2) - double(n1));
    auto at = [&](uint64_t x, uint64_t y) {
        const double v = double(x) + (double(y) - double(x)) * t;
        return uint64_t(v > 0 ? v + 0.5 : 0);
    };
    emu::KernelCounters c;
    c.globalLoadRequests = at(a.globalLoadRequests, b.globalLoadRequests);
    c.globalLoadSectors = at(a.globalLoadSectors, b.globalLoadSectors);
    c.globalLoadIdealSectors = at(a.globalLoadIdealSectors, b.globalLoadIdealSectors);
    c.globalStoreRequests = at(a.globalStoreRequests, b.globalStoreRequests);
    c.globalStoreSectors = at(a.globalStoreSectors, b.globalStoreSectors);
    c.globalStoreIdealSectors = at(a.globalStoreIdealSectors, b.globalStoreIdealSectors);
    c.sharedRequests = at(a.sharedRequests, b.sharedRequests);
    c.sharedWavefronts = at(a.sharedWavefronts, b.sharedWavefronts);
    c.sharedIdealWavefronts = at(a.sharedIdealWavefronts, b.sharedIdealWavefronts);
    c.laneSlots = at(a.laneSlots, b.laneSlots);
    c.barriers = at(a.barriers, b.barriers);
    c.warpOps = at(a.warpOps, b.warpOps);
    c.maxWarpGlobalRequests = at(a.maxWarpGlobalRequests, b.maxWarpGlobalRequests);
    c.dramSectors = at(a.dramSectors, b.dramSectors);
    c.maxWarpMissRequests = at(a.maxWarpMissRequests, b.maxWarpMissRequests);
    c.maxWarpMissEpochs = at(a.maxWarpMissEpochs, b.maxWarpMissEpochs);
    c.maxWarpLoadRequests = at(a.maxWarpLoadRequests, b.maxWarpLoadRequests);
    c.maxBlockBarriers = at(a.maxBlockBarriers, b.maxBlockBarriers);
    return c;
}

inline double ratio(uint64_t a, uint64_t b) { return b ? double(a) / double(b) : 0.0; }

// Shared-memory wavefronts against the fewest the accesses' width allows (1: no bank
// conflict; a 16-byte access of 32 lanes needs 4 wavefronts and is no conflict).
inline double sharedConflictWays(const emu::KernelCounters& c) {
    return ratio(c.sharedWavefronts, c.sharedIdealWavefronts ? c.sharedIdealWavefronts : c.sharedRequests);
}

// What a run's profile predicts at the graded size.
struct Prediction {
    double gbps = 0, seconds = 0;
    size_t n = 0;
    bool impossible = false;
    std::string limit;  // of the launch that takes the longest
};

// The prediction at `targetN` from the launches of a run at n (and, when the run is not
// at targetN, of one at n2: see extrapolate), printed with its limiting factor.
inline Prediction printPrediction(const std::vector<emu::KernelProfile>& at1, size_t n1,
                                  const std::vector<emu::KernelProfile>& at2, size_t n2,
                                  double bytesPerElement, size_t targetN, const char* sizeNote) {
    const GpuModel m;
    Prediction p;
    p.n = targetN;
    bool fitted = n1 != targetN && at2.size() == at1.size() && n2 > n1;
    for (size_t i = 0; fitted && i < at1.size(); ++i) fitted = at1[i].name == at2[i].name;
    double longest = 0;
    std::string detail;
    for (size_t i = 0; i < at1.size(); ++i) {
        const emu::KernelCounters c =
            fitted ? extrapolate(at1[i].counters, n1, at2[i].counters, n2, targetN) : at1[i].counters;
        PredictedTime t = predictLaunch(c, m);
        if (!fitted && n1 != targetN) t.seconds *= double(targetN) / double(n1);  // no fit: in proportion
        p.seconds += t.seconds;
        if (t.seconds > longest) {
            longest = t.seconds;
            p.limit = t.limit;
        }
        char line[200];
        std::snprintf(line, sizeof line, "%s%s %.4f ms (%s)", detail.empty() ? "" : ", ",
                      at1[i].name.c_str(), t.seconds * 1e3, t.limit);
        detail += line;
    }
    p.gbps = p.seconds > 0 ? bytesPerElement * double(targetN) / p.seconds / 1e9 : 0;
    // Reading and writing each element once is a copy: nothing that moves the bytes a
    // task needs can beat the copy bandwidth.
    p.impossible = p.gbps > m.copyGbps;
    const char* device = grading::kReferenceDevice[0] ? grading::kReferenceDevice : "an H100";
    std::printf("    predicted on %s at n = %zu (%s%s): %.4f ms, %.0f GB/s "
                "(copy: %.0f GB/s); limited by %s; a model, not a measurement\n",
                device, targetN, sizeNote,
                n1 == targetN ? "" : fitted ? ", from this run and one at twice its n" : ", scaled in proportion",
                p.seconds * 1e3, p.gbps, m.copyGbps, p.limit.c_str());
    std::printf("    per launch: %s\n", detail.c_str());
    if (p.impossible)
        std::printf("    IMPOSSIBLE: %.0f GB/s is above the copy bandwidth (%.0f GB/s), which no kernel "
                    "that reads and writes what the task needs can pass: the counters miss work the "
                    "GPU does (a loop the emulator did not see as memory traffic, elements never read, "
                    "or one block doing the work of all while the others return). Do not trust this "
                    "figure; time it on a GPU.\n",
                    p.gbps, m.copyGbps);
    return p;
}

// One diagnosis of data/diagnoses.toml with its figures, and its advice after a colon.
template <class... Figures>
std::string said(const diagnoses::Diagnosis& d, Figures... figures) {
    char text[400];
    std::snprintf(text, sizeof text, d.format, figures...);
    return std::string(text) + (d.advice[0] ? std::string(": ") + d.advice : std::string());
}

// The spin-wait loads of a run (a look-back's polls), left out of the model: how many
// there are on the emulator depends on its schedule, and how long they take on a GPU on
// how far each look-back walks and how the blocks are scheduled there, so no time is
// given for them: the estimate of a kernel that waits is a lower bound.
inline void printPolls(const std::vector<emu::KernelProfile>& profiles) {
    uint64_t polls = 0;
    for (const auto& k : profiles) polls += k.counters.pollLoads;
    if (polls)
        std::printf("    polls: %llu spin-wait loads of another block's state (the same address again), "
                    "left out of the estimate: their number here follows the emulator's schedule, and "
                    "their cost on a GPU how far each look-back walks and the order blocks start in, "
                    "so the estimate of a kernel that waits is a lower bound on its time\n",
                    (unsigned long long)polls);
}

// Whether a launch runs a kernel the student wrote: its name (`launchKernel`'s, e.g.
// "reduceBlocksKernel(stage 2)") names one of the manifest's kernels of a task or an
// exercise (harness/generated/assignment.h). The harness's own kernels (the look-back's
// clearTileStateKernel, a baseline) are shown as the harness's and never diagnosed:
// the student did not write them.
inline bool isStudentKernel(const std::string& launchName) {
    auto names = [&](const char* list) {
        for (const char* k = list; *k;) {
            const char* end = k;
            while (*end && *end != ',') ++end;
            const std::string kernel(k, end);
            for (size_t at = launchName.find(kernel); at != std::string::npos;
                 at = launchName.find(kernel, at + 1)) {
                auto ident = [](char c) { return std::isalnum((unsigned char)c) || c == '_'; };
                const size_t after = at + kernel.size();
                if ((at == 0 || !ident(launchName[at - 1])) &&
                    (after == launchName.size() || !ident(launchName[after])))
                    return true;
            }
            k = *end ? end + 1 : end;
        }
        return false;
    };
    for (const auto& t : kStudentTasks)
        if (names(t.kernels)) return true;
    for (const auto& e : kExercises)
        if (names(e.kernels)) return true;
    return false;
}

// What the counters of the student's launches suggest, a note each ("kernel: advice").
inline std::vector<std::string> profileNotes(const std::vector<emu::KernelProfile>& profiles) {
    // The words are data/diagnoses.toml's (harness/generated/diagnoses.h), which the
    // GPU grade's Nsight Compute diagnosis says too.
    namespace d = diagnoses;
    std::vector<std::string> advice;
    for (const auto& p : profiles) {
        if (!isStudentKernel(p.name)) continue;
        const auto& c = p.counters;
        const uint64_t requests = c.globalLoadRequests + c.globalStoreRequests + c.sharedRequests;
        const double load = ratio(c.globalLoadSectors, c.globalLoadRequests);
        const double loadIdeal = ratio(c.globalLoadIdealSectors, c.globalLoadRequests);
        const double store = ratio(c.globalStoreSectors, c.globalStoreRequests);
        const double storeIdeal = ratio(c.globalStoreIdealSectors, c.globalStoreRequests);
        if (loadIdeal > 0 && load >= d::kUncoalescedLoads.threshold * loadIdeal)
            advice.push_back(p.name + ": " + said(d::kUncoalescedLoads, load, loadIdeal));
        if (storeIdeal > 0 && store >= d::kUncoalescedStores.threshold * storeIdeal)
            advice.push_back(p.name + ": " + said(d::kUncoalescedStores, store, storeIdeal));
        // Against the fewest wavefronts the access width allows (a 16-byte access: 4).
        const double wavefronts = sharedConflictWays(c);
        if (wavefronts >= d::kBankConflicts.threshold)
            advice.push_back(p.name + ": " + said(d::kBankConflicts, wavefronts));
        const double used = ratio(c.laneSlots, requests);
        if (requests && used < d::kIdleLanes.threshold) advice.push_back(p.name + ": " + said(d::kIdleLanes, used));
    }
    return advice;
}

// Prints the counters of `profiles` (the launches of one run of n elements) and what
// they suggest.
inline void printProfile(const std::vector<emu::KernelProfile>& profiles) {
    std::printf("  profile (emulator counters, per kernel: estimates of what Nsight Compute measures on a "
                "GPU; appendix B.2 of the handout)\n");
    std::printf("    %-34s %6s %10s %10s %7s %6s %9s\n", "kernel", "blocks", "ld sect/req",
                "st sect/req", "smem", "lanes", "barriers");
    std::printf("    %-34s %6s %10s %10s %7s %6s %9s\n", "", "", "(ideal)", "(ideal)", "ways",
                "/req", "/block");
    for (const auto& p : profiles) {
        const auto& c = p.counters;
        const uint64_t blocks = uint64_t(p.grid.x) * p.grid.y * p.grid.z;
        const uint64_t requests = c.globalLoadRequests + c.globalStoreRequests + c.sharedRequests;
        char ld[32] = "-", st[32] = "-", ways[16] = "-", lanes[16] = "-";
        if (c.globalLoadRequests)
            std::snprintf(ld, sizeof ld, "%.1f (%.1f)", ratio(c.globalLoadSectors, c.globalLoadRequests),
                          ratio(c.globalLoadIdealSectors, c.globalLoadRequests));
        if (c.globalStoreRequests)
            std::snprintf(st, sizeof st, "%.1f (%.1f)", ratio(c.globalStoreSectors, c.globalStoreRequests),
                          ratio(c.globalStoreIdealSectors, c.globalStoreRequests));
        if (c.sharedRequests) std::snprintf(ways, sizeof ways, "%.2f", sharedConflictWays(c));
        if (requests) std::snprintf(lanes, sizeof lanes, "%.1f", ratio(c.laneSlots, requests));
        const std::string name = isStudentKernel(p.name) ? p.name : p.name + " [harness]";
        std::printf("    %-34s %6llu %10s %10s %7s %6s %9.1f\n", name.c_str(),
                    (unsigned long long)blocks, ld, st, ways, lanes, ratio(c.barriers, blocks));
    }
    for (const auto& a : profileNotes(profiles)) std::printf("    note: %s\n", a.c_str());
}

// The counters as JSON: one object per launch, in order.
inline std::string profileJson(const std::vector<emu::KernelProfile>& profiles) {
    std::string out = "[";
    for (const auto& p : profiles) {
        const auto& c = p.counters;
        auto count = [](uint64_t v) { return (unsigned long long)v; };
        JsonObject j;
        j.add("kernel", p.name).add("blocks", count(uint64_t(p.grid.x) * p.grid.y * p.grid.z))
            .add("global_load_requests", count(c.globalLoadRequests))
            .add("global_load_sectors", count(c.globalLoadSectors))
            .add("global_load_ideal_sectors", count(c.globalLoadIdealSectors))
            .add("global_store_requests", count(c.globalStoreRequests))
            .add("global_store_sectors", count(c.globalStoreSectors))
            .add("global_store_ideal_sectors", count(c.globalStoreIdealSectors))
            .add("shared_requests", count(c.sharedRequests))
            .add("shared_wavefronts", count(c.sharedWavefronts))
            .add("shared_ideal_wavefronts", count(c.sharedIdealWavefronts))
            .add("lane_slots", count(c.laneSlots)).add("barriers", count(c.barriers))
            .add("warp_ops", count(c.warpOps))
            .add("max_warp_global_requests", count(c.maxWarpGlobalRequests))
            .add("poll_loads", count(c.pollLoads)).add("max_warp_polls", count(c.maxWarpPolls))
            .add("dram_sectors", count(c.dramSectors))
            .add("max_warp_miss_requests", count(c.maxWarpMissRequests))
            .add("max_warp_miss_epochs", count(c.maxWarpMissEpochs))
            .add("max_warp_load_requests", count(c.maxWarpLoadRequests))
            .add("max_block_barriers", count(c.maxBlockBarriers));
        out += (out.size() > 1 ? ", " : "") + j.str();
    }
    return out + "]";
}

}  // namespace scanlab
#endif
