// scanlab harness: students, do not edit (your code goes in student/); maintainers edit it here.
//
// The one place that chooses the backend. nvcc (which defines __CUDACC__) gets the
// CUDA runtime; a plain C++ compiler gets the CPU emulator in emulator/, which
// provides the same names (threadIdx, __syncthreads, __shfl_up_sync, cudaMalloc, ...)
// with CUDA's semantics. Student and harness code is the same for both.
#pragma once

#include "harness/generated/assignment.h"

#if defined(__CUDACC__)
#include <cuda_runtime.h>
#define SCANLAB_BACKEND "cuda"
// Dynamic shared memory: the launch helper passes the byte count. One untyped
// array, 16-byte aligned so any element type of the operators fits.
#define SCANLAB_DYNAMIC_SHARED(T, name)                                  \
    extern __shared__ __align__(16) unsigned char scanlab_dynamic_smem_[]; \
    T* name = reinterpret_cast<T*>(scanlab_dynamic_smem_)
// A helper's last parameter, the location of the call to it: the emulator's messages
// name that line (emulator/cuda_emu.h); nothing on a GPU.
namespace scanlab {
struct NoCallerSite {};
}  // namespace scanlab
#define SCANLAB_CALLER_SITE ::scanlab::NoCallerSite = ::scanlab::NoCallerSite {}
#else
#include "emulator/cuda_emu.h"
#define SCANLAB_BACKEND "emulator"
#define SCANLAB_DYNAMIC_SHARED(T, name) \
    T* name = reinterpret_cast<T*>(::scanlab::emu::dynamicSharedMemory())
#endif

// Functions callable from host and device (operators, index arithmetic).
#define SCANLAB_HD __host__ __device__ __forceinline__

namespace scanlab {
// kWarpSize and the other limits of a run: harness/generated/assignment.h.
constexpr unsigned kFullMask = 0xffffffffu;
}  // namespace scanlab
