// scanlab CPU emulator: the host-side runtime API (errors, memory, events, device
// properties). Device memory is ordinary host memory; every call is synchronous.
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstring>
#include <deque>
#include <map>
#include <mutex>
#include <set>
#include <string>

#include "emulator/emu_internal.h"

namespace scanlab::emu::detail {

namespace {

cudaError_t fail(cudaError_t error, const std::string& message) {
    recordError(error, message);
    return error;
}

std::string hexPtr(const void* p) {
    char buf[32];
    std::snprintf(buf, sizeof buf, "%p", p);
    return buf;
}

// When `p` lies in a cudaMalloc allocation, checks that [p, p+count) stays inside it.
// Pointers elsewhere (host memory, __device__ variables) are not checked.
cudaError_t checkRange(const char* call, const char* role, const void* p, size_t count) {
    const std::string wrong = checkDeviceRange(p, count);
    if (wrong.empty()) return cudaSuccess;
    return fail(cudaErrorInvalidValue,
                std::string("emulator: ") + call + ": the " + role + " " + wrong);
}

struct EventImpl {
    bool recorded = false;
    std::chrono::steady_clock::time_point when;
};

}  // namespace

cudaError_t symbolCopy(void* symbol, size_t symbolBytes, void* dst, const void* src,
                       size_t count, size_t offset, bool toSymbol, cudaMemcpyKind kind) {
    const char* call = toSymbol ? "cudaMemcpyToSymbol" : "cudaMemcpyFromSymbol";
    if (offset > symbolBytes || count > symbolBytes - offset) {
        return fail(cudaErrorInvalidValue,
                    std::string("emulator: ") + call + ": " + std::to_string(count) +
                        " bytes at offset " + std::to_string(offset) + " do not fit in a " +
                        std::to_string(symbolBytes) + "-byte symbol");
    }
    if (int(kind) < 0 || int(kind) > 4) {
        return fail(cudaErrorInvalidMemcpyDirection,
                    std::string("emulator: ") + call + ": invalid cudaMemcpyKind");
    }
    char* s = static_cast<char*>(symbol) + offset;
    if (count == 0) return cudaSuccess;
    if (toSymbol) {
        std::memmove(s, src, count);
    } else {
        std::memmove(dst, s, count);
    }
    return cudaSuccess;
}

}  // namespace scanlab::emu::detail

using namespace scanlab::emu::detail;

cudaError_t cudaGetDeviceCount(int* count) {
    if (count == nullptr) return fail(cudaErrorInvalidValue, "emulator: cudaGetDeviceCount: null pointer");
    *count = 1;
    return cudaSuccess;
}

cudaError_t cudaGetDevice(int* device) {
    if (device == nullptr) return fail(cudaErrorInvalidValue, "emulator: cudaGetDevice: null pointer");
    *device = 0;
    return cudaSuccess;
}

cudaError_t cudaSetDevice(int device) {
    if (device != 0) {
        return fail(cudaErrorInvalidDevice, "emulator: cudaSetDevice(" + std::to_string(device) +
                                                "): the emulator has one device, 0");
    }
    return cudaSuccess;
}

cudaError_t cudaGetDeviceProperties(cudaDeviceProp* prop, int device) {
    if (prop == nullptr) {
        return fail(cudaErrorInvalidValue, "emulator: cudaGetDeviceProperties: null pointer");
    }
    if (device != 0) {
        return fail(cudaErrorInvalidDevice, "emulator: cudaGetDeviceProperties(" +
                                                std::to_string(device) +
                                                "): the emulator has one device, 0");
    }
    *prop = cudaDeviceProp{};
    std::snprintf(prop->name, sizeof prop->name, "scanlab CPU emulator");
    const long pages = sysconf(_SC_PHYS_PAGES), page = sysconf(_SC_PAGESIZE);
    prop->totalGlobalMem = pages > 0 && page > 0 ? size_t(pages) * size_t(page) : 0;
    prop->sharedMemPerBlock = 48 * 1024;
    prop->sharedMemPerBlockOptin = 48 * 1024;
    prop->sharedMemPerMultiprocessor = 48 * 1024;
    prop->regsPerBlock = 65536;
    prop->regsPerMultiprocessor = 65536;
    prop->warpSize = 32;
    prop->memPitch = size_t(1) << 31;
    prop->maxThreadsPerBlock = 1024;
    prop->maxThreadsDim[0] = 1024;
    prop->maxThreadsDim[1] = 1024;
    prop->maxThreadsDim[2] = 64;
    prop->maxGridSize[0] = 0x7fffffff;
    prop->maxGridSize[1] = 65535;
    prop->maxGridSize[2] = 65535;
    prop->totalConstMem = 64 * 1024;
    prop->major = 9;
    prop->minor = 0;
    prop->textureAlignment = 512;
    prop->multiProcessorCount = int(scanlab::emu::workerThreads());
    prop->integrated = 1;
    prop->canMapHostMemory = 1;
    prop->concurrentKernels = 0;
    prop->maxThreadsPerMultiProcessor = 1024;  // a worker runs one block at a time
    prop->maxBlocksPerMultiProcessor = 1;
    return cudaSuccess;
}

cudaError_t cudaMalloc(void** devPtr, size_t size) {
    if (devPtr == nullptr) return fail(cudaErrorInvalidValue, "emulator: cudaMalloc: null pointer");
    *devPtr = allocateDevice(size);
    if (*devPtr == nullptr) {
        return fail(cudaErrorMemoryAllocation,
                    "emulator: cudaMalloc: out of memory allocating " + std::to_string(size) +
                        " bytes");
    }
    return cudaSuccess;
}

