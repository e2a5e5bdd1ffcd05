// scanlab CPU emulator: the calls that the student unit's ThreadSanitizer instrumentation
// makes (-fsanitize=thread, without its runtime: emu_race.h). Every load and store is
// checked for bounds (emu_bounds.h) and, in shared memory, for races (emu_race.cpp); the
// atomics are done here, sequentially consistent (at least what any memory order asks),
// and count as a possible synchronization of the block. This file is not instrumented.
#include "emulator/emu_bounds.h"
#include "emulator/emu_race.h"

#if !defined(__SANITIZE_THREAD__)  // ThreadSanitizer's runtime has its own

namespace scanlab::emu::detail {
void raceMarkActive();
}  // namespace scanlab::emu::detail

namespace {
inline void onAccess(const volatile void* p, size_t bytes, bool write, const void* pc) {
    const auto address = reinterpret_cast<uintptr_t>(p);
    scanlab::emu::detail::checkAccess(address, bytes, write, pc);
    scanlab::emu::detail::raceAccess(address, bytes, write, pc);
}
// An atomic operation: bounds only. Atomics never race with each other, and a plain access
// after one counts as synchronized (raceAtomic), so it is not recorded as an access.
inline void onAtomic(const volatile void* p, size_t bytes, bool write, const void* pc) {
    scanlab::emu::detail::checkAccess(reinterpret_cast<uintptr_t>(p), bytes, write, pc);
}
}  // namespace

extern "C" {

#define SCANLAB_EMU_TSAN_ACCESS(N)                                                                 \
    void __tsan_read##N(void* p) { onAccess(p, N, false, __builtin_return_address(0)); }           \
    void __tsan_write##N(void* p) { onAccess(p, N, true, __builtin_return_address(0)); }           \
    void __tsan_unaligned_read##N(void* p) { onAccess(p, N, false, __builtin_return_address(0)); } \
    void __tsan_unaligned_write##N(void* p) { onAccess(p, N, true, __builtin_return_address(0)); } \
    void __tsan_volatile_read##N(void* p) { onAccess(p, N, false, __builtin_return_address(0)); }  \
    void __tsan_volatile_write##N(void* p) { onAccess(p, N, true, __builtin_return_address(0)); }
SCANLAB_EMU_TSAN_ACCESS(1)
SCANLAB_EMU_TSAN_ACCESS(2)
SCANLAB_EMU_TSAN_ACCESS(4)
SCANLAB_EMU_TSAN_ACCESS(8)
SCANLAB_EMU_TSAN_ACCESS(16)
#undef SCANLAB_EMU_TSAN_ACCESS

void __tsan_read_range(void* p, size_t n) { onAccess(p, n, false, __builtin_return_address(0)); }
void __tsan_write_range(void* p, size_t n) { onAccess(p, n, true, __builtin_return_address(0)); }
void __tsan_vptr_read(void** p) { onAccess(p, sizeof(void*), false, __builtin_return_address(0)); }
void __tsan_vptr_update(void** p, void*) {
    onAccess(p, sizeof(void*), true, __builtin_return_address(0));
}
// Built with --param tsan-instrument-func-entry-exit=0; here should a unit not be.
void __tsan_func_entry(void*) {}
void __tsan_func_exit() {}
// Called by every instrumented unit's constructor: this program's kernels are checked.
void __tsan_init() { scanlab::emu::detail::raceMarkActive(); }

void __tsan_atomic_thread_fence(int) {
    __atomic_thread_fence(__ATOMIC_SEQ_CST);
    scanlab::emu::detail::raceAtomic();
}
void __tsan_atomic_signal_fence(int) { __atomic_signal_fence(__ATOMIC_SEQ_CST); }

// The memory orders are ignored: every operation is sequentially consistent.
#define SCANLAB_EMU_TSAN_RMW(N, T, op, builtin)                    \
    T __tsan_atomic##N##_##op(volatile T* a, T v, int) {           \
        onAtomic(a, sizeof(T), true, __builtin_return_address(0)); \
        const T old = builtin(a, v, __ATOMIC_SEQ_CST);             \
        scanlab::emu::detail::raceAtomic();                        \
        return old;                                                \
    }
