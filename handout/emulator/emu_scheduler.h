// scanlab CPU emulator: the scheduler's state and the helpers its parts share. Not
// included by user code. The parts:
//   emu_scheduler.cpp  configuration, fibers and switching, running blocks, barriers
//   emu_warp.cpp       warp operations (__syncwarp, shuffles, votes) and their checks
//   emu_deadlock.cpp   why a block cannot go on (barrier divergence, deadlock), and
//                      the workers' vote that a spin can never end
//   emu_faults.cpp     SIGSEGV/SIGBUS in kernel code -> cudaErrorIllegalAddress
//   emu_launch.cpp     launch checks, the worker pool, the public emu:: settings
// The design is described at the top of emu_scheduler.cpp.
#pragma once
#include "emulator/emu_constinit.h"
#include <signal.h>
#include <sys/mman.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <boost/context/detail/fcontext.hpp>
#include <chrono>
#include <condition_variable>
#include <cstdio>
#include <exception>
#include <memory>
#include <mutex>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include "emulator/emu_bounds.h"
#include "emulator/emu_internal.h"

namespace bctx = boost::context::detail;

// AddressSanitizer must be told about stack switches, and the shadow of a reused
// stack must be cleared (a fiber that never returns leaves its frames poisoned).
#if defined(__SANITIZE_ADDRESS__)
#define SCANLAB_EMU_ASAN 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define SCANLAB_EMU_ASAN 1
#endif
#endif
#ifdef SCANLAB_EMU_ASAN
#include <sanitizer/asan_interface.h>
#include <sanitizer/common_interface_defs.h>
#endif


// Defined only in programs whose kernels declare `extern __shared__` arrays (in the file
// cmake/emu_extern_shared.cmake generates): those arrays' worker-local address.
extern "C" void* scanlab_emu_extern_shared_base() __attribute__((weak));

