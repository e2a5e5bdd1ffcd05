// scanlab harness: students, do not edit (your code goes in student/); maintainers edit it here.
//
// Every kernel launch in scanlab goes through launchKernel, so the CPU emulator can
// run the same code: students never write <<<...>>> themselves.
#pragma once
#include <type_traits>

#include "harness/host/unit_entry.h"
#include "harness/platform.cuh"
#include "harness/runtime.cuh"

namespace scanlab {

// Launches `kernel` on grid x block threads with `dynamicSharedBytes` of dynamic
// shared memory (see SCANLAB_DYNAMIC_SHARED) and checks the launch. `name` is
// what error messages call the kernel.
//
// A kernel's parameters take the harness's arguments as they are: a constructor,
// conversion or destructor of a parameter's type would run on the host at every launch,
// where it could count launches (host code, which student files may not hold:
// grader/README.md). Checked here, by the compiler, the same on the GPU and the emulator
// (where such code is inlined into the launch and no object-code rule could see it).
template <class... Params, class... Args>
void launchKernel(const char* name, void (*kernel)(Params...), dim3 grid, dim3 block,
                  size_t dynamicSharedBytes, Args... args) {
    static_assert(((std::is_trivially_constructible_v<Params, Args> &&
                    std::is_trivially_destructible_v<Params>) && ...),
                  "scanlab: a kernel's parameter must take the harness's argument as it is (a "
                  "pointer, a number, the operator's element, the harness's tile state): a "
                  "constructor, conversion or destructor of its type would run host code at "
                  "every launch, which student files may not hold");
#if defined(__CUDACC__)
    kernel<<<grid, block, dynamicSharedBytes>>>(static_cast<Params>(args)...);
#else
    // Which argument points into a buffer, for the emulator's out-of-bounds messages.
    const void* pointers[] = {
        ::scanlab::emu::detail::launchArgumentPointer(static_cast<Params>(args))..., nullptr};
    ::scanlab::emu::detail::setLaunchArguments(pointers, sizeof...(Params));
    ::scanlab::emu::launch(name, grid, block, dynamicSharedBytes,
                           [=] { kernel(static_cast<Params>(args)...); });
#endif
    checkCuda(cudaGetLastError(), name);
    if (scanlab_kernel_launched) scanlab_kernel_launched();   // the loader's count (unit_entry.h)
}

}  // namespace scanlab
