// scanlab CPU emulator: CUDA's built-in vector types (vector_types.h) and their make_*
// functions, with CUDA's sizes and alignments (a float4 load is one 16-byte access there).
// Included by cuda_emu.h.
#pragma once

struct uint3 {
    unsigned int x, y, z;
};
struct dim3 {
    unsigned int x, y, z;
    constexpr dim3(unsigned int vx = 1, unsigned int vy = 1, unsigned int vz = 1)
        : x(vx), y(vy), z(vz) {}
    constexpr dim3(uint3 v) : x(v.x), y(v.y), z(v.z) {}
    constexpr operator uint3() const { return uint3{x, y, z}; }
};
inline uint3 make_uint3(unsigned int x, unsigned int y, unsigned int z) { return uint3{x, y, z}; }

// SCANLAB_EMU_VECTOR(name, T, align1, align2, align4): name1..name4 (name3 where CUDA has
// it, with T's own alignment) and make_name1..4.
#define SCANLAB_EMU_VECTOR(name, T, a1, a2, a4)                                              \
    struct __attribute__((aligned(a1))) name##1 { T x; };                                  \
    struct __attribute__((aligned(a2))) name##2 { T x, y; };                               \
    struct __attribute__((aligned(a4))) name##4 { T x, y, z, w; };                         \
    inline name##1 make_##name##1(T x) { return name##1{x}; }                              \
    inline name##2 make_##name##2(T x, T y) { return name##2{x, y}; }                      \
    inline name##4 make_##name##4(T x, T y, T z, T w) { return name##4{x, y, z, w}; }
#define SCANLAB_EMU_VECTOR3(name, T)                                                         \
    struct name##3 { T x, y, z; };                                                          \
    inline name##3 make_##name##3(T x, T y, T z) { return name##3{x, y, z}; }

SCANLAB_EMU_VECTOR(char, signed char, 1, 2, 4)
SCANLAB_EMU_VECTOR(uchar, unsigned char, 1, 2, 4)
SCANLAB_EMU_VECTOR(short, short, 2, 4, 8)
SCANLAB_EMU_VECTOR(ushort, unsigned short, 2, 4, 8)
SCANLAB_EMU_VECTOR(int, int, 4, 8, 16)
SCANLAB_EMU_VECTOR(uint, unsigned int, 4, 8, 16)
SCANLAB_EMU_VECTOR(long, long, alignof(long), 2 * sizeof(long), 16)
SCANLAB_EMU_VECTOR(ulong, unsigned long, alignof(unsigned long), 2 * sizeof(unsigned long), 16)
SCANLAB_EMU_VECTOR(longlong, long long, 8, 16, 16)
SCANLAB_EMU_VECTOR(ulonglong, unsigned long long, 8, 16, 16)
SCANLAB_EMU_VECTOR(float, float, 4, 8, 16)
SCANLAB_EMU_VECTOR(double, double, 8, 16, 16)
SCANLAB_EMU_VECTOR3(char, signed char)
SCANLAB_EMU_VECTOR3(uchar, unsigned char)
SCANLAB_EMU_VECTOR3(short, short)
SCANLAB_EMU_VECTOR3(ushort, unsigned short)
SCANLAB_EMU_VECTOR3(int, int)
SCANLAB_EMU_VECTOR3(long, long)
SCANLAB_EMU_VECTOR3(ulong, unsigned long)
SCANLAB_EMU_VECTOR3(longlong, long long)
SCANLAB_EMU_VECTOR3(ulonglong, unsigned long long)
SCANLAB_EMU_VECTOR3(float, float)
SCANLAB_EMU_VECTOR3(double, double)
#undef SCANLAB_EMU_VECTOR
#undef SCANLAB_EMU_VECTOR3
// uint3 is the type of threadIdx (above); CUDA spells its maker the same way.
static_assert(sizeof(float4) == 16 && alignof(float4) == 16 && alignof(int2) == 8 &&
              alignof(short2) == 4 && sizeof(float3) == 12 && alignof(double2) == 16);
