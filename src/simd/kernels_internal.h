// What the kernel tables share behind kernels.h: the per-ISA table getters that cpu_features.cpp
// dispatches to, the constants of the exp and erf approximations (every level evaluates the same
// formulas, so levels agree to rounding and tests can hold them to tight bounds), and the packing
// scratch of gemm_f32.
//
// This header is included by the ISA translation units (*_avx2.cpp, *_avx512.cpp). It must not
// define inline functions with external linkage: one compiled with AVX-512 flags could be the copy
// the linker keeps and then run on a machine without AVX-512.
#pragma once
#include <cstddef>

#include "simd/kernels.h"

namespace hark::cpu::detail {

const Kernels& scalar_kernels();
// nullptr when the table is not compiled in (non-x86 builds).
const Kernels* avx2_kernels();
const Kernels* avx2vnni_kernels();
const Kernels* avx512_kernels();
// The ARM tables (AArch64 builds; nullptr elsewhere): NEON on any ARMv8-A, NEON with the
// ARMv8.2 dot product (sdot), and with ARMv8.6's int8 matrix multiply (smmla).
const Kernels* neon_kernels();
const Kernels* dotprod_kernels();
const Kernels* i8mm_kernels();

// The AVX-512 table's int8 products of quantized weights (int8_avx512.cpp, VNNI); entries of
// that table only, so they run only where cpu_features.cpp found AVX-512 with VNNI.
void avx512_dot_q_tiles(DType type, int64_t n, const void* w, size_t w_stride, int64_t nw, const BlockQ8A* x,
                        int64_t x_stride, int64_t nx, float* y, int64_t ldy);
void avx512_gemm_q8(DType type, int64_t m, int64_t n, int64_t k, const BlockQ8A* a, int64_t lda, const void* b,
                    size_t ldb, float* c, int64_t ldc);

// gemm_q8 on AMX-INT8 tiles (int8_amx.cpp): the same numbers as avx512_gemm_q8. Only for the
// table cpu_features.cpp builds when the processor has AMX-INT8 and the OS granted the tile state.
void amx_gemm_q8(DType type, int64_t m, int64_t n, int64_t k, const BlockQ8A* a, int64_t lda, const void* b, size_t ldb,
                 float* c, int64_t ldc);

// Per-thread float scratch of at least n floats, 64-byte aligned, allocated on a thread's first
// call and grown (never shrunk) after. gemm_f32 packs its panels here: the kernel signature has
// no workspace, and a thread runs one gemm at a time.
float* gemm_scratch(size_t n);

// ---- software prefetch of weights (the x86 ISA files) ----
// Decoder steps stream every weight once from memory. Loops that compute a while per cache line
// (several activation rows, unpacking quantized blocks) outrun the hardware prefetchers, so they
// ask for the weights ahead themselves:
//  * one stream in memory order (a row after another, quantized blocks): kPrefetchBytes ahead,
//    into L1 (_MM_HINT_T0);
//  * R rows side by side for 3 or more activation rows (the f16/f32 tiles, compute-bound):
//    kTilePrefetchBytes ahead, into L2 only (_MM_HINT_T1). Into L1 such a tile read its R
//    streams at 13 GB/s, a third of its FMA rate; from L2 it keeps pace. Zen 4, 2 threads, f16
//    5-row products: tiny's logits 2.2-2.3 -> 1.3-1.4 ms, large's MLP 0.67 -> 0.37-0.39 ms (the
//    quantized tiles measured no better with it). Where the R rows are short and one block in
//    memory (the logits product), the AVX-512 tile prefetches that block into L1 in memory order
//    instead (kernels_avx512.cpp, dot_tile).
inline constexpr int kPrefetchBytes = 4096;
inline constexpr int kTilePrefetchBytes = 8192;

// ---- exp(x) = 2^n * p(r), x = n ln2 + r, |r| <= ln2/2 ----
// ln2 split in two (Cody-Waite): kLn2Hi has few mantissa bits, so n * kLn2Hi is exact for |n| < 2^9.
inline constexpr float kLog2e = 1.44269504088896341f;
inline constexpr float kLn2Hi = 0.693359375f;
inline constexpr float kLn2Lo = -2.12194440e-4f;
// Below this exp(x) is subnormal in f32; every level returns 0 there (softmax masks give -inf).
inline constexpr float kExpMin = -87.3365447505531f;
// Above this exp(x) overflows f32.
inline constexpr float kExpMax = 88.7228391116729f;
// Taylor coefficients 1/k!, k = 2..7: on |r| <= ln2/2 the truncation error is ~5e-9, so the
// result is within a few ulp of exp.
inline constexpr float kExpC2 = 1.0f / 2, kExpC3 = 1.0f / 6, kExpC4 = 1.0f / 24, kExpC5 = 1.0f / 120,
                       kExpC6 = 1.0f / 720, kExpC7 = 1.0f / 5040;

// ---- erfc(z) for z >= 0 as t * Q(t) * exp(-z^2), t = 1 / (1 + z/2) ----
// Q is a degree-8 polynomial fitted (weighted least squares, then reweighted toward minimax) to
// erfcx(z)/t over z in [0, 10]; its relative error is below 4.3e-8 there. Using erfc for the lower
// tail keeps gelu's relative accuracy for negative x, where x * Phi(x) is small.
inline constexpr float kErfcQ[9] = {0.28208641560241343f,  0.2823753517825669f,    0.24310342370832769f,
                                    0.20268829788655932f,  -0.026629226375235133f, 0.27807256351315334f,
                                    -0.48720480108735105f, 0.28457740644444825f,   -0.059069474361167912f};
inline constexpr float kSqrtHalf = 0.70710678118654752f;

// ---- tanh(x) = sign(x) (1 - e) / (1 + e), e = exp(-2|x|) ----
// Near 0 the difference 1 - e cancels (at |x| = 0.01 it keeps only half the bits), so below
// kTanhSeriesMax the odd Taylor series x (1 + c1 x^2 + ... + c5 x^10) is used instead: its
// truncation there is below 3e-10 relative, and from kTanhSeriesMax on 1 - e >= 0.39 keeps the
// few-ulp accuracy of exp.
inline constexpr float kTanhSeriesMax = 0.25f;
inline constexpr float kTanhSeries[6] = {1.0f, -1.0f / 3, 2.0f / 15, -17.0f / 315, 62.0f / 2835, -1382.0f / 155925};

}  // namespace hark::cpu::detail
