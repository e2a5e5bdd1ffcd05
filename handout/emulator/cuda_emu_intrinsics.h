// scanlab CPU emulator: the device functions of the CUDA C++ Programming Guide's lists
// beyond the ones kernels use most (those are in cuda_emu.h): integer and floating-point
// intrinsics, warp match and reduce, scoped and 16-bit atomics, and a named compile error
// for each listed function the emulator does not provide. The list, with which functions
// are covered, is emulator/device_functions.def; tests/emulator/conformance/ runs each
// covered one on both backends. Included at the end of cuda_emu.h's device part.
#pragma once

#include <cfenv>
#include <climits>
#include <limits>
#include <type_traits>
#include <cmath>

// ----------------------------------------------------------------------------------
// Integer intrinsics.
inline int __mul24(int x, int y) {
    // The low 32 bits of the product of the low 24 bits of each, sign-extended.
    const long long a = static_cast<int>(static_cast<unsigned>(x) << 8) >> 8;
    const long long b = static_cast<int>(static_cast<unsigned>(y) << 8) >> 8;
    return static_cast<int>(static_cast<unsigned>(static_cast<unsigned long long>(a * b)));
}
inline unsigned __umul24(unsigned x, unsigned y) {
    return static_cast<unsigned>(static_cast<unsigned long long>(x & 0xffffffu) * (y & 0xffffffu));
}
inline int __mulhi(int x, int y) {
    return static_cast<int>((static_cast<long long>(x) * y) >> 32);
}
inline long long __mul64hi(long long x, long long y) {
    return static_cast<long long>((static_cast<__int128>(x) * y) >> 64);
}
inline unsigned long long __umul64hi(unsigned long long x, unsigned long long y) {
    return static_cast<unsigned long long>((static_cast<unsigned __int128>(x) * y) >> 64);
}
inline unsigned long long __brevll(unsigned long long x) {
    return (static_cast<unsigned long long>(__brev(static_cast<unsigned>(x))) << 32) |
           __brev(static_cast<unsigned>(x >> 32));
}
// Byte i of the result is byte s[4i+2..4i] of the 8 bytes y:x.
inline unsigned __byte_perm(unsigned x, unsigned y, unsigned s) {
    const unsigned long long bytes = (static_cast<unsigned long long>(y) << 32) | x;
    unsigned r = 0;
    for (int i = 0; i < 4; ++i) r |= static_cast<unsigned>(bytes >> (8 * ((s >> (4 * i)) & 7)) & 0xff) << (8 * i);
    return r;
}
// hi:lo shifted, the shift wrapped (mod 32) or clamped (c: at most 32).
inline unsigned __funnelshift_l(unsigned lo, unsigned hi, unsigned shift) {
    const unsigned long long v = (static_cast<unsigned long long>(hi) << 32) | lo;
    return static_cast<unsigned>((v << (shift & 31)) >> 32);
}
inline unsigned __funnelshift_lc(unsigned lo, unsigned hi, unsigned shift) {
    const unsigned long long v = (static_cast<unsigned long long>(hi) << 32) | lo;
    return static_cast<unsigned>((v << (shift < 32 ? shift : 32)) >> 32);
}
inline unsigned __funnelshift_r(unsigned lo, unsigned hi, unsigned shift) {
    const unsigned long long v = (static_cast<unsigned long long>(hi) << 32) | lo;
    return static_cast<unsigned>(v >> (shift & 31));
}
inline unsigned __funnelshift_rc(unsigned lo, unsigned hi, unsigned shift) {
    const unsigned long long v = (static_cast<unsigned long long>(hi) << 32) | lo;
    return static_cast<unsigned>(v >> (shift < 32 ? shift : 32));
}
inline unsigned __sad(int x, int y, unsigned z) {
    return z + static_cast<unsigned>(x > y ? static_cast<long long>(x) - y : static_cast<long long>(y) - x);
}
inline unsigned __usad(unsigned x, unsigned y, unsigned z) { return z + (x > y ? x - y : y - x); }
inline int __hadd(int x, int y) { return static_cast<int>((static_cast<long long>(x) + y) >> 1); }
inline int __rhadd(int x, int y) { return static_cast<int>((static_cast<long long>(x) + y + 1) >> 1); }
inline unsigned __uhadd(unsigned x, unsigned y) {
    return static_cast<unsigned>((static_cast<unsigned long long>(x) + y) >> 1);
}
inline unsigned __urhadd(unsigned x, unsigned y) {
    return static_cast<unsigned>((static_cast<unsigned long long>(x) + y + 1) >> 1);
}
// Four byte products (signed or unsigned bytes) added to c.
inline int __dp4a(int a, int b, int c) {
    for (int i = 0; i < 4; ++i)
        c += static_cast<signed char>(a >> (8 * i)) * static_cast<signed char>(b >> (8 * i));
    return c;
}
inline unsigned __dp4a(unsigned a, unsigned b, unsigned c) {
    for (int i = 0; i < 4; ++i) c += ((a >> (8 * i)) & 0xff) * ((b >> (8 * i)) & 0xff);
    return c;
}
inline int min(int a, int b) { return a < b ? a : b; }
inline int max(int a, int b) { return a < b ? b : a; }
inline unsigned umin(unsigned a, unsigned b) { return a < b ? a : b; }
inline unsigned umax(unsigned a, unsigned b) { return a < b ? b : a; }
inline long long llmin(long long a, long long b) { return a < b ? a : b; }
inline long long llmax(long long a, long long b) { return a < b ? b : a; }
inline unsigned long long ullmin(unsigned long long a, unsigned long long b) { return a < b ? a : b; }
inline unsigned long long ullmax(unsigned long long a, unsigned long long b) { return a < b ? b : a; }

