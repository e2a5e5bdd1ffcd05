// Helpers shared by the emulator tests: device buffers and error text.
#pragma once
#include <string>
#include <vector>

#include "emulator/cuda_emu.h"

namespace emutest {

// A device array of n elements (freed at scope exit).
template <class T>
struct DeviceArray {
    T* ptr = nullptr;
    size_t n = 0;
    explicit DeviceArray(size_t count, int fillByte = 0) : n(count) {
        if (cudaMalloc(reinterpret_cast<void**>(&ptr), n * sizeof(T)) != cudaSuccess) {
            throw std::runtime_error("cudaMalloc failed");
        }
        cudaMemset(ptr, fillByte, n * sizeof(T));
    }
    explicit DeviceArray(const std::vector<T>& host) : DeviceArray(host.size()) {
        cudaMemcpy(ptr, host.data(), n * sizeof(T), cudaMemcpyHostToDevice);
    }
    DeviceArray(const DeviceArray&) = delete;
    DeviceArray& operator=(const DeviceArray&) = delete;
    ~DeviceArray() { cudaFree(ptr); }
    std::vector<T> get() const {
        std::vector<T> host(n);
        cudaMemcpy(host.data(), ptr, n * sizeof(T), cudaMemcpyDeviceToHost);
        return host;
    }
};

// The pending error's text ("" if none); clears it.
inline std::string takeError(cudaError_t* code = nullptr) {
    const cudaError_t e = cudaGetLastError();
    if (code) *code = e;
    return e == cudaSuccess ? std::string() : std::string(cudaGetErrorString(e));
}

// Sets the schedule seed and the worker count for a test, and restores the defaults.
struct ScheduleScope {
    uint64_t saved;
    explicit ScheduleScope(uint64_t seed, unsigned workers = 0) : saved(scanlab::emu::scheduleSeed()) {
        scanlab::emu::setScheduleSeed(seed);
        scanlab::emu::setWorkerThreads(workers);
    }
    ~ScheduleScope() {
        scanlab::emu::setScheduleSeed(saved);
        scanlab::emu::setWorkerThreads(0);
    }
};

}  // namespace emutest