namespace scanlab::emu::detail {

constexpr int kHostBudget = 1 << 30;
constexpr int kPreemptEvery = 64;  // atomics/fences in a row before a forced yield
// Forced yields of one block without progress (a barrier passed, a thread exited)
// after which it counts as stuck: spinning on what another block should write.
constexpr uint64_t kStuckYields = uint64_t(1) << 14;
// A deadlock is a vote (checkSpinning): every worker that holds a block of the launch
// must itself spin this many forced yields in a round in which no block anywhere made
// progress, in two rounds in a row. Counted in each worker's own running time: a worker
// the OS has paused (a loaded machine) cannot vote, so a block about to set the flag
// the others wait for is never outvoted. Once every block has started (a flag nobody
// sets): far more than kStuckYields, so that a block doing long honest work with
// atomics and no barrier never reaches it (8M atomics or fences per round).
constexpr uint64_t kHangVoteYields = uint64_t(1) << 17;
// While blocks are still to start (a wait for a block that cannot start).
constexpr uint64_t kStartVoteYields = uint64_t(1) << 13;
// A stuck block's worker gives its core to the OS (sched_yield) this often: often enough
// for a worker that can make progress to get one on a loaded machine, seldom enough
// that a busy machine (where each sched_yield may wait a time slice) does not stretch
// the vote.
constexpr uint64_t kGiveCoreEvery = 256;
constexpr size_t kMaxDynamicShared = kMaxDynamicSharedBytes;
constexpr unsigned kMaxThreadsPerBlock = 1024;
constexpr unsigned kPoisonWord = 0xffbadbadu;  // a NaN as float, -4531539 as int32

inline uint64_t mix64(uint64_t z) {
    z += 0x9e3779b97f4a7c15ull;
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
}

struct Rng {
    uint64_t state = 1;
    uint64_t next() {
        state += 0x9e3779b97f4a7c15ull;
        uint64_t z = state;
        z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
        z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
        return z ^ (z >> 31);
    }
    // Uniform in [0, n) (multiply-shift; the bias is negligible for n <= 1024).
    uint32_t below(uint32_t n) { return uint32_t((uint64_t(uint32_t(next())) * n) >> 32); }
};

enum class State : uint8_t { Runnable, Running, AtBarrier, AtWarp, AtActiveMask, Exited };
enum class WarpKind : uint8_t { Sync, Shuffle, Vote };

struct Thread {
    bctx::fcontext_t fctx = nullptr;
    uint3 idx{};
    unsigned linear = 0;
    State state = State::Runnable;
    WarpKind kind = WarpKind::Sync;
    VoteMode voteMode = VoteMode::Ballot;
    const char* opName = "";
    Site site{};
    unsigned mask = 0;
    int src = 0;
    int predicate = 0;
    unsigned long long value = 0;
    unsigned long long result = 0;
};

// Where a thread last gave way in a spin (atomics, fences, __nanosleep): its call stack,
// innermost first. Recorded only once its block has spun long (checkSpinning).
struct SpinStack {
    static constexpr int kFrames = 12;
    const void* pcs[kFrames];
    int depth;
};

struct Warp {
    unsigned existing = 0;  // lanes that exist (the last warp may be partial)
    unsigned exited = 0;
    unsigned waiting = 0;  // lanes waiting at a warp operation
    unsigned atActiveMask = 0;  // lanes parked in __activemask() (emu_warp.cpp)
    unsigned commonMask = 0;  // the mask of every waiting lane, unless `mixed`
    bool mixed = false;
};

// The counters of a launch being profiled (emu_profile.cpp), summed over its blocks.
struct LaunchProfile {
    std::mutex m;
    KernelCounters counters;
};

struct Launch {
    LaunchProfile* profile = nullptr;  // non-null: count (emu_profile_hooks.cpp)
    const char* name = "";
    dim3 grid, block;
    size_t sharedBytes = 0;
    KernelThunk thunk = nullptr;
    const void* closure = nullptr;
    uint64_t seed = 0;
    LaneOrder laneOrder = LaneOrder::Random;
    uint64_t blocks = 0;
    unsigned threads = 0;
    std::atomic<uint64_t> next{0};
    // The order the blocks start in: order[k] is the k-th block to start (a shuffle
    // drawn from the launch's seed), so code that needs block b-1 to run before block
    // b fails here as it can on a GPU. Empty for huge grids: index order.
    std::vector<uint32_t> order;
    uint64_t blockAt(uint64_t k) const { return order.empty() ? k : order[k]; }
    // Workers in this launch's loop, and how many of them sit in a stuck block: when
    // every one is stuck and blocks are still to start, none of them can ever finish.
    std::atomic<unsigned> workers{0};
    alignas(64) std::atomic<unsigned> stuck{0};
    // Bumped by any progress (a barrier passed, a thread or block ended) while a block
    // is stuck, and when a vote is complete: it starts a new round of the vote.
    std::atomic<uint64_t> round{0};
    std::mutex voteMutex;
    uint64_t voteRound = ~uint64_t(0);     // the round `votes` counts (voteMutex)
    unsigned votes = 0;                    // workers that voted in voteRound (voteMutex)
    uint64_t confirmRound = ~uint64_t(0);  // a round opened by a complete vote (voteMutex)
    // Workers the pool gives this launch: a worker that has not joined yet may still
    // start the block the others wait for, so a deadlock needs every one of them stuck.
    unsigned participants = 1;
    std::atomic<bool> failed{false};
    std::mutex m;
    // The kernel's arguments that are pointers (setLaunchArguments), else nullptr.
    std::vector<const void*> arguments;
    bool haveError = false;
    uint64_t errorBlock = 0;
    cudaError_t errorCode = cudaSuccess;
    std::string error;
};

// Everything a worker thread needs to run blocks; one per OS thread that runs blocks.
struct Worker {
    // Stacks: each [guard page][stackBytes], top handed to make_fcontext.
    std::vector<std::pair<char*, size_t>> regions;
    std::vector<char*> stackTops;
    std::vector<char*> stackGuards;
    size_t stackBytes = 0;
    size_t pageBytes = 4096;
    // Dynamic shared memory: kMaxDynamicShared bytes ending at a guard page, so an
    // access just past the launch's byte count faults (and is reported).
    char* sharedRegion = nullptr;
    char* sharedEnd = nullptr;
    // Alternate signal stack, to report stack overflows.
    char* altStack = nullptr;

