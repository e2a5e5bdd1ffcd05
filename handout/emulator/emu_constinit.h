// scanlab CPU emulator: SCANLAB_EMU_CONSTINIT, a thread_local initialised at compile time.
// The emulator builds at the assignment's one C++ standard (C++17, data/assignment.toml),
// which has no `constinit`; GCC and Clang spell it as an extension. Without it every use
// of a thread_local goes through an initialisation wrapper (slower, and harder to read in
// a backtrace).
#pragma once

#if defined(__cpp_constinit)
#define SCANLAB_EMU_CONSTINIT constinit
#elif defined(__clang__)
#define SCANLAB_EMU_CONSTINIT [[clang::require_constant_initialization]]
#elif defined(__GNUC__)
#define SCANLAB_EMU_CONSTINIT __constinit
#else
#define SCANLAB_EMU_CONSTINIT
#endif
