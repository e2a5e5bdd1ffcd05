// scanlab harness: students, do not edit (your code goes in student/); maintainers edit it here.
//
// Thin checked wrappers over the CUDA runtime: the only place the harness calls it,
// so the CPU emulator needs to provide just these calls. A failed call throws
// CudaError carrying the call site and CUDA's message.
#pragma once
#include <cstddef>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include "harness/platform.cuh"

namespace scanlab {

struct CudaError : std::runtime_error {
    using std::runtime_error::runtime_error;
};

inline void checkCuda(cudaError_t status, const char* what) {
    if (status != cudaSuccess) {
        throw CudaError(std::string(what) + ": " + cudaGetErrorString(status));
    }
}

// Waits for all launched work and surfaces errors raised while kernels ran
// (illegal addresses, emulator diagnostics).
inline void deviceSynchronize(const char* what) {
    checkCuda(cudaDeviceSynchronize(), what);
    checkCuda(cudaGetLastError(), what);
}

inline int deviceCount() {
    int count = 0;
    if (cudaGetDeviceCount(&count) != cudaSuccess) {
        (void)cudaGetLastError();  // clear the sticky "no device" error
        return 0;
    }
    return count;
}

struct DeviceInfo {
    std::string name;
    int computeMajor = 0;
    int computeMinor = 0;
    int multiprocessors = 0;
    size_t globalMemoryBytes = 0;
};

inline DeviceInfo queryDevice() {
    cudaDeviceProp prop{};
    int device = 0;
    checkCuda(cudaGetDevice(&device), "cudaGetDevice");
    checkCuda(cudaGetDeviceProperties(&prop, device), "cudaGetDeviceProperties");
    return DeviceInfo{prop.name, prop.major, prop.minor, prop.multiProcessorCount,
                      prop.totalGlobalMem};
}

// Owning device array of n elements (RAII over cudaMalloc/cudaFree). A named buffer
// is watched for writes outside it: on a GPU a canary zone precedes and one follows
// the n elements (overrun() compares them), and the CPU emulator guards every
// allocation itself and names the element and the kernel.
template <class T>
class DeviceBuffer {
public:
    DeviceBuffer() = default;
    explicit DeviceBuffer(size_t n, const char* name = nullptr) : size_(n), name_(name) {
#if defined(__CUDACC__)
        const size_t canary = name ? kCanaryBytes : 0;
#else
        const size_t canary = 0;  // the emulator guards every allocation
#endif
        const size_t total = canary + bytes() + canary;
        checkCuda(cudaMalloc(reinterpret_cast<void**>(&base_), total ? total : 1), "cudaMalloc");
        data_ = reinterpret_cast<T*>(base_ + canary);
#if defined(__CUDACC__)
        if (canary) {
            checkCuda(cudaMemset(base_, kCanaryByte, canary), "cudaMemset");
            checkCuda(cudaMemset(base_ + canary + bytes(), kCanaryByte, canary), "cudaMemset");
        }
#else
        if (name) emu::nameAllocation(data_, name, sizeof(T));
#endif
    }
    DeviceBuffer(const DeviceBuffer&) = delete;
    DeviceBuffer& operator=(const DeviceBuffer&) = delete;
    DeviceBuffer(DeviceBuffer&& other) noexcept { swap(other); }
    DeviceBuffer& operator=(DeviceBuffer&& other) noexcept {
        swap(other);
        return *this;
    }
    ~DeviceBuffer() {
        if (base_) (void)cudaFree(base_);
    }

    T* data() const { return data_; }
    size_t size() const { return size_; }
    size_t bytes() const { return size_ * sizeof(T); }

    void upload(const std::vector<T>& host) {
        if (host.size() != size_) throw std::logic_error("upload: size mismatch");
        checkCuda(cudaMemcpy(data_, host.data(), bytes(), cudaMemcpyHostToDevice),
                  "cudaMemcpy host to device");
    }
    std::vector<T> download() const {
        std::vector<T> host(size_);
        checkCuda(cudaMemcpy(host.data(), data_, bytes(), cudaMemcpyDeviceToHost),
                  "cudaMemcpy device to host");
        return host;
    }
    // Element i alone (one small copy): how timed repetitions change their input.
    void set(size_t i, const T& value) {
        if (i >= size_) throw std::logic_error("set: index out of range");
        checkCuda(cudaMemcpy(data_ + i, &value, sizeof(T), cudaMemcpyHostToDevice),
                  "cudaMemcpy host to device");
    }
    // Fills every byte with `byte`: poisons outputs so stale results never pass.
    void fillBytes(int byte) {
        checkCuda(cudaMemset(data_, byte, bytes()), "cudaMemset");
    }
    void copyFrom(const DeviceBuffer& other) {
        checkCuda(cudaMemcpy(data_, other.data_, bytes(), cudaMemcpyDeviceToDevice),
                  "cudaMemcpy device to device");
    }

