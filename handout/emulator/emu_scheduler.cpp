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
#include <cstdlib>

#include "emulator/emu_bounds.h"
#include "emulator/emu_race.h"
#include "emulator/emu_scheduler.h"

namespace scanlab::emu::detail {

thread_local SCANLAB_EMU_CONSTINIT Builtins tlsBuiltins{};

thread_local std::unique_ptr<Worker> tlsWorkerOwner;
thread_local SCANLAB_EMU_CONSTINIT Worker* tlsWorker = nullptr;

char gSchedulerTag;
void* const kFromScheduler = &gSchedulerTag;

// ---------------------------------------------------------------------------------
// Configuration.

namespace {

// An unsigned environment setting; `fallback` when unset or malformed.
uint64_t envUnsigned(const char* name, uint64_t fallback) {
    const char* s = std::getenv(name);
    if (s == nullptr || *s == '\0') return fallback;
    char* end = nullptr;
    const unsigned long long v = std::strtoull(s, &end, 0);
    if (end == s || *end != '\0') return fallback;
    return v;
}

}  // namespace

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
void recordFailure(Worker& w, const std::string& headline, const std::string& detail, int warp,
                   cudaError_t code) {
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


[[noreturn, gnu::cold, gnu::noinline]] void outsideKernel(const char* what, Site site) {
    std::fprintf(stderr,
                 "scanlab emulator: %s called outside a kernel (at %s); it may only be "
                 "called by device code that a launch runs\n",
                 what, formatSite(site).c_str());
    std::abort();
}

// ---------------------------------------------------------------------------------
// Thread exit.

[[gnu::noinline]] void onExit(Worker& w, Thread* self) {
    self->state = State::Exited;
    ++w.exited;
    madeProgress(w);
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

// LanesInOrder: the lowest runnable lane of the picked thread's warp; WarpsInOrder: a
// runnable thread of the lowest warp that has one, at random (from `i` on). Only the
// re-runs that name a missing barrier use these, so a scan of the runnable list is fine.
uint32_t orderedPick(const Worker& w, uint32_t i) {
    // While a thread spins (forced yields since the last barrier or exit), at random: a
    // fixed order could keep picking the spinner and never the thread it waits for.
    if (w.spinsWithoutProgress > 0) return i;
    const uint32_t n = uint32_t(w.runnable.size());
    if (w.launch->laneOrder == LaneOrder::LanesInOrder) {
        const unsigned warp = w.runnable[i] / 32;
        for (uint32_t k = 0; k < n; ++k)
            if (w.runnable[k] / 32 == warp && w.runnable[k] < w.runnable[i]) i = k;
        return i;
    }
    unsigned lowest = ~0u;
    for (uint32_t k = 0; k < n; ++k) lowest = std::min(lowest, w.runnable[k] / 32);
    for (uint32_t k = 0; k < n; ++k) {
        const uint32_t j = (i + k) % n;
        if (w.runnable[j] / 32 == lowest) return j;
    }
    return i;
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
    // A program with `extern __shared__` arrays has them all at one worker-local address
    // (cmake/emu_extern_shared.cmake): the dynamic shared memory starts there, so the
    // harness's pointer and the student's arrays are the same memory (as on a GPU), but
    // with no guard page after it.
    char* sh = scanlab_emu_extern_shared_base ? static_cast<char*>(scanlab_emu_extern_shared_base())
                                              : w.sharedEnd - shBytes;
    for (size_t i = 0; i < shBytes; i += 4) std::memcpy(sh + i, &kPoisonWord, 4);
    tlsBuiltins.dynamicShared = sh;
    raceBlockStart(w);

    w.rng.state = mix64(L.seed ^ mix64(b + 0x51ed27ull));
    const unsigned n = L.threads;
    w.nThreads = n;
    w.exited = 0;
    w.firstExited = ~0u;
    w.barrierCount = 0;
    w.barrierMismatch = false;
    w.failed = false;
    w.stoppedByOther = false;
    w.spinsWithoutProgress = 0;
    w.voteRound = ~uint64_t(0);
    w.roundYields = 0;
    w.voted = false;
    w.parkedAtActiveMask = 0;
    w.stuck = false;
    w.error.clear();
    w.accessPc = nullptr;
    w.spinStacks.clear();
    tlsBounds = BoundsCache{};
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
        w.errorCode = w.faultCode;
        w.error = std::string("emulator: kernel ") + L.name + ": " + w.faultMessage;
        if (const std::string line = describeStudentCode(w.faultPcs, size_t(w.faultDepth), true);
            !line.empty())
            w.error += ", at " + line;
    }
    w.faultMessage[0] = '\0';
    w.faultDepth = 0;
    if (w.accessPc != nullptr) {
        if (const std::string line = describeCodeAddress(w.accessPc); !line.empty())
            w.error += ", at " + line;
        w.accessPc = nullptr;
    }
    if (L.profile) gProfileBlockEnd(w);
    madeProgress(w);  // no longer stuck: it is leaving
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
        if (!L.haveError || (b < L.errorBlock && !w.stoppedByOther)) {
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
    L.workers.fetch_add(1);
    while (!L.failed.load(std::memory_order_relaxed)) {
        const uint64_t k = L.next.fetch_add(1, std::memory_order_relaxed);
        if (k >= L.blocks) break;
        runBlock(w, L, L.blockAt(k));
    }
    L.workers.fetch_sub(1);
}

void madeProgress(Worker& w) {
    w.spinsWithoutProgress = 0;
    Launch& L = *w.launch;
    const bool wasStuck = w.stuck;
    if (w.stuck) {
        w.stuck = false;
        L.stuck.fetch_sub(1);
    }
    // A new round of the deadlock vote: what was counted so far is void. Also when this
    // worker was the only stuck one: else its vote would stay, and its next block's vote
    // in the same round would count as a second worker's (a false deadlock).
    if (wasStuck || L.stuck.load(std::memory_order_relaxed) != 0)
        L.round.fetch_add(1, std::memory_order_relaxed);
}

// ---------------------------------------------------------------------------------
// The device-side entry points (cuda_emu.h).

int syncthreads(Site site, BarrierMode mode, int predicate) {
    site.pc = __builtin_return_address(0);
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
        ++w.profileBarriers;
        raceBarrier(w);
        madeProgress(w);
        for (Thread& t : w.threads) {
            t.result = static_cast<unsigned long long>(w.barrierAcc);
            makeRunnable(w, t);
        }
    }
    switchFrom(w, self);
    return static_cast<int>(self->result);
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
    checkSpinning(*w, w->current);
    // A lane that spins may wait for a lane parked in __activemask(): answer those now.
    if (w->parkedAtActiveMask != 0) releaseActiveMask(*w);
    yieldNow();
}

void trap(Site site, const char* what) {
    site.pc = __builtin_return_address(0);
    Worker& w = inKernel(what, site);
    SCANLAB_EMU_FAIL(w, w.current, "trap",
              threadName(*w.current) + " called " + what + " at " + formatSite(site));
}

}  // namespace scanlab::emu::detail
