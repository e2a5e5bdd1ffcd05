// scanlab CPU emulator: launches, the fiber scheduler and the synchronization
// primitives.
//
// Design
// - A launch is split into blocks; a pool of worker threads (the calling thread is
//   one of them) claims blocks in order from an atomic counter. A worker runs one
//   block at a time, so the per-worker state below is "the running block".
// - Each thread of a block is a fiber: a Boost.Context execution context
//   (make_fcontext/jump_fcontext, the machinery under boost::context::fiber) on a
//   stack from the worker's pool. Stacks are allocated once per worker and reused by
//   every block, so starting a thread costs one make_fcontext.
// - A fiber runs until it must wait (barrier, warp operation) or exits; it then
//   jumps straight to a runnable fiber drawn at random from the block's runnable set
//   (one jump per switch, no system call, no allocation), or back to the worker's
//   scheduler context when none is left. The random draws come from a generator
//   seeded by (launch seed, block index), so a block's schedule is reproducible.
// - When the runnable set is empty but threads are still alive, the block can make
//   no progress: the scheduler explains why (barrier divergence, deadlock) and the
//   launch fails. Errors found at a call (bad mask, ...) fail it at once.
// - A block that fails is abandoned: its fibers are never resumed, their stacks are
//   simply reused (destructors of kernel locals do not run).
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

