// scanlab CPU emulator: the CUDA names the harness and the kernels use, for a plain
// C++20 compiler (g++, no nvcc). harness/platform.cuh includes this header when
// __CUDACC__ is not defined. See emulator/README.md for what is modelled.
//
// How a launch runs: the blocks of the grid are spread over a pool of worker threads
// (one block at a time per worker); the threads of a block are fibers (Boost.Context)
// on that worker. A fiber runs until it reaches a synchronization point
// (__syncthreads, __syncwarp, a shuffle or vote) or exits; then a randomly chosen
// runnable fiber of the block continues. Misuse of the primitives (barrier
// divergence, bad masks, deadlocks) stops the kernel with a diagnostic, returned by
// cudaGetLastError() / cudaGetErrorString().
#pragma once

#include "emulator/emu_constinit.h"
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <type_traits>
#include <vector>

// ----------------------------------------------------------------------------------
// Qualifiers. __restrict__ is a keyword of g++ and clang already.
#define __global__
#define __device__
#define __host__
// Constant memory is ordinary (writable) memory here; the attribute changes nothing
// but stays in the preprocessed code, where the grader's code rules
// (tools/code_rules.py: constant_names) see which variables were declared __constant__
// (device code cannot write those on a GPU: no state between launches).
#define __constant__ __attribute__((__visibility__("default")))
#define __managed__
// Always inlined, as nvcc does: the harness's helpers (tile_io.cuh) then sit in the
// student's kernel, and an access they make is reported at the student's line.
#define __forceinline__ inline __attribute__((always_inline))
#define __noinline__ __attribute__((noinline))
#define __launch_bounds__(...)
#define __align__(n) __attribute__((aligned(n)))
// All fibers of a block run on one worker thread, and a worker runs one block at a
// time, so a thread_local variable (static at block scope) is exactly one copy per
// running block. Note that it is NOT reset between blocks (see README: uninitialized
// shared memory). Not `static thread_local`: `extern __shared__ T a[];` (dynamic shared
// memory) must compile too; the link gives such arrays the block's dynamic shared
// memory (cmake/emu_extern_shared.cmake).
#define __shared__ thread_local

// ----------------------------------------------------------------------------------
// Vector types (dim3, uint3, int2, float4, ...).
#include "emulator/cuda_emu_vector_types.h"

// ----------------------------------------------------------------------------------
// Runtime API types.
enum cudaError_t {
    cudaSuccess = 0,
    cudaErrorInvalidValue = 1,
    cudaErrorMemoryAllocation = 2,
    cudaErrorInitializationError = 3,
    cudaErrorInvalidConfiguration = 9,
    cudaErrorInvalidSymbol = 13,
    cudaErrorInvalidDevicePointer = 17,
    cudaErrorInvalidMemcpyDirection = 21,
    cudaErrorNoDevice = 100,
    cudaErrorInvalidDevice = 101,
    cudaErrorInvalidResourceHandle = 400,
    cudaErrorNotReady = 600,
    cudaErrorIllegalAddress = 700,
    cudaErrorLaunchOutOfResources = 701,
    cudaErrorLaunchTimeout = 702,
    cudaErrorAssert = 710,
    cudaErrorLaunchFailure = 719,
    cudaErrorNotSupported = 801,
    cudaErrorUnknown = 999,
};
using cudaError = cudaError_t;

enum cudaMemcpyKind {
    cudaMemcpyHostToHost = 0,
    cudaMemcpyHostToDevice = 1,
    cudaMemcpyDeviceToHost = 2,
    cudaMemcpyDeviceToDevice = 3,
    cudaMemcpyDefault = 4,
};