    // The running block.
    Launch* launch = nullptr;
    uint64_t blockLinear = 0;
    std::vector<Thread> threads;
    std::vector<Warp> warps;
    std::vector<unsigned> runnable;
    Rng rng;
    unsigned nThreads = 0;
    unsigned exited = 0;
    unsigned firstExited = ~0u;
    unsigned barrierCount = 0;
    int barrierAcc = 0;
    BarrierMode barrierMode = BarrierMode::Plain;
    Site barrierSite{};
    bool barrierMismatch = false;
    Thread* current = nullptr;
    bctx::fcontext_t schedCtx = nullptr;
    const void* schedStackBottom = nullptr;  // for AddressSanitizer's fiber hooks
    size_t schedStackSize = 0;
    bool failed = false;
    bool stoppedByOther = false;  // abandoned because another block failed first
    uint64_t spinsWithoutProgress = 0;
    // This worker's part in the launch's deadlock vote (checkSpinning).
    uint64_t voteRound = ~uint64_t(0);
    uint64_t roundYields = 0;
    bool voted = false;
    unsigned parkedAtActiveMask = 0;  // lanes of the block parked in __activemask()
    bool stuck = false;
    cudaError_t errorCode = cudaSuccess;
    std::string error;
    char faultMessage[512] = {};
    cudaError_t faultCode = cudaErrorIllegalAddress;
    // Where an out-of-bounds access was made (emu_bounds.cpp): runBlock adds its line.
    const void* accessPc = nullptr;
    // The call stack of a fault (emu_faults.cpp), the faulting instruction first:
    // runBlock adds the student's line.
    static constexpr int kFaultFrames = 32;
    const void* faultPcs[kFaultFrames] = {};
    int faultDepth = 0;
    // Per thread of the running block, sized when the block first looks stuck.
    std::vector<SpinStack> spinStacks;
    // Profiling: barriers and warp operations of the running block.
    uint64_t profileBarriers = 0;
    uint64_t profileWarpOps = 0;

