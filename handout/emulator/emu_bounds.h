// scanlab CPU emulator: the bounds check of every global-memory access by a kernel.
//
// The student unit is compiled with -fsanitize=thread (handout/cmake/scanlab.cmake), so
// g++ turns each load and store into a call to __tsan_{read,write}N(address), which no
// runtime library here provides: the emulator defines them (emu_race_hooks.cpp, which also
// checks shared memory for races, emu_race.h; the profile build's student unit is compiled
// with -fsanitize=kernel-address instead, and its counting hooks, emu_profile_hooks.cpp,
// call the same check). An access that lands in the reserved
// zones around a cudaMalloc allocation (emu_memory.cpp) stops the kernel there, with
// the buffer, the element, how far out it is, the thread and the source line of the
// access (emu_bounds.cpp). Everything else (the stack, shared memory, host memory) passes.
#pragma once
#include "emulator/emu_constinit.h"
#include <cstddef>
#include <cstdint>
#include <string>

namespace scanlab::emu::detail {

// What the worker's OS thread last learned about addresses: the body of the allocation
// it last accessed, and two stretches of memory that hold no device allocation (a
// fiber's stack, the worker's shared memory). Cleared at the start of every block;
// allocations never change while a kernel runs (launches are synchronous).
struct BoundsCache {
    uintptr_t bodyLo = 0, bodyHi = 0;
    uintptr_t otherLo[2] = {0, 0}, otherHi[2] = {0, 0};
    unsigned nextOther = 0;
};
extern thread_local SCANLAB_EMU_CONSTINIT BoundsCache tlsBounds;

// Outside the cached stretches: looks the address up, and stops the kernel when it is
// out of the bounds of the allocation it lies near.
void checkAccessSlow(uintptr_t address, size_t bytes, bool write, const void* pc);

// "student/reduce.cuh:40" for an instruction of the program (a hook's return address),
// or "student/reduce.cuh:40 (in harness/vector.cuh:12)" when it is in a harness helper
// inlined there: the innermost frame in the student's files, then the innermost one.
// From addr2line and the unit's line tables (-g1); "" when they are not there.
std::string describeCodeAddress(const void* pc);
// The same lookup over a call stack (`pcs` innermost first: return addresses, and the
// first one the faulting instruction itself when `firstIsExact`): the innermost frame
// in the student's files, then the innermost harness frame inside it; "" when no frame
// is the student's. Every message that names the student's line comes through here.
std::string describeStudentCode(const void* const* pcs, size_t count, bool firstIsExact);

inline void checkAccess(uintptr_t address, size_t bytes, bool write, const void* pc) {
    const BoundsCache& c = tlsBounds;
    const uintptr_t end = address + bytes;
    if (address >= c.bodyLo && end <= c.bodyHi) return;
    if (address >= c.otherLo[0] && end <= c.otherHi[0]) return;
    if (address >= c.otherLo[1] && end <= c.otherHi[1]) return;
    checkAccessSlow(address, bytes, write, pc);
}

}  // namespace scanlab::emu::detail
