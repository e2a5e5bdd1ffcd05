// scanlab CPU emulator: performance counters, the hooks (the `scanlab-emu-profile`
// build links this file; emu_profile.cpp holds what every build has).
//
// The student unit of that build is compiled with -fsanitize=kernel-address and a call
// threshold of 0, so g++ turns every load and store into a call to
// __asan_{load,store}N_noabort(address) (the kernel's sanitizer hooks, which no
// runtime library provides: they are defined here). Inside a kernel each call is one
// lane's part of a memory instruction. The lanes of a warp that execute the same
// instruction (the call's return address) for the k-th time form one warp request,
// as on the GPU, and each request is costed at the end of its block:
//   global memory: the 32-byte sectors it touches, against the fewest that its bytes
//                  could fit in (a coalesced request of 32 4-byte lanes: 4 sectors);
//   shared memory: its wavefronts, the most distinct 4-byte words it touches in one
//                  of the 32 banks, against the fewest its words could fit in (a
//                  4-byte access of 32 lanes: 1; a 16-byte one: 4);
// A global load of the same address as the same thread's last load at the same place
// is a poll (a spin-wait on what another block writes, or a re-read an L1 serves): it
// is counted apart (pollLoads, maxWarpPolls), not as a request, since how often a wait
// polls on the emulator depends on the CPU's schedule, not on the kernel's traffic.
// and the lanes it used (fewer than 32: divergence or idle threads). Barriers and warp
// operations are counted by the scheduler. Accesses to anything else (the thread's
// stack, kernel arguments, the emulator's own variables) are not counted.
//
// A cache, roughly: each warp's global requests are replayed in its order against the
// last kReuseSectors distinct sectors it touched; the sectors of a request outside that
// window are its memory traffic (dramSectors: a coalesced kernel's are its sectors, a
// lane that reads its 8 consecutive elements in 8 requests touches each sector once),
// and a load with any is a miss (the warp's chain of misses waits on memory; a hit is
// served nearby; a store is not waited for). Misses between the same two barriers may overlap; a barrier between
// them makes the later wait for the earlier (maxWarpMissEpochs).
// What this cannot see: the real caches' sizes and sharing between warps, instruction
// counts, and overlap between requests beyond the model's. See README.md.
// In this build these hooks, not emu_race_hooks.cpp's, are called, and check bounds the same way
// (no race check: the profile build is not the grade's).
#include <link.h>

#include <algorithm>
#include <cstring>
#include <unordered_map>
#include <vector>

#include "emulator/emu_bounds.h"
#include "emulator/emu_scheduler.h"