struct cudaDeviceProp {
    char name[256];
    size_t totalGlobalMem;
    size_t sharedMemPerBlock;
    int regsPerBlock;
    int warpSize;
    size_t memPitch;
    int maxThreadsPerBlock;
    int maxThreadsDim[3];
    int maxGridSize[3];
    int clockRate;
    size_t totalConstMem;
    int major;
    int minor;
    size_t textureAlignment;
    int deviceOverlap;
    int multiProcessorCount;
    int kernelExecTimeoutEnabled;
    int integrated;
    int canMapHostMemory;
    int computeMode;
    int concurrentKernels;
    int ECCEnabled;
    int pciBusID;
    int pciDeviceID;
    int memoryClockRate;
    int memoryBusWidth;
    int l2CacheSize;
    int maxThreadsPerMultiProcessor;
    size_t sharedMemPerMultiprocessor;
    int regsPerMultiprocessor;
    size_t sharedMemPerBlockOptin;
    int maxBlocksPerMultiProcessor;
};

using cudaEvent_t = struct CUevent_st*;
using cudaStream_t = struct CUstream_st*;

// ----------------------------------------------------------------------------------
// Emulator internals the inline code below needs. Not part of the CUDA API.
namespace scanlab::emu {

constexpr bool isEmulator = true;

namespace detail {

// A source location, captured by the macros below so diagnostics name the line; and,
// when the call is inside a harness helper that takes the caller's location
// (SCANLAB_CALLER_SITE, harness/warp.cuh), the line that called the helper.
struct CallerSite {
    const char* file;
    int line;
};
struct Site {
    const char* file;
    int line;
    const char* callerFile = nullptr;
    int callerLine = 0;
    // Set by the emulator's entry point (its return address): the code that called it,
    // which messages name by the student's line where the line tables tell it
    // (emu_bounds.h), through harness helpers inlined there.
    const void* pc = nullptr;
};

// The built-in variables of the running fiber. The scheduler copies the fiber's
// threadIdx in on every switch; the rest is set per block / per launch.
struct Builtins {
    uint3 tIdx;  // threadIdx
    uint3 bIdx;  // blockIdx
    dim3 bDim;   // blockDim
    dim3 gDim;   // gridDim
    void* dynamicShared;
    int preemptBudget;  // atomics/fences left before a forced yield (spin loops)
};
extern thread_local SCANLAB_EMU_CONSTINIT Builtins tlsBuiltins;
inline const Builtins& builtins() { return tlsBuiltins; }

// The most dynamic shared memory a launch may ask for (a GPU's default limit).
inline constexpr size_t kMaxDynamicSharedBytes = 48 * 1024;

enum class ShflMode : unsigned char { Idx, Up, Down, Xor };
enum class VoteMode : unsigned char { Ballot, Any, All };
enum class BarrierMode : unsigned char { Plain, Count, And, Or };

int syncthreads(Site site, BarrierMode mode, int predicate);
void syncwarp(Site site, unsigned mask);
unsigned long long shuffle(Site site, ShflMode mode, unsigned mask, unsigned long long bits,
                           int lane, int width);
unsigned vote(Site site, VoteMode mode, unsigned mask, bool predicate);
unsigned activeMask();
void preemptSlow();
[[noreturn]] void trap(Site site, const char* what);
void yieldNow();

// Called by atomics and fences: a thread spinning on a flag that another thread of
// its block must set would otherwise never give up its worker.
inline void preemptionPoint() {
    if (--tlsBuiltins.preemptBudget <= 0) preemptSlow();
}

template <class To, class From>
inline To bitCast(From from) {
    static_assert(sizeof(To) == sizeof(From));
    To to;
    std::memcpy(&to, &from, sizeof to);
    return to;
}

// Always inlined, so that the call to shuffle() is in the caller's code (Site::pc).
template <class T>
inline __attribute__((always_inline)) T shuffleAny(Site site, ShflMode mode, unsigned mask, T var, int lane, int width) {
    static_assert(sizeof(T) == 4 || sizeof(T) == 8);
    unsigned long long bits = 0;
    std::memcpy(&bits, &var, sizeof(T));
    bits = shuffle(site, mode, mask, bits, lane, width);
    T out;
    std::memcpy(&out, &bits, sizeof(T));
    return out;
}

// CUDA's overload set of the shuffles: smaller integers promote to int.
#define SCANLAB_EMU_SHUFFLE_OVERLOAD(T)                                                 \
    inline __attribute__((always_inline)) T shfl(Site s, ShflMode m, unsigned mask, T var, int lane, int width = 32) { \
        return shuffleAny<T>(s, m, mask, var, lane, width);                             \
    }
SCANLAB_EMU_SHUFFLE_OVERLOAD(int)
SCANLAB_EMU_SHUFFLE_OVERLOAD(unsigned int)
SCANLAB_EMU_SHUFFLE_OVERLOAD(long)
SCANLAB_EMU_SHUFFLE_OVERLOAD(unsigned long)
SCANLAB_EMU_SHUFFLE_OVERLOAD(long long)
SCANLAB_EMU_SHUFFLE_OVERLOAD(unsigned long long)
SCANLAB_EMU_SHUFFLE_OVERLOAD(float)
SCANLAB_EMU_SHUFFLE_OVERLOAD(double)
#undef SCANLAB_EMU_SHUFFLE_OVERLOAD

using KernelThunk = void (*)(const void* closure);
// The arguments of the next launch made by this thread, in the kernel's parameter order:
// each pointer's value, nullptr for one that is not a pointer. An out-of-bounds message
// then says which parameter of the kernel pointed into the buffer (its name is not
// known here). harness/tasks/launch.cuh sets them (launchKernel, instantiated in the
// student unit: in `detail`, the calls the grader's object check lets it make); the
// launch uses them up.
void setLaunchArguments(const void* const* pointers, size_t count);
template <class T>
inline const void* launchArgumentPointer(const T& value) {
    if constexpr (std::is_pointer_v<T>) return static_cast<const void*>(value);
    return nullptr;
}
cudaError_t launchErased(const char* name, dim3 grid, dim3 block, size_t dynamicSharedBytes,
                         KernelThunk thunk, const void* closure);

}  // namespace detail

// Runs `kernel()` (a callable; every thread of the grid calls it) on grid x block
// threads with `dynamicSharedBytes` of dynamic shared memory. Synchronous: returns
// when the grid has finished. Errors are reported as a CUDA launch would: through
// cudaGetLastError() (and the return value).
template <class F>
cudaError_t launch(const char* name, dim3 grid, dim3 block, size_t dynamicSharedBytes,
                   F&& kernel) {
    using Fn = std::remove_reference_t<F>;
    static_assert(std::is_invocable_v<const Fn&>,
                  "scanlab::emu::launch: the kernel callable must be const-callable with no "
                  "arguments (every thread calls the same object)");
    return detail::launchErased(
        name, grid, block, dynamicSharedBytes,
        [](const void* closure) { (*static_cast<const Fn*>(closure))(); }, &kernel);
}

// The dynamic shared memory of the calling thread's block: the byte count the launch
// asked for, 16-byte aligned, filled with a poison pattern when the block starts.
inline void* dynamicSharedMemory() { return detail::tlsBuiltins.dynamicShared; }

// The schedule seed. Launch k of the program draws its schedule from (seed, k), so a
// run is reproducible given the seed, and successive launches differ. The default
// comes from SCANLAB_EMU_SEED (a number, or "random"), else a fixed value.
// setScheduleSeed also restarts the launch count.
uint64_t scheduleSeed();
void setScheduleSeed(uint64_t seed);

// Worker threads (= blocks running at once): SCANLAB_EMU_THREADS, else the number of
// hardware threads. setWorkerThreads(0) goes back to that default.
unsigned workerThreads();
void setWorkerThreads(unsigned n);

// Stack bytes of each emulated GPU thread (SCANLAB_EMU_STACK_KB, default 64 KiB).
size_t threadStackBytes();

// Launches run so far (the k above).
uint64_t launchCount();

// The order in which the threads of a block run between synchronization points. Random
// (the default) finds races; the two fixed orders are for telling which barrier a race
// misses (harness/host/run.h): LanesInOrder runs the lanes of a warp in lane order
// 0, 1, ..., 31 as a warp in lockstep issues them, the warps still at random; WarpsInOrder
// runs the warps of a block in order, the lanes of each at random.
enum class LaneOrder : unsigned char { Random, LanesInOrder, WarpsInOrder };
void setLaneOrder(LaneOrder order);
LaneOrder laneOrder();

// Names the cudaMalloc allocation at `p` (a pointer cudaMalloc returned) for
// diagnostics: an access past its end is then reported as "out[1000], one past the
// end of `out` (n = 1000)" instead of as a byte offset. `elementBytes` is sizeof one element.
void nameAllocation(const void* p, const char* name, size_t elementBytes);

// Performance counters of a launch (emu_profile_hooks.cpp explains how they are
// counted). A warp request is the lanes of a warp executing one memory instruction.
struct KernelCounters {
    uint64_t globalLoadRequests = 0, globalLoadSectors = 0, globalLoadIdealSectors = 0;
    uint64_t globalStoreRequests = 0, globalStoreSectors = 0, globalStoreIdealSectors = 0;
    uint64_t sharedRequests = 0, sharedWavefronts = 0;  // 1 wavefront a request: no conflict
    // The fewest wavefronts each shared request's bytes allow (its distinct words / 32: a
    // 16-byte access of 32 lanes needs 4 without any conflict).
    uint64_t sharedIdealWavefronts = 0;
    uint64_t laneSlots = 0;  // lanes used, summed over all requests (32 a request at best)
    uint64_t barriers = 0;  // __syncthreads passed, summed over blocks
    uint64_t warpOps = 0;  // shuffles, votes and __syncwarp completed, over warps
    uint64_t maxWarpGlobalRequests = 0;  // the most global requests one warp issued
    // Spin-wait polls: a thread's load of the same global address at the same place
    // as its last one there (a wait for another block's state). Not in the requests.
    uint64_t pollLoads = 0;
    uint64_t maxWarpPolls = 0;  // the most polls of one warp
    // With each warp's recent sectors counted once (a cache, roughly): the sectors that
    // go to memory, and the most loads of one warp that wait for memory.
    uint64_t dramSectors = 0;
    uint64_t maxWarpMissRequests = 0;
    uint64_t maxWarpMissEpochs = 0;  // of those, the stretches between barriers with one
    uint64_t maxWarpLoadRequests = 0;  // the most global loads of one warp (misses and hits)
    uint64_t maxBlockBarriers = 0;     // the most __syncthreads one block passed
    void add(const KernelCounters& other);
};
struct KernelProfile {
    std::string name;
    dim3 grid, block;
    KernelCounters counters;
};
// Only the profile build (whose student unit is instrumented) can count.
bool profilingAvailable();
// While on, every launch appends its KernelProfile; takeProfiles() hands them over.
void setProfiling(bool on);
std::vector<KernelProfile> takeProfiles();

}  // namespace scanlab::emu

