// What the AVX2 and AVX-512 kernel tables share: the 256-bit helpers both use for quantized blocks
// (levels, activations, horizontal sum) and the quantized-row code built on a few per-ISA
// primitives (the multi-row dot, dequantize_row, mean_var).
//
// Included only by the ISA translation units (kernels_avx2.cpp, kernels_avx512.cpp), each of which
// compiles its own copy with its own flags. Everything here has internal linkage (unnamed
// namespace, see kernels_internal.h): no copy built with AVX-512 flags can be the one another file
// calls. Each including file defines the primitives declared under "defined by each ISA file".
#pragma once
#if !defined(__AVX2__) || !defined(__FMA__) || !defined(__F16C__)
#error "kernels_x86.h belongs to the ISA kernel files (compiled with at least -mavx2 -mfma -mf16c)"
#endif
#include <immintrin.h>

#include <cfloat>
#include <cstddef>
#include <cstdint>
#include <cstring>

#include "runtime/unaligned.h"
#include "simd/kernels.h"
#include "simd/kernels_internal.h"

namespace hark::cpu::detail {
namespace {

inline float half(f16_t h) { return _cvtsh_ss(h); }

// q8_0's scale as runtime/quant chooses it: amax / 127 stored as f16 (a zero as +0), and the
// reciprocal of the stored value, which the levels are taken with.
struct Q8Scale {
  f16_t bits;
  float id;
};
inline Q8Scale q8_scale(float amax) {
  f16_t h = f32_to_f16(amax / 127.0f);
  if ((h & 0x7fffu) == 0) h = 0;
  const float d = f16_to_f32(h);
  return {h, d != 0.0f ? 1.0f / d : 0.0f};
}

inline float hsum8(__m256 v) {
  __m128 s = _mm_add_ps(_mm256_castps256_ps128(v), _mm256_extractf128_ps(v, 1));
  s = _mm_add_ps(s, _mm_movehl_ps(s, s));
  s = _mm_add_ss(s, _mm_movehdup_ps(s));
  return _mm_cvtss_f32(s);
}

// The 32 4-bit levels of a q4 block as bytes, in value order (low nibbles are values 0..15).
inline __m256i q4_levels(const uint8_t* qs) {
  const __m128i v = _mm_loadu_si128(reinterpret_cast<const __m128i*>(qs));
  const __m256i both = _mm256_set_m128i(_mm_srli_epi16(v, 4), v);
  return _mm256_and_si256(both, _mm256_set1_epi8(0x0F));
}

inline __m256i load_q8a(const BlockQ8A& b) { return _mm256_loadu_si256(reinterpret_cast<const __m256i*>(b.qs)); }

// ---- defined by each ISA file -------------------------------------------------------------

// q4 levels q with the fifth bit of q5 levels added: 0x10 in byte j where bit j of qh is set.
inline __m256i add_q5_high(__m256i q, const uint8_t* qh);
// Eight int32 sums of u[j] * s[j] over groups of four bytes (u unsigned, s signed bytes). Levels
// are at most 31 (or 128 for q8_0 magnitudes) and |s| <= 127, so no step saturates.
inline __m256i dot_u8s8(__m256i u, __m256i s);
// 32 levels (bytes, as q4_levels gives them) to floats as the scalar definition computes them:
// (level - kZero) * d, or level * d + m for the _1 types.
template <int kZero, bool kHasMin>
inline void levels_to_f32(__m256i q, float d, float m, float* y);
// One weight row of an unsigned-level type with activations (the table's dot_q4_0 .. dot_q5_1).
template <typename Block, int kZero, bool kHasMin, bool kFiveBit>
float dot_unsigned(int64_t n, const void* wv, const BlockQ8A* x);
void f16_to_f32_row(const f16_t* x, float* y, int64_t n);
void dequantize_q8_0(const void* xv, float* y, int64_t n);
// The largest magnitude of a block's 32 values (NaN read as 0), and its levels
// round(clamp(v * id, -127, 127)) (round half to even) as 32 bytes at qs, returning their sum.
float block_amax(const float* xb);
int block_levels(const float* xb, float id, void* qs);
// Sum over [0, n) of x (kSquares false) or of (x - c)^2 (kSquares true), in chunks summed in double.
template <bool kSquares>
double chunked_sum(int64_t n, const float* x, float c);
// R weight rows (f32 or f16, ws bytes apart) x G activation rows (xs floats apart): the sums into
// y[g * ldy + r], each one chain in the order of the values (dot_f32_rows / dot_f16_rows' tile).
// kRevisited: later groups of activation rows read the same weight rows again.
template <typename W, int R, int G, bool kRevisited>
void dot_tile(int64_t n, const uint8_t* w, size_t ws, const float* x, int64_t xs, float* y, int64_t ldy);

// ---- built on them ------------------------------------------------------------------------

// One weight tile of R rows against a group of g <= 6 activation rows (a row count known only at
// run time, to the tile's template).
template <typename W, int R, bool kRevisited = false>
void dot_tile_g(int g, int64_t n, const uint8_t* w, size_t ws, const float* x, int64_t xs, float* y, int64_t ldy) {
  switch (g) {
    case 1: return dot_tile<W, R, 1, kRevisited>(n, w, ws, x, xs, y, ldy);
    case 2: return dot_tile<W, R, 2, kRevisited>(n, w, ws, x, xs, y, ldy);
    case 3: return dot_tile<W, R, 3, kRevisited>(n, w, ws, x, xs, y, ldy);
    case 4: return dot_tile<W, R, 4, kRevisited>(n, w, ws, x, xs, y, ldy);
    case 5: return dot_tile<W, R, 5, kRevisited>(n, w, ws, x, xs, y, ldy);
    default: return dot_tile<W, R, 6, kRevisited>(n, w, ws, x, xs, y, ldy);
  }
}

float dot_q4_0(int64_t n, const void* w, const BlockQ8A* x) {
  return dot_unsigned<BlockQ4_0, 8, false, false>(n, w, x);
}
float dot_q4_1(int64_t n, const void* w, const BlockQ8A* x) { return dot_unsigned<BlockQ4_1, 0, true, false>(n, w, x); }
float dot_q5_0(int64_t n, const void* w, const BlockQ8A* x) {
  return dot_unsigned<BlockQ5_0, 16, false, true>(n, w, x);
}
float dot_q5_1(int64_t n, const void* w, const BlockQ8A* x) { return dot_unsigned<BlockQ5_1, 0, true, true>(n, w, x); }

// Several activation rows against one weight row: each weight block is unpacked (levels, scale,
// zero-point term) once and dotted with G activation rows, G accumulators in registers.
template <typename Block, int kZero, bool kHasMin, bool kFiveBit, bool kSigned, int G>
void dot_rows_group(int64_t nb, const void* wrow, const BlockQ8A* x, int64_t xs, float* y, int64_t ys) {
  __m256 acc[G];
  float off[G];
  for (int i = 0; i < G; ++i) {
    acc[i] = _mm256_setzero_ps();
    off[i] = 0;
  }
  for (int64_t b = 0; b < nb; ++b) {
    const auto w = block_at<Block>(wrow, b);
    // With several activation rows the block loop outlasts the hardware prefetchers' look-ahead
    // (kernels_internal.h).
    if constexpr (G > 1) _mm_prefetch(reinterpret_cast<const char*>(w.qs()) + kPrefetchBytes, _MM_HINT_T0);
    __m256i q;
    if constexpr (kSigned) {
      q = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(w.qs()));
    } else {
      q = q4_levels(w.qs());
      if constexpr (kFiveBit) q = add_q5_high(q, w.qh_bytes());
    }
    // Signed levels (q8_0) as unsigned x signed: |w| * (x with w's sign), exact for w in [-128, 127].
    const __m256i uq = kSigned ? _mm256_abs_epi8(q) : q;
    const float d = half(w.d());
    float bias = -static_cast<float>(kZero) * d;
    if constexpr (kHasMin) bias = half(w.m());
#pragma GCC unroll 8
    for (int i = 0; i < G; ++i) {
      const BlockQ8A& xb = x[i * xs + b];
      __m256i xq = load_q8a(xb);
      if constexpr (kSigned) xq = _mm256_sign_epi8(xq, q);
      const __m256i dot = dot_u8s8(uq, xq);
      acc[i] = _mm256_fmadd_ps(_mm256_cvtepi32_ps(dot), _mm256_set1_ps(d * xb.d), acc[i]);
      if constexpr (!kSigned) off[i] += bias * xb.s;
    }
  }
  for (int i = 0; i < G; ++i) y[i * ys] = hsum8(acc[i]) + off[i];
}

template <typename Block, int kZero, bool kHasMin, bool kFiveBit, bool kSigned>
void dot_rows(int64_t n, const void* w, const BlockQ8A* x, int64_t xs, int64_t nx, float* y, int64_t ys) {
  const int64_t nb = n / kQuantBlock;
  // Unsigned-level types take up to 8 rows per pass, so a batch of up to 8 beams unpacks each
  // weight block once (measured: 5 rows of tiny's q5_0 logits 17% faster than 4 + 1). q8_0's
  // signed path keeps 4: with its sign step, 8 accumulators cost more than a second unpack.
  constexpr int kMax = kSigned ? 4 : 8;
  int64_t i = 0;
  for (; i + kMax <= nx; i += kMax)
    dot_rows_group<Block, kZero, kHasMin, kFiveBit, kSigned, kMax>(nb, w, x + i * xs, xs, y + i * ys, ys);
  switch (nx - i) {
    case 7:
      if constexpr (kMax > 7)
        return dot_rows_group<Block, kZero, kHasMin, kFiveBit, kSigned, 7>(nb, w, x + i * xs, xs, y + i * ys, ys);
      return;
    case 6:
      if constexpr (kMax > 6)
        return dot_rows_group<Block, kZero, kHasMin, kFiveBit, kSigned, 6>(nb, w, x + i * xs, xs, y + i * ys, ys);
      return;
    case 5:
      if constexpr (kMax > 5)
        return dot_rows_group<Block, kZero, kHasMin, kFiveBit, kSigned, 5>(nb, w, x + i * xs, xs, y + i * ys, ys);
      return;
    case 4:
      if constexpr (kMax > 4)
        return dot_rows_group<Block, kZero, kHasMin, kFiveBit, kSigned, 4>(nb, w, x + i * xs, xs, y + i * ys, ys);
      return;
    case 3: return dot_rows_group<Block, kZero, kHasMin, kFiveBit, kSigned, 3>(nb, w, x + i * xs, xs, y + i * ys, ys);
    case 2: return dot_rows_group<Block, kZero, kHasMin, kFiveBit, kSigned, 2>(nb, w, x + i * xs, xs, y + i * ys, ys);
    case 1: return dot_rows_group<Block, kZero, kHasMin, kFiveBit, kSigned, 1>(nb, w, x + i * xs, xs, y + i * ys, ys);
    default: return;
  }
}

void dot_q_rows(DType type, int64_t n, const void* w, const BlockQ8A* x, int64_t xs, int64_t nx, float* y, int64_t ys) {
  switch (type) {
    case DType::Q4_0: return dot_rows<BlockQ4_0, 8, false, false, false>(n, w, x, xs, nx, y, ys);
    case DType::Q4_1: return dot_rows<BlockQ4_1, 0, true, false, false>(n, w, x, xs, nx, y, ys);
    case DType::Q5_0: return dot_rows<BlockQ5_0, 16, false, true, false>(n, w, x, xs, nx, y, ys);
    case DType::Q5_1: return dot_rows<BlockQ5_1, 0, true, true, false>(n, w, x, xs, nx, y, ys);
    default: return dot_rows<BlockQ8_0, 0, false, false, true>(n, w, x, xs, nx, y, ys);
  }
}

template <typename Block, int kZero, bool kHasMin, bool kFiveBit>
void dequantize_unsigned(const void* xv, float* y, int64_t n) {
  for (int64_t b = 0; b < n / kQuantBlock; ++b, y += kQuantBlock) {
    const auto x = block_at<Block>(xv, b);
    __m256i q = q4_levels(x.qs());
    if constexpr (kFiveBit) q = add_q5_high(q, x.qh_bytes());
    float m = 0;
    if constexpr (kHasMin) m = half(x.m());
    levels_to_f32<kZero, kHasMin>(q, half(x.d()), m, y);
  }
}

void dequantize_row(DType type, const void* x, float* y, int64_t n) {
  switch (type) {
    case DType::F16: return f16_to_f32_row(static_cast<const f16_t*>(x), y, n);
    case DType::Q4_0: return dequantize_unsigned<BlockQ4_0, 8, false, false>(x, y, n);
    case DType::Q4_1: return dequantize_unsigned<BlockQ4_1, 0, true, false>(x, y, n);
    case DType::Q5_0: return dequantize_unsigned<BlockQ5_0, 16, false, true>(x, y, n);
    case DType::Q5_1: return dequantize_unsigned<BlockQ5_1, 0, true, true>(x, y, n);
    case DType::Q8_0: return dequantize_q8_0(x, y, n);
    default: return scalar_kernels().dequantize_row(type, x, y, n);
  }
}

// Same results as the scalar table bit for bit (see kernels_scalar.cpp).
void quantize_q8a(const float* x, BlockQ8A* y, int64_t n) {
  for (int64_t b = 0; b < n / kQuantBlock; ++b) {
    const float* xb = x + b * kQuantBlock;
    const float amax = block_amax(xb);
    if (!(amax <= FLT_MAX)) {  // an infinity: rare, leave it to the scalar definition
      scalar_kernels().quantize_q8a(xb, y + b, kQuantBlock);
      continue;
    }
    const float d = amax / 127.0f;
    const int sum = block_levels(xb, d != 0.0f ? 1.0f / d : 0.0f, y[b].qs);
    y[b].d = d;
    y[b].s = d * static_cast<float>(sum);
  }
}

// q8_0 byte for byte as runtime/quant's quantize_row (the copies that fill a quantized
// cross-attention cache); other types go to it.
void quantize_row(DType type, const float* x, void* y, int64_t n) {
  if (type != DType::Q8_0) return ::hark::quantize_row(type, x, y, n);
  auto* out = static_cast<uint8_t*>(y);
  for (int64_t b = 0; b < n / kQuantBlock; ++b) {
    const float* xb = x + b * kQuantBlock;
    uint8_t* ob = out + b * sizeof(BlockQ8_0);
    const float amax = block_amax(xb);
    if (!(amax <= FLT_MAX)) {
      ::hark::quantize_row(type, xb, ob, kQuantBlock);
      continue;
    }
    const Q8Scale s = q8_scale(amax);
    block_levels(xb, s.id, ob + offsetof(BlockQ8_0, qs));
    std::memcpy(ob + offsetof(BlockQ8_0, d), &s.bits, sizeof s.bits);
  }
}

// Calls f.template operator()<G>(g) for the outputs g, g + 1, ... of groups of up to 8 (G of
// them): the multi-output kernels' register tiles, one instantiation per group size.
template <class F>
void for_output_groups(int64_t na, F&& f) {
  for (int64_t g = 0; g < na; g += 8) {
    switch (na - g < 8 ? na - g : 8) {
      case 1: f.template operator()<1>(g); break;
      case 2: f.template operator()<2>(g); break;
      case 3: f.template operator()<3>(g); break;
      case 4: f.template operator()<4>(g); break;
      case 5: f.template operator()<5>(g); break;
      case 6: f.template operator()<6>(g); break;
      case 7: f.template operator()<7>(g); break;
      default: f.template operator()<8>(g); break;
    }
  }
}

// Two passes: the mean, then the mean square deviation from it.
void mean_var(int64_t n, const float* x, float* mean, float* var) {
  if (n <= 0) {
    *mean = 0;
    *var = 0;
    return;
  }
  const double mu = chunked_sum<false>(n, x, 0.0f) / static_cast<double>(n);
  *mean = static_cast<float>(mu);
  *var = static_cast<float>(chunked_sum<true>(n, x, *mean) / static_cast<double>(n));
}

}  // namespace
}  // namespace hark::cpu::detail