// ----------------------------------------------------------------------------------
// Floating-point intrinsics. The fast ones (__expf, ...) are exact here (the C library's);
// the GPU's are approximations within the Programming Guide's error bounds, so results
// agree within those bounds, not bit for bit. The rounded ones (_rz, _ru, _rd) run the
// operation under the CPU's rounding mode, between volatile accesses so that the
// compiler neither folds nor moves it.
namespace scanlab::emu::detail {
template <class T, class F>
inline T withRounding(int mode, F f) {
    const int saved = std::fegetround();
    std::fesetround(mode);
    volatile T r = f();
    std::fesetround(saved);
    return r;
}
}  // namespace scanlab::emu::detail

// name_rn/_rz/_ru/_rd(a, b) = a op b in that rounding mode (and fma of three).
#define SCANLAB_EMU_ROUNDED_MODE(T, name, mode, sfx, op)                                  \
    inline T name##sfx(T a, T b) {                                                       \
        return ::scanlab::emu::detail::withRounding<T>(mode, [&]() -> T {                \
            volatile T va = a, vb = b;                                                   \
            return va op vb;                                                             \
        });                                                                              \
    }
#define SCANLAB_EMU_ROUNDED(T, name, op)                                \
    SCANLAB_EMU_ROUNDED_MODE(T, name, FE_TONEAREST, _rn, op)            \
    SCANLAB_EMU_ROUNDED_MODE(T, name, FE_TOWARDZERO, _rz, op)           \
    SCANLAB_EMU_ROUNDED_MODE(T, name, FE_UPWARD, _ru, op)               \
    SCANLAB_EMU_ROUNDED_MODE(T, name, FE_DOWNWARD, _rd, op)
SCANLAB_EMU_ROUNDED(float, __fadd, +)
SCANLAB_EMU_ROUNDED(float, __fsub, -)
SCANLAB_EMU_ROUNDED(float, __fmul, *)
SCANLAB_EMU_ROUNDED(float, __fdiv, /)
SCANLAB_EMU_ROUNDED(double, __dadd, +)
SCANLAB_EMU_ROUNDED(double, __dsub, -)
SCANLAB_EMU_ROUNDED(double, __dmul, *)
SCANLAB_EMU_ROUNDED(double, __ddiv, /)
#undef SCANLAB_EMU_ROUNDED
#undef SCANLAB_EMU_ROUNDED_MODE
#define SCANLAB_EMU_FMA_MODE(T, name, fn, mode, sfx)                                   \
    inline T name##sfx(T a, T b, T c) {                                                \
        return ::scanlab::emu::detail::withRounding<T>(mode, [&]() -> T {              \
            volatile T va = a, vb = b, vc = c;                                         \
            return std::fn(T(va), T(vb), T(vc));                                       \
        });                                                                            \
    }