// ----------------------------------------------------------------------------------
// Built-in variables.
#define threadIdx (::scanlab::emu::detail::builtins().tIdx)
#define blockIdx (::scanlab::emu::detail::builtins().bIdx)
#define blockDim (::scanlab::emu::detail::builtins().bDim)
#define gridDim (::scanlab::emu::detail::builtins().gDim)
inline constexpr int warpSize = 32;

// ----------------------------------------------------------------------------------
// Synchronization. Macros, so that diagnostics can name the source line.
// scanlab_emu_caller: the parameter of a helper declared with SCANLAB_CALLER_SITE where
// there is one in scope (found by ordinary name lookup), else the global null one.
inline constexpr ::scanlab::emu::detail::CallerSite scanlab_emu_caller{nullptr, 0};
#define SCANLAB_EMU_SITE                                                                 \
    (::scanlab::emu::detail::Site{__FILE__, __LINE__, scanlab_emu_caller.file,            \
                                  scanlab_emu_caller.line})
// A helper's last parameter: the location of the call to it, which messages name first.
#define SCANLAB_CALLER_SITE                                                              \
    ::scanlab::emu::detail::CallerSite scanlab_emu_caller = {__builtin_FILE(), __builtin_LINE()}
#define __syncthreads()                                                               \
    ((void)::scanlab::emu::detail::syncthreads(SCANLAB_EMU_SITE,                      \
                                               ::scanlab::emu::detail::BarrierMode::Plain, 0))
