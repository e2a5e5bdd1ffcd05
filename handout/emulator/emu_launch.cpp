// scanlab CPU emulator: launch checks, the worker pool, and the public emu:: settings.
// (emu_scheduler.h lists the parts.)
#include "emulator/emu_scheduler.h"

namespace scanlab::emu::detail {

namespace {

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
        L.participants = useHelpers ? unsigned(helpers_.size()) + 1 : 1;
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


}  // namespace

std::mutex gLaunchMutex;

// Grids up to this many blocks start in a shuffled order (4 MiB of indices at most).
constexpr uint64_t kMaxShuffledBlocks = uint64_t(1) << 20;

namespace {
// setLaunchArguments's list, for the calling thread's next launch.
thread_local std::vector<const void*> tlsNextArguments;
}  // namespace

cudaError_t launchErased(const char* name, dim3 grid, dim3 block, size_t sharedBytes,
                         KernelThunk thunk, const void* closure) {
    loadConfig();
    std::vector<const void*> arguments = std::move(tlsNextArguments);
    tlsNextArguments.clear();
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
    L.arguments = std::move(arguments);
    L.blocks = uint64_t(grid.x) * grid.y * grid.z;
    L.threads = unsigned(threads);
    const uint64_t k = config().launches.fetch_add(1);
    L.seed = mix64(config().seed ^ mix64(k));
    L.laneOrder = config().laneOrder;
    if (L.blocks > 1 && L.blocks <= kMaxShuffledBlocks) {
        // Fisher-Yates from the launch's seed: the blocks start in a random order.
        L.order.resize(L.blocks);
        for (uint32_t i = 0; i < L.blocks; ++i) L.order[i] = i;
        Rng rng{mix64(L.seed ^ 0x626c6f636b73ull)};  // "blocks"
        for (uint64_t i = L.blocks - 1; i > 0; --i) {
            const uint64_t j = rng.next() % (i + 1);
            std::swap(L.order[i], L.order[j]);
        }
    }
    LaunchProfile profile;
    if (gProfilingRequested && gProfileBlockEnd) L.profile = &profile;
    pool().run(L);
    if (L.profile) gProfiles.push_back(KernelProfile{name, grid, block, profile.counters});
    // Guards are checked (and restored) after every launch, even a failed one.
    const std::string overrun = checkGuards(name, L.arguments);
    if (L.haveError) {
        recordError(L.errorCode, L.error);
        return L.errorCode;
    }
    if (!overrun.empty()) {
        recordError(cudaErrorIllegalAddress, overrun);
        return cudaErrorIllegalAddress;
    }
    return cudaSuccess;
}

void setLaunchArguments(const void* const* pointers, size_t count) {
    tlsNextArguments.assign(pointers, pointers + count);
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

void setLaneOrder(LaneOrder order) {
    detail::loadConfig();
    std::lock_guard<std::mutex> lock(detail::gLaunchMutex);
    detail::config().laneOrder = order;
}

LaneOrder laneOrder() {
    detail::loadConfig();
    return detail::config().laneOrder;
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