    // "" while the canaries around a named buffer are intact; else the first element
    // written there ("out[1000], one past the end of out ...", "out[-1], one before
    // the start of out ..."), and the canaries are restored.
    // (GPU only: on the emulator the launch itself fails with the kernel's name.)
    std::string overrun() {
        if (!name_ || !data_) return "";
#if defined(__CUDACC__)
        std::vector<unsigned char> before(kCanaryBytes), after(kCanaryBytes);
        checkCuda(cudaMemcpy(before.data(), base_, kCanaryBytes, cudaMemcpyDeviceToHost),
                  "cudaMemcpy device to host");
        checkCuda(cudaMemcpy(after.data(), base_ + kCanaryBytes + bytes(), kCanaryBytes,
                             cudaMemcpyDeviceToHost),
                  "cudaMemcpy device to host");
        size_t last = kCanaryBytes;  // the written byte of `before` nearest the start
        for (size_t i = kCanaryBytes; i-- > 0;)
            if (before[i] != kCanaryByte) {
                last = i;
                break;
            }
        size_t first = kCanaryBytes;
        for (size_t i = 0; i < kCanaryBytes; ++i)
            if (after[i] != kCanaryByte) {
                first = i;
                break;
            }
        if (first == kCanaryBytes && last == kCanaryBytes) return "";
        checkCuda(cudaMemset(base_, kCanaryByte, kCanaryBytes), "cudaMemset");
        checkCuda(cudaMemset(base_ + kCanaryBytes + bytes(), kCanaryByte, kCanaryBytes), "cudaMemset");
        const std::string extent = " (" + std::to_string(size_) + " elements of " +
                                   std::to_string(sizeof(T)) + " bytes, indices 0 to " +
                                   std::to_string(size_ - 1) + ")";
        if (last != kCanaryBytes) {
            const size_t before_start = (kCanaryBytes - last + sizeof(T) - 1) / sizeof(T);
            return std::string(name_) + "[-" + std::to_string(before_start) + "], " +
                   (before_start == 1 ? std::string("one") : std::to_string(before_start) + " elements") +
                   " before the start of " + name_ + extent;
        }
        const size_t index = size_ + first / sizeof(T);
        const size_t past = index - size_ + 1;
        return std::string(name_) + "[" + std::to_string(index) + "], " +
               (past == 1 ? std::string("one") : std::to_string(past) + " elements") +
               " past the end of " + name_ + extent;
#else
        return "";
#endif
    }

private:
    // 64 KiB on each side: a write one element, one warp, one tile or a block's worth
    // of tiles (up to 16384 4-byte elements) before the start or past the end lands in
    // it. Farther writes are memcheck's (grader/grading/checks/sanitizer.py pads every allocation).
    static constexpr size_t kCanaryBytes = 64 * 1024;
    static constexpr unsigned char kCanaryByte = 0xc3;
    void swap(DeviceBuffer& other) noexcept {
        std::swap(base_, other.base_);
        std::swap(data_, other.data_);
        std::swap(size_, other.size_);
        std::swap(name_, other.name_);
    }
    unsigned char* base_ = nullptr;  // the allocation: [canary][data_: n elements][canary]
    T* data_ = nullptr;
    size_t size_ = 0;
    const char* name_ = nullptr;
};

// Device-side "not implemented" marker: the handout's stubs call notImplemented(),
// and the driver reports "task N: not implemented" instead of checking garbage. The
// flag is read through the student unit (harness/host/student_api.h), whose copy it is.
static __device__ int scanlabNotImplementedFlag = 0;

__device__ inline void notImplemented() { scanlabNotImplementedFlag = 1; }

// The handout's placeholders (harness/baselines.cuh) in a grading build: which one a
// launch reached (a PlaceholderId), read by the driver like the flag above. The grader
// compiles the student unit with SCANLAB_GRADING_BUILD, and there a placeholder records
// itself here and returns without doing its work, however it was reached (a call, a
// pointer in a table, a virtual or volatile call, a template argument): the driver then
// ends the case with the exit status `placeholder` (harness/generated/assignment.h).
// Clearing the flag gains nothing: the placeholder did no work. Elsewhere (your own
// builds, make test, make grade-local) the placeholders run as they are.
enum PlaceholderId : int {
    kNoPlaceholder = 0,
    kPlaceholderWarpScan = 1,     // baseline::scanIncWarpSequential (task 1)
    kPlaceholderReduce = 2,       // baseline::reduceBlocksSequential (task 2)
    kPlaceholderOneBlockScan = 3, // baseline::scanInOneBlock (task 4)
    kPlaceholderNaiveKernel = 4,  // baseline::treeReduceLevelKernel, hillisSteeleStepKernel
};

inline const char* placeholderName(int id) {
    switch (id) {
        case kPlaceholderWarpScan: return "baseline::scanIncWarpSequential";
        case kPlaceholderReduce: return "baseline::reduceBlocksSequential";
        case kPlaceholderOneBlockScan: return "baseline::scanInOneBlock";
        case kPlaceholderNaiveKernel: return "a naive kernel of harness/baselines.cuh";
        default: return "a placeholder of harness/baselines.cuh";
    }
}

static __device__ int scanlabPlaceholderFlag = kNoPlaceholder;

// (static: each unit's own, never merged with another unit's by the emulator's linker)
static __device__ inline void placeholderReached(int id) { scanlabPlaceholderFlag = id; }

}  // namespace scanlab