#define SCANLAB_EMU_FMA(T, name, fn)                                  \
    SCANLAB_EMU_FMA_MODE(T, name, fn, FE_TONEAREST, _rn)              \
    SCANLAB_EMU_FMA_MODE(T, name, fn, FE_TOWARDZERO, _rz)             \
    SCANLAB_EMU_FMA_MODE(T, name, fn, FE_UPWARD, _ru)                 \
    SCANLAB_EMU_FMA_MODE(T, name, fn, FE_DOWNWARD, _rd)
SCANLAB_EMU_FMA(float, __fmaf, fmaf)
SCANLAB_EMU_FMA(double, __fma, fma)
#undef SCANLAB_EMU_FMA
#undef SCANLAB_EMU_FMA_MODE
inline float __frcp_rn(float x) { return __fdiv_rn(1.0f, x); }
inline double __drcp_rn(double x) { return __ddiv_rn(1.0, x); }
inline float __fsqrt_rn(float x) { return std::sqrt(x); }  // IEEE: correctly rounded
inline double __dsqrt_rn(double x) { return std::sqrt(x); }
// 1/sqrt(x) in double, then rounded once: correctly rounded for every float but
// a vanishing few ties.
inline float __frsqrt_rn(float x) { return static_cast<float>(1.0 / std::sqrt(static_cast<double>(x))); }
// NaN, -0 and negatives give +0 (measured on sm_90: __saturatef(-0.0f) is +0).
inline float __saturatef(float x) { return x > 0.0f ? (x > 1.0f ? 1.0f : x) : 0.0f; }
inline float __fdividef(float x, float y) { return x / y; }
inline float __expf(float x) { return std::exp(x); }
inline float __exp10f(float x) { return std::pow(10.0f, x); }
inline float __logf(float x) { return std::log(x); }
inline float __log2f(float x) { return std::log2(x); }
inline float __log10f(float x) { return std::log10(x); }
inline float __sinf(float x) { return std::sin(x); }
inline float __cosf(float x) { return std::cos(x); }
inline float __tanf(float x) { return std::tan(x); }
inline void __sincosf(float x, float* s, float* c) { *s = std::sin(x); *c = std::cos(x); }
inline float __powf(float x, float y) { return std::pow(x, y); }

// ----------------------------------------------------------------------------------
// Conversions and reinterpretations. Float to integer saturates. NaN gives what an
// H100 (sm_90) gave: 0 from float to a 32-bit integer, the sign bit alone
// (0x80000000, 0x8000000000000000) from float to a 64-bit integer and from double to
// any integer, unsigned included (tests/conformance checks these values).
namespace scanlab::emu::detail {
template <class I, class F>
inline I toIntegerRounded(F x, int mode) {
    if (std::isnan(x)) {
        if (sizeof(F) == 4 && sizeof(I) == 4) return 0;
        return static_cast<I>(std::make_unsigned_t<I>(1) << (8 * sizeof(I) - 1));
    }
    const F r = withRounding<F>(mode, [&]() -> F { volatile F v = x; return std::nearbyint(F(v)); });
    if (r <= static_cast<F>(std::numeric_limits<I>::min())) return std::numeric_limits<I>::min();
    if (r >= static_cast<F>(std::numeric_limits<I>::max())) return std::numeric_limits<I>::max();
    return static_cast<I>(r);
}
}  // namespace scanlab::emu::detail
#define SCANLAB_EMU_TO_INT(name, I, F)                                                                         \
    inline I name##_rn(F x) { return ::scanlab::emu::detail::toIntegerRounded<I>(x, FE_TONEAREST); }  \
    inline I name##_rz(F x) { return ::scanlab::emu::detail::toIntegerRounded<I>(x, FE_TOWARDZERO); } \
    inline I name##_ru(F x) { return ::scanlab::emu::detail::toIntegerRounded<I>(x, FE_UPWARD); }     \
    inline I name##_rd(F x) { return ::scanlab::emu::detail::toIntegerRounded<I>(x, FE_DOWNWARD); }
