// scanlab harness: DO NOT EDIT. Your code goes in student/.
//
// Performance feedback without a GPU: the counters of the emulator's profile build
// (build/scanlab-emu-profile, `make profile`) for one run, what they mean for a GPU,
// and a predicted bandwidth from a simple model (README, "Performance without a GPU").
#pragma once
#if !defined(__CUDACC__)
#include <algorithm>
#include <cstdio>
#include <string>
#include <vector>

#include "harness/grading.h"
#include "harness/json.h"
#include "harness/platform.cuh"

namespace scanlab {

// The model: a launch takes the longest of moving its sectors at the copy bandwidth,
// issuing its requests and wavefronts, and one warp's chain of global requests at
// a memory latency with a few requests in flight; plus a launch overhead. The
// constants are an H100's (132 SMs at 1.755 GHz), the bandwidth the copy bandwidth
// measured with the reference timings. It sees no caches and no instruction costs:
// it ranks kernels, it does not time them.
struct GpuModel {
    double copyGbps = grading::kReferenceCopyGbps > 0 ? grading::kReferenceCopyGbps : 2900.0;
    double requestsPerSecond = 132 * 1.755e9;  // one request or wavefront per SM per clock
    double latencySeconds = 600e-9;            // a global load's round trip
    double requestsInFlight = 4;               // per warp, overlapping
    double launchSeconds = 2e-6;
};

struct PredictedTime {
    double seconds = 0;
    const char* limit = "";  // "bandwidth", "issue", "latency"
};

// One launch's time, its counts scaled by `scale` (a larger n with the same grid).
inline PredictedTime predictLaunch(const emu::KernelCounters& c, double scale, const GpuModel& m = {}) {
    const double sectors = double(c.globalLoadSectors + c.globalStoreSectors) * scale;
    const double issue = double(c.globalLoadRequests + c.globalStoreRequests + c.sharedWavefronts) * scale;
    const double chain = double(c.maxWarpGlobalRequests) * scale;
    const double times[3] = {sectors * 32 / (m.copyGbps * 1e9), issue / m.requestsPerSecond,
                             chain * m.latencySeconds / m.requestsInFlight};
    const char* names[3] = {"bandwidth", "issue", "latency"};
    const int worst = int(std::max_element(times, times + 3) - times);
    return PredictedTime{times[worst] + m.launchSeconds, names[worst]};
}

inline double ratio(uint64_t a, uint64_t b) { return b ? double(a) / double(b) : 0.0; }

// Prints the counters of `profiles` (the launches of one run of n elements moving
// `bytesPerElement` bytes each), what they suggest, and the predicted GB/s at `targetN`
// (returned).
inline double printProfile(const std::vector<emu::KernelProfile>& profiles, size_t n,
                         double bytesPerElement, size_t targetN) {
    std::printf("  profile (emulator counters, per kernel; README: \"Performance without a GPU\")\n");
    std::printf("    %-34s %6s %10s %10s %7s %6s %9s\n", "kernel", "blocks", "ld sect/req",
                "st sect/req", "smem", "lanes", "barriers");
    std::printf("    %-34s %6s %10s %10s %7s %6s %9s\n", "", "", "(ideal)", "(ideal)", "ways",
                "/req", "/block");
    emu::KernelCounters total;
    double seconds = 0;
    const double scale = double(targetN) / double(n);
    std::vector<std::string> advice;
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
        if (c.sharedRequests) std::snprintf(ways, sizeof ways, "%.2f", ratio(c.sharedWavefronts, c.sharedRequests));
        if (requests) std::snprintf(lanes, sizeof lanes, "%.1f", ratio(c.laneSlots, requests));
        std::printf("    %-34s %6llu %10s %10s %7s %6s %9.1f\n", p.name.c_str(),
                    (unsigned long long)blocks, ld, st, ways, lanes, ratio(c.barriers, blocks));
        const double loadExcess = ratio(c.globalLoadSectors, c.globalLoadIdealSectors);
        const double storeExcess = ratio(c.globalStoreSectors, c.globalStoreIdealSectors);
        if (loadExcess > 1.5 || storeExcess > 1.5)
            advice.push_back(p.name + ": its " + (loadExcess >= storeExcess ? "loads" : "stores") +
                             " are not coalesced (" +
                             std::to_string(std::max(loadExcess, storeExcess)).substr(0, 4) +
                             "x the sectors needed): consecutive lanes should touch consecutive "
                             "elements (stage through shared memory, harness/tile_io.cuh)");
        if (ratio(c.sharedWavefronts, c.sharedRequests) > 1.5)
            advice.push_back(p.name + ": shared memory bank conflicts (" +
                             std::to_string(ratio(c.sharedWavefronts, c.sharedRequests)).substr(0, 4) +
                             " wavefronts per request, 1 without conflicts): pad arrays "
                             "indexed by lane * stride");
        if (requests && ratio(c.laneSlots, requests) < 8)
            advice.push_back(p.name + ": its memory requests use " +
                             std::to_string(ratio(c.laneSlots, requests)).substr(0, 4) +
                             " of 32 lanes on average: a few threads do the work of a warp "
                             "(or most threads are idle in divergent branches)");
        total.add(c);
        seconds += predictLaunch(c, scale).seconds;
    }
    const double gbps = bytesPerElement * double(targetN) / seconds / 1e9;
    std::printf("    predicted on %s at n = %zu: %.0f GB/s (copy: %.0f GB/s); a model, not a "
                "measurement\n",
                grading::kReferenceDevice[0] ? grading::kReferenceDevice : "an H100", targetN,
                gbps, GpuModel{}.copyGbps);
    for (const auto& a : advice) std::printf("    note: %s\n", a.c_str());
    return gbps;
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
            .add("lane_slots", count(c.laneSlots)).add("barriers", count(c.barriers))
            .add("warp_ops", count(c.warpOps))
            .add("max_warp_global_requests", count(c.maxWarpGlobalRequests));
        out += (out.size() > 1 ? ", " : "") + j.str();
    }
    return out + "]";
}

}  // namespace scanlab
#endif