#define __syncthreads_count(pred)                                                                \
    ::scanlab::emu::detail::syncthreads(SCANLAB_EMU_SITE,                                        \
                                        ::scanlab::emu::detail::BarrierMode::Count, (pred) ? 1 : 0)
#define __syncthreads_and(pred)                                                                  \
    ::scanlab::emu::detail::syncthreads(SCANLAB_EMU_SITE,                                        \
                                        ::scanlab::emu::detail::BarrierMode::And, (pred) ? 1 : 0)
#define __syncthreads_or(pred)                                                                   \
    ::scanlab::emu::detail::syncthreads(SCANLAB_EMU_SITE,                                        \
                                        ::scanlab::emu::detail::BarrierMode::Or, (pred) ? 1 : 0)
#define SCANLAB_EMU_SYNCWARP_MASK(mask, ...) (mask)
#define __syncwarp(...)                                                      \
    ::scanlab::emu::detail::syncwarp(SCANLAB_EMU_SITE,                       \
                                     SCANLAB_EMU_SYNCWARP_MASK(__VA_ARGS__ __VA_OPT__(,) 0xffffffffu))

#define __shfl_sync(...) \
    ::scanlab::emu::detail::shfl(SCANLAB_EMU_SITE, ::scanlab::emu::detail::ShflMode::Idx, __VA_ARGS__)