SCANLAB_EMU_TO_INT(__float2int, int, float)
SCANLAB_EMU_TO_INT(__float2uint, unsigned, float)
SCANLAB_EMU_TO_INT(__float2ll, long long, float)
SCANLAB_EMU_TO_INT(__float2ull, unsigned long long, float)
SCANLAB_EMU_TO_INT(__double2int, int, double)
SCANLAB_EMU_TO_INT(__double2uint, unsigned, double)
SCANLAB_EMU_TO_INT(__double2ll, long long, double)
SCANLAB_EMU_TO_INT(__double2ull, unsigned long long, double)
#undef SCANLAB_EMU_TO_INT
#define SCANLAB_EMU_TO_FLOAT(name, To, From)                                                         \
    inline To name##_rn(From x) {                                                                    \
        return ::scanlab::emu::detail::withRounding<To>(FE_TONEAREST, [&]() -> To { volatile From v = x; return To(v); }); \
    }                                                                                                \
    inline To name##_rz(From x) {                                                                    \
        return ::scanlab::emu::detail::withRounding<To>(FE_TOWARDZERO, [&]() -> To { volatile From v = x; return To(v); }); \
    }                                                                                                \
    inline To name##_ru(From x) {                                                                    \
        return ::scanlab::emu::detail::withRounding<To>(FE_UPWARD, [&]() -> To { volatile From v = x; return To(v); }); \
    }                                                                                                \
    inline To name##_rd(From x) {                                                                    \
        return ::scanlab::emu::detail::withRounding<To>(FE_DOWNWARD, [&]() -> To { volatile From v = x; return To(v); }); \
    }
SCANLAB_EMU_TO_FLOAT(__int2float, float, int)
SCANLAB_EMU_TO_FLOAT(__uint2float, float, unsigned)
SCANLAB_EMU_TO_FLOAT(__ll2float, float, long long)
SCANLAB_EMU_TO_FLOAT(__ull2float, float, unsigned long long)
SCANLAB_EMU_TO_FLOAT(__ll2double, double, long long)
SCANLAB_EMU_TO_FLOAT(__ull2double, double, unsigned long long)
SCANLAB_EMU_TO_FLOAT(__double2float, float, double)
#undef SCANLAB_EMU_TO_FLOAT
inline double __int2double_rn(int x) { return x; }
inline double __uint2double_rn(unsigned x) { return x; }
inline int __float_as_int(float x) { return ::scanlab::emu::detail::bitCast<int>(x); }
inline unsigned __float_as_uint(float x) { return ::scanlab::emu::detail::bitCast<unsigned>(x); }
inline float __int_as_float(int x) { return ::scanlab::emu::detail::bitCast<float>(x); }
inline float __uint_as_float(unsigned x) { return ::scanlab::emu::detail::bitCast<float>(x); }
inline long long __double_as_longlong(double x) { return ::scanlab::emu::detail::bitCast<long long>(x); }
inline double __longlong_as_double(long long x) { return ::scanlab::emu::detail::bitCast<double>(x); }
inline int __double2hiint(double x) { return static_cast<int>(__double_as_longlong(x) >> 32); }
inline int __double2loint(double x) { return static_cast<int>(__double_as_longlong(x)); }
inline double __hiloint2double(int hi, int lo) {
    return __longlong_as_double(static_cast<long long>((static_cast<unsigned long long>(static_cast<unsigned>(hi)) << 32) |
                                                       static_cast<unsigned>(lo)));
}