cudaError_t cudaFree(void* devPtr) {
    if (devPtr == nullptr) return cudaSuccess;
    if (!freeDevice(devPtr)) {
        return fail(cudaErrorInvalidValue, "emulator: cudaFree(" + hexPtr(devPtr) +
                                               "): not a pointer returned by cudaMalloc, "
                                               "or already freed");
    }
    return cudaSuccess;
}

cudaError_t cudaMallocHost(void** ptr, size_t size) {
    if (ptr == nullptr) return fail(cudaErrorInvalidValue, "emulator: cudaMallocHost: null pointer");
    *ptr = std::malloc(std::max<size_t>(size, 1));
    if (*ptr == nullptr) {
        return fail(cudaErrorMemoryAllocation, "emulator: cudaMallocHost: out of memory");
    }
    return cudaSuccess;
}

cudaError_t cudaFreeHost(void* ptr) {
    std::free(ptr);
    return cudaSuccess;
}

cudaError_t cudaMemcpy(void* dst, const void* src, size_t count, cudaMemcpyKind kind) {
    if (int(kind) < 0 || int(kind) > 4) {
        return fail(cudaErrorInvalidMemcpyDirection, "emulator: cudaMemcpy: invalid cudaMemcpyKind");
    }
    if (count == 0) return cudaSuccess;
    if (dst == nullptr || src == nullptr) {
        return fail(cudaErrorInvalidValue, "emulator: cudaMemcpy: null pointer");
    }
    if (kind == cudaMemcpyHostToDevice || kind == cudaMemcpyDeviceToDevice ||
        kind == cudaMemcpyDefault) {
        if (cudaError_t e = checkRange("cudaMemcpy", "destination", dst, count)) return e;
    }
    if (kind == cudaMemcpyDeviceToHost || kind == cudaMemcpyDeviceToDevice ||
        kind == cudaMemcpyDefault) {
        if (cudaError_t e = checkRange("cudaMemcpy", "source", src, count)) return e;
    }
    std::memmove(dst, src, count);
    return cudaSuccess;
}

cudaError_t cudaMemcpyAsync(void* dst, const void* src, size_t count, cudaMemcpyKind kind,
                            cudaStream_t) {
    return cudaMemcpy(dst, src, count, kind);
}

cudaError_t cudaMemset(void* devPtr, int value, size_t count) {
    if (count == 0) return cudaSuccess;
    if (devPtr == nullptr) return fail(cudaErrorInvalidValue, "emulator: cudaMemset: null pointer");
    if (cudaError_t e = checkRange("cudaMemset", "destination", devPtr, count)) return e;
    std::memset(devPtr, value, count);
    return cudaSuccess;
}

cudaError_t cudaMemsetAsync(void* devPtr, int value, size_t count, cudaStream_t) {
    return cudaMemset(devPtr, value, count);
}

cudaError_t cudaEventCreate(cudaEvent_t* event) {
    if (event == nullptr) return fail(cudaErrorInvalidValue, "emulator: cudaEventCreate: null pointer");
    *event = reinterpret_cast<cudaEvent_t>(new EventImpl);
    return cudaSuccess;
}

cudaError_t cudaEventCreateWithFlags(cudaEvent_t* event, unsigned) { return cudaEventCreate(event); }

cudaError_t cudaEventRecord(cudaEvent_t event, cudaStream_t) {
    if (event == nullptr) {
        return fail(cudaErrorInvalidResourceHandle, "emulator: cudaEventRecord: null event");
    }
    auto* e = reinterpret_cast<EventImpl*>(event);
    e->when = std::chrono::steady_clock::now();  // launches are synchronous
    e->recorded = true;
    return cudaSuccess;
}

cudaError_t cudaEventSynchronize(cudaEvent_t event) {
    if (event == nullptr) {
        return fail(cudaErrorInvalidResourceHandle, "emulator: cudaEventSynchronize: null event");
    }
    return cudaSuccess;
}

cudaError_t cudaEventQuery(cudaEvent_t event) {
    if (event == nullptr) {
        return fail(cudaErrorInvalidResourceHandle, "emulator: cudaEventQuery: null event");
    }
    return cudaSuccess;
}

cudaError_t cudaEventElapsedTime(float* ms, cudaEvent_t start, cudaEvent_t end) {
    if (ms == nullptr || start == nullptr || end == nullptr) {
        return fail(cudaErrorInvalidValue, "emulator: cudaEventElapsedTime: null argument");
    }
    auto* a = reinterpret_cast<EventImpl*>(start);
    auto* b = reinterpret_cast<EventImpl*>(end);
    if (!a->recorded || !b->recorded) {
        return fail(cudaErrorInvalidResourceHandle,
                    "emulator: cudaEventElapsedTime: an event was never recorded");
    }
    *ms = std::chrono::duration<float, std::milli>(b->when - a->when).count();
    return cudaSuccess;
}

cudaError_t cudaEventDestroy(cudaEvent_t event) {
    delete reinterpret_cast<EventImpl*>(event);
    return cudaSuccess;
}

cudaError_t cudaStreamCreate(cudaStream_t* stream) {
    if (stream == nullptr) return fail(cudaErrorInvalidValue, "emulator: cudaStreamCreate: null pointer");
    *stream = reinterpret_cast<cudaStream_t>(new char);
    return cudaSuccess;
}

cudaError_t cudaStreamDestroy(cudaStream_t stream) {
    delete reinterpret_cast<char*>(stream);
    return cudaSuccess;
}

cudaError_t cudaStreamSynchronize(cudaStream_t) { return cudaSuccess; }

long long clock64() {
    return std::chrono::duration_cast<std::chrono::nanoseconds>(
               std::chrono::steady_clock::now().time_since_epoch())
        .count();
}
