// The conformance cases, one a listed device function (device_functions.cu says how
// they run), and the spot checks: values from the Programming Guide's definitions.
// Included by device_functions.cu inside namespace conformance.
#pragma once

// ---- integer intrinsics
CONF_MAP(__mul24, 'i', __mul24(in.i[0], in.i[1]))
CONF_MAP(__umul24, 'i', __umul24(in.u[0], in.u[1]))
CONF_MAP(__mulhi, 'i', __mulhi(in.i[0], in.i[1]))
CONF_MAP(__umulhi, 'i', __umulhi(in.u[0], in.u[1]))
CONF_MAP(__mul64hi, 'i', __mul64hi((long long)in.w[0], (long long)in.w[1]))
CONF_MAP(__umul64hi, 'i', __umul64hi(in.w[0], in.w[1]))
CONF_MAP(__popc, 'i', __popc(in.u[0]))
CONF_MAP(__popcll, 'i', __popcll(in.w[0]))
CONF_MAP(__clz, 'i', __clz(in.i[0]))
CONF_MAP(__clzll, 'i', __clzll((long long)in.w[0]))
CONF_MAP(__ffs, 'i', __ffs(in.i[0]))
CONF_MAP(__ffsll, 'i', __ffsll((long long)in.w[0]))
CONF_MAP(__brev, 'i', __brev(in.u[0]))
CONF_MAP(__brevll, 'i', __brevll(in.w[0]))
CONF_MAP(__byte_perm, 'i', __byte_perm(in.u[0], in.u[1], in.u[2]))
CONF_MAP(__funnelshift_l, 'i', __funnelshift_l(in.u[0], in.u[1], in.u[2] % 80))
CONF_MAP(__funnelshift_lc, 'i', __funnelshift_lc(in.u[0], in.u[1], in.u[2] % 80))
CONF_MAP(__funnelshift_r, 'i', __funnelshift_r(in.u[0], in.u[1], in.u[2] % 80))
CONF_MAP(__funnelshift_rc, 'i', __funnelshift_rc(in.u[0], in.u[1], in.u[2] % 80))
CONF_MAP(__sad, 'i', __sad(in.i[0], in.i[1], in.u[2]))
CONF_MAP(__usad, 'i', __usad(in.u[0], in.u[1], in.u[2]))
CONF_MAP(__hadd, 'i', __hadd(in.i[0], in.i[1]))
CONF_MAP(__rhadd, 'i', __rhadd(in.i[0], in.i[1]))
CONF_MAP(__uhadd, 'i', __uhadd(in.u[0], in.u[1]))
CONF_MAP(__urhadd, 'i', __urhadd(in.u[0], in.u[1]))
CONF_CASE(__dp4a, 'i', false, out[0] = bitsOf(__dp4a(in.i[0], in.i[1], in.i[2]));
          out[1] = bitsOf(__dp4a(in.u[0], in.u[1], in.u[2]));)
CONF_MAP(min, 'i', min(in.i[0], in.i[1]))
CONF_MAP(max, 'i', max(in.i[0], in.i[1]))
CONF_MAP(umin, 'i', umin(in.u[0], in.u[1]))
CONF_MAP(umax, 'i', umax(in.u[0], in.u[1]))
CONF_MAP(llmin, 'i', llmin((long long)in.w[0], (long long)in.w[1]))
CONF_MAP(llmax, 'i', llmax((long long)in.w[0], (long long)in.w[1]))
CONF_MAP(ullmin, 'i', ullmin(in.w[0], in.w[1]))
CONF_MAP(ullmax, 'i', ullmax(in.w[0], in.w[1]))