// ----------------------------------------------------------------------------------
// Warp match and reduce: every lane of `mask` takes each other lane's value with a
// shuffle (so the mask checks and messages of the shuffles apply), then combines them.
namespace scanlab::emu::detail {
template <class T>
inline unsigned matchAny(Site site, unsigned mask, T value) {
    static_assert(sizeof(T) == 4 || sizeof(T) == 8);
    unsigned long long mine = 0;
    std::memcpy(&mine, &value, sizeof(T));
    unsigned same = 0;
    for (unsigned m = mask; m != 0; m &= m - 1) {
        const int lane = __builtin_ctz(m);
        if (shuffle(site, ShflMode::Idx, mask, mine, lane, 32) == mine) same |= 1u << lane;
    }
    return same;
}
template <class T>
inline unsigned matchAll(Site site, unsigned mask, T value, int* pred) {
    const bool all = matchAny(site, mask, value) == mask;
    *pred = all ? 1 : 0;
    return all ? mask : 0;
}
template <class T, class Op>
inline T reduceSync(Site site, unsigned mask, T value, Op op) {
    bool first = true;
    T acc{};
    for (unsigned m = mask; m != 0; m &= m - 1) {
        const T other = shfl(site, ShflMode::Idx, mask, value, __builtin_ctz(m));
        acc = first ? other : op(acc, other);
        first = false;
    }
    return acc;
}
struct ReduceAdd { template <class T> T operator()(T a, T b) const { return a + b; } };
struct ReduceMin { template <class T> T operator()(T a, T b) const { return b < a ? b : a; } };
struct ReduceMax { template <class T> T operator()(T a, T b) const { return a < b ? b : a; } };
struct ReduceAnd { template <class T> T operator()(T a, T b) const { return a & b; } };
struct ReduceOr { template <class T> T operator()(T a, T b) const { return a | b; } };
struct ReduceXor { template <class T> T operator()(T a, T b) const { return a ^ b; } };
// CUDA's overloads: add, min and max on int and unsigned; and, or and xor on unsigned.
inline int reduceArg(int v) { return v; }
inline unsigned reduceArg(unsigned v) { return v; }
}  // namespace scanlab::emu::detail

#define __match_any_sync(mask, value) \
    ::scanlab::emu::detail::matchAny(SCANLAB_EMU_SITE, (mask), (value))
#define __match_all_sync(mask, value, pred) \
    ::scanlab::emu::detail::matchAll(SCANLAB_EMU_SITE, (mask), (value), (pred))
#define __reduce_add_sync(mask, value) \
    ::scanlab::emu::detail::reduceSync(SCANLAB_EMU_SITE, (mask), ::scanlab::emu::detail::reduceArg(value), ::scanlab::emu::detail::ReduceAdd{})
#define __reduce_min_sync(mask, value) \
    ::scanlab::emu::detail::reduceSync(SCANLAB_EMU_SITE, (mask), ::scanlab::emu::detail::reduceArg(value), ::scanlab::emu::detail::ReduceMin{})
#define __reduce_max_sync(mask, value) \
    ::scanlab::emu::detail::reduceSync(SCANLAB_EMU_SITE, (mask), ::scanlab::emu::detail::reduceArg(value), ::scanlab::emu::detail::ReduceMax{})
#define __reduce_and_sync(mask, value) \
    ::scanlab::emu::detail::reduceSync(SCANLAB_EMU_SITE, (mask), static_cast<unsigned>(value), ::scanlab::emu::detail::ReduceAnd{})
#define __reduce_or_sync(mask, value) \
    ::scanlab::emu::detail::reduceSync(SCANLAB_EMU_SITE, (mask), static_cast<unsigned>(value), ::scanlab::emu::detail::ReduceOr{})
#define __reduce_xor_sync(mask, value) \
    ::scanlab::emu::detail::reduceSync(SCANLAB_EMU_SITE, (mask), static_cast<unsigned>(value), ::scanlab::emu::detail::ReduceXor{})

