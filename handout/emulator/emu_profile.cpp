// scanlab CPU emulator: performance counters, what every build has (the public API,
// the list of profiled launches). The counting itself is in emu_profile_hooks.cpp,
// linked only into the profile build (`scanlab-emu-profile`), whose student unit is
// instrumented; without it no launch is profiled.
#include "emulator/emu_scheduler.h"

namespace scanlab::emu::detail {

void (*gProfileBlockEnd)(Worker&) = nullptr;
bool gProfilingRequested = false;
std::vector<KernelProfile> gProfiles;

}  // namespace scanlab::emu::detail

namespace scanlab::emu {

void KernelCounters::add(const KernelCounters& o) {
    globalLoadRequests += o.globalLoadRequests;
    globalLoadSectors += o.globalLoadSectors;
    globalLoadIdealSectors += o.globalLoadIdealSectors;
    globalStoreRequests += o.globalStoreRequests;
    globalStoreSectors += o.globalStoreSectors;
    globalStoreIdealSectors += o.globalStoreIdealSectors;
    sharedRequests += o.sharedRequests;
    sharedWavefronts += o.sharedWavefronts;
    sharedIdealWavefronts += o.sharedIdealWavefronts;
    laneSlots += o.laneSlots;
    barriers += o.barriers;
    warpOps += o.warpOps;
    maxWarpGlobalRequests = std::max(maxWarpGlobalRequests, o.maxWarpGlobalRequests);
    pollLoads += o.pollLoads;
    dramSectors += o.dramSectors;
    maxWarpMissRequests = std::max(maxWarpMissRequests, o.maxWarpMissRequests);
    maxWarpMissEpochs = std::max(maxWarpMissEpochs, o.maxWarpMissEpochs);
    maxWarpLoadRequests = std::max(maxWarpLoadRequests, o.maxWarpLoadRequests);
    maxBlockBarriers = std::max(maxBlockBarriers, o.maxBlockBarriers);
    maxWarpPolls = std::max(maxWarpPolls, o.maxWarpPolls);
}

void setProfiling(bool on) { detail::gProfilingRequested = on; }

bool profilingAvailable() { return detail::gProfileBlockEnd != nullptr; }

std::vector<KernelProfile> takeProfiles() {
    std::lock_guard<std::mutex> lock(detail::gLaunchMutex);
    std::vector<KernelProfile> out;
    out.swap(detail::gProfiles);
    return out;
}

}  // namespace scanlab::emu