    ~Worker() {
        for (auto& r : regions) munmap(r.first, r.second);
        if (sharedRegion) munmap(sharedRegion, kMaxDynamicShared + pageBytes);
        if (altStack) {
            stack_t none{};
            none.ss_flags = SS_DISABLE;
            stack_t old{};
            sigaltstack(nullptr, &old);
            if (old.ss_sp == altStack) sigaltstack(&none, nullptr);
            munmap(altStack, kAltStackBytes);
        }
    }
    static constexpr size_t kAltStackBytes = 64 * 1024;
};

// The worker of this OS thread (nullptr until it first runs a block).
extern thread_local SCANLAB_EMU_CONSTINIT Worker* tlsWorker;
// jump_fcontext's data when the scheduler context (not a fiber) switches.
extern void* const kFromScheduler;

// ---- configuration (emu_scheduler.cpp) -----------------------------------------------

struct Config {
    std::mutex m;
    bool loaded = false;
    uint64_t seed = 0x5ca1ab1eull;
    std::atomic<uint64_t> launches{0};
    unsigned threads = 0;  // 0: default
    size_t stackBytes = 64 * 1024;
    LaneOrder laneOrder = LaneOrder::Random;
    bool catchFaults = true;
};
Config& config();
void loadConfig();
unsigned defaultThreads();

// ---- formatting for diagnostics (emu_scheduler.cpp) ----------------------------------

std::string fmtDim(uint3 v);
std::string fmtMask(unsigned m);
std::string fmtLanes(unsigned m);  // "3", "16-31", "0, 2, 5-7"
bool sameSite(Site a, Site b);
uint3 blockIndexOf(const Launch& L, uint64_t b);
std::string threadName(const Thread& t);

// ---- switching (the hot path: inline) -------------------------------------------------

// The usable stack of thread i: [bottom, top).
[[maybe_unused]] inline char* stackBottom(const Worker& w, unsigned i) { return w.stackGuards[i] + w.pageBytes; }

#ifdef SCANLAB_EMU_ASAN
inline void asanStartSwitch(Worker& w, void** fakeSave, const Thread* target) {
    if (target) {
        const unsigned i = target->linear;
        __sanitizer_start_switch_fiber(fakeSave, stackBottom(w, i),
                                       size_t(w.stackTops[i] - stackBottom(w, i)));
    } else {
        __sanitizer_start_switch_fiber(fakeSave, w.schedStackBottom, w.schedStackSize);
    }
}
inline void asanFinishSwitch(Worker& w, void* fakeSave, bool fromScheduler) {
    const void* bottom = nullptr;
    size_t size = 0;
    __sanitizer_finish_switch_fiber(fakeSave, &bottom, &size);
    if (fromScheduler) {
        w.schedStackBottom = bottom;
        w.schedStackSize = size;
    }
}
#endif

inline void adopt(Worker& w, bctx::transfer_t t) {
    if (t.data == kFromScheduler) {
        w.schedCtx = t.fctx;
    } else if (t.data != nullptr) {
        static_cast<Thread*>(t.data)->fctx = t.fctx;
    }
}

// The runnable thread LaneOrder asks for after the random pick `i` (emu_scheduler.cpp).
uint32_t orderedPick(const Worker& w, uint32_t i);

// Answers and releases the lanes parked in __activemask() (emu_warp.cpp).
void releaseActiveMask(Worker& w);

inline Thread* pickNext(Worker& w) {
    if (w.failed) return nullptr;
    if (w.runnable.empty()) {
        if (w.parkedAtActiveMask == 0) return nullptr;
        releaseActiveMask(w);  // nothing else can run: the parked lanes are the converged ones
    }
    const uint32_t n = uint32_t(w.runnable.size());
    uint32_t i = w.rng.below(n);
    if (__builtin_expect(w.launch->laneOrder != LaneOrder::Random, 0)) i = orderedPick(w, i);
    const unsigned idx = w.runnable[i];
    w.runnable[i] = w.runnable[n - 1];
    w.runnable.pop_back();
    return &w.threads[idx];
}

inline void enter(Worker& w, Thread* t) {
    w.current = t;
    t->state = State::Running;
    tlsBuiltins.tIdx = t->idx;
    tlsBuiltins.preemptBudget = kPreemptEvery;
}

inline void makeRunnable(Worker& w, Thread& t) {
    t.state = State::Runnable;
    w.runnable.push_back(t.linear);
}

// Leaves `self` for a random runnable fiber, or the scheduler (emu_scheduler.cpp).
void switchFrom(Worker& w, Thread* self);
// Records why the running block fails (the first reason wins).
void recordFailure(Worker& w, const std::string& headline, const std::string& detail,
                   int warp = -1, cudaError_t code = cudaErrorLaunchFailure);
// Leaves a failed thread for the scheduler, never to come back.
[[noreturn]] void abandon(Worker& w, Thread* self);
[[noreturn, gnu::cold, gnu::noinline]] void outsideKernel(const char* what, Site site);

// Callers build the message in a separate statement so that no temporary std::string
// is left on the abandoned stack.
#define SCANLAB_EMU_FAIL(w, self, ...)   \
    do {                                 \
        recordFailure(w, __VA_ARGS__);   \
        abandon(w, self);                \
    } while (0)

inline Worker& inKernel(const char* what, Site site) {
    Worker* w = tlsWorker;
    if (__builtin_expect(w == nullptr || w->current == nullptr, 0)) outsideKernel(what, site);
    return *w;
}

inline Thread& laneThread(Worker& w, unsigned warp, unsigned lane) {
    return w.threads[warp * 32 + lane];
}

// ---- the other parts -------------------------------------------------------------------

// Why the running block cannot go on; sets `headline` (emu_deadlock.cpp).
std::string describeStuck(Worker& w, std::string& headline);
// Where each thread of the running block is, grouped: "threads 0-31 spin at
// student/scan.cuh:88; threads 32-63 have finished" (emu_deadlock.cpp).
std::string describeThreads(Worker& w);
// At a forced yield of a spin: fails the launch when another block failed, or when
// the workers' vote finds a deadlock (emu_deadlock.cpp).
void checkSpinning(Worker& w, Thread* self);
// Runs blocks of L until none is left or one failed (emu_scheduler.cpp).
void workLoop(Launch& L);
// A barrier passed or a thread exited: the running block is not stuck.
void madeProgress(Worker& w);
// Catches SIGSEGV/SIGBUS of kernel code (emu_faults.cpp).
void installFaultHandler();

// Profiling (emu_profile.cpp): set by emu_profile_hooks.cpp where it is linked in;
// called when a block of a profiled launch ends.
extern void (*gProfileBlockEnd)(Worker&);
extern bool gProfilingRequested;
extern std::vector<KernelProfile> gProfiles;  // guarded by gLaunchMutex
extern std::mutex gLaunchMutex;

}  // namespace scanlab::emu::detail