#define __shfl_up_sync(...) \
    ::scanlab::emu::detail::shfl(SCANLAB_EMU_SITE, ::scanlab::emu::detail::ShflMode::Up, __VA_ARGS__)
#define __shfl_down_sync(...) \
    ::scanlab::emu::detail::shfl(SCANLAB_EMU_SITE, ::scanlab::emu::detail::ShflMode::Down, __VA_ARGS__)
#define __shfl_xor_sync(...) \
    ::scanlab::emu::detail::shfl(SCANLAB_EMU_SITE, ::scanlab::emu::detail::ShflMode::Xor, __VA_ARGS__)

#define __ballot_sync(mask, pred)                                                               \
    ::scanlab::emu::detail::vote(SCANLAB_EMU_SITE, ::scanlab::emu::detail::VoteMode::Ballot, \
                                 (mask), (pred) ? true : false)
#define __any_sync(mask, pred)                                                                       \
    static_cast<int>(::scanlab::emu::detail::vote(                                                \
        SCANLAB_EMU_SITE, ::scanlab::emu::detail::VoteMode::Any, (mask), (pred) ? true : false))
#define __all_sync(mask, pred)                                                                       \
    static_cast<int>(::scanlab::emu::detail::vote(                                                \
        SCANLAB_EMU_SITE, ::scanlab::emu::detail::VoteMode::All, (mask), (pred) ? true : false))

// The lanes of the calling warp that have not exited. (On a GPU: the lanes executing
// together right now, which after divergence can be fewer.)
inline unsigned __activemask() { return ::scanlab::emu::detail::activeMask(); }