namespace scanlab::emu::detail {

thread_local constinit Builtins tlsBuiltins{};

namespace {

constexpr int kHostBudget = 1 << 30;
constexpr int kPreemptEvery = 64;  // atomics/fences in a row before a forced yield
constexpr size_t kMaxDynamicShared = 48 * 1024;
constexpr unsigned kMaxThreadsPerBlock = 1024;
constexpr unsigned kPoisonWord = 0xffbadbadu;  // a NaN as float, -4531539 as int32

uint64_t mix64(uint64_t z) {
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

enum class State : uint8_t { Runnable, Running, AtBarrier, AtWarp, Exited };
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

struct Warp {
    unsigned existing = 0;  // lanes that exist (the last warp may be partial)
    unsigned exited = 0;
    unsigned waiting = 0;  // lanes waiting at a warp operation
    unsigned commonMask = 0;  // the mask of every waiting lane, unless `mixed`
    bool mixed = false;
};

struct Launch {
    const char* name = "";
    dim3 grid, block;
    size_t sharedBytes = 0;
    KernelThunk thunk = nullptr;
    const void* closure = nullptr;
    uint64_t seed = 0;
    uint64_t blocks = 0;
    unsigned threads = 0;
    std::atomic<uint64_t> next{0};
    std::atomic<bool> failed{false};
    std::mutex m;
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
    cudaError_t errorCode = cudaSuccess;
    std::string error;
    char faultMessage[512] = {};

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

thread_local std::unique_ptr<Worker> tlsWorkerOwner;
thread_local Worker* tlsWorker = nullptr;

char gSchedulerTag;
void* const kFromScheduler = &gSchedulerTag;

// ---------------------------------------------------------------------------------
// Configuration.

struct Config {
    std::mutex m;
    bool loaded = false;
    uint64_t seed = 0x5ca1ab1eull;
    std::atomic<uint64_t> launches{0};
    unsigned threads = 0;  // 0: default
    size_t stackBytes = 64 * 1024;
    bool catchFaults = true;
};
Config& config() {
    static Config c;
    return c;
}

void loadConfig() {
    Config& c = config();
    std::lock_guard<std::mutex> lock(c.m);
    if (c.loaded) return;
    c.loaded = true;
    if (const char* s = std::getenv("SCANLAB_EMU_SEED"); s && *s) {
        if (std::string(s) == "random") {
            std::random_device rd;
            c.seed = (uint64_t(rd()) << 32) ^ rd();
        } else {
            c.seed = envUnsigned("SCANLAB_EMU_SEED", c.seed);
        }
    }
    c.threads = unsigned(envUnsigned("SCANLAB_EMU_THREADS", 0));
    const uint64_t kb = envUnsigned("SCANLAB_EMU_STACK_KB", 64);
    c.stackBytes = size_t(std::clamp<uint64_t>(kb, 16, 64 * 1024)) * 1024;
    c.catchFaults = envUnsigned("SCANLAB_EMU_CATCH_SEGV", 1) != 0;
}

unsigned defaultThreads() {
    const unsigned hw = std::thread::hardware_concurrency();
    return std::clamp(hw, 1u, 64u);
}

// ---------------------------------------------------------------------------------
// Formatting for diagnostics.

std::string fmtDim(uint3 v) {
    return "(" + std::to_string(v.x) + "," + std::to_string(v.y) + "," + std::to_string(v.z) + ")";
}
std::string fmtMask(unsigned m) {
    char buf[16];
    std::snprintf(buf, sizeof buf, "0x%08x", m);
    return buf;
}
std::string fmtLanes(unsigned m) {  // "3", "16-31", "0, 2, 5-7"
    std::string out;
    for (int l = 0; l < 32;) {
        if (!(m >> l & 1)) {
            ++l;
            continue;
        }
        int e = l;
        while (e + 1 < 32 && (m >> (e + 1) & 1)) ++e;
        if (!out.empty()) out += ", ";
        out += std::to_string(l);
        if (e > l) out += "-" + std::to_string(e);
        l = e + 1;
    }
    return out;
}
bool sameSite(Site a, Site b) {
    return a.line == b.line && (a.file == b.file || std::strcmp(a.file, b.file) == 0);
}
uint3 blockIndexOf(const Launch& L, uint64_t b) {
    const uint64_t gx = L.grid.x, gy = L.grid.y;
    return uint3{unsigned(b % gx), unsigned((b / gx) % gy), unsigned(b / (gx * gy))};
}
std::string threadName(const Thread& t) { return "thread " + fmtDim(t.idx); }

// ---------------------------------------------------------------------------------
// Stacks and shared memory.

void ensureStacks(Worker& w, unsigned n) {
    if (w.stackTops.size() >= n) return;
    const size_t want = n - w.stackTops.size();
    const size_t slot = w.stackBytes + w.pageBytes;
    const size_t bytes = want * slot;
    void* p = mmap(nullptr, bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE,
                   -1, 0);
    if (p == MAP_FAILED) {
        std::fprintf(stderr, "scanlab emulator: cannot map %zu bytes of thread stacks\n", bytes);
        std::abort();
    }
    char* base = static_cast<char*>(p);
    w.regions.emplace_back(base, bytes);
    for (size_t i = 0; i < want; ++i) {
        char* s = base + i * slot;
        mprotect(s, w.pageBytes, PROT_NONE);  // guard page below the stack
        // Stagger the tops over a page ("coloring"): with equal offsets every fiber's
        // hot frames would fall into the same L1 cache sets.
        const size_t color = (w.stackTops.size() % 16) * 256;
        w.stackTops.push_back(s + slot - color);
        w.stackGuards.push_back(s);
    }
}

Worker& thisWorker() {
    if (tlsWorker) return *tlsWorker;
    loadConfig();
    tlsWorkerOwner = std::make_unique<Worker>();
    Worker& w = *tlsWorkerOwner;
    w.pageBytes = size_t(sysconf(_SC_PAGESIZE));
    w.stackBytes = (config().stackBytes + w.pageBytes - 1) / w.pageBytes * w.pageBytes;
    void* p = mmap(nullptr, kMaxDynamicShared + w.pageBytes, PROT_READ | PROT_WRITE,
                   MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (p == MAP_FAILED) {
        std::fprintf(stderr, "scanlab emulator: cannot map shared memory\n");
        std::abort();
    }
    w.sharedRegion = static_cast<char*>(p);
    w.sharedEnd = w.sharedRegion + kMaxDynamicShared;
    mprotect(w.sharedEnd, w.pageBytes, PROT_NONE);
    // An alternate signal stack, unless the thread has one (Catch2, ASan, ...).
    stack_t old{};
    if (sigaltstack(nullptr, &old) == 0 && (old.ss_flags & SS_DISABLE)) {
        void* a = mmap(nullptr, Worker::kAltStackBytes, PROT_READ | PROT_WRITE,
                       MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
        if (a != MAP_FAILED) {
            stack_t ss{};
            ss.ss_sp = a;
            ss.ss_size = Worker::kAltStackBytes;
            if (sigaltstack(&ss, nullptr) == 0) {
                w.altStack = static_cast<char*>(a);
            } else {
                munmap(a, Worker::kAltStackBytes);
            }
        }
    }
    tlsWorker = &w;
    return w;
}

// ---------------------------------------------------------------------------------
// Switching.

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

inline Thread* pickNext(Worker& w) {
    if (w.failed || w.runnable.empty()) return nullptr;
    const uint32_t n = uint32_t(w.runnable.size());
    const uint32_t i = w.rng.below(n);
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

// Leaves `self` (its state already set: runnable, waiting or failed) for a random
// runnable fiber of the block, or for the scheduler when none is left. Returns when
// some fiber switches back to `self`.
void switchFrom(Worker& w, Thread* self) {
    Thread* next = pickNext(w);
    if (next == self) {
        enter(w, self);
        return;
    }
    bctx::fcontext_t target;
    if (next) {
        enter(w, next);
        target = next->fctx;
    } else {
        w.current = nullptr;
        target = w.schedCtx;
    }
#ifdef SCANLAB_EMU_ASAN
    void* fake = nullptr;
    asanStartSwitch(w, &fake, next);
    const bctx::transfer_t t = bctx::jump_fcontext(target, self);
    asanFinishSwitch(w, fake, t.data == kFromScheduler);
    adopt(w, t);
#else
    adopt(w, bctx::jump_fcontext(target, self));
#endif
}

// Records why the running block fails (the first reason wins).
void recordFailure(Worker& w, const std::string& headline, const std::string& detail,
                   int warp = -1, cudaError_t code = cudaErrorLaunchFailure) {
    if (w.failed) return;
    w.failed = true;
    w.errorCode = code;
    std::string where = " in block " + fmtDim(tlsBuiltins.bIdx);
    if (warp >= 0) where += ", warp " + std::to_string(warp);
    w.error = "emulator: kernel " + std::string(w.launch->name) + ": " + headline + where + ": " +
              detail;
}

// Leaves a failed thread for the scheduler, never to come back. Callers build the
// message in a separate statement (SCANLAB_EMU_FAIL) so that no temporary std::string
// is left on the abandoned stack.
[[noreturn]] void abandon(Worker& w, Thread* self) {
    switchFrom(w, self);
    std::fprintf(stderr, "scanlab emulator: internal error: a failed thread was resumed\n");
    std::abort();
}

#define SCANLAB_EMU_FAIL(w, self, ...)   \
    do {                                 \
        recordFailure(w, __VA_ARGS__);   \
        abandon(w, self);                \
    } while (0)

[[noreturn, gnu::cold, gnu::noinline]] void outsideKernel(const char* what, Site site) {
    std::fprintf(stderr,
                 "scanlab emulator: %s called outside a kernel (at %s); it may only be "
                 "called by device code that a launch runs\n",
                 what, formatSite(site).c_str());
    std::abort();
}

inline Worker& inKernel(const char* what, Site site) {
    Worker* w = tlsWorker;
    if (__builtin_expect(w == nullptr || w->current == nullptr, 0)) outsideKernel(what, site);
    return *w;
}

inline Thread& laneThread(Worker& w, unsigned warp, unsigned lane) {
    return w.threads[warp * 32 + lane];
}

// ---------------------------------------------------------------------------------
// Thread exit.

[[gnu::noinline]] void onExit(Worker& w, Thread* self) {
    self->state = State::Exited;
    ++w.exited;
    if (w.firstExited == ~0u) w.firstExited = self->linear;
    const unsigned warp = self->linear / 32, lane = self->linear % 32, bit = 1u << lane;
    Warp& W = w.warps[warp];
    W.exited |= bit;
    for (unsigned m = W.waiting; m; m &= m - 1) {
        Thread& o = laneThread(w, warp, unsigned(__builtin_ctz(m)));
        if (o.mask & bit) {
            unsigned waiters = 0;
            for (unsigned k = W.waiting; k; k &= k - 1) {
                const unsigned l = unsigned(__builtin_ctz(k));
                if (laneThread(w, warp, l).mask & bit) waiters |= 1u << l;
            }
            SCANLAB_EMU_FAIL(w, self, "warp divergence",
                      "lane " + std::to_string(lane) + " (" + threadName(*self) +
                          ") exited while lane(s) " + fmtLanes(waiters) + " wait for it at " +
                          o.opName + " (" + formatSite(o.site) + ") with mask " +
                          fmtMask(o.mask) +
                          "; every lane named in the mask must reach the operation",
                      int(warp));
        }
    }
}

void fiberEntry(bctx::transfer_t t) {
    Worker& w = *tlsWorker;
#ifdef SCANLAB_EMU_ASAN
    asanFinishSwitch(w, nullptr, t.data == kFromScheduler);
#endif
    adopt(w, t);
    Thread* self = w.current;
    // Leave the catch block before failing: a fiber never resumed must not hold a
    // caught exception of this OS thread.
    bool threw = false;
    {
        std::string thrown;
        try {
            w.launch->thunk(w.launch->closure);
        } catch (const std::exception& e) {
            thrown = "threw an exception: " + std::string(e.what());
        } catch (...) {
            thrown = "threw an exception";
        }
        if (!thrown.empty()) {
            recordFailure(w, "C++ exception", threadName(*self) + " " + thrown);
            threw = true;
        }
    }
    if (threw) abandon(w, self);
    onExit(w, self);
    Thread* next = pickNext(w);
#ifdef SCANLAB_EMU_ASAN
    asanStartSwitch(w, nullptr, next);  // nullptr: this fiber is finished
#endif
    if (next) {
        enter(w, next);
        bctx::jump_fcontext(next->fctx, nullptr);
    } else {
        w.current = nullptr;
        bctx::jump_fcontext(w.schedCtx, nullptr);
    }
    std::abort();  // an exited fiber is never resumed
}

// ---------------------------------------------------------------------------------
// Why a block cannot go on: every live thread waits.

std::string describeStuck(Worker& w, std::string& headline) {
    struct Group {
        const char* op;
        Site site;
        unsigned mask;
        unsigned count;
        unsigned first;
    };
    std::vector<Group> barrier, warpOps;
    for (const Thread& t : w.threads) {
        if (t.state == State::AtBarrier || t.state == State::AtWarp) {
            auto& groups = t.state == State::AtBarrier ? barrier : warpOps;
            const unsigned mask = t.state == State::AtWarp ? t.mask : 0;
            auto it = std::find_if(groups.begin(), groups.end(), [&](const Group& g) {
                return g.op == t.opName && g.mask == mask && sameSite(g.site, t.site);
            });
            if (it == groups.end()) {
                groups.push_back(Group{t.opName, t.site, mask, 1, t.linear});
            } else {
                ++it->count;
            }
        }
    }
    const std::string N = std::to_string(w.nThreads);
    const std::string exitedText =
        w.exited == 0 ? std::string()
                      : std::to_string(w.exited) + " exited without reaching it (the first: " +
                            threadName(w.threads[w.firstExited]) + ")";
    if (warpOps.empty() && barrier.size() == 1) {
        headline = "barrier divergence";
        const Group& g = barrier[0];
        return std::string(g.op) + " at " + formatSite(g.site) + " reached by " +
               std::to_string(g.count) + " of " + N + " threads; the other " + exitedText +
               ". Every thread of a block must reach the same __syncthreads(): do not put it in "
               "a branch or loop that only some threads enter, and do not return early";
    }
    if (warpOps.empty()) {
        headline = "barrier divergence";
        std::string s = "threads wait at different __syncthreads() calls: ";
        for (size_t i = 0; i < barrier.size(); ++i) {
            if (i) s += ", ";
            s += std::to_string(barrier[i].count) + " at " + formatSite(barrier[i].site) +
                 " (e.g. " + threadName(w.threads[barrier[i].first]) + ")";
        }
        if (w.exited) s += "; " + std::to_string(w.exited) + " threads exited";
        return s + ". Every thread of a block must reach the same __syncthreads()";
    }
    headline = "deadlock";
    std::string s = "no thread can go on: ";
    bool firstGroup = true;
    for (const Group& g : barrier) {
        s += (firstGroup ? "" : "; ") + std::to_string(g.count) + " thread(s) wait at " + g.op +
             " at " + formatSite(g.site);
        firstGroup = false;
    }
    for (const Group& g : warpOps) {
        s += (firstGroup ? "" : "; ") + std::to_string(g.count) + " thread(s) wait at " + g.op +
             " at " + formatSite(g.site) + " with mask " + fmtMask(g.mask) + " (e.g. " +
             threadName(w.threads[g.first]) + ")";
        firstGroup = false;
    }
    if (w.exited) s += "; " + std::to_string(w.exited) + " thread(s) exited";
    // Explain the first warp wait: which lanes of its mask are elsewhere.
    const Thread& t = w.threads[warpOps[0].first];
    const unsigned warp = t.linear / 32;
    std::string why;
    for (unsigned m = t.mask; m; m &= m - 1) {
        const unsigned l = unsigned(__builtin_ctz(m));
        const Thread& o = laneThread(w, warp, l);
        if (o.state == State::AtWarp && o.mask == t.mask && o.kind == t.kind) continue;
        why = "lane " + std::to_string(t.linear % 32) + " (" + threadName(t) + ") waits for lane " +
              std::to_string(l) + " (" + threadName(o) + "), which ";
        if (o.state == State::AtBarrier) {
            why += "waits at __syncthreads() at " + formatSite(o.site);
        } else if (o.state == State::AtWarp) {
            why += "waits at " + std::string(o.opName) + " at " + formatSite(o.site) +
                   " with mask " + fmtMask(o.mask);
        } else {
            why += "has exited";
        }
        break;
    }
    if (!why.empty()) s += ". " + why;
    return s;
}

// ---------------------------------------------------------------------------------
// Running blocks.

void runBlock(Worker& w, Launch& L, uint64_t b) {
    w.launch = &L;
    w.blockLinear = b;
    tlsBuiltins.bIdx = blockIndexOf(L, b);
    tlsBuiltins.bDim = L.block;
    tlsBuiltins.gDim = L.grid;
    const size_t shBytes = (L.sharedBytes + 15) & ~size_t(15);
    char* sh = w.sharedEnd - shBytes;
    for (size_t i = 0; i < shBytes; i += 4) std::memcpy(sh + i, &kPoisonWord, 4);
    tlsBuiltins.dynamicShared = sh;

    w.rng.state = mix64(L.seed ^ mix64(b + 0x51ed27ull));
    const unsigned n = L.threads;
    w.nThreads = n;
    w.exited = 0;
    w.firstExited = ~0u;
    w.barrierCount = 0;
    w.barrierMismatch = false;
    w.failed = false;
    w.error.clear();
    ensureStacks(w, n);
    w.threads.resize(n);
    const unsigned bx = L.block.x, by = L.block.y;
    w.runnable.clear();
    for (unsigned i = 0; i < n; ++i) {
        Thread& t = w.threads[i];
        t = Thread{};
        t.linear = i;
        t.idx = uint3{i % bx, (i / bx) % by, i / (bx * by)};
        t.fctx = bctx::make_fcontext(w.stackTops[i], w.stackBytes - 4096, fiberEntry);
        w.runnable.push_back(i);
    }
    const unsigned nWarps = (n + 31) / 32;
    w.warps.assign(nWarps, Warp{});
    for (unsigned k = 0; k < nWarps; ++k) {
        const unsigned lanes = std::min(32u, n - k * 32);
        w.warps[k].existing = lanes == 32 ? ~0u : (1u << lanes) - 1;
    }

    Thread* first = pickNext(w);
    enter(w, first);
#ifdef SCANLAB_EMU_ASAN
    for (unsigned i = 0; i < n; ++i) {
        ASAN_UNPOISON_MEMORY_REGION(stackBottom(w, i), size_t(w.stackTops[i] - stackBottom(w, i)));
    }
    void* fake = nullptr;
    asanStartSwitch(w, &fake, first);
    const bctx::transfer_t back = bctx::jump_fcontext(first->fctx, kFromScheduler);
    asanFinishSwitch(w, fake, false);
    adopt(w, back);
#else
    adopt(w, bctx::jump_fcontext(first->fctx, kFromScheduler));
#endif
    // Back when no fiber can run: the block finished, failed or is stuck.
    w.current = nullptr;
    tlsBuiltins.tIdx = uint3{0, 0, 0};
    tlsBuiltins.preemptBudget = kHostBudget;
    if (!w.failed && w.faultMessage[0] != '\0') {
        w.failed = true;
        w.errorCode = cudaErrorIllegalAddress;
        w.error = std::string("emulator: kernel ") + L.name + ": " + w.faultMessage;
    }
    w.faultMessage[0] = '\0';
    if (!w.failed && w.exited != n) {
        std::string headline;
        const std::string detail = describeStuck(w, headline);
        w.failed = true;
        w.errorCode = cudaErrorLaunchFailure;
        w.error = "emulator: kernel " + std::string(L.name) + ": " + headline + " in block " +
                  fmtDim(tlsBuiltins.bIdx) + ": " + detail;
    }
    if (w.failed) {
        std::lock_guard<std::mutex> lock(L.m);
        if (!L.haveError || b < L.errorBlock) {
            L.haveError = true;
            L.errorBlock = b;
            L.errorCode = w.errorCode;
            L.error = w.error;
        }
        L.failed.store(true, std::memory_order_relaxed);
    }
    w.launch = nullptr;
}

void workLoop(Launch& L) {
    Worker& w = thisWorker();
    while (!L.failed.load(std::memory_order_relaxed)) {
        const uint64_t b = L.next.fetch_add(1, std::memory_order_relaxed);
        if (b >= L.blocks) break;
        runBlock(w, L, b);
    }
}

// ---------------------------------------------------------------------------------
// Faults in kernel code (SIGSEGV/SIGBUS): reported as cudaErrorIllegalAddress.

struct sigaction gPrevSegv, gPrevBus;

thread_local int tlsFaultDepth = 0;

void faultHandler(int sig, siginfo_t* info, void* uctx) {
    if (tlsFaultDepth++ > 0) {
        // A fault while handling one (the emulator's own state is damaged, e.g. by a
        // kernel writing far past a __shared__ array): crash with the default action.
        signal(sig, SIG_DFL);
        return;
    }
    Worker* w = tlsWorker;
    if (w != nullptr && w->current != nullptr && w->launch != nullptr && !w->failed) {
        Thread* t = w->current;
        char* addr = static_cast<char*>(info->si_addr);
        const size_t shBytes = (w->launch->sharedBytes + 15) & ~size_t(15);
        char* stackGuard = w->stackGuards[t->linear];
        char thread[64];
        std::snprintf(thread, sizeof thread, "(%u,%u,%u)", t->idx.x, t->idx.y, t->idx.z);
        char block[64];
        std::snprintf(block, sizeof block, "(%u,%u,%u)", tlsBuiltins.bIdx.x,
                      tlsBuiltins.bIdx.y, tlsBuiltins.bIdx.z);
        if (addr >= w->sharedEnd && addr < w->sharedEnd + w->pageBytes) {
            std::snprintf(w->faultMessage, sizeof w->faultMessage,
                          "out-of-bounds access to dynamic shared memory in block %s by thread "
                          "%s: byte %zu of a %zu-byte allocation (the launch asked for %zu "
                          "bytes)",
                          block, thread, size_t(addr - (w->sharedEnd - shBytes)), shBytes,
                          w->launch->sharedBytes);
        } else if (addr >= stackGuard && addr < stackGuard + w->pageBytes) {
            std::snprintf(w->faultMessage, sizeof w->faultMessage,
                          "stack overflow in block %s, thread %s: each emulated thread has %zu "
                          "KiB of stack (set SCANLAB_EMU_STACK_KB for more)",
                          block, thread, w->stackBytes / 1024);
        } else {
            std::snprintf(w->faultMessage, sizeof w->faultMessage,
                          "illegal memory access in block %s by thread %s at address %p "
                          "(an index out of bounds, or a bad pointer)",
                          block, thread, static_cast<void*>(addr));
        }
        // Leave the handler for the scheduler; the faulting fiber is abandoned.
        // SA_NODEFER keeps the signal unblocked afterwards.
        w->current = nullptr;
        tlsFaultDepth = 0;
#ifdef SCANLAB_EMU_ASAN
        asanStartSwitch(*w, nullptr, nullptr);
#endif
        bctx::jump_fcontext(w->schedCtx, nullptr);
    }
    tlsFaultDepth = 0;
    // Not a kernel fault: hand it to whoever handled it before, else crash.
    const struct sigaction& prev = sig == SIGBUS ? gPrevBus : gPrevSegv;
    if ((prev.sa_flags & SA_SIGINFO) && prev.sa_sigaction != nullptr) {
        prev.sa_sigaction(sig, info, uctx);
        return;
    }
    if (prev.sa_handler != SIG_DFL && prev.sa_handler != SIG_IGN && prev.sa_handler != nullptr) {
        prev.sa_handler(sig);
        return;
    }
    signal(sig, SIG_DFL);  // returning re-runs the access: the default action
}

void installFaultHandler() {
    if (!config().catchFaults) return;
    for (int sig : {SIGSEGV, SIGBUS}) {
        struct sigaction cur{};
        sigaction(sig, nullptr, &cur);
        if ((cur.sa_flags & SA_SIGINFO) && cur.sa_sigaction == faultHandler) continue;
        struct sigaction sa{};
        sa.sa_sigaction = faultHandler;
        sa.sa_flags = SA_SIGINFO | SA_ONSTACK | SA_NODEFER;
        sigemptyset(&sa.sa_mask);
        sigaction(sig, &sa, sig == SIGBUS ? &gPrevBus : &gPrevSegv);
    }
}

// ---------------------------------------------------------------------------------
// The worker pool. The launching thread works too; helpers wait for launches.

class Pool {
public:
    ~Pool() { stopHelpers(); }

    void run(Launch& L) {
        const unsigned size = wanted();
        if (size != size_) {
            stopHelpers();
            startHelpers(size);
        }
        const bool useHelpers = !helpers_.empty() && L.blocks > 1;
        if (useHelpers) {
            std::lock_guard<std::mutex> lock(m_);
            job_ = &L;
            busy_ = unsigned(helpers_.size());
            ++generation_;
            cvWork_.notify_all();
        }
        workLoop(L);
        if (useHelpers) {
            std::unique_lock<std::mutex> lock(m_);
            cvDone_.wait(lock, [&] { return busy_ == 0; });
            job_ = nullptr;
        }
    }

    unsigned wanted() const {
        const unsigned n = config().threads;
        return n ? n : defaultThreads();
    }

private:
    void startHelpers(unsigned size) {
        size_ = size;
        stop_ = false;
        // A new helper waits for the *next* launch: it starts from the current
        // generation (launches are serialized, so none is being published now).
        const uint64_t current = generation_;
        for (unsigned i = 1; i < size; ++i) {
            helpers_.emplace_back([this, current] { helperMain(current); });
        }
    }
    void stopHelpers() {
        {
            std::lock_guard<std::mutex> lock(m_);
            stop_ = true;
            cvWork_.notify_all();
        }
        for (auto& t : helpers_) t.join();
        helpers_.clear();
        size_ = 0;
    }
    void helperMain(uint64_t seen) {
        for (;;) {
            Launch* L;
            {
                std::unique_lock<std::mutex> lock(m_);
                cvWork_.wait(lock, [&] { return stop_ || generation_ != seen; });
                if (stop_) return;
                seen = generation_;
                L = job_;
            }
            workLoop(*L);
            std::lock_guard<std::mutex> lock(m_);
            if (--busy_ == 0) cvDone_.notify_all();
        }
    }

    std::mutex m_;
    std::condition_variable cvWork_, cvDone_;
    std::vector<std::thread> helpers_;
    Launch* job_ = nullptr;
    uint64_t generation_ = 0;
    unsigned busy_ = 0;
    unsigned size_ = 0;
    bool stop_ = false;
};

Pool& pool() {
    static Pool p;
    return p;
}
std::mutex gLaunchMutex;

// ---------------------------------------------------------------------------------
// Warp operations.

const char* shuffleName(ShflMode m) {
    switch (m) {
        case ShflMode::Idx: return "__shfl_sync";
        case ShflMode::Up: return "__shfl_up_sync";
        case ShflMode::Down: return "__shfl_down_sync";
        case ShflMode::Xor: return "__shfl_xor_sync";
    }
    return "?";
}
const char* voteName(VoteMode m) {
    switch (m) {
        case VoteMode::Ballot: return "__ballot_sync";
        case VoteMode::Any: return "__any_sync";
        case VoteMode::All: return "__all_sync";
    }
    return "?";
}

// Checks that apply to every warp operation at the call.
[[noreturn, gnu::cold, gnu::noinline]] void badMask(Worker& w, Thread* self, unsigned mask,
                                                   Site site, const char* op) {
    const unsigned warp = self->linear / 32, lane = self->linear % 32;
    const Warp& W = w.warps[warp];
    auto at = [&] { return std::string(op) + " at " + formatSite(site) + ": "; };
    if (!(mask >> lane & 1)) {
        SCANLAB_EMU_FAIL(w, self, "bad warp mask",
                  at() + "mask " + fmtMask(mask) + " leaves out participating lane " +
                      std::to_string(lane) + " (" + threadName(*self) +
                      "); every lane that calls a _sync warp operation must be in its mask",
                  int(warp));
    }
    if (const unsigned missing = mask & ~W.existing) {
        SCANLAB_EMU_FAIL(w, self, "bad warp mask",
                  at() + "mask " + fmtMask(mask) + " names lane(s) " + fmtLanes(missing) +
                      ", which do not exist (the block has " + std::to_string(w.nThreads) +
                      " threads, so its last warp is partial)",
                  int(warp));
    }
    if (const unsigned gone = mask & W.exited) {
        const unsigned l = unsigned(__builtin_ctz(gone));
        SCANLAB_EMU_FAIL(w, self, "warp divergence",
                  at() + "mask " + fmtMask(mask) + " names lane(s) " + fmtLanes(gone) +
                      ", which already exited (e.g. " + threadName(laneThread(w, warp, l)) +
                      "); every lane named in the mask must reach the operation",
                  int(warp));
    }
    std::abort();  // not reached: one of the checks above failed
}

// Checks that apply to every warp operation at the call (the fast path).
inline void checkMask(Worker& w, Thread* self, unsigned mask, Site site, const char* op) {
    const Warp& W = w.warps[self->linear / 32];
    if (__builtin_expect(!(mask >> (self->linear % 32) & 1) || (mask & ~W.existing) != 0 ||
                             (mask & W.exited) != 0,
                         0)) {
        badMask(w, self, mask, site, op);
    }
}

[[noreturn, gnu::cold, gnu::noinline]] void differentOps(Worker& w, Thread* self, const Thread& o,
                                                        unsigned warp, unsigned mask) {
    SCANLAB_EMU_FAIL(w, self, "warp divergence",
                      "the lanes of mask " + fmtMask(mask) +
                          " meet at different warp operations: lane " +
                          std::to_string(self->linear % 32) + " at " + self->opName + " (" +
                          formatSite(self->site) + "), lane " + std::to_string(o.linear % 32) +
                          " at " + o.opName + " (" + formatSite(o.site) + ")",
                      int(warp));
}

// All lanes of `mask` wait at a warp operation with this mask: compute the results
// and release them.
void completeWarpOp(Worker& w, Thread* self, Warp& W, unsigned warp, unsigned mask) {
    for (unsigned m = mask; m; m &= m - 1) {
        const Thread& o = laneThread(w, warp, unsigned(__builtin_ctz(m)));
        if (__builtin_expect(o.kind != self->kind, 0)) differentOps(w, self, o, warp, mask);
    }
    if (self->kind == WarpKind::Shuffle) {
        for (unsigned m = mask; m; m &= m - 1) {
            Thread& o = laneThread(w, warp, unsigned(__builtin_ctz(m)));
            o.result = laneThread(w, warp, unsigned(o.src)).value;
        }
    } else if (self->kind == WarpKind::Vote) {
        unsigned ballot = 0;
        for (unsigned m = mask; m; m &= m - 1) {
            const unsigned l = unsigned(__builtin_ctz(m));
            if (laneThread(w, warp, l).predicate) ballot |= 1u << l;
        }
        for (unsigned m = mask; m; m &= m - 1) {
            Thread& o = laneThread(w, warp, unsigned(__builtin_ctz(m)));
            switch (o.voteMode) {
                case VoteMode::Ballot: o.result = ballot; break;
                case VoteMode::Any: o.result = ballot != 0; break;
                case VoteMode::All: o.result = ballot == mask; break;
            }
        }
    }
    for (unsigned m = mask; m; m &= m - 1) {
        makeRunnable(w, laneThread(w, warp, unsigned(__builtin_ctz(m))));
    }
    W.waiting &= ~mask;
    if (W.mixed) {
        // Recompute whether the lanes still waiting share one mask.
        W.mixed = false;
        bool firstLane = true;
        for (unsigned m = W.waiting; m; m &= m - 1) {
            const unsigned mk = laneThread(w, warp, unsigned(__builtin_ctz(m))).mask;
            if (firstLane) {
                W.commonMask = mk;
                firstLane = false;
            } else if (mk != W.commonMask) {
                W.mixed = true;
            }
        }
    }
}

// A bad shuffle: a width that is not a power of two (source < 0), or a source lane
// outside the mask.
[[noreturn, gnu::cold, gnu::noinline]] void badShuffle(Worker& w, Thread* self, Site site,
                                                      const char* op, unsigned mask, int source,
                                                      int width) {
    const unsigned warp = self->linear / 32;
    if (source < 0) {
        SCANLAB_EMU_FAIL(w, self, "bad shuffle",
                         std::string(op) + " at " + formatSite(site) + ": width " +
                             std::to_string(width) + " is not a power of two from 1 to 32",
                         int(warp));
    }
    SCANLAB_EMU_FAIL(w, self, "bad shuffle",
                     std::string(op) + " at " + formatSite(site) + ": lane " +
                         std::to_string(self->linear % 32) + " (" + threadName(*self) +
                         ") reads lane " + std::to_string(source) + ", which is outside mask " +
                         fmtMask(mask) + "; a shuffle may only read lanes named in its mask",
                     int(warp));
}

// Lane `self` arrives with a mask that differs from the one lane `o` waits with,
// though each names the other.
[[noreturn, gnu::cold, gnu::noinline]] void maskMismatch(Worker& w, Thread* self, const Thread& o) {
    const unsigned warp = self->linear / 32;
    SCANLAB_EMU_FAIL(w, self, "bad warp mask",
                     "lanes name each other with different masks: lane " +
                         std::to_string(self->linear % 32) + " (" + threadName(*self) +
                         ") calls " + self->opName + " at " + formatSite(self->site) +
                         " with mask " + fmtMask(self->mask) + ", while lane " +
                         std::to_string(o.linear % 32) + " waits at " + o.opName + " at " +
                         formatSite(o.site) + " with mask " + fmtMask(o.mask) +
                         "; all lanes of one warp operation must pass the same mask",
                     int(warp));
}

// The calling lane (fields filled in) arrives at a warp operation; returns when the
// operation has completed for it.
void warpArrive(Worker& w, Thread* self) {
    const unsigned warp = self->linear / 32, lane = self->linear % 32, bit = 1u << lane;
    const unsigned mask = self->mask;
    Warp& W = w.warps[warp];
    self->state = State::AtWarp;
    if (W.waiting == 0) {
        W.commonMask = mask;
        W.mixed = false;
    } else if (W.mixed || W.commonMask != mask) {
        W.mixed = true;
        for (unsigned m = W.waiting & mask; m; m &= m - 1) {
            const Thread& o = laneThread(w, warp, unsigned(__builtin_ctz(m)));
            if (o.mask != mask && (o.mask & bit)) maskMismatch(w, self, o);
        }
    }
    W.waiting |= bit;
    if ((W.waiting & mask) == mask) {
        bool same = true;
        if (W.mixed) {
            for (unsigned m = mask; m; m &= m - 1) {
                if (laneThread(w, warp, unsigned(__builtin_ctz(m))).mask != mask) same = false;
            }
        }
        if (same) completeWarpOp(w, self, W, warp, mask);
    }
    switchFrom(w, self);
}

}  // namespace

// ---------------------------------------------------------------------------------
// The device-side entry points (cuda_emu.h).

int syncthreads(Site site, BarrierMode mode, int predicate) {
    Worker& w = inKernel("__syncthreads()", site);
    Thread* self = w.current;
    if (w.barrierCount == 0) {
        w.barrierSite = site;
        w.barrierMode = mode;
        w.barrierMismatch = false;
        w.barrierAcc = mode == BarrierMode::And ? 1 : 0;
    } else if (!sameSite(site, w.barrierSite)) {
        w.barrierMismatch = true;
    }
    switch (mode) {
        case BarrierMode::Plain: break;
        case BarrierMode::Count: w.barrierAcc += predicate; break;
        case BarrierMode::And: w.barrierAcc &= predicate; break;
        case BarrierMode::Or: w.barrierAcc |= predicate; break;
    }
    self->state = State::AtBarrier;
    self->site = site;
    self->opName = "__syncthreads()";
    if (++w.barrierCount == w.nThreads && !w.barrierMismatch) {
        w.barrierCount = 0;
        for (Thread& t : w.threads) {
            t.result = static_cast<unsigned long long>(w.barrierAcc);
            makeRunnable(w, t);
        }
    }
    switchFrom(w, self);
    return static_cast<int>(self->result);
}

void syncwarp(Site site, unsigned mask) {
    Worker& w = inKernel("__syncwarp()", site);
    Thread* self = w.current;
    checkMask(w, self, mask, site, "__syncwarp");
    self->kind = WarpKind::Sync;
    self->opName = "__syncwarp";
    self->site = site;
    self->mask = mask;
    warpArrive(w, self);
}

unsigned long long shuffle(Site site, ShflMode mode, unsigned mask, unsigned long long bits,
                           int srcArg, int width) {
    const char* op = shuffleName(mode);
    Worker& w = inKernel(op, site);
    Thread* self = w.current;
    checkMask(w, self, mask, site, op);
    const int lane = int(self->linear % 32);
    if (__builtin_expect(width < 1 || width > 32 || (width & (width - 1)) != 0, 0)) {
        badShuffle(w, self, site, op, mask, -1, width);
    }
    // PTX shfl.sync semantics: segments of `width` lanes; out of the segment -> own.
    const int segMask = 32 - width;  // the lane bits that select the segment
    const int b = srcArg & 31;
    const int minLane = lane & segMask;
    const int maxLane = minLane | (width - 1);
    int j = lane;
    switch (mode) {
        case ShflMode::Idx: j = minLane | (srcArg & (width - 1)); break;
        case ShflMode::Up: j = lane - b >= minLane ? lane - b : lane; break;
        case ShflMode::Down: j = lane + b <= maxLane ? lane + b : lane; break;
        case ShflMode::Xor: j = (lane ^ b) <= maxLane ? lane ^ b : lane; break;
    }
    if (__builtin_expect(!(mask >> j & 1), 0)) badShuffle(w, self, site, op, mask, j, width);
    self->kind = WarpKind::Shuffle;
    self->opName = op;
    self->site = site;
    self->mask = mask;
    self->src = j;
    self->value = bits;
    warpArrive(w, self);
    return self->result;
}

unsigned vote(Site site, VoteMode mode, unsigned mask, bool predicate) {
    const char* op = voteName(mode);
    Worker& w = inKernel(op, site);
    Thread* self = w.current;
    checkMask(w, self, mask, site, op);
    self->kind = WarpKind::Vote;
    self->voteMode = mode;
    self->opName = op;
    self->site = site;
    self->mask = mask;
    self->predicate = predicate ? 1 : 0;
    warpArrive(w, self);
    return static_cast<unsigned>(self->result);
}

unsigned activeMask() {
    Worker& w = inKernel("__activemask()", Site{"?", 0});
    const Warp& W = w.warps[w.current->linear / 32];
    return W.existing & ~W.exited;
}

void yieldNow() {
    Worker* w = tlsWorker;
    if (w == nullptr || w->current == nullptr) return;
    Thread* self = w->current;
    makeRunnable(*w, *self);
    switchFrom(*w, self);
}

void preemptSlow() {
    Worker* w = tlsWorker;
    if (w == nullptr || w->current == nullptr) {
        tlsBuiltins.preemptBudget = kHostBudget;
        return;
    }
    yieldNow();
}

void trap(Site site, const char* what) {
    Worker& w = inKernel(what, site);
    SCANLAB_EMU_FAIL(w, w.current, "trap",
              threadName(*w.current) + " called " + what + " at " + formatSite(site));
}

cudaError_t launchErased(const char* name, dim3 grid, dim3 block, size_t sharedBytes,
                         KernelThunk thunk, const void* closure) {
    loadConfig();
    const std::string prefix = "emulator: kernel " + std::string(name) + ": ";
    if (tlsWorker != nullptr && tlsWorker->current != nullptr) {
        recordError(cudaErrorNotSupported,
                    prefix + "launched from device code (dynamic parallelism is not emulated)");
        return cudaErrorNotSupported;
    }
    const uint64_t threads = uint64_t(block.x) * block.y * block.z;
    if (block.x == 0 || block.y == 0 || block.z == 0 || threads > kMaxThreadsPerBlock ||
        block.z > 64) {
        recordError(cudaErrorInvalidConfiguration,
                    prefix + "invalid block size " + fmtDim(block) + " (" +
                        std::to_string(threads) +
                        " threads): a block has 1 to 1024 threads, at most 64 in z");
        return cudaErrorInvalidConfiguration;
    }
    if (grid.x == 0 || grid.y == 0 || grid.z == 0 || grid.x > 0x7fffffffu || grid.y > 65535 ||
        grid.z > 65535) {
        recordError(cudaErrorInvalidConfiguration,
                    prefix + "invalid grid size " + fmtDim(grid) +
                        ": each dimension is at least 1 (x at most 2^31-1, y and z at most "
                        "65535)");
        return cudaErrorInvalidConfiguration;
    }
    if (sharedBytes > kMaxDynamicShared) {
        recordError(cudaErrorInvalidValue,
                    prefix + "asks for " + std::to_string(sharedBytes) +
                        " bytes of dynamic shared memory; a block may have at most " +
                        std::to_string(kMaxDynamicShared) + " (48 KiB)");
        return cudaErrorInvalidValue;
    }

    std::lock_guard<std::mutex> lock(gLaunchMutex);
    installFaultHandler();
    Launch L;
    L.name = name;
    L.grid = grid;
    L.block = block;
    L.sharedBytes = sharedBytes;
    L.thunk = thunk;
    L.closure = closure;
    L.blocks = uint64_t(grid.x) * grid.y * grid.z;
    L.threads = unsigned(threads);
    const uint64_t k = config().launches.fetch_add(1);
    L.seed = mix64(config().seed ^ mix64(k));
    pool().run(L);
    if (L.haveError) {
        recordError(L.errorCode, L.error);
        return L.errorCode;
    }
    return cudaSuccess;
}

}  // namespace scanlab::emu::detail

namespace scanlab::emu {

uint64_t scheduleSeed() {
    detail::loadConfig();
    return detail::config().seed;
}

void setScheduleSeed(uint64_t seed) {
    detail::loadConfig();
    std::lock_guard<std::mutex> lock(detail::gLaunchMutex);
    detail::config().seed = seed;
    detail::config().launches.store(0);
}

unsigned workerThreads() {
    detail::loadConfig();
    return detail::pool().wanted();
}

void setWorkerThreads(unsigned n) {
    detail::loadConfig();
    std::lock_guard<std::mutex> lock(detail::gLaunchMutex);
    detail::config().threads = n;
}

size_t threadStackBytes() {
    detail::loadConfig();
    return detail::config().stackBytes;
}

uint64_t launchCount() { return detail::config().launches.load(); }

}  // namespace scanlab::emu
