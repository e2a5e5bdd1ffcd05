// scanlab CPU emulator: CUDA's error state (the pending error, the text of each error)
// and how diagnostics name a source site. The runtime and the scheduler both report
// through recordError; neither depends on the other for it.
#include <deque>
#include <map>
#include <mutex>
#include <string>

#include "emulator/emu_bounds.h"
#include "emulator/emu_internal.h"

namespace scanlab::emu::detail {

namespace {

struct ErrorState {
    std::mutex m;
    cudaError_t pending = cudaSuccess;
    std::map<int, const char*> messages;  // the latest diagnostic per error code
    std::deque<std::string> store;        // keeps every returned string alive
};
ErrorState& errors() {
    static ErrorState e;
    return e;
}

}  // namespace

void recordError(cudaError_t error, const std::string& message) {
    ErrorState& e = errors();
    std::lock_guard<std::mutex> lock(e.m);
    e.pending = error;
    auto it = e.messages.find(error);
    if (it == e.messages.end() || message != it->second) {
        e.store.push_back(message);
        e.messages[error] = e.store.back().c_str();
    }
}

namespace {
std::string shortPath(const char* file, int line) {
    std::string f = file;
    const size_t last = f.find_last_of('/');
    if (last != std::string::npos && last > 0) {
        const size_t prev = f.find_last_of('/', last - 1);
        if (prev != std::string::npos) f = f.substr(prev + 1);
    }
    return f + ":" + std::to_string(line);
}
}  // namespace

// The caller's line first (the student's call of a harness helper), then the helper's.
std::string formatSite(Site site) {
    // The student's line from the call's address where the line tables have one (a
    // barrier inside a harness helper inlined into the student's code names both);
    // else the line the macro recorded.
    if (site.pc != nullptr) {
        if (std::string student = describeStudentCode(&site.pc, 1, false); !student.empty())
            return student;
    }
    if (site.file == nullptr) return "?";
    const std::string at = shortPath(site.file, site.line);
    if (site.callerFile == nullptr) return at;
    return shortPath(site.callerFile, site.callerLine) + " (in " + at + ")";
}

}  // namespace scanlab::emu::detail

using namespace scanlab::emu::detail;

cudaError_t cudaGetLastError() {
    ErrorState& e = errors();
    std::lock_guard<std::mutex> lock(e.m);
    const cudaError_t r = e.pending;
    e.pending = cudaSuccess;
    return r;
}

cudaError_t cudaPeekAtLastError() {
    ErrorState& e = errors();
    std::lock_guard<std::mutex> lock(e.m);
    return e.pending;
}

const char* cudaGetErrorName(cudaError_t error) {
    switch (error) {
        case cudaSuccess: return "cudaSuccess";
        case cudaErrorInvalidValue: return "cudaErrorInvalidValue";
        case cudaErrorMemoryAllocation: return "cudaErrorMemoryAllocation";
        case cudaErrorInitializationError: return "cudaErrorInitializationError";
        case cudaErrorInvalidConfiguration: return "cudaErrorInvalidConfiguration";
        case cudaErrorInvalidSymbol: return "cudaErrorInvalidSymbol";
        case cudaErrorInvalidDevicePointer: return "cudaErrorInvalidDevicePointer";
        case cudaErrorInvalidMemcpyDirection: return "cudaErrorInvalidMemcpyDirection";
        case cudaErrorNoDevice: return "cudaErrorNoDevice";
        case cudaErrorInvalidDevice: return "cudaErrorInvalidDevice";
        case cudaErrorInvalidResourceHandle: return "cudaErrorInvalidResourceHandle";
        case cudaErrorNotReady: return "cudaErrorNotReady";
        case cudaErrorIllegalAddress: return "cudaErrorIllegalAddress";
        case cudaErrorLaunchOutOfResources: return "cudaErrorLaunchOutOfResources";
        case cudaErrorLaunchTimeout: return "cudaErrorLaunchTimeout";
        case cudaErrorAssert: return "cudaErrorAssert";
        case cudaErrorLaunchFailure: return "cudaErrorLaunchFailure";
        case cudaErrorNotSupported: return "cudaErrorNotSupported";
        case cudaErrorUnknown: return "cudaErrorUnknown";
    }
    return "cudaErrorUnknown";
}

const char* cudaGetErrorString(cudaError_t error) {
    {
        ErrorState& e = errors();
        std::lock_guard<std::mutex> lock(e.m);
        auto it = e.messages.find(error);
        if (it != e.messages.end()) return it->second;
    }
    switch (error) {
        case cudaSuccess: return "no error";
        case cudaErrorInvalidValue: return "invalid argument";
        case cudaErrorMemoryAllocation: return "out of memory";
        case cudaErrorInitializationError: return "initialization error";
        case cudaErrorInvalidConfiguration: return "invalid configuration argument";
        case cudaErrorInvalidSymbol: return "invalid device symbol";
        case cudaErrorInvalidDevicePointer: return "invalid device pointer";
        case cudaErrorInvalidMemcpyDirection: return "invalid copy direction for memcpy";
        case cudaErrorNoDevice: return "no CUDA-capable device is detected";
        case cudaErrorInvalidDevice: return "invalid device ordinal";
        case cudaErrorInvalidResourceHandle: return "invalid resource handle";
        case cudaErrorNotReady: return "device not ready";
        case cudaErrorIllegalAddress: return "an illegal memory access was encountered";
        case cudaErrorLaunchOutOfResources: return "too many resources requested for launch";
        case cudaErrorLaunchTimeout: return "the launch timed out and was terminated";
        case cudaErrorAssert: return "device-side assert triggered";
        case cudaErrorLaunchFailure: return "unspecified launch failure";
        case cudaErrorNotSupported: return "operation not supported";
        case cudaErrorUnknown: return "unknown error";
    }
    return "unknown error";
}

cudaError_t cudaDeviceSynchronize() { return cudaPeekAtLastError(); }

cudaError_t cudaDeviceReset() {
    ErrorState& e = errors();
    std::lock_guard<std::mutex> lock(e.m);
    e.pending = cudaSuccess;
    return cudaSuccess;
}