#define __trap() ::scanlab::emu::detail::trap(SCANLAB_EMU_SITE, "__trap()")
// A sleep in a spin loop: the other threads run, and it counts towards "deadlock between
// blocks" as a forced yield does.
inline void __nanosleep(unsigned) { ::scanlab::emu::detail::preemptSlow(); }

// ----------------------------------------------------------------------------------
// Memory fences (also points where a spinning thread lets the others run).
inline void __threadfence_block() {
    __atomic_thread_fence(__ATOMIC_SEQ_CST);
    ::scanlab::emu::detail::preemptionPoint();
}
inline void __threadfence() { __threadfence_block(); }
inline void __threadfence_system() { __threadfence_block(); }

// ----------------------------------------------------------------------------------
// Atomics: relaxed read-modify-write operations on any memory, as on the GPU.
namespace scanlab::emu::detail {
template <class T, class F>
inline T atomicUpdate(T* address, F f) {
    using Bits = std::conditional_t<sizeof(T) == 4, unsigned, unsigned long long>;
    Bits* p = reinterpret_cast<Bits*>(address);
    Bits old = __atomic_load_n(p, __ATOMIC_RELAXED);
    for (;;) {
        const Bits desired = bitCast<Bits>(f(bitCast<T>(old)));
        if (__atomic_compare_exchange_n(p, &old, desired, true, __ATOMIC_RELAXED,
                                        __ATOMIC_RELAXED)) {
            break;
        }
    }
    preemptionPoint();
    return bitCast<T>(old);
}
template <class T>
inline T atomicFetchAdd(T* a, T v) {
    const T old = __atomic_fetch_add(a, v, __ATOMIC_RELAXED);
    preemptionPoint();
    return old;
}
}  // namespace scanlab::emu::detail

#define SCANLAB_EMU_ATOMIC_INT(T)                                                            \
    inline T atomicAdd(T* a, T v) { return ::scanlab::emu::detail::atomicFetchAdd(a, v); }  \
    inline T atomicExch(T* a, T v) {                                                         \
        const T old = __atomic_exchange_n(a, v, __ATOMIC_RELAXED);                           \
        ::scanlab::emu::detail::preemptionPoint();                                           \
        return old;                                                                          \
    }                                                                                        \
    inline T atomicCAS(T* a, T compare, T v) {                                               \
        __atomic_compare_exchange_n(a, &compare, v, false, __ATOMIC_RELAXED, __ATOMIC_RELAXED); \
        ::scanlab::emu::detail::preemptionPoint();                                           \
        return compare;                                                                      \
    }                                                                                        \
    inline T atomicMin(T* a, T v) {                                                          \
        return ::scanlab::emu::detail::atomicUpdate(a, [v](T o) { return v < o ? v : o; }); \
    }                                                                                        \
    inline T atomicMax(T* a, T v) {                                                          \
        return ::scanlab::emu::detail::atomicUpdate(a, [v](T o) { return o < v ? v : o; }); \
    }                                                                                        \
    inline T atomicAnd(T* a, T v) {                                                          \
        const T old = __atomic_fetch_and(a, v, __ATOMIC_RELAXED);                            \
        ::scanlab::emu::detail::preemptionPoint();                                           \
        return old;                                                                          \
    }                                                                                        \
    inline T atomicOr(T* a, T v) {                                                           \
        const T old = __atomic_fetch_or(a, v, __ATOMIC_RELAXED);                             \
        ::scanlab::emu::detail::preemptionPoint();                                           \
        return old;                                                                          \
    }                                                                                        \
    inline T atomicXor(T* a, T v) {                                                          \
        const T old = __atomic_fetch_xor(a, v, __ATOMIC_RELAXED);                            \
        ::scanlab::emu::detail::preemptionPoint();                                           \
        return old;                                                                          \
    }
