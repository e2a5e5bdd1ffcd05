// scanlab CPU emulator: what the runtime (emu_runtime.cpp) and the scheduler
// (emu_scheduler.cpp and its sections) both use, defined in emu_errors.cpp. The
// runtime calls the scheduler (workerThreads); the scheduler never calls the runtime.
// Not included by user code.
#pragma once
#include <cstdint>
#include <string>

#include "emulator/cuda_emu.h"

namespace scanlab::emu::detail {

// Records `error` as the pending error (returned by cudaGetLastError and
// cudaDeviceSynchronize) and `message` as the text cudaGetErrorString gives for it.
void recordError(cudaError_t error, const std::string& message);

// "student/scan.cuh:57": the last two components of a path, with the line.
std::string formatSite(Site site);

}  // namespace scanlab::emu::detail