#define SCANLAB_EMU_TSAN_ATOMICS(N, T)                                                             \
    T __tsan_atomic##N##_load(const volatile T* a, int) {                                          \
        onAtomic(a, sizeof(T), false, __builtin_return_address(0));                                \
        const T v = __atomic_load_n(a, __ATOMIC_SEQ_CST);                                          \
        scanlab::emu::detail::raceAtomic();                                                        \
        return v;                                                                                  \
    }                                                                                              \
    void __tsan_atomic##N##_store(volatile T* a, T v, int) {                                       \
        onAtomic(a, sizeof(T), true, __builtin_return_address(0));                                 \
        __atomic_store_n(a, v, __ATOMIC_SEQ_CST);                                                  \
        scanlab::emu::detail::raceAtomic();                                                        \
    }                                                                                              \
    SCANLAB_EMU_TSAN_RMW(N, T, exchange, __atomic_exchange_n)                                      \
    SCANLAB_EMU_TSAN_RMW(N, T, fetch_add, __atomic_fetch_add)                                      \
    SCANLAB_EMU_TSAN_RMW(N, T, fetch_sub, __atomic_fetch_sub)                                      \
    SCANLAB_EMU_TSAN_RMW(N, T, fetch_and, __atomic_fetch_and)                                      \
    SCANLAB_EMU_TSAN_RMW(N, T, fetch_or, __atomic_fetch_or)                                        \
    SCANLAB_EMU_TSAN_RMW(N, T, fetch_xor, __atomic_fetch_xor)                                      \
    SCANLAB_EMU_TSAN_RMW(N, T, fetch_nand, __atomic_fetch_nand)                                    \
    int __tsan_atomic##N##_compare_exchange_strong(volatile T* a, T* expected, T v, int, int) {    \
        onAtomic(a, sizeof(T), true, __builtin_return_address(0));                                 \
        const bool ok = __atomic_compare_exchange_n(a, expected, v, false, __ATOMIC_SEQ_CST,       \
                                                    __ATOMIC_SEQ_CST);                             \
        scanlab::emu::detail::raceAtomic();                                                        \
        return ok;                                                                                 \
    }                                                                                              \
    int __tsan_atomic##N##_compare_exchange_weak(volatile T* a, T* expected, T v, int, int) {      \
        onAtomic(a, sizeof(T), true, __builtin_return_address(0));                                 \
        const bool ok =                                                                            \
            __atomic_compare_exchange_n(a, expected, v, true, __ATOMIC_SEQ_CST, __ATOMIC_SEQ_CST); \
        scanlab::emu::detail::raceAtomic();                                                        \
        return ok;                                                                                 \
    }                                                                                              \
    T __tsan_atomic##N##_compare_exchange_val(volatile T* a, T expected, T v, int, int) {          \
        onAtomic(a, sizeof(T), true, __builtin_return_address(0));                                 \
        __atomic_compare_exchange_n(a, &expected, v, false, __ATOMIC_SEQ_CST, __ATOMIC_SEQ_CST);   \
        scanlab::emu::detail::raceAtomic();                                                        \
        return expected;                                                                           \
    }
SCANLAB_EMU_TSAN_ATOMICS(8, unsigned char)
SCANLAB_EMU_TSAN_ATOMICS(16, unsigned short)
SCANLAB_EMU_TSAN_ATOMICS(32, unsigned)
SCANLAB_EMU_TSAN_ATOMICS(64, unsigned long long)
#undef SCANLAB_EMU_TSAN_ATOMICS
#undef SCANLAB_EMU_TSAN_RMW

}  // extern "C"

#endif