// ---- floating point: IEEE operations in each rounding mode (exact on both)
#define CONF_ROUNDED(name, kind, x, y)                     \
    CONF_MAP(name##_rn, kind, name##_rn(x, y))             \
    CONF_MAP(name##_rz, kind, name##_rz(x, y))             \
    CONF_MAP(name##_ru, kind, name##_ru(x, y))             \
    CONF_MAP(name##_rd, kind, name##_rd(x, y))
CONF_ROUNDED(__fadd, 'f', in.f[0], in.f[1])
CONF_ROUNDED(__fsub, 'f', in.f[0], in.f[1])
CONF_ROUNDED(__fmul, 'f', in.f[0], in.f[1])
CONF_ROUNDED(__fdiv, 'f', in.f[0], in.f[1])
CONF_MAP(__fmaf_rn, 'f', __fmaf_rn(in.f[0], in.f[1], in.f[2]))
CONF_MAP(__fmaf_rz, 'f', __fmaf_rz(in.f[0], in.f[1], in.f[2]))
CONF_MAP(__fmaf_ru, 'f', __fmaf_ru(in.f[0], in.f[1], in.f[2]))
CONF_MAP(__fmaf_rd, 'f', __fmaf_rd(in.f[0], in.f[1], in.f[2]))
CONF_MAP(__frcp_rn, 'f', __frcp_rn(in.f[0]))
CONF_MAP(__fsqrt_rn, 'f', __fsqrt_rn(in.f[0]))
CONF_MAP(__frsqrt_rn, 'f', __frsqrt_rn(in.f[0]))
CONF_MAP(__saturatef, 'f', __saturatef(in.f[0]))
CONF_ROUNDED(__dadd, 'd', in.d[0], in.d[1])
CONF_MAP(__dsub_rn, 'd', __dsub_rn(in.d[0], in.d[1]))
CONF_MAP(__dmul_rn, 'd', __dmul_rn(in.d[0], in.d[1]))
CONF_MAP(__dmul_rz, 'd', __dmul_rz(in.d[0], in.d[1]))
CONF_MAP(__ddiv_rn, 'd', __ddiv_rn(in.d[0], in.d[1]))
CONF_MAP(__fma_rn, 'd', __fma_rn(in.d[0], in.d[1], in.d[2]))
CONF_MAP(__fma_rz, 'd', __fma_rz(in.d[0], in.d[1], in.d[2]))
CONF_MAP(__drcp_rn, 'd', __drcp_rn(in.d[0]))
CONF_MAP(__dsqrt_rn, 'd', __dsqrt_rn(in.d[0]))
// ---- the approximate intrinsics, on moderate inputs (their error bounds hold there)
CONF_APPROX(__fdividef, __fdividef(in.g[0], in.g[1]))
CONF_APPROX(__expf, __expf(in.g[0]))
CONF_APPROX(__exp10f, __exp10f(in.g[0] * 0.25f))
CONF_APPROX(__logf, __logf(fabsf(in.g[0]) + 0.125f))
CONF_APPROX(__log2f, __log2f(fabsf(in.g[0]) + 0.125f))
CONF_APPROX(__log10f, __log10f(fabsf(in.g[0]) + 0.125f))
CONF_APPROX(__sinf, __sinf(in.g[0] * 0.39f))
CONF_APPROX(__cosf, __cosf(in.g[0] * 0.39f))
CONF_APPROX(__tanf, __tanf(in.g[0] * 0.15f))
CONF_CASE(__sincosf, 'f', true, float s; float c; __sincosf(in.g[0] * 0.39f, &s, &c);
          out[0] = bitsOf(s); out[1] = bitsOf(c);)
CONF_APPROX(__powf, __powf(fabsf(in.g[0]) * 0.2f + 0.5f, in.g[1] * 0.5f))

// ---- conversions
#define CONF_CONVERT4(name, kind, x)        \
    CONF_MAP(name##_rn, kind, name##_rn(x)) \
    CONF_MAP(name##_rz, kind, name##_rz(x)) \
    CONF_MAP(name##_ru, kind, name##_ru(x)) \
    CONF_MAP(name##_rd, kind, name##_rd(x))
CONF_CONVERT4(__float2int, 'i', in.f[0])
CONF_MAP(__float2uint_rn, 'i', __float2uint_rn(in.f[0]))
CONF_MAP(__float2uint_rz, 'i', __float2uint_rz(in.f[0]))
CONF_MAP(__float2ll_rn, 'i', __float2ll_rn(in.f[0]))
CONF_MAP(__float2ll_rz, 'i', __float2ll_rz(in.f[0]))
CONF_MAP(__float2ull_rn, 'i', __float2ull_rn(in.f[0]))
CONF_MAP(__double2int_rn, 'i', __double2int_rn(in.d[0]))
CONF_MAP(__double2int_rz, 'i', __double2int_rz(in.d[0]))
CONF_MAP(__double2uint_rn, 'i', __double2uint_rn(in.d[0]))
CONF_MAP(__double2ll_rn, 'i', __double2ll_rn(in.d[0]))
CONF_MAP(__double2ull_rn, 'i', __double2ull_rn(in.d[0]))
CONF_MAP(__int2float_rn, 'f', __int2float_rn(in.i[0]))
CONF_MAP(__int2float_rz, 'f', __int2float_rz(in.i[0]))
CONF_MAP(__uint2float_rn, 'f', __uint2float_rn(in.u[0]))
CONF_MAP(__ll2float_rn, 'f', __ll2float_rn((long long)in.w[0]))
CONF_MAP(__ull2float_rn, 'f', __ull2float_rn(in.w[0]))
CONF_MAP(__ll2double_rn, 'd', __ll2double_rn((long long)in.w[0]))
CONF_CONVERT4(__double2float, 'f', in.d[0])
CONF_MAP(__int2double_rn, 'd', __int2double_rn(in.i[0]))
CONF_MAP(__uint2double_rn, 'd', __uint2double_rn(in.u[0]))
CONF_MAP(__float_as_int, 'i', __float_as_int(in.f[0]))
CONF_MAP(__float_as_uint, 'i', __float_as_uint(in.f[0]))
CONF_MAP(__int_as_float, 'f', __int_as_float(in.i[0]))
CONF_MAP(__uint_as_float, 'f', __uint_as_float(in.u[0]))
CONF_MAP(__double_as_longlong, 'i', __double_as_longlong(in.d[0]))
CONF_MAP(__longlong_as_double, 'd', __longlong_as_double((long long)in.w[0]))
CONF_MAP(__double2hiint, 'i', __double2hiint(in.d[0]))
CONF_MAP(__double2loint, 'i', __double2loint(in.d[0]))
CONF_MAP(__hiloint2double, 'd', __hiloint2double(in.i[0], in.i[1]))

// ---- warp functions (lane l of each warp; some with partial masks and widths)
#define LANE (threadIdx.x & 31)
constexpr unsigned kFull = 0xffffffffu;
CONF_CASE(__shfl_sync, 'i', false,
          out[0] = __shfl_sync(kFull, in.u[0], (LANE * 7) % 32);
          out[1] = __shfl_sync(kFull, in.u[0], LANE ^ 5, 8);
          out[2] = bitsOf(__shfl_sync(kFull, in.d[0], 31 - LANE));
          if (LANE < 16) out[3] = __shfl_sync(0x0000ffffu, in.u[1], 3, 16);)
CONF_CASE(__shfl_up_sync, 'i', false,
          out[0] = __shfl_up_sync(kFull, in.u[0], 3);
          out[1] = __shfl_up_sync(kFull, in.u[0], 1, 16);
          out[2] = __shfl_up_sync(kFull, in.w[0], 5);)
CONF_CASE(__shfl_down_sync, 'i', false,
          out[0] = __shfl_down_sync(kFull, in.u[0], 5);
          out[1] = __shfl_down_sync(kFull, in.u[0], 2, 8);
          if (LANE % 2 == 0) out[2] = __shfl_down_sync(0x55555555u, in.u[1], 2);)
CONF_CASE(__shfl_xor_sync, 'i', false,
          out[0] = __shfl_xor_sync(kFull, in.u[0], 1);
          out[1] = __shfl_xor_sync(kFull, in.u[0], 16);
          out[2] = __shfl_xor_sync(kFull, in.u[0], 3, 8);)
CONF_CASE(__ballot_sync, 'i', false,
          out[0] = __ballot_sync(kFull, in.u[0] & 1);
          if (LANE % 2 == 0) out[1] = __ballot_sync(0x55555555u, in.u[1] & 2);)
CONF_CASE(__any_sync, 'i', false,
          out[0] = __any_sync(kFull, in.u[0] % 7 == 0); out[1] = __any_sync(kFull, 0);
          if (LANE < 8) out[2] = __any_sync(0xffu, LANE == 3);)
CONF_CASE(__all_sync, 'i', false,
          out[0] = __all_sync(kFull, in.u[0] % 7 != 0); out[1] = __all_sync(kFull, 1);
          if (LANE < 8) out[2] = __all_sync(0xffu, LANE < 8);)
CONF_CASE(__activemask, 'i', false, out[0] = __activemask();)
CONF_CASE(__match_any_sync, 'i', false,
          out[0] = __match_any_sync(kFull, in.u[0] % 4);
          out[1] = __match_any_sync(kFull, (u64)(LANE / 8) << 40);
          out[2] = __match_any_sync(kFull, (float)(LANE % 3));
          if (LANE >= 16) out[3] = __match_any_sync(0xffff0000u, LANE % 2);)
CONF_CASE(__match_all_sync, 'i', false, int pred = 7;
          out[0] = __match_all_sync(kFull, 42u, &pred); out[1] = pred;
          out[2] = __match_all_sync(kFull, LANE / 16, &pred); out[3] = pred;)
CONF_CASE(__reduce_add_sync, 'i', false,
          out[0] = __reduce_add_sync(kFull, in.u[0]);
          out[1] = __reduce_add_sync(kFull, (int)LANE - 20);
          if (LANE < 16) out[2] = __reduce_add_sync(0xffffu, in.u[1]);)
CONF_CASE(__reduce_min_sync, 'i', false,
          out[0] = __reduce_min_sync(kFull, in.u[0]);
          out[1] = __reduce_min_sync(kFull, in.i[0]);)
CONF_CASE(__reduce_max_sync, 'i', false,
          out[0] = __reduce_max_sync(kFull, in.u[0]);
          out[1] = __reduce_max_sync(kFull, in.i[0]);)
CONF_CASE(__reduce_and_sync, 'i', false, out[0] = __reduce_and_sync(kFull, in.u[0] | 0x0f0f0000u);)
CONF_CASE(__reduce_or_sync, 'i', false, out[0] = __reduce_or_sync(kFull, in.u[0] & 0x00ff00f0u);)
CONF_CASE(__reduce_xor_sync, 'i', false,
          out[0] = __reduce_xor_sync(kFull, in.u[0]);
          if (LANE % 2) out[1] = __reduce_xor_sync(0xaaaaaaaau, in.u[1]);)

// ---- synchronization and fences
CONF_CASE(__syncthreads, 'i', false, __shared__ unsigned s[kThreads];
          s[threadIdx.x] = in.u[0]; __syncthreads(); out[0] = s[kThreads - 1 - threadIdx.x];)
CONF_CASE(__syncthreads_count, 'i', false, out[0] = __syncthreads_count(in.u[0] & 1);
          out[1] = __syncthreads_count(threadIdx.x < 40);)
CONF_CASE(__syncthreads_and, 'i', false, out[0] = __syncthreads_and(in.u[0] & 1);
          out[1] = __syncthreads_and(threadIdx.x < 64);)
CONF_CASE(__syncthreads_or, 'i', false, out[0] = __syncthreads_or(in.u[0] == 12345u);
          out[1] = __syncthreads_or(threadIdx.x == 17);)
CONF_CASE(__syncwarp, 'i', false, __shared__ unsigned s[kThreads];
          s[threadIdx.x] = in.u[0]; __syncwarp(); out[0] = s[threadIdx.x ^ 1];
          __syncwarp(); if (LANE < 8) { s[threadIdx.x] = LANE; __syncwarp(0xffu); out[1] = s[threadIdx.x ^ 7]; })
CONF_CASE(__threadfence_block, 'i', false, __shared__ unsigned s[kThreads];
          s[threadIdx.x] = in.u[0]; __threadfence_block(); out[0] = s[threadIdx.x];)
CONF_CASE(__threadfence, 'i', false, scratch[threadIdx.x] = in.u[0]; __threadfence();
          out[0] = scratch[threadIdx.x];)
CONF_CASE(__threadfence_system, 'i', false, scratch[threadIdx.x] = in.u[1]; __threadfence_system();
          out[0] = scratch[threadIdx.x];)

// ---- atomics: results that do not depend on the order of the threads (final values,
// and XORs of what atomicExch returned, which is the same whatever the order)
CONF_CASE(atomicAdd, 'i', false,
          __shared__ int si; __shared__ unsigned su; __shared__ float sf;
          float4& s4 = *(float4*)&scratch[10];  /* vector atomicAdd: global memory only */
          if (threadIdx.x == 0) { si = 0; su = 0; sf = 0; s4 = make_float4(0, 0, 0, 0); scratch[0] = 0; scratch[1] = 0; }
          __syncthreads();
          atomicAdd(&si, (int)(in.u[0] % 1000) - 500); atomicAdd(&su, in.u[1]);
          atomicAdd(&sf, (float)(in.u[0] % 64)); atomicAdd((u64*)&scratch[0], in.w[0] >> 8);
          atomicAdd((double*)&scratch[1], (double)(in.u[1] % 4096));
          atomicAdd(&s4, make_float4(1, 2, (float)(in.u[0] % 8), -1));
          __syncthreads();
          out[0] = bitsOf(si) | (u64)su << 32; out[1] = bitsOf(sf) | (u64)bitsOf(s4.z) << 32;
          out[2] = scratch[0]; out[3] = scratch[1] ^ bitsOf(s4.x + s4.y + s4.w);)
CONF_CASE(atomicSub, 'i', false, __shared__ int si; __shared__ unsigned su;
          if (threadIdx.x == 0) { si = 7; su = 3; } __syncthreads();
          atomicSub(&si, (int)(in.u[0] % 100)); atomicSub(&su, in.u[1] % 100); __syncthreads();
          out[0] = bitsOf(si); out[1] = su;)
CONF_CASE(atomicExch, 'i', false, __shared__ unsigned su; __shared__ unsigned x; __shared__ float sf;
          __shared__ unsigned xf;
          if (threadIdx.x == 0) { su = 0xabcdu; x = 0; sf = 1.5f; xf = 0; scratch[2] = 99; } __syncthreads();
          const unsigned old = atomicExch(&su, in.u[0]); atomicXor(&x, old);
          const float oldf = atomicExch(&sf, (float)threadIdx.x); atomicXor(&xf, __float_as_uint(oldf));
          const u64 oldw = atomicExch((u64*)&scratch[2], in.w[1]); atomicXor((u64*)&scratch[3], oldw);
          __syncthreads();
          out[0] = x ^ su; out[1] = xf ^ __float_as_uint(sf);
          out[2] = (threadIdx.x == 0) ? scratch[3] ^ scratch[2] : 0;)
CONF_CASE(atomicMin, 'i', false, __shared__ int si; __shared__ unsigned su;
          if (threadIdx.x == 0) { si = 0x7fffffff; su = 0xffffffffu; scratch[4] = ~0ull; scratch[5] = 0x7fffffffffffffffull; }
          __syncthreads(); atomicMin(&si, in.i[0]); atomicMin(&su, in.u[0]);
          atomicMin((u64*)&scratch[4], in.w[0]); atomicMin((long long*)&scratch[5], (long long)in.w[1]);
          __syncthreads(); out[0] = bitsOf(si); out[1] = su; out[2] = scratch[4]; out[3] = scratch[5];)
CONF_CASE(atomicMax, 'i', false, __shared__ int si; __shared__ unsigned su;
          if (threadIdx.x == 0) { si = (int)0x80000000; su = 0; scratch[4] = 0; scratch[5] = 0x8000000000000000ull; }
          __syncthreads(); atomicMax(&si, in.i[0]); atomicMax(&su, in.u[0]);
          atomicMax((u64*)&scratch[4], in.w[0]); atomicMax((long long*)&scratch[5], (long long)in.w[1]);
          __syncthreads(); out[0] = bitsOf(si); out[1] = su; out[2] = scratch[4]; out[3] = scratch[5];)
CONF_CASE(atomicInc, 'i', false, __shared__ unsigned a; __shared__ unsigned b;
          if (threadIdx.x == 0) { a = 0; b = 100; } __syncthreads();
          atomicInc(&a, 17u); atomicInc(&b, 50u); __syncthreads(); out[0] = a; out[1] = b;)
CONF_CASE(atomicDec, 'i', false, __shared__ unsigned a; __shared__ unsigned b;
          if (threadIdx.x == 0) { a = 5; b = 100; } __syncthreads();
          atomicDec(&a, 17u); atomicDec(&b, 50u); __syncthreads(); out[0] = a; out[1] = b;)
CONF_CASE(atomicCAS, 'i', false, __shared__ int si; __shared__ unsigned short sh[2];
          if (threadIdx.x == 0) { si = 0; sh[0] = 0; sh[1] = 0; scratch[6] = 0; } __syncthreads();
          int seen = 0; while (true) { const int was = atomicCAS(&si, seen, seen + (int)threadIdx.x); if (was == seen) break; seen = was; }
          u64 w = 0; while (true) { const u64 was = atomicCAS((u64*)&scratch[6], w, w + (in.w[0] >> 6)); if (was == w) break; w = was; }
          unsigned short h = 0; while (true) { const unsigned short was = atomicCAS(&sh[0], h, (unsigned short)(h + 3)); if (was == h) break; h = was; }
          __syncthreads(); out[0] = bitsOf(si); out[1] = scratch[6]; out[2] = sh[0] | (unsigned)sh[1] << 16;)
CONF_CASE(atomicAnd, 'i', false, __shared__ unsigned su; __shared__ int si;
          if (threadIdx.x == 0) { su = ~0u; si = -1; scratch[7] = ~0ull; } __syncthreads();
          atomicAnd(&su, in.u[0] | 0xf0f0f0f0u); atomicAnd(&si, in.i[1] | 0x0ff00ff0); atomicAnd((u64*)&scratch[7], in.w[0] | in.w[1]);
          __syncthreads(); out[0] = su; out[1] = bitsOf(si); out[2] = scratch[7];)
CONF_CASE(atomicOr, 'i', false, __shared__ unsigned su; __shared__ int si;
          if (threadIdx.x == 0) { su = 0; si = 0; scratch[7] = 0; } __syncthreads();
          atomicOr(&su, in.u[0] & 0x01010101u); atomicOr(&si, in.i[1] & 0x10204080); atomicOr((u64*)&scratch[7], in.w[0] & in.w[1]);
          __syncthreads(); out[0] = su; out[1] = bitsOf(si); out[2] = scratch[7];)
CONF_CASE(atomicXor, 'i', false, __shared__ unsigned su; __shared__ int si;
          if (threadIdx.x == 0) { su = 0; si = 0; scratch[7] = 0; } __syncthreads();
          atomicXor(&su, in.u[0]); atomicXor(&si, in.i[1]); atomicXor((u64*)&scratch[7], in.w[0]);
          __syncthreads(); out[0] = su; out[1] = bitsOf(si); out[2] = scratch[7];)
// The scoped variants: the same operation on shared (block) and global (system) memory.
#define CONF_SCOPED(op, a, b, init)                                                                \
    CONF_CASE(op##_block, 'i', false, __shared__ unsigned s;                                        \
              if (threadIdx.x == 0) s = init; __syncthreads(); op##_block(&s, a); __syncthreads();  \
              out[0] = s;)                                                                          \
    CONF_CASE(op##_system, 'i', false, unsigned* g = (unsigned*)&scratch[8];                        \
              if (threadIdx.x == 0) *g = init; __syncthreads(); op##_system(g, b); __syncthreads(); \
              out[0] = *g;)
CONF_SCOPED(atomicAdd, in.u[0] % 1000, in.u[1], 5u)
CONF_SCOPED(atomicSub, in.u[0] % 1000, in.u[1], 5u)
CONF_SCOPED(atomicMin, in.u[0], in.u[1], 0xffffffffu)
CONF_SCOPED(atomicMax, in.u[0], in.u[1], 0u)
CONF_SCOPED(atomicInc, 13u, 29u, 0u)
CONF_SCOPED(atomicDec, 13u, 29u, 3u)
CONF_SCOPED(atomicAnd, in.u[0] | 0x11111111u, in.u[1] | 0x0f0f0f0fu, 0xffffffffu)
CONF_SCOPED(atomicOr, in.u[0] & 0x80402010u, in.u[1] & 0x01020408u, 0u)
CONF_SCOPED(atomicXor, in.u[0], in.u[1], 0u)
#define CONF_SCOPED_EXCH(sfx)                                                                    \
    CONF_CASE(atomicExch##sfx, 'i', false, __shared__ unsigned s; __shared__ unsigned x;         \
              if (threadIdx.x == 0) { s = 0x77u; x = 0; } __syncthreads();                       \
              atomicXor(&x, atomicExch##sfx(&s, in.u[0])); __syncthreads(); out[0] = x ^ s;)      \
    CONF_CASE(atomicCAS##sfx, 'i', false, __shared__ unsigned s;                                 \
              if (threadIdx.x == 0) s = 0; __syncthreads();                                      \
              unsigned seen = 0; while (true) { const unsigned was = atomicCAS##sfx(&s, seen, seen + in.u[0] % 977); \
                  if (was == seen) break; seen = was; }                                           \
              __syncthreads(); out[0] = s;)
CONF_SCOPED_EXCH(_block)
CONF_SCOPED_EXCH(_system)

// ---- cache-hinted loads and stores
CONF_MAP(__ldg, 'i', __ldg(&in.u[0]) ^ (u64)__ldg(&in.w[1]))
CONF_MAP(__ldcg, 'i', __ldcg(&in.u[1]))
CONF_MAP(__ldca, 'i', __ldca(&in.w[0]))
CONF_MAP(__ldcs, 'i', __ldcs(&in.u[2]))
CONF_MAP(__ldlu, 'i', __ldlu(&in.i[0]))
CONF_MAP(__ldcv, 'i', bitsOf(__ldcv(&in.f[0])))
CONF_CASE(__stwb, 'i', false, __stwb(&out[0], (u64)in.u[0] * 3);)
CONF_CASE(__stcg, 'i', false, __stcg(&out[0], in.w[1]);)
CONF_CASE(__stcs, 'i', false, __stcs(&out[0], (u64)in.u[2]);)
CONF_CASE(__stwt, 'i', false, __stwt(&out[0], in.w[0] + 1);)

// ---- time
CONF_CASE(clock, 'i', false, const long long a = clock(); const long long b = clock(); out[0] = b >= a;)
CONF_CASE(clock64, 'i', false, const long long a = clock64(); const long long b = clock64(); out[0] = b >= a;)
CONF_CASE(__nanosleep, 'i', false, __nanosleep(100); out[0] = 1;)

// ---- vector types: fields, size and alignment
#define CONF_VECTOR2(maker, T, a, b) \
    CONF_CASE(maker, 'i', false, const T v = maker(a, b); out[0] = bitsOf(v.x); out[1] = bitsOf(v.y); out[2] = sizeof(T) * 100 + alignof(T);)
#define CONF_VECTOR3(maker, T, a, b, c) \
    CONF_CASE(maker, 'i', false, const T v = maker(a, b, c); out[0] = bitsOf(v.x); out[1] = bitsOf(v.z); out[2] = sizeof(T) * 100 + alignof(T);)
#define CONF_VECTOR4(maker, T, a, b, c, d) \
    CONF_CASE(maker, 'i', false, const T v = maker(a, b, c, d); out[0] = bitsOf(v.x); out[1] = bitsOf(v.w); out[2] = sizeof(T) * 100 + alignof(T);)
CONF_VECTOR4(make_char4, char4, (signed char)in.u[0], 1, 2, (signed char)in.u[1])
CONF_VECTOR4(make_uchar4, uchar4, (unsigned char)in.u[0], 1, 2, (unsigned char)in.u[1])
CONF_VECTOR2(make_short2, short2, (short)in.u[0], (short)in.u[1])
CONF_VECTOR4(make_ushort4, ushort4, (unsigned short)in.u[0], 1, 2, (unsigned short)in.u[1])
CONF_VECTOR2(make_int2, int2, in.i[0], in.i[1])
CONF_VECTOR3(make_int3, int3, in.i[0], in.i[1], in.i[2])
CONF_VECTOR4(make_int4, int4, in.i[0], 1, 2, in.i[1])
CONF_VECTOR2(make_uint2, uint2, in.u[0], in.u[1])
CONF_VECTOR4(make_uint4, uint4, in.u[0], 1, 2, in.u[1])
CONF_VECTOR2(make_longlong2, longlong2, (long long)in.w[0], (long long)in.w[1])
CONF_VECTOR2(make_float2, float2, in.f[0], in.f[1])
CONF_VECTOR3(make_float3, float3, in.f[0], in.f[1], in.f[2])
CONF_VECTOR4(make_float4, float4, in.f[0], 1.0f, 2.0f, in.f[1])
CONF_VECTOR2(make_double2, double2, in.d[0], in.d[1])

// ---- dynamic shared memory: `extern __shared__`, sized at launch
__global__ void externSharedKernel(const Inputs* in, u64* out, u64*) {
    extern __shared__ unsigned dynamicWords[];
    const int t = threadIdx.x;
    dynamicWords[t] = in[t].u[0];
    dynamicWords[kThreads + t] = in[t].u[1];
    __syncthreads();
    out[t * kSlots] = dynamicWords[kThreads - 1 - t];
    out[t * kSlots + 1] = dynamicWords[2 * kThreads - 1 - t];
}
void launch_extern_shared(const Inputs* in, u64* out, u64* scratch) {
    CONF_LAUNCH(externSharedKernel, 1, kThreads, 2 * kThreads * sizeof(unsigned), in, out, scratch);
}
Register register_extern_shared({"extern_shared", 'i', false, launch_extern_shared});

// ---- spot checks: values from the Programming Guide's definitions
#define CONF_SPOTS(X)                                                                 \
    X(__mul24((int)0x00800000, 2) == (int)0xff000000)                                \
    X(__mul24(0x7f000003, 5) == 15)                                                  \
    X(__umul24(0x01000003u, 0x02000005u) == 15u)                                     \
    X(__mulhi(0x40000000, 8) == 2)                                                   \
    X(__umulhi(0xffffffffu, 0xffffffffu) == 0xfffffffeu)                             \
    X(__umul64hi(~0ull, 2ull) == 1ull)                                               \
    X(__byte_perm(0x33221100u, 0x77665544u, 0x1234u) == 0x11223344u)                 \
    X(__byte_perm(0x33221100u, 0x77665544u, 0x7654u) == 0x77665544u)                 \
    X(__funnelshift_l(0x80000000u, 1u, 1u) == 3u)                                    \
    X(__funnelshift_l(0u, 5u, 40u) == 0x500u)                                        \
    X(__funnelshift_lc(0u, 5u, 40u) == 0u)                                           \
    X(__funnelshift_r(0x10u, 1u, 4u) == 0x10000001u)                                 \
    X(__funnelshift_rc(0x10u, 1u, 36u) == 1u)                                        \
    X(__sad(-3, 4, 10u) == 17u)                                                      \
    X(__usad(3u, 10u, 1u) == 8u)                                                     \
    X(__hadd(0x7fffffff, 0x7fffffff) == 0x7fffffff)                                  \
    X(__rhadd(1, 2) == 2)                                                            \
    X(__uhadd(0xffffffffu, 1u) == 0x80000000u)                                       \
    X(__urhadd(0xffffffffu, 0u) == 0x80000000u)                                      \
    X(__brev(1u) == 0x80000000u)                                                     \
    X(__brevll(1ull) == 1ull << 63)                                                  \
    X(__clz(0) == 32 && __clz(1) == 31 && __clzll(0) == 64)                          \
    X(__ffs(0) == 0 && __ffs(8) == 4 && __ffsll(1ll << 40) == 41)                    \
    X(__popc(0xffu) == 8 && __popcll(~0ull) == 64)                                   \
    X(__dp4a(0x01020304, 0x01010101, 10) == 20)                                      \
    X(__dp4a(0x000000ff, 1, 0) == -1)                                                \
    X(__dp4a(0x000000ffu, 1u, 0u) == 255u)                                           \
    X(__fadd_rz(1.0f, 1e-8f) == 1.0f)                                                \
    X(__fadd_ru(1.0f, 1e-8f) == 1.00000012f)                                         \
    X(__fdiv_rd(1.0f, 3.0f) < __fdiv_ru(1.0f, 3.0f))                                 \
    X(__fmul_rd(0.1f, 0.1f) < __fmul_ru(0.1f, 0.1f) && __fmul_rz(-0.1f, 0.1f) > __fmul_rd(-0.1f, 0.1f))\
    X(__fmaf_rn(2.0f, 3.0f, 1.0f) == 7.0f)                                           \
    X(__dadd_ru(1.0, 1e-30) > 1.0 && __dadd_rd(1.0, 1e-30) == 1.0)                   \
    X(__float2int_rn(2.5f) == 2 && __float2int_rn(3.5f) == 4)                        \
    X(__float2int_rd(-1.5f) == -2 && __float2int_ru(-1.5f) == -1)                    \
    X(__float2int_rz(1e20f) == 0x7fffffff && __float2int_rz(-1e20f) == (int)0x80000000) \
    X(__float2uint_rn(-5.0f) == 0u)                                                  \
    X(__float2int_rn(__int_as_float(0x7fc00000)) == 0)                               \
    X(__saturatef(2.0f) == 1.0f && __saturatef(-1.0f) == 0.0f)                       \
    X(__float2ll_rn(nanF) == kSign64 && __float2ll_rz(nanF) == kSign64)                \
    X(__float2ull_rn(nanF) == (u64)kSign64 && __float2uint_rn(nanF) == 0u)            \
    X(__double2int_rn(nanD) == kSign32 && __double2int_rz(nanD) == kSign32)            \
    X(__double2uint_rn(nanD) == (unsigned)kSign32)                                   \
    X(__double2ll_rn(nanD) == kSign64 && __double2ull_rn(nanD) == (u64)kSign64)       \
    X(__float_as_int(__saturatef(negZero)) == 0)                                     \
    X(__int2float_rz(16777217) == 16777216.0f && __int2float_rn(16777219) == 16777220.0f) \
    X(__double2float_rz(1e300) == 3.40282347e38f)                                    \
    X(__double2float_rd(0.1) < __double2float_ru(0.1))                               \
    X(__hiloint2double(0x3ff00000, 0) == 1.0)                                        \
    X(__float_as_int(1.0f) == 0x3f800000 && __int_as_float(0x40000000) == 2.0f)      \
    X(__double_as_longlong(2.0) == 0x4000000000000000ll)                             \
    X(fabsf(__expf(1.0f) - 2.7182818f) < 1e-5f)                                      \
    X(fabsf(__fdividef(1.0f, 3.0f) - 0.33333333f) < 1e-6f)                           \
    X(min(-3, 2) == -3 && umax(3u, 7u) == 7u && ullmin(5ull, 2ull) == 2ull)
#define CONF_SPOT_TEXT(expr) #expr,
const char* const kSpotText[] = {CONF_SPOTS(CONF_SPOT_TEXT)};
constexpr int kSpots = sizeof(kSpotText) / sizeof(kSpotText[0]);
// NaN conversions and __saturatef(-0): not defined by the guide; these are the values an
// H100 (sm_90) gave (gpu_conformance.sh, 2026-11-25). Read through volatile so that
// neither compiler folds them: the GPU's runtime answer is the one measured.
constexpr int kSign32 = (int)0x80000000u;
constexpr long long kSign64 = (long long)0x8000000000000000ull;
__global__ void spotKernel(int* ok) {
    volatile float nanSource = __int_as_float(0x7fc00000), negZeroSource = -0.0f;
    const float nanF = nanSource, negZero = negZeroSource;
    const double nanD = nanF;
    int i = 0;
#define CONF_SPOT_RUN(expr) ok[i++] = (expr) ? 1 : 0;
    CONF_SPOTS(CONF_SPOT_RUN)
#undef CONF_SPOT_RUN
}
// Warp spot checks, lane by lane: which lanes got the defined answer.
__global__ void warpSpotKernel(unsigned* ok) {
    const unsigned l = threadIdx.x;
    int pred = 0;
    const bool good[] = {
        __reduce_add_sync(kFull, l) == 496u,
        __reduce_min_sync(kFull, (int)l - 5) == -5,
        __reduce_max_sync(kFull, l * 3) == 93u,
        __reduce_or_sync(kFull, 1u << l) == kFull,
        __match_any_sync(kFull, l / 8) == 0xffu << (l / 8 * 8),
        __match_all_sync(kFull, 7, &pred) == kFull && pred == 1,
        __shfl_up_sync(kFull, l, 1, 8) == (l % 8 == 0 ? l : l - 1),
        __shfl_down_sync(kFull, l, 3, 16) == (l % 16 + 3 < 16 ? l + 3 : l),
        __shfl_sync(kFull, l, 2, 4) == (l & ~3u) + 2,
        __shfl_xor_sync(kFull, l, 16) == (l ^ 16),
        __ballot_sync(kFull, l < 4) == 0xfu,
        __syncthreads_count(l % 3 == 0) == 11,
        __activemask() == kFull,  // converged: every lane (as measured on an H100)
    };
    unsigned bits = 0;
    for (unsigned k = 0; k < sizeof(good); ++k) bits |= (good[k] ? 1u : 0u) << k;
    ok[l] = bits;
}
constexpr int kWarpSpots = 13;