namespace scanlab::emu::detail {

namespace {

enum class Space : uint8_t { Global, Shared };

struct RequestKey {
    uintptr_t pc;
    uint32_t warp;
    uint32_t occurrence;
    bool operator==(const RequestKey& o) const {
        return pc == o.pc && warp == o.warp && occurrence == o.occurrence;
    }
};
struct RequestKeyHash {
    size_t operator()(const RequestKey& k) const {
        return size_t(mix64(k.pc ^ (uint64_t(k.warp) << 40) ^ (uint64_t(k.occurrence) << 8)));
    }
};
struct LaneSiteKey {
    uintptr_t pc;
    uint32_t thread;
    bool operator==(const LaneSiteKey& o) const { return pc == o.pc && thread == o.thread; }
};
struct LaneSiteHash {
    size_t operator()(const LaneSiteKey& k) const { return size_t(mix64(k.pc ^ (uint64_t(k.thread) << 44))); }
};

struct Request {
    Space space = Space::Global;
    bool write = false;
    uint64_t epoch = 0;  // the block's barriers passed before it: requests of one epoch overlap
    unsigned lanes = 0;
    std::vector<std::pair<uintptr_t, uint8_t>> accesses;  // address, bytes
};

// This worker's block in progress.
struct BlockState {
    std::unordered_map<LaneSiteKey, uint32_t, LaneSiteHash> occurrences;
    std::unordered_map<RequestKey, Request, RequestKeyHash> requests;
    std::vector<uint64_t> warpGlobalRequests;  // per warp: how many global requests
    std::vector<std::vector<RequestKey>> warpOrder;  // per warp: its global requests, in order
    std::unordered_map<LaneSiteKey, uintptr_t, LaneSiteHash> lastLoad;  // its last global load there
    uint64_t polls = 0;
    std::vector<uint64_t> warpPolls;
};
thread_local BlockState tlsBlock;

// The static TLS block of the program: where `__shared__` (static thread_local) arrays
// live on a worker. x86-64 and AArch64 glibc place it just below the thread pointer.
struct TlsRange {
    uintptr_t begin = 0, end = 0;
};
thread_local TlsRange tlsRange;
thread_local bool tlsRangeKnown = false;

int findTls(dl_phdr_info* info, size_t, void* out) {
    for (int i = 0; i < info->dlpi_phnum; ++i) {
        if (info->dlpi_phdr[i].p_type != PT_TLS) continue;
        const auto& ph = info->dlpi_phdr[i];
        const size_t align = ph.p_align ? ph.p_align : 1;
        *static_cast<size_t*>(out) = (ph.p_memsz + align - 1) / align * align;
    }
    return 1;  // the first object is the program itself
}

TlsRange programTls() {
    if (!tlsRangeKnown) {
        size_t bytes = 0;
        dl_iterate_phdr(findTls, &bytes);
        const auto tp = reinterpret_cast<uintptr_t>(__builtin_thread_pointer());
        tlsRange = TlsRange{tp - bytes, tp};
        tlsRangeKnown = true;
    }
    return tlsRange;
}

bool inRange(uintptr_t a, const void* begin, size_t bytes) {
    const auto b = reinterpret_cast<uintptr_t>(begin);
    return a >= b && a < b + bytes;
}

void record(uintptr_t address, size_t size, bool write, uintptr_t pc) {
    // The bounds check of every build first (emu_bounds.h): it stops the kernel at an
    // access outside its buffer, which is then never counted.
    checkAccess(address, size, write, reinterpret_cast<const void*>(pc));
    Worker* w = tlsWorker;
    if (w == nullptr || w->current == nullptr || w->launch == nullptr || w->launch->profile == nullptr)
        return;
    Space space;
    const size_t shBytes = (w->launch->sharedBytes + 15) & ~size_t(15);
    if (inRange(address, w->sharedEnd - shBytes, shBytes)) {
        space = Space::Shared;
    } else if (isDeviceAddress(reinterpret_cast<const void*>(address))) {
        space = Space::Global;
    } else {
        const TlsRange tls = programTls();
        if (address < tls.begin || address >= tls.end) return;  // stack, arguments, ...
        if (inRange(address, &tlsBuiltins, sizeof tlsBuiltins)) return;  // threadIdx, ...
        if (inRange(address, &tlsWorker, sizeof tlsWorker)) return;
        space = Space::Shared;
    }
    const Thread& t = *w->current;
    BlockState& b = tlsBlock;
    if (space == Space::Global && !write) {
        auto [last, fresh] = b.lastLoad.try_emplace(LaneSiteKey{pc, t.linear}, address);
        if (!fresh && last->second == address) {
            ++b.polls;
            if (b.warpPolls.size() <= t.linear / 32) b.warpPolls.resize(t.linear / 32 + 1);
            ++b.warpPolls[t.linear / 32];
            return;
        }
        last->second = address;
    }
    const uint32_t k = b.occurrences[LaneSiteKey{pc, t.linear}]++;
    Request& r = b.requests[RequestKey{pc, t.linear / 32, k}];
    if (r.lanes == 0) {
        r.space = space;
        r.write = write;
        r.epoch = w->profileBarriers;
        if (space == Space::Global) {
            if (b.warpGlobalRequests.size() <= t.linear / 32) {
                b.warpGlobalRequests.resize(t.linear / 32 + 1);
                b.warpOrder.resize(t.linear / 32 + 1);
            }
            ++b.warpGlobalRequests[t.linear / 32];
            b.warpOrder[t.linear / 32].push_back(RequestKey{pc, t.linear / 32, k});
        }
    }
    r.lanes |= 1u << (t.linear % 32);
    r.accesses.emplace_back(address, uint8_t(size));
}

// Sectors (32 bytes) touched by a request, and the fewest its bytes could fill.
std::pair<uint64_t, uint64_t> sectors(const Request& r) {
    std::vector<uintptr_t> s;
    uint64_t bytes = 0;
    for (const auto& [a, n] : r.accesses) {
        for (uintptr_t x = a >> 5; x <= (a + n - 1) >> 5; ++x) s.push_back(x);
        bytes += n;
    }
    std::sort(s.begin(), s.end());
    const uint64_t distinct = uint64_t(std::unique(s.begin(), s.end()) - s.begin());
    return {distinct, std::max<uint64_t>(1, (bytes + 31) / 32)};
}

// Wavefronts of a shared request: the most distinct words in one bank (broadcasts of
// one word are free); and the fewest its distinct words need (32 a wavefront).
struct Wavefronts {
    uint64_t got, ideal;
};
Wavefronts wavefronts(const Request& r) {
    std::vector<uintptr_t> words;
    for (const auto& [a, n] : r.accesses)
        for (uintptr_t x = a >> 2; x <= (a + n - 1) >> 2; ++x) words.push_back(x);
    std::sort(words.begin(), words.end());
    words.erase(std::unique(words.begin(), words.end()), words.end());
    unsigned perBank[32] = {};
    unsigned most = 0;
    for (uintptr_t word : words) most = std::max(most, ++perBank[word % 32]);
    return {std::max(1u, most), std::max<uint64_t>(1, (words.size() + 31) / 32)};
}

// The distinct sectors of a request.
std::vector<uintptr_t> sectorList(const Request& r) {
    std::vector<uintptr_t> s;
    for (const auto& [a, n] : r.accesses)
        for (uintptr_t x = a >> 5; x <= (a + n - 1) >> 5; ++x) s.push_back(x);
    std::sort(s.begin(), s.end());
    s.erase(std::unique(s.begin(), s.end()), s.end());
    return s;
}

// A warp's share of an SM's L1 (256 KiB over up to 64 warps: 4 KiB, 128 sectors).
constexpr size_t kReuseSectors = 128;

// One warp's requests in order against its window of recent sectors: the sectors that
// go to memory, and the requests that wait for it.
void replayWarp(const BlockState& b, const std::vector<RequestKey>& order, KernelCounters& c) {
    std::vector<uintptr_t> window;  // the most recent last
    uint64_t loads = 0, misses = 0, missEpochs = 0, lastMissEpoch = ~uint64_t(0);
    for (const RequestKey& key : order) {
        const auto found = b.requests.find(key);
        if (found == b.requests.end()) continue;
        const uint64_t epoch = found->second.epoch;
        uint64_t fresh = 0;
        for (uintptr_t sector : sectorList(found->second)) {
            const auto at = std::find(window.begin(), window.end(), sector);
            if (at != window.end()) {
                window.erase(at);
            } else {
                ++fresh;
                if (window.size() == kReuseSectors) window.erase(window.begin());
            }
            window.push_back(sector);
        }
        c.dramSectors += fresh;
        if (found->second.write) continue;  // a store is not waited for
        ++loads;
        misses += fresh > 0;
        if (fresh > 0 && epoch != lastMissEpoch) {
            ++missEpochs;
            lastMissEpoch = epoch;
        }
    }
    c.maxWarpMissRequests = std::max(c.maxWarpMissRequests, misses);
    c.maxWarpMissEpochs = std::max(c.maxWarpMissEpochs, missEpochs);
    c.maxWarpLoadRequests = std::max(c.maxWarpLoadRequests, loads);
}

}  // namespace

void blockEnd(Worker& w) {
    LaunchProfile* p = w.launch->profile;
    BlockState& b = tlsBlock;
    KernelCounters c;
    for (const auto& [key, r] : b.requests) {
        const uint64_t lanes = uint64_t(__builtin_popcount(r.lanes));
        c.laneSlots += lanes;
        if (r.space == Space::Global) {
            const auto [got, ideal] = sectors(r);
            if (r.write) {
                ++c.globalStoreRequests;
                c.globalStoreSectors += got;
                c.globalStoreIdealSectors += ideal;
            } else {
                ++c.globalLoadRequests;
                c.globalLoadSectors += got;
                c.globalLoadIdealSectors += ideal;
            }
        } else {
            ++c.sharedRequests;
            const Wavefronts w = wavefronts(r);
            c.sharedWavefronts += w.got;
            c.sharedIdealWavefronts += w.ideal;
        }
    }
    for (uint64_t n : b.warpGlobalRequests) c.maxWarpGlobalRequests = std::max(c.maxWarpGlobalRequests, n);
    for (const auto& order : b.warpOrder) replayWarp(b, order, c);
    b.warpOrder.clear();
    for (uint64_t n : b.warpPolls) c.maxWarpPolls = std::max(c.maxWarpPolls, n);
    c.pollLoads = b.polls;
    b.lastLoad.clear();
    b.warpPolls.clear();
    b.polls = 0;
    c.barriers = w.profileBarriers;
    c.maxBlockBarriers = w.profileBarriers;
    c.warpOps = w.profileWarpOps;
    b.requests.clear();
    b.occurrences.clear();
    b.warpGlobalRequests.clear();
    w.profileBarriers = 0;
    w.profileWarpOps = 0;
    std::lock_guard<std::mutex> lock(p->m);
    p->counters.add(c);
}

// Linked into a program (an OBJECT library, never dropped), this file turns counting on.
[[maybe_unused]] const bool gRegistered = (gProfileBlockEnd = &blockEnd, true);

}  // namespace scanlab::emu::detail

