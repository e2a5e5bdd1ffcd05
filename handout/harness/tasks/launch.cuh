// scanlab harness: students, do not edit (your code goes in student/); maintainers edit it here.
//
// Every kernel launch in scanlab goes through launchKernel, so the CPU emulator can
// run the same code: students never write <<<...>>> themselves.
#pragma once
#include "harness/platform.cuh"
#include "harness/runtime.cuh"

namespace scanlab {

// Launches `kernel` on grid x block threads with `dynamicSharedBytes` of dynamic
// shared memory (see SCANLAB_DYNAMIC_SHARED) and checks the launch. `name` is
// what error messages call the kernel.
template <class... Params, class... Args>
void launchKernel(const char* name, void (*kernel)(Params...), dim3 grid, dim3 block,
                  size_t dynamicSharedBytes, Args... args) {
#if defined(__CUDACC__)
    kernel<<<grid, block, dynamicSharedBytes>>>(static_cast<Params>(args)...);
#else
    ::scanlab::emu::launch(name, grid, block, dynamicSharedBytes,
                           [=] { kernel(static_cast<Params>(args)...); });
#endif
    checkCuda(cudaGetLastError(), name);
}

}  // namespace scanlab
