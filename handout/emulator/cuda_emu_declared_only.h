// scanlab CPU emulator: part of cuda_emu.h (which includes it last), kept apart for its
// length. See emulator/README.md.
#pragma once

// The CUDA runtime's functions the emulator does not provide: declared, never defined
// (C linkage, as in CUDA's headers). So code that names one compiles here as it does
// with nvcc, and what the compiler keeps decides, as on the GPU: a call or a pointer
// that survives is an undefined symbol of the student unit, which the code rules
// refuse by that symbol (and a local build fails to link); one the compiler drops (an
// unused pointer, dead code) is no call on either backend. A CUDA name that is not
// declared anywhere here does not compile for the emulator (the grader refuses it there
// by the compiler's "not declared" error).
using cudaHostFn_t = void (*)(void* userData);
constexpr unsigned cudaStreamDefault = 0;
constexpr unsigned cudaStreamNonBlocking = 1;
constexpr unsigned cudaMemAttachGlobal = 1;
constexpr unsigned cudaMemAttachHost = 2;
constexpr unsigned cudaHostAllocDefault = 0;
extern "C" {
cudaError_t cudaLaunchKernel(const void* func, dim3 grid, dim3 block, void** args,
                             size_t sharedMem, cudaStream_t stream);
cudaError_t cudaLaunchCooperativeKernel(const void* func, dim3 grid, dim3 block,
                                        void** args, size_t sharedMem, cudaStream_t stream);
cudaError_t cudaLaunchHostFunc(cudaStream_t stream, cudaHostFn_t fn, void* userData);
cudaError_t cudaStreamCreateWithFlags(cudaStream_t* stream, unsigned flags);
cudaError_t cudaStreamCreateWithPriority(cudaStream_t* stream, unsigned flags, int priority);
cudaError_t cudaStreamQuery(cudaStream_t stream);
cudaError_t cudaStreamWaitEvent(cudaStream_t stream, cudaEvent_t event, unsigned flags = 0);
cudaError_t cudaEventRecordWithFlags(cudaEvent_t event, cudaStream_t stream = nullptr,
                                     unsigned flags = 0);
cudaError_t cudaMallocManaged(void** devPtr, size_t size, unsigned flags = cudaMemAttachGlobal);
cudaError_t cudaMallocAsync(void** devPtr, size_t size, cudaStream_t stream);
cudaError_t cudaFreeAsync(void* devPtr, cudaStream_t stream);
cudaError_t cudaHostAlloc(void** ptr, size_t size, unsigned flags);
cudaError_t cudaMemGetInfo(size_t* free, size_t* total);
}
// CUDA's own C++ overloads of these (cuda_runtime.h), which forward to the C functions.
template <class T>
inline cudaError_t cudaLaunchKernel(const T* func, dim3 grid, dim3 block, void** args,
                                    size_t sharedMem = 0, cudaStream_t stream = nullptr) {
    return cudaLaunchKernel(reinterpret_cast<const void*>(func), grid, block, args,
                            sharedMem, stream);
}
template <class T>
inline cudaError_t cudaLaunchCooperativeKernel(const T* func, dim3 grid, dim3 block,
                                               void** args, size_t sharedMem = 0,
                                               cudaStream_t stream = nullptr) {
    return cudaLaunchCooperativeKernel(reinterpret_cast<const void*>(func), grid, block,
                                       args, sharedMem, stream);
}
template <class T>
inline cudaError_t cudaMallocManaged(T** devPtr, size_t size,
                                     unsigned flags = cudaMemAttachGlobal) {
    return cudaMallocManaged(reinterpret_cast<void**>(devPtr), size, flags);
}
template <class T>
inline cudaError_t cudaMallocAsync(T** devPtr, size_t size, cudaStream_t stream) {
    return cudaMallocAsync(reinterpret_cast<void**>(devPtr), size, stream);
}
template <class T>
inline cudaError_t cudaHostAlloc(T** ptr, size_t size, unsigned flags) {
    return cudaHostAlloc(reinterpret_cast<void**>(ptr), size, flags);
}