// ---- the hooks the instrumented code calls ----------------------------------------------

#define SCANLAB_EMU_HOOK(N)                                                                    \
    extern "C" void __asan_load##N##_noabort(void* p) {                                        \
        scanlab::emu::detail::record(reinterpret_cast<uintptr_t>(p), N, false,                 \
                                     reinterpret_cast<uintptr_t>(__builtin_return_address(0))); \
    }                                                                                          \
    extern "C" void __asan_store##N##_noabort(void* p) {                                       \
        scanlab::emu::detail::record(reinterpret_cast<uintptr_t>(p), N, true,                  \
                                     reinterpret_cast<uintptr_t>(__builtin_return_address(0))); \
    }
SCANLAB_EMU_HOOK(1)
SCANLAB_EMU_HOOK(2)
SCANLAB_EMU_HOOK(4)
SCANLAB_EMU_HOOK(8)
SCANLAB_EMU_HOOK(16)
#undef SCANLAB_EMU_HOOK
extern "C" void __asan_loadN_noabort(void* p, size_t n) {
    scanlab::emu::detail::record(reinterpret_cast<uintptr_t>(p), n, false,
                                 reinterpret_cast<uintptr_t>(__builtin_return_address(0)));
}
extern "C" void __asan_storeN_noabort(void* p, size_t n) {
    scanlab::emu::detail::record(reinterpret_cast<uintptr_t>(p), n, true,
                                 reinterpret_cast<uintptr_t>(__builtin_return_address(0)));
}
extern "C" void __asan_handle_no_return() {}
// The harness object of the profile build is instrumented too (handout/cmake/scanlab.cmake):
// its static initializers call these.
extern "C" void __asan_before_dynamic_init(const char*) {}
extern "C" void __asan_after_dynamic_init() {}
