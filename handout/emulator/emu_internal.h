// scanlab CPU emulator: what the runtime (emu_runtime.cpp) and the scheduler
// (emu_scheduler.cpp and its sections) both use: the pending error (emu_errors.cpp)
// and device memory (emu_memory.cpp). The runtime calls the scheduler
// (workerThreads); the scheduler never calls the runtime. Not included by user code.
#pragma once
#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "emulator/cuda_emu.h"

namespace scanlab::emu::detail {

// Records `error` as the pending error (returned by cudaGetLastError and
// cudaDeviceSynchronize) and `message` as the text cudaGetErrorString gives for it.
void recordError(cudaError_t error, const std::string& message);

// "student/scan.cuh:57": the last two components of a path, with the line.
std::string formatSite(Site site);

// Device memory (emu_memory.cpp): allocations between guard zones.
void* allocateDevice(size_t size);  // nullptr when out of memory
bool freeDevice(void* p);  // false: not an allocation of allocateDevice
// "" when [p, p+count) stays inside the allocation holding p (or p is in none);
// else what is wrong, for a message.
std::string checkDeviceRange(const void* p, size_t count);
// After a launch: "" when every guard zone is intact; else which element the
// kernel wrote past the end (or before the start) of which allocation. Restores them.
// `arguments`: the kernel's pointer arguments (Launch::arguments), to say which
// parameter pointed into the buffer.
std::string checkGuards(const char* kernel, const std::vector<const void*>& arguments);
// Whether `address` lies in a live cudaMalloc allocation (read without the lock: for
// the profiler, while a kernel runs and no allocation can change).
bool isDeviceAddress(const void* address);
// The allocation element at `address` (in a guard zone or beyond), for a fault
// message; "" when it is near no allocation.
std::string describeDeviceAddress(const void* address, const std::vector<const void*>& arguments);

// The stretch of address space reserved for one allocation ([mapLo, mapHi), guards and
// inaccessible reaches included) and the allocation's bytes in it ([lo, hi)).
struct DeviceStretch {
    uintptr_t mapLo, mapHi, lo, hi;
};
// Every live allocation's stretch, sorted by address (read without the lock: for the
// bounds check, while a kernel runs and no allocation can change).
const std::vector<DeviceStretch>& deviceStretches();
// The elements of an access of `bytes` at `address` that lie outside the allocation
// whose stretch holds it: "in[1011], 12 elements past the end of `in` (n = 1000)".
// Where the allocation has a name, whose it is: "(n = 1000; the harness's name for your
// kernel's 1st parameter)", or "(...; the harness's name)" when no argument points into it.
std::string describeDeviceAccess(uintptr_t address, size_t bytes,
                                 const std::vector<const void*>& arguments);
}  // namespace scanlab::emu::detail
