// scanlab CPU emulator: the hooks that the student unit's instrumented loads and stores
// call (emu_bounds.h). A file of their own in the library, so that a program linked with
// the profile build's hooks (emu_profile_hooks.cpp, which check bounds too) never pulls
// these in, and a program without an instrumented unit links neither.
#include "emulator/emu_bounds.h"

#if !defined(__SANITIZE_ADDRESS__)  // AddressSanitizer's runtime has its own
#define SCANLAB_EMU_HOOK(N)                                                               \
    extern "C" void __asan_load##N##_noabort(void* p) {                                   \
        scanlab::emu::detail::checkAccess(reinterpret_cast<uintptr_t>(p), N, false,       \
                                          __builtin_return_address(0));                   \
    }                                                                                     \
    extern "C" void __asan_store##N##_noabort(void* p) {                                  \
        scanlab::emu::detail::checkAccess(reinterpret_cast<uintptr_t>(p), N, true,        \
                                          __builtin_return_address(0));                   \
    }
SCANLAB_EMU_HOOK(1)
SCANLAB_EMU_HOOK(2)
SCANLAB_EMU_HOOK(4)
SCANLAB_EMU_HOOK(8)
SCANLAB_EMU_HOOK(16)
#undef SCANLAB_EMU_HOOK
extern "C" void __asan_loadN_noabort(void* p, size_t n) {
    scanlab::emu::detail::checkAccess(reinterpret_cast<uintptr_t>(p), n, false,
                                      __builtin_return_address(0));
}
extern "C" void __asan_storeN_noabort(void* p, size_t n) {
    scanlab::emu::detail::checkAccess(reinterpret_cast<uintptr_t>(p), n, true,
                                      __builtin_return_address(0));
}
extern "C" void __asan_handle_no_return() {}
// Around the dynamic initialization of a unit's variables (a static std::string).
extern "C" void __asan_before_dynamic_init(const char*) {}
extern "C" void __asan_after_dynamic_init() {}
#endif