SCANLAB_EMU_ATOMIC_INT(int)
SCANLAB_EMU_ATOMIC_INT(unsigned int)
SCANLAB_EMU_ATOMIC_INT(unsigned long long)
#undef SCANLAB_EMU_ATOMIC_INT
inline long long atomicMin(long long* a, long long v) {
    return ::scanlab::emu::detail::atomicUpdate(a, [v](long long o) { return v < o ? v : o; });
}
inline long long atomicMax(long long* a, long long v) {
    return ::scanlab::emu::detail::atomicUpdate(a, [v](long long o) { return o < v ? v : o; });
}
inline int atomicSub(int* a, int v) { return ::scanlab::emu::detail::atomicFetchAdd(a, -v); }
inline unsigned atomicSub(unsigned* a, unsigned v) {
    return ::scanlab::emu::detail::atomicFetchAdd(a, 0u - v);
}
inline float atomicAdd(float* a, float v) {
    return ::scanlab::emu::detail::atomicUpdate(a, [v](float o) { return o + v; });
}
inline double atomicAdd(double* a, double v) {
    return ::scanlab::emu::detail::atomicUpdate(a, [v](double o) { return o + v; });
}
inline float atomicExch(float* a, float v) {
    return ::scanlab::emu::detail::atomicUpdate(a, [v](float) { return v; });
}
// ((old >= limit) ? 0 : old + 1) and (((old == 0) | (old > limit)) ? limit : old - 1).
inline unsigned atomicInc(unsigned* a, unsigned limit) {
    return ::scanlab::emu::detail::atomicUpdate(
        a, [limit](unsigned o) { return o >= limit ? 0u : o + 1; });
}
inline unsigned atomicDec(unsigned* a, unsigned limit) {
    return ::scanlab::emu::detail::atomicUpdate(
        a, [limit](unsigned o) { return (o == 0 || o > limit) ? limit : o - 1; });
}

// ----------------------------------------------------------------------------------
// Integer intrinsics and small device helpers.
inline int __popc(unsigned x) { return __builtin_popcount(x); }
inline int __popcll(unsigned long long x) { return __builtin_popcountll(x); }
inline int __clz(int x) { return x == 0 ? 32 : __builtin_clz(static_cast<unsigned>(x)); }
inline int __clzll(long long x) {
    return x == 0 ? 64 : __builtin_clzll(static_cast<unsigned long long>(x));
}
inline int __ffs(int x) { return __builtin_ffs(x); }
inline int __ffsll(long long x) { return __builtin_ffsll(x); }
inline unsigned __brev(unsigned x) {
    x = ((x >> 1) & 0x55555555u) | ((x & 0x55555555u) << 1);
    x = ((x >> 2) & 0x33333333u) | ((x & 0x33333333u) << 2);
    x = ((x >> 4) & 0x0f0f0f0fu) | ((x & 0x0f0f0f0fu) << 4);
    return __builtin_bswap32(x);
}
inline unsigned __umulhi(unsigned a, unsigned b) {
    return static_cast<unsigned>((static_cast<unsigned long long>(a) * b) >> 32);
}
// The cache-hinted loads and stores: the hint is about the GPU's caches, which the
// emulator has none of, so each is a plain load or store (as CUDA's own fallbacks are).
template <class T>
inline T __ldg(const T* p) { return *p; }
template <class T> inline T __ldcg(const T* p) { return *p; }
template <class T> inline T __ldca(const T* p) { return *p; }
template <class T> inline T __ldcs(const T* p) { return *p; }
template <class T> inline T __ldlu(const T* p) { return *p; }
template <class T> inline T __ldcv(const T* p) { return *p; }
template <class T> inline void __stwb(T* p, T v) { *p = v; }
template <class T> inline void __stcg(T* p, T v) { *p = v; }
template <class T> inline void __stcs(T* p, T v) { *p = v; }
template <class T> inline void __stwt(T* p, T v) { *p = v; }
long long clock64();
// The rest of the listed device functions (emulator/device_functions.def).
#include "emulator/cuda_emu_intrinsics.h"