// ----------------------------------------------------------------------------------
// Atomics beyond cuda_emu.h's: 16-bit CAS, vector adds (sm_90), and the scoped variants
// (_block, _system), which on one CPU process are the same operation.
inline unsigned short atomicCAS(unsigned short* a, unsigned short compare, unsigned short v) {
    __atomic_compare_exchange_n(a, &compare, v, false, __ATOMIC_RELAXED, __ATOMIC_RELAXED);
    ::scanlab::emu::detail::preemptionPoint();
    return compare;
}
inline long long atomicAnd(long long* a, long long v) {
    const long long old = __atomic_fetch_and(a, v, __ATOMIC_RELAXED);
    ::scanlab::emu::detail::preemptionPoint();
    return old;
}
inline long long atomicOr(long long* a, long long v) {
    const long long old = __atomic_fetch_or(a, v, __ATOMIC_RELAXED);
    ::scanlab::emu::detail::preemptionPoint();
    return old;
}
inline long long atomicXor(long long* a, long long v) {
    const long long old = __atomic_fetch_xor(a, v, __ATOMIC_RELAXED);
    ::scanlab::emu::detail::preemptionPoint();
    return old;
}
inline float2 atomicAdd(float2* a, float2 v) {
    return float2{atomicAdd(&a->x, v.x), atomicAdd(&a->y, v.y)};
}
inline float4 atomicAdd(float4* a, float4 v) {
    return float4{atomicAdd(&a->x, v.x), atomicAdd(&a->y, v.y), atomicAdd(&a->z, v.z), atomicAdd(&a->w, v.w)};
}
#define SCANLAB_EMU_SCOPED_ATOMIC(name)                                                    \
    template <class T, class... Rest>                                                    \
    inline auto name##_block(T* a, Rest... rest) -> decltype(name(a, rest...)) {         \
        return name(a, rest...);                                                         \
    }                                                                                    \
    template <class T, class... Rest>                                                    \
    inline auto name##_system(T* a, Rest... rest) -> decltype(name(a, rest...)) {        \
        return name(a, rest...);                                                         \
    }
SCANLAB_EMU_SCOPED_ATOMIC(atomicAdd)
SCANLAB_EMU_SCOPED_ATOMIC(atomicSub)
SCANLAB_EMU_SCOPED_ATOMIC(atomicExch)
SCANLAB_EMU_SCOPED_ATOMIC(atomicMin)
SCANLAB_EMU_SCOPED_ATOMIC(atomicMax)
SCANLAB_EMU_SCOPED_ATOMIC(atomicInc)
SCANLAB_EMU_SCOPED_ATOMIC(atomicDec)
SCANLAB_EMU_SCOPED_ATOMIC(atomicCAS)
SCANLAB_EMU_SCOPED_ATOMIC(atomicAnd)
SCANLAB_EMU_SCOPED_ATOMIC(atomicOr)
SCANLAB_EMU_SCOPED_ATOMIC(atomicXor)
#undef SCANLAB_EMU_SCOPED_ATOMIC

// ----------------------------------------------------------------------------------
// Listed functions the emulator does not provide (device_functions.def, "no"):
// using one stops the build with a message that names it and says whose gap it is.
template <class... A>
struct ScanlabEmuGap : std::false_type {};
#define SCANLAB_EMU_GAP(name)                                                                      \
    template <class... A>                                                                          \
    inline int name(A...) {                                                                        \
        static_assert(ScanlabEmuGap<A...>::value,                                                  \
                      "emulator gap: " #name " is a CUDA device function the scanlab CPU emulator "  \
                      "does not provide yet (handout/emulator/device_functions.def); your code is "  \
                      "not at fault: it builds with nvcc");                                        \
        return 0;                                                                                  \
    }
#define SCANLAB_EMU_FN_yes(name)
#define SCANLAB_EMU_FN_no(name) SCANLAB_EMU_GAP(name)
#define SCANLAB_EMU_FN(name, group, emulated) SCANLAB_EMU_FN_##emulated(name)
#include "emulator/device_functions.def"
#undef SCANLAB_EMU_FN
#undef SCANLAB_EMU_FN_yes
#undef SCANLAB_EMU_FN_no
#undef SCANLAB_EMU_GAP