// ----------------------------------------------------------------------------------
// Runtime API. Device memory is host memory; launches are synchronous.
cudaError_t cudaGetLastError();
cudaError_t cudaPeekAtLastError();
const char* cudaGetErrorString(cudaError_t error);
const char* cudaGetErrorName(cudaError_t error);
cudaError_t cudaDeviceSynchronize();
cudaError_t cudaDeviceReset();
cudaError_t cudaGetDeviceCount(int* count);
cudaError_t cudaGetDevice(int* device);
cudaError_t cudaSetDevice(int device);
cudaError_t cudaGetDeviceProperties(cudaDeviceProp* prop, int device);

cudaError_t cudaMalloc(void** devPtr, size_t size);
template <class T>
inline cudaError_t cudaMalloc(T** devPtr, size_t size) {
    return cudaMalloc(reinterpret_cast<void**>(devPtr), size);
}
cudaError_t cudaFree(void* devPtr);
cudaError_t cudaMallocHost(void** ptr, size_t size);
cudaError_t cudaFreeHost(void* ptr);
cudaError_t cudaMemcpy(void* dst, const void* src, size_t count, cudaMemcpyKind kind);
cudaError_t cudaMemcpyAsync(void* dst, const void* src, size_t count, cudaMemcpyKind kind,
                            cudaStream_t stream = nullptr);
cudaError_t cudaMemset(void* devPtr, int value, size_t count);
cudaError_t cudaMemsetAsync(void* devPtr, int value, size_t count, cudaStream_t stream = nullptr);

namespace scanlab::emu::detail {
cudaError_t symbolCopy(void* symbol, size_t symbolBytes, void* dst, const void* src,
                       size_t count, size_t offset, bool toSymbol, cudaMemcpyKind kind);
}
template <class T>
inline cudaError_t cudaMemcpyToSymbol(const T& symbol, const void* src, size_t count,
                                      size_t offset = 0,
                                      cudaMemcpyKind kind = cudaMemcpyHostToDevice) {
    return ::scanlab::emu::detail::symbolCopy(
        const_cast<void*>(static_cast<const void*>(&symbol)), sizeof(T), nullptr, src, count,
        offset, true, kind);
}
template <class T>
inline cudaError_t cudaMemcpyFromSymbol(void* dst, const T& symbol, size_t count,
                                        size_t offset = 0,
                                        cudaMemcpyKind kind = cudaMemcpyDeviceToHost) {
    return ::scanlab::emu::detail::symbolCopy(
        const_cast<void*>(static_cast<const void*>(&symbol)), sizeof(T), dst, nullptr, count,
        offset, false, kind);
}
template <class T>
inline cudaError_t cudaGetSymbolAddress(void** devPtr, const T& symbol) {
    *devPtr = const_cast<void*>(static_cast<const void*>(&symbol));
    return cudaSuccess;
}

constexpr unsigned cudaEventDefault = 0;
constexpr unsigned cudaEventBlockingSync = 1;
constexpr unsigned cudaEventDisableTiming = 2;
cudaError_t cudaEventCreate(cudaEvent_t* event);
cudaError_t cudaEventCreateWithFlags(cudaEvent_t* event, unsigned flags);
cudaError_t cudaEventRecord(cudaEvent_t event, cudaStream_t stream = nullptr);
cudaError_t cudaEventSynchronize(cudaEvent_t event);
cudaError_t cudaEventQuery(cudaEvent_t event);
cudaError_t cudaEventElapsedTime(float* ms, cudaEvent_t start, cudaEvent_t end);
cudaError_t cudaEventDestroy(cudaEvent_t event);

cudaError_t cudaStreamCreate(cudaStream_t* stream);
cudaError_t cudaStreamDestroy(cudaStream_t stream);
cudaError_t cudaStreamSynchronize(cudaStream_t stream);


#include "cuda_emu_declared_only.h"  // the runtime functions the emulator declares and lacks
