// The AVX2 + FMA + F16C kernel table (Haswell / Zen 1 and later).
//
// Compiled with -mavx2 -mfma -mf16c (CMakeLists.txt, by file name) and only called after
// cpu_features.cpp has seen those features. Everything is internal to this file so no function
// compiled with these flags can be picked by the linker for code that runs on older processors.
//
// kernels_avxvnni.cpp compiles this file a second time with AVX-VNNI (HARK_KERNELS_AVX_VNNI):
// the same table, except that quantized dots multiply bytes with one vpdpbusd (VEX) instead of
// maddubs + madd, for processors with AVX-VNNI but no AVX-512.
#if defined(__x86_64__) || defined(__i386__)
#include <immintrin.h>

#include <cfloat>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <type_traits>

#include "runtime/unaligned.h"
#include "simd/gemm_blocked.h"
#include "simd/kernels.h"
#include "simd/kernels_internal.h"
#include "simd/kernels_x86.h"

namespace hark::cpu::detail {
namespace {

// Inputs may start at any byte (weights in the file mapping, kernels.h): vector loads are the
// unaligned forms, scalar tails and block fields go through runtime/unaligned.h.

inline float hmax(__m256 v) {
  __m128 s = _mm_max_ps(_mm256_castps256_ps128(v), _mm256_extractf128_ps(v, 1));
  s = _mm_max_ps(s, _mm_movehl_ps(s, s));
  s = _mm_max_ss(s, _mm_movehdup_ps(s));
  return _mm_cvtss_f32(s);
}

inline int hsum_i32(__m256i v) {
  __m128i s = _mm_add_epi32(_mm256_castsi256_si128(v), _mm256_extracti128_si256(v, 1));
  s = _mm_add_epi32(s, _mm_shuffle_epi32(s, _MM_SHUFFLE(1, 0, 3, 2)));
  s = _mm_add_epi32(s, _mm_shuffle_epi32(s, _MM_SHUFFLE(2, 3, 0, 1)));
  return _mm_cvtsi128_si32(s);
}

// ---- dots ---------------------------------------------------------------------------------

inline __m256 load_f16x8(const f16_t* p) {
  return _mm256_cvtph_ps(_mm_loadu_si128(reinterpret_cast<const __m128i*>(p)));
}

// Eight weights / one weight as f32, from either weight type of dot_row.
inline __m256 load8(const float* p) { return _mm256_loadu_ps(p); }
inline __m256 load8(const f16_t* p) { return load_f16x8(p); }
inline float load1(const float* p, int64_t i) { return load_f32(p, i); }
inline float load1(const f16_t* p, int64_t i) { return half(load_f16(p, i)); }

// dot_f32 (W = float) and dot_f16_f32 (W = f16_t).
template <typename W>
float dot_row(int64_t n, const W* w, const float* x) {
  __m256 a0 = _mm256_setzero_ps(), a1 = a0, a2 = a0, a3 = a0;
  int64_t i = 0;
  for (; i + 32 <= n; i += 32) {
    a0 = _mm256_fmadd_ps(load8(w + i), _mm256_loadu_ps(x + i), a0);
    a1 = _mm256_fmadd_ps(load8(w + i + 8), _mm256_loadu_ps(x + i + 8), a1);
    a2 = _mm256_fmadd_ps(load8(w + i + 16), _mm256_loadu_ps(x + i + 16), a2);
    a3 = _mm256_fmadd_ps(load8(w + i + 24), _mm256_loadu_ps(x + i + 24), a3);
  }
  for (; i + 8 <= n; i += 8) a0 = _mm256_fmadd_ps(load8(w + i), _mm256_loadu_ps(x + i), a0);
  float s = hsum8(_mm256_add_ps(_mm256_add_ps(a0, a1), _mm256_add_ps(a2, a3)));
  for (; i < n; ++i) s += load1(w, i) * load_f32(x, i);
  return s;
}

// dot_f32_rows / dot_f16_rows: R weight rows x G activation rows in R * G accumulators. Every 8
// weights of a row are loaded (widened) once and multiplied into all G activation rows. For one
// or two activation rows (memory-bound) the weight rows are read one after another, each in
// memory order, which the hardware prefetchers follow far better than R streams side by side
// (see kernels_avx512.cpp); each sum is one chain in the order of the values either way.
template <typename W, int R, int G, bool kRevisited>  // kRevisited: not used here (see kernels_x86.h)
void dot_tile(int64_t n, const uint8_t* w, size_t ws, const float* x, int64_t xs, float* y, int64_t ldy) {
  __m256 acc[R][G];
  const W* wr[R];
  for (int r = 0; r < R; ++r) {
    wr[r] = reinterpret_cast<const W*>(w + static_cast<size_t>(r) * ws);
    for (int g = 0; g < G; ++g) acc[r][g] = _mm256_setzero_ps();
  }
  int64_t i = 0;
  if constexpr (G <= 2) {
    for (int r = 0; r < R; ++r)
      for (i = 0; i + 8 <= n; i += 8) {
        const __m256 wv = load8(wr[r] + i);
        for (int g = 0; g < G; ++g) acc[r][g] = _mm256_fmadd_ps(wv, _mm256_loadu_ps(x + g * xs + i), acc[r][g]);
      }
  } else {
    for (; i + 8 <= n; i += 8) {
      __m256 wv[R];
      for (int r = 0; r < R; ++r) {
        _mm_prefetch(reinterpret_cast<const char*>(wr[r] + i) + kTilePrefetchBytes, _MM_HINT_T1);
        wv[r] = load8(wr[r] + i);
      }
      for (int g = 0; g < G; ++g) {
        const __m256 xv = _mm256_loadu_ps(x + g * xs + i);
        for (int r = 0; r < R; ++r) acc[r][g] = _mm256_fmadd_ps(wv[r], xv, acc[r][g]);
      }
    }
  }
  for (int r = 0; r < R; ++r)
    for (int g = 0; g < G; ++g) {
      float s = hsum8(acc[r][g]);
      for (int64_t j = i; j < n; ++j) s += load1(wr[r], j) * load_f32(x + g * xs, j);
      y[g * ldy + r] = s;
    }
}

// Weight rows [r, r_end) in tiles of R, each tile against every group of activation rows in turn
// (groups nearly equal: the first nx % groups have one row more), so a tile's rows come from
// memory once for all groups. Returns where the whole tiles end.
template <typename W, int R>
int64_t dot_tiles(int64_t n, const uint8_t* w, size_t ws, int64_t r, int64_t r_end, const float* x, int64_t xs,
                  int64_t nx, int64_t groups, float* y, int64_t ldy) {
  for (; r + R <= r_end; r += R) {
    int64_t m = 0;
    for (int64_t k = 0; k < groups; ++k) {
      const int g = static_cast<int>(nx / groups + (k < nx % groups ? 1 : 0));
      dot_tile_g<W, R>(g, n, w + static_cast<size_t>(r) * ws, ws, x + m * xs, xs, y + m * ldy + r, ldy);
      m += g;
    }
  }
  return r;
}

// Weight rows in tiles of R (3 when no group has more than 3 activation rows, else 2: at most 12
// of the 16 ymm registers hold accumulators; the rows left over one at a time), activation rows
// in groups of up to 6, more than 6 in nearly equal groups (7 = 4 + 3, 8 = 4 + 4) taken on each
// weight tile in turn, as on AVX-512: one pass over the weights, not one per group (8-row base
// f16 steps read the weights twice that way).
template <typename W>
void dot_w_rows(int64_t n, const void* wv, size_t ws, int64_t nw, const float* x, int64_t xs, int64_t nx, float* y,
                int64_t ldy) {
  const auto* w = static_cast<const uint8_t*>(wv);
  const int64_t groups = (nx + 5) / 6;
  const int64_t largest = (nx + groups - 1) / groups;
  const int64_t r = largest <= 3 ? dot_tiles<W, 3>(n, w, ws, 0, nw, x, xs, nx, groups, y, ldy)
                                 : dot_tiles<W, 2>(n, w, ws, 0, nw, x, xs, nx, groups, y, ldy);
  dot_tiles<W, 1>(n, w, ws, r, nw, x, xs, nx, groups, y, ldy);
}

// 0x10 in byte j where bit j of the 32-bit qh is set: the fifth bit of q5 levels.
inline __m256i q5_high_bits(const uint8_t* qh) {
  uint32_t bits;
  std::memcpy(&bits, qh, 4);
  // Byte j takes qh byte j/8 (the shuffle works per 128-bit half; both halves hold all of qh)...
  const __m256i spread = _mm256_shuffle_epi8(
      _mm256_set1_epi32(static_cast<int>(bits)),
      _mm256_setr_epi8(0, 0, 0, 0, 0, 0, 0, 0, 1, 1, 1, 1, 1, 1, 1, 1, 2, 2, 2, 2, 2, 2, 2, 2, 3, 3, 3, 3, 3, 3, 3, 3));
  // ...and keeps bit j%8 of it.
  const __m256i bit = _mm256_set1_epi64x(static_cast<int64_t>(0x8040201008040201ull));
  const __m256i set = _mm256_cmpeq_epi8(_mm256_and_si256(spread, bit), bit);
  return _mm256_and_si256(set, _mm256_set1_epi8(0x10));
}

inline __m256i add_q5_high(__m256i q, const uint8_t* qh) { return _mm256_or_si256(q, q5_high_bits(qh)); }

#if defined(HARK_KERNELS_AVX_VNNI)
// One AVX-VNNI instruction (vpdpbusd, VEX-encoded).
inline __m256i dot_u8s8(__m256i u, __m256i s) { return _mm256_dpbusd_avx_epi32(_mm256_setzero_si256(), u, s); }
#else
// maddubs adds pairs into int16 (no saturation for these ranges, kernels_x86.h), madd the pairs
// of those into int32.
inline __m256i dot_u8s8(__m256i u, __m256i s) {
  return _mm256_madd_epi16(_mm256_maddubs_epi16(u, s), _mm256_set1_epi16(1));
}
#endif

// Unsigned-level types: w = (q - zero) * d (+ m). The integer dot uses the unsigned q; the zero
// point and the min come back through s = dx * sum(xq): sum_j w_j x_j = d dx sum q xq - zero d s + m s.
template <typename Block, int kZero, bool kHasMin, bool kFiveBit>
float dot_unsigned(int64_t n, const void* wv, const BlockQ8A* x) {
  __m256 acc0 = _mm256_setzero_ps(), acc1 = acc0;
  float off = 0;  // sum of (m - zero*d) * s over blocks
  const int64_t nb = n / kQuantBlock;
  for (int64_t b = 0; b < nb; ++b) {
    const auto w = block_at<Block>(wv, b);
    _mm_prefetch(reinterpret_cast<const char*>(w.qs()) + kPrefetchBytes, _MM_HINT_T0);
    __m256i q = q4_levels(w.qs());
    if constexpr (kFiveBit) q = add_q5_high(q, w.qh_bytes());
    const __m256 p = _mm256_cvtepi32_ps(dot_u8s8(q, load_q8a(x[b])));
    const float d = half(w.d());
    if (b & 1) {
      acc1 = _mm256_fmadd_ps(p, _mm256_set1_ps(d * x[b].d), acc1);
    } else {
      acc0 = _mm256_fmadd_ps(p, _mm256_set1_ps(d * x[b].d), acc0);
    }
    float bias = -static_cast<float>(kZero) * d;
    if constexpr (kHasMin) bias = half(w.m());
    off += bias * x[b].s;
  }
  return hsum8(_mm256_add_ps(acc0, acc1)) + off;
}

float dot_q8_0(int64_t n, const void* wv, const BlockQ8A* x) {
  __m256 acc0 = _mm256_setzero_ps(), acc1 = acc0;
  const int64_t nb = n / kQuantBlock;
  for (int64_t b = 0; b < nb; ++b) {
    const auto w = block_at<BlockQ8_0>(wv, b);
    _mm_prefetch(reinterpret_cast<const char*>(w.qs()) + kPrefetchBytes, _MM_HINT_T0);
    const __m256i wq = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(w.qs()));
    // Signed x signed as unsigned x signed: |w| * (x with w's sign). Exact for w in [-128, 127].
    const __m256i s = _mm256_sign_epi8(load_q8a(x[b]), wq);
    const __m256 p = _mm256_cvtepi32_ps(dot_u8s8(_mm256_abs_epi8(wq), s));
    const __m256 sc = _mm256_set1_ps(half(w.d()) * x[b].d);
    if (b & 1) {
      acc1 = _mm256_fmadd_ps(p, sc, acc1);
    } else {
      acc0 = _mm256_fmadd_ps(p, sc, acc0);
    }
  }
  return hsum8(_mm256_add_ps(acc0, acc1));
}

// Quantizing primitives (kernels_x86.h): a block's values with NaN read as 0.
inline void load_block32(const float* xb, __m256 v[4]) {
  for (int j = 0; j < 4; ++j) {
    v[j] = _mm256_loadu_ps(xb + 8 * j);
    v[j] = _mm256_and_ps(v[j], _mm256_cmp_ps(v[j], v[j], _CMP_ORD_Q));  // NaN reads as 0
  }
}

float block_amax(const float* xb) {
  const __m256 sign = _mm256_set1_ps(-0.0f);
  __m256 v[4];
  load_block32(xb, v);
  __m256 amax = _mm256_setzero_ps();
  for (int j = 0; j < 4; ++j) amax = _mm256_max_ps(amax, _mm256_andnot_ps(sign, v[j]));
  return hmax(amax);
}

int block_levels(const float* xb, float id_value, void* qs) {
  const __m256 lo = _mm256_set1_ps(-127.0f), hi = _mm256_set1_ps(127.0f), id = _mm256_set1_ps(id_value);
  __m256 v[4];
  load_block32(xb, v);
  __m256i q[4];
  for (int j = 0; j < 4; ++j) {
    const __m256 l = _mm256_min_ps(_mm256_max_ps(_mm256_mul_ps(v[j], id), lo), hi);
    q[j] = _mm256_cvtps_epi32(l);  // round half to even (default MXCSR)
  }
  // Packing works per 128-bit half, which leaves 4-value groups in the order 0,2,4,6,1,3,5,7.
  const __m256i p16a = _mm256_packs_epi32(q[0], q[1]);
  const __m256i p16b = _mm256_packs_epi32(q[2], q[3]);
  const __m256i p8 = _mm256_packs_epi16(p16a, p16b);
  _mm256_storeu_si256(static_cast<__m256i*>(qs),
                      _mm256_permutevar8x32_epi32(p8, _mm256_setr_epi32(0, 4, 1, 5, 2, 6, 3, 7)));
  return hsum_i32(_mm256_add_epi32(_mm256_add_epi32(q[0], q[1]), _mm256_add_epi32(q[2], q[3])));
}

// ---- conversions --------------------------------------------------------------------------

void f16_to_f32_row(const f16_t* x, float* y, int64_t n) {
  int64_t i = 0;
  for (; i + 8 <= n; i += 8) _mm256_storeu_ps(y + i, load_f16x8(x + i));
  for (; i < n; ++i) y[i] = half(load_f16(x, i));
}

void f32_to_f16_row(const float* x, f16_t* y, int64_t n) {
  int64_t i = 0;
  for (; i + 8 <= n; i += 8) {
    const __m128i h = _mm256_cvtps_ph(_mm256_loadu_ps(x + i), _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC);
    _mm_storeu_si128(reinterpret_cast<__m128i*>(y + i), h);
  }
  for (; i < n; ++i) y[i] = f32_to_f16(load_f32(x, i));
}

// 32 levels (bytes, as in q4_levels) to floats, as the scalar definition computes them:
// (level - zero) * d for the symmetric types (the zero point is taken off in integers, so a level
// at the zero point gives the signed zero of 0 * d), level * d + m for the _1 types (level * d is
// exact, so fusing the add changes nothing).
template <int kZero, bool kHasMin>
inline void levels_to_f32(__m256i q, float d, float m, float* y) {
  const __m256 vd = _mm256_set1_ps(d), vm = _mm256_set1_ps(m);
  if constexpr (kZero != 0) q = _mm256_sub_epi8(q, _mm256_set1_epi8(kZero));
  const __m128i lo = _mm256_castsi256_si128(q), hi = _mm256_extracti128_si256(q, 1);
  const __m128i parts[4] = {lo, _mm_srli_si128(lo, 8), hi, _mm_srli_si128(hi, 8)};
  for (int j = 0; j < 4; ++j) {
    const __m256i wide = kZero != 0 ? _mm256_cvtepi8_epi32(parts[j]) : _mm256_cvtepu8_epi32(parts[j]);
    const __m256 f = _mm256_cvtepi32_ps(wide);
    _mm256_storeu_ps(y + 8 * j, kHasMin ? _mm256_fmadd_ps(f, vd, vm) : _mm256_mul_ps(f, vd));
  }
}

void dequantize_q8_0(const void* xv, float* y, int64_t n) {
  for (int64_t b = 0; b < n / kQuantBlock; ++b, y += kQuantBlock) {
    const auto x = block_at<BlockQ8_0>(xv, b);
    const __m256 d = _mm256_set1_ps(half(x.d()));
    for (int j = 0; j < 4; ++j) {
      const __m128i q = _mm_loadl_epi64(reinterpret_cast<const __m128i*>(x.qs() + 8 * j));
      _mm256_storeu_ps(y + 8 * j, _mm256_mul_ps(_mm256_cvtepi32_ps(_mm256_cvtepi8_epi32(q)), d));
    }
  }
}

// ---- vector math --------------------------------------------------------------------------

void add(int64_t n, const float* a, const float* b, float* y) {
  int64_t i = 0;
  for (; i + 8 <= n; i += 8) _mm256_storeu_ps(y + i, _mm256_add_ps(_mm256_loadu_ps(a + i), _mm256_loadu_ps(b + i)));
  for (; i < n; ++i) y[i] = load_f32(a, i) + load_f32(b, i);
}

void mul(int64_t n, const float* a, const float* b, float* y) {
  int64_t i = 0;
  for (; i + 8 <= n; i += 8) _mm256_storeu_ps(y + i, _mm256_mul_ps(_mm256_loadu_ps(a + i), _mm256_loadu_ps(b + i)));
  for (; i < n; ++i) y[i] = load_f32(a, i) * load_f32(b, i);
}

void scale(int64_t n, const float* x, float s, float bias, float* y) {
  const __m256 vs = _mm256_set1_ps(s), vb = _mm256_set1_ps(bias);
  int64_t i = 0;
  for (; i + 8 <= n; i += 8) _mm256_storeu_ps(y + i, _mm256_fmadd_ps(_mm256_loadu_ps(x + i), vs, vb));
  for (; i < n; ++i) y[i] = load_f32(x, i) * s + bias;
}

void axpy(int64_t n, float a, const float* x, float* y) {
  const __m256 va = _mm256_set1_ps(a);
  int64_t i = 0;
  for (; i + 8 <= n; i += 8)
    _mm256_storeu_ps(y + i, _mm256_fmadd_ps(va, _mm256_loadu_ps(x + i), _mm256_loadu_ps(y + i)));
  for (; i < n; ++i) y[i] += a * load_f32(x, i);
}

void axpy_f16(int64_t n, float a, const f16_t* x, float* y) {
  const __m256 va = _mm256_set1_ps(a);
  int64_t i = 0;
  for (; i + 8 <= n; i += 8) _mm256_storeu_ps(y + i, _mm256_fmadd_ps(va, load_f16x8(x + i), _mm256_loadu_ps(y + i)));
  for (; i < n; ++i) y[i] += a * half(load_f16(x, i));
}

// Output by output per row: the 8-wide loads leave little to share.
void axpy_f16_rows(int64_t n, int64_t nk, const float* a, int64_t as, int64_t na, const f16_t* x, size_t xs, float* y,
                   int64_t ys) {
  for (int64_t t = 0; t < nk; ++t)
    for (int64_t g = 0; g < na; ++g)
      axpy_f16(n, a[g * as + t], reinterpret_cast<const f16_t*>(reinterpret_cast<const uint8_t*>(x) + t * xs),
               y + g * ys);
}

// Block by block: its 32 levels widened once, then added into every output in turn.
void axpy_q8_0_rows(int64_t n, int64_t nk, const float* a, int64_t as, int64_t na, const void* x, size_t xs, float* y,
                    int64_t ys) {
  for (int64_t t = 0; t < nk; ++t) {
    const void* row = static_cast<const uint8_t*>(x) + t * xs;
    for (int64_t b = 0; b < n / kQuantBlock; ++b) {
      const auto blk = block_at<BlockQ8_0>(row, b);
      const float d = half(blk.d());
      __m256 lv[4];
      for (int j = 0; j < 4; ++j)
        lv[j] = _mm256_cvtepi32_ps(
            _mm256_cvtepi8_epi32(_mm_loadl_epi64(reinterpret_cast<const __m128i*>(blk.qs_i8() + 8 * j))));
      for (int64_t g = 0; g < na; ++g) {
        const __m256 c = _mm256_set1_ps(a[g * as + t] * d);
        float* yb = y + g * ys + b * kQuantBlock;
        for (int j = 0; j < 4; ++j)
          _mm256_storeu_ps(yb + 8 * j, _mm256_fmadd_ps(c, lv[j], _mm256_loadu_ps(yb + 8 * j)));
      }
    }
  }
}

float max(int64_t n, const float* x) {
  __m256 m0 = _mm256_set1_ps(-INFINITY), m1 = m0;
  int64_t i = 0;
  for (; i + 16 <= n; i += 16) {
    m0 = _mm256_max_ps(m0, _mm256_loadu_ps(x + i));
    m1 = _mm256_max_ps(m1, _mm256_loadu_ps(x + i + 8));
  }
  for (; i + 8 <= n; i += 8) m0 = _mm256_max_ps(m0, _mm256_loadu_ps(x + i));
  float m = hmax(_mm256_max_ps(m0, m1));
  for (; i < n; ++i) {
    const float v = load_f32(x, i);
    m = v > m ? v : m;
  }
  return m;
}

// exp on 8 lanes, the algorithm of the scalar exp1 (kernels_scalar.cpp).
inline __m256 exp8(__m256 x) {
  const __m256 under = _mm256_cmp_ps(x, _mm256_set1_ps(kExpMin), _CMP_LT_OQ);
  const __m256 over = _mm256_cmp_ps(x, _mm256_set1_ps(kExpMax), _CMP_GT_OQ);
  // Lanes below kExpMin compute exp(0) and are zeroed after: clamped to kExpMin they could give
  // a subnormal, and subnormal results cost a microcode assist (see kernels_avx512.cpp's exp16).
  x = _mm256_andnot_ps(under, x);
  // Constant first: max/min return the second operand for NaN, so NaN flows through.
  x = _mm256_min_ps(_mm256_set1_ps(kExpMax), _mm256_max_ps(_mm256_set1_ps(kExpMin), x));
  const __m256 n =
      _mm256_round_ps(_mm256_mul_ps(x, _mm256_set1_ps(kLog2e)), _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC);
  __m256 r = _mm256_fnmadd_ps(n, _mm256_set1_ps(kLn2Hi), x);
  r = _mm256_fnmadd_ps(n, _mm256_set1_ps(kLn2Lo), r);
  __m256 p = _mm256_set1_ps(kExpC7);
  p = _mm256_fmadd_ps(p, r, _mm256_set1_ps(kExpC6));
  p = _mm256_fmadd_ps(p, r, _mm256_set1_ps(kExpC5));
  p = _mm256_fmadd_ps(p, r, _mm256_set1_ps(kExpC4));
  p = _mm256_fmadd_ps(p, r, _mm256_set1_ps(kExpC3));
  p = _mm256_fmadd_ps(p, r, _mm256_set1_ps(kExpC2));
  p = _mm256_fmadd_ps(p, r, _mm256_set1_ps(1.0f));
  p = _mm256_fmadd_ps(p, r, _mm256_set1_ps(1.0f));
  // 2^n as two normal factors: n reaches 128 and -126, beyond a single exponent field.
  const __m256i ni = _mm256_cvtps_epi32(n);
  const __m256i h = _mm256_srai_epi32(ni, 1);
  const __m256i bias = _mm256_set1_epi32(127);
  const __m256 s1 = _mm256_castsi256_ps(_mm256_slli_epi32(_mm256_add_epi32(h, bias), 23));
  const __m256 s2 = _mm256_castsi256_ps(_mm256_slli_epi32(_mm256_add_epi32(_mm256_sub_epi32(ni, h), bias), 23));
  __m256 y = _mm256_mul_ps(_mm256_mul_ps(p, s1), s2);
  y = _mm256_andnot_ps(under, y);
  return _mm256_blendv_ps(y, _mm256_set1_ps(INFINITY), over);
}

float exp_sub_sum(int64_t n, const float* x, float m, float* y) {
  const __m256 vm = _mm256_set1_ps(m);
  __m256 acc = _mm256_setzero_ps();
  int64_t i = 0;
  for (; i + 8 <= n; i += 8) {
    const __m256 e = exp8(_mm256_sub_ps(_mm256_loadu_ps(x + i), vm));
    if (y) _mm256_storeu_ps(y + i, e);
    acc = _mm256_add_ps(acc, e);
  }
  float s = hsum8(acc);
  if (i < n) {
    float tx[8] = {0}, ty[8];
    for (int64_t j = i; j < n; ++j) tx[j - i] = load_f32(x, j);
    _mm256_storeu_ps(ty, exp8(_mm256_sub_ps(_mm256_loadu_ps(tx), vm)));
    for (int64_t j = i; j < n; ++j) {
      if (y) y[j] = ty[j - i];
      s += ty[j - i];
    }
  }
  return s;
}

// Each lane keeps its largest value and where it was (a strict > keeps the first); lanes that
// saw a NaN are remembered, and only then is the row scanned for the first NaN. The lanes' best
// then meet: the largest value, at the smallest index holding it.
int64_t argmax(int64_t n, const float* x) {
  __m256 best = _mm256_set1_ps(-INFINITY);
  __m256i at = _mm256_setzero_si256(), idx = _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7);
  __m256 nan = _mm256_setzero_ps();
  const __m256i step = _mm256_set1_epi32(8);
  int64_t i = 0;
  // int32 lane indices: rows longer than that go lane by lane below (none in practice).
  const int64_t vec_end = n < (int64_t{1} << 30) ? n : 0;
  for (; i + 8 <= vec_end; i += 8) {
    const __m256 v = _mm256_loadu_ps(x + i);
    const __m256 gt = _mm256_cmp_ps(v, best, _CMP_GT_OQ);
    best = _mm256_blendv_ps(best, v, gt);
    at = _mm256_castps_si256(_mm256_blendv_ps(_mm256_castsi256_ps(at), _mm256_castsi256_ps(idx), gt));
    nan = _mm256_or_ps(nan, _mm256_cmp_ps(v, v, _CMP_UNORD_Q));
    idx = _mm256_add_epi32(idx, step);
  }
  if (_mm256_movemask_ps(nan) != 0) {
    for (int64_t j = 0; j < i; ++j)
      if (std::isnan(load_f32(x, j))) return j;
  }
  float lane_best[8];
  int32_t lane_at[8];
  _mm256_storeu_ps(lane_best, best);
  _mm256_storeu_si256(reinterpret_cast<__m256i*>(lane_at), at);
  // Lanes that never beat -inf hold nothing; if none did, index 0 (all -inf so far) is first.
  float m = -INFINITY;
  int64_t found = 0;
  for (int l = 0; l < 8; ++l)
    if (lane_best[l] > m || (lane_best[l] == m && m > -INFINITY && lane_at[l] < found))
      m = lane_best[l], found = lane_at[l];
  for (; i < n; ++i) {
    const float v = load_f32(x, i);
    if (std::isnan(v)) return i;
    if (v > m) m = v, found = i;
  }
  return found;
}

// gelu on 8 lanes, the algorithm of the scalar gelu1.
inline __m256 gelu8(__m256 x) {
  const __m256 one = _mm256_set1_ps(1.0f), halfv = _mm256_set1_ps(0.5f);
  const __m256 z = _mm256_mul_ps(_mm256_andnot_ps(_mm256_set1_ps(-0.0f), x), _mm256_set1_ps(kSqrtHalf));
  const __m256 t = _mm256_div_ps(one, _mm256_fmadd_ps(halfv, z, one));
  __m256 q = _mm256_set1_ps(kErfcQ[8]);
  for (int i = 7; i >= 0; --i) q = _mm256_fmadd_ps(q, t, _mm256_set1_ps(kErfcQ[i]));
  const __m256 e = _mm256_mul_ps(_mm256_mul_ps(t, q), exp8(_mm256_sub_ps(_mm256_setzero_ps(), _mm256_mul_ps(z, z))));
  const __m256 he = _mm256_mul_ps(halfv, e);
  const __m256 phi = _mm256_blendv_ps(he, _mm256_sub_ps(one, he), _mm256_cmp_ps(x, _mm256_setzero_ps(), _CMP_GE_OQ));
  return _mm256_mul_ps(x, phi);
}

inline __m256 sigmoid8(__m256 x) {
  const __m256 one = _mm256_set1_ps(1.0f);
  return _mm256_div_ps(one, _mm256_add_ps(one, exp8(_mm256_sub_ps(_mm256_setzero_ps(), x))));
}

// tanh on 8 lanes, the algorithm of the scalar tanh1.
inline __m256 tanh8(__m256 x) {
  const __m256 sign = _mm256_set1_ps(-0.0f);
  const __m256 a = _mm256_andnot_ps(sign, x);
  const __m256 x2 = _mm256_mul_ps(x, x);
  __m256 p = _mm256_set1_ps(kTanhSeries[5]);
  for (int i = 4; i >= 0; --i) p = _mm256_fmadd_ps(p, x2, _mm256_set1_ps(kTanhSeries[i]));
  const __m256 series = _mm256_mul_ps(x, p);
  const __m256 one = _mm256_set1_ps(1.0f);
  const __m256 e = exp8(_mm256_mul_ps(a, _mm256_set1_ps(-2.0f)));
  const __m256 r = _mm256_or_ps(_mm256_div_ps(_mm256_sub_ps(one, e), _mm256_add_ps(one, e)), _mm256_and_ps(sign, x));
  return _mm256_blendv_ps(r, series, _mm256_cmp_ps(a, _mm256_set1_ps(kTanhSeriesMax), _CMP_LT_OQ));
}

// f(x) on 8 lanes at a time, the tail through a padded copy.
template <__m256 (*F)(__m256)>
void map8(int64_t n, const float* x, float* y) {
  int64_t i = 0;
  for (; i + 8 <= n; i += 8) _mm256_storeu_ps(y + i, F(_mm256_loadu_ps(x + i)));
  if (i < n) {
    float tx[8] = {0}, ty[8];
    for (int64_t j = i; j < n; ++j) tx[j - i] = load_f32(x, j);
    _mm256_storeu_ps(ty, F(_mm256_loadu_ps(tx)));
    for (int64_t j = i; j < n; ++j) y[j] = ty[j - i];
  }
}

void gelu(int64_t n, const float* x, float* y) { map8<gelu8>(n, x, y); }
void sigmoid(int64_t n, const float* x, float* y) { map8<sigmoid8>(n, x, y); }
void tanh(int64_t n, const float* x, float* y) { map8<tanh8>(n, x, y); }

// Two passes. Lanes sum in f32 over chunks of 1024 values (64 per lane), chunks in double: long
// rows keep the accuracy of short ones.
constexpr int64_t kSumChunk = 1024;

inline double hsum_double(__m256 v) {
  alignas(32) float t[8];
  _mm256_store_ps(t, v);
  double s = 0;
  for (float f : t) s += f;
  return s;
}

template <bool kSquares>
double chunked_sum(int64_t n, const float* x, float c) {
  const __m256 vc = _mm256_set1_ps(c);
  double total = 0;
  for (int64_t c0 = 0; c0 < n; c0 += kSumChunk) {
    const int64_t c1 = n - c0 < kSumChunk ? n : c0 + kSumChunk;
    __m256 s0 = _mm256_setzero_ps(), s1 = s0;
    int64_t i = c0;
    for (; i + 16 <= c1; i += 16) {
      __m256 v0 = _mm256_loadu_ps(x + i), v1 = _mm256_loadu_ps(x + i + 8);
      if constexpr (kSquares) {
        v0 = _mm256_sub_ps(v0, vc);
        v1 = _mm256_sub_ps(v1, vc);
        s0 = _mm256_fmadd_ps(v0, v0, s0);
        s1 = _mm256_fmadd_ps(v1, v1, s1);
      } else {
        s0 = _mm256_add_ps(s0, v0);
        s1 = _mm256_add_ps(s1, v1);
      }
    }
    total += hsum_double(_mm256_add_ps(s0, s1));
    for (; i < c1; ++i) {
      const double d = kSquares ? double(load_f32(x, i)) - c : double(load_f32(x, i));
      total += kSquares ? d * d : d;
    }
  }
  return total;
}

// ---- GEMM ---------------------------------------------------------------------------------

// 6 x 16 register tile: 12 accumulators, 2 B vectors and one broadcast fill the 16 ymm registers.
void micro_6x16(int64_t kc, const float* ap, const float* bp, float* c, int64_t ldc, bool accumulate) {
  __m256 c0[6], c1[6];
  for (int i = 0; i < 6; ++i) c0[i] = c1[i] = _mm256_setzero_ps();
  for (int64_t p = 0; p < kc; ++p, ap += 6, bp += 16) {
    const __m256 b0 = _mm256_load_ps(bp), b1 = _mm256_load_ps(bp + 8);
#pragma GCC unroll 6
    for (int i = 0; i < 6; ++i) {
      const __m256 a = _mm256_broadcast_ss(ap + i);
      c0[i] = _mm256_fmadd_ps(a, b0, c0[i]);
      c1[i] = _mm256_fmadd_ps(a, b1, c1[i]);
    }
  }
#pragma GCC unroll 6
  for (int i = 0; i < 6; ++i) {
    float* ci = c + i * ldc;
    if (accumulate) {
      c0[i] = _mm256_add_ps(c0[i], _mm256_loadu_ps(ci));
      c1[i] = _mm256_add_ps(c1[i], _mm256_loadu_ps(ci + 8));
    }
    _mm256_storeu_ps(ci, c0[i]);
    _mm256_storeu_ps(ci + 8, c1[i]);
  }
}

void gemm_f32(int64_t m, int64_t n, int64_t k, const float* a, int64_t lda, const float* b, int64_t ldb, float* c,
              int64_t ldc) {
  // Deep K slices (fewer passes over C) and wide column blocks (activations packed once per
  // 1024 weight rows) measured best on Zen 4; the B block then lives in L2/L3, which the
  // micro-kernel's slow stream through it (one 64-byte row per 12 FMAs) tolerates.
  constexpr GemmBlocking blk{240, 448, 1024};
  gemm_blocked<6, 16>(m, n, k, a, lda, b, ldb, c, ldc, blk, micro_6x16);
}

void gemm_f32_nn(int64_t m, int64_t n, int64_t k, const float* a, int64_t lda, const float* b, int64_t ldb, float* c,
                 int64_t ldc) {
  constexpr GemmBlocking blk{240, 448, 1024};
  gemm_blocked<6, 16, true>(m, n, k, a, lda, b, ldb, c, ldc, blk, micro_6x16);
}

// Weight rows one at a time: this level has no tiles across weight rows. One activation row takes
// the single dots (two accumulator chains, prefetch: measured 2.4x faster on a tiny q5_0 logits
// product than dot_q_rows' one-row group), several take dot_q_rows.
void dot_q_tiles(DType type, int64_t n, const void* w, size_t ws, int64_t nw, const BlockQ8A* x, int64_t xs, int64_t nx,
                 float* y, int64_t ldy) {
  const auto* wb = static_cast<const uint8_t*>(w);
  if (nx == 1) {
    float (*dot)(int64_t, const void*, const BlockQ8A*) = dot_q8_0;
    switch (type) {
      case DType::Q4_0: dot = dot_q4_0; break;
      case DType::Q4_1: dot = dot_q4_1; break;
      case DType::Q5_0: dot = dot_q5_0; break;
      case DType::Q5_1: dot = dot_q5_1; break;
      default: break;
    }
    for (int64_t r = 0; r < nw; ++r) y[r] = dot(n, wb + static_cast<size_t>(r) * ws, x);
    return;
  }
  for (int64_t r = 0; r < nw; ++r) dot_q_rows(type, n, wb + static_cast<size_t>(r) * ws, x, xs, nx, y + r, ldy);
}

#if defined(HARK_KERNELS_AVX_VNNI)
// ---- gemm_q8 (the AVX-VNNI build only): packed panels around a 3 x 16 register tile -----------
//
// The AVX-512 GEMM's scheme (int8_avx512.cpp) at 256 bits: weights enter as signed levels
// (level - zero point), activations as unsigned bytes xq + 128, and each block's integer sum
// starts at -128 * sum(levels), so it is exactly sum (q - zero) xq; it becomes f32 and is scaled
// by d * dx (+ m * s for the _1 types). Per depth block, a weight panel holds 8 groups x 16
// columns x 4 levels, then each column's start, d and m; an activation panel 8 groups x 3 rows x
// 4 bytes, then dx and s. 3 x 16 keeps the 6 integer sums, 6 accumulators and the operands in
// the 16 ymm registers. (Plain AVX2 has no int8 GEMM: maddubs would saturate on xq + 128.)

constexpr int kGemmMR = 3, kGemmNR = 16;
constexpr int64_t kGemmKCB = 16;  // depth blocks per slice
constexpr int64_t kGemmNC = 256;  // weight rows per packed block
constexpr int64_t kGemmMC = 96;   // activation rows per packed block (a multiple of kGemmMR)
constexpr size_t kGemmABytes = 8 * kGemmMR * 4 + kGemmMR * 4 /* dx */ + kGemmMR * 4 /* s */;
template <bool kHasMin>
constexpr size_t gemm_b_bytes() {
  return 8 * kGemmNR * 4 + kGemmNR * 4 /* start */ + kGemmNR * 4 /* d */ + (kHasMin ? kGemmNR * 4 : 0) /* m */;
}

// A block's levels as signed bytes (level - zero point), in value order.
template <typename Block, int kZero, bool kFiveBit>
inline __m256i gemm_levels(const BlockBytes<Block>& w) {
  if constexpr (std::is_same_v<Block, BlockQ8_0>) {
    return _mm256_loadu_si256(reinterpret_cast<const __m256i*>(w.qs()));
  } else {
    __m256i q = q4_levels(w.qs());
    if constexpr (kFiveBit) q = add_q5_high(q, w.qh_bytes());
    if constexpr (kZero != 0) q = _mm256_sub_epi8(q, _mm256_set1_epi8(static_cast<char>(kZero)));
    return q;
  }
}

template <typename Block, int kZero, bool kHasMin, bool kFiveBit>
void gemm_pack_b(int64_t cols, int64_t b0, int64_t kb, const uint8_t* w, size_t ldb, uint8_t* dst) {
  constexpr size_t SB = gemm_b_bytes<kHasMin>();
  const int64_t panels = (cols + kGemmNR - 1) / kGemmNR;
  alignas(32) int32_t groups[8];
  for (int64_t pj = 0; pj < panels; ++pj) {
    uint8_t* panel = dst + static_cast<size_t>(pj * kb) * SB;
    for (int jj = 0; jj < kGemmNR; ++jj) {
      const int64_t j = pj * kGemmNR + jj;
      const uint8_t* row =
          j < cols ? w + static_cast<size_t>(j) * ldb + static_cast<size_t>(b0) * sizeof(Block) : nullptr;
      for (int64_t b = 0; b < kb; ++b) {
        uint8_t* pb = panel + static_cast<size_t>(b) * SB;
        auto* q32 = reinterpret_cast<int32_t*>(pb) + jj;
        auto* start = reinterpret_cast<int32_t*>(pb + 8 * kGemmNR * 4);
        auto* d = reinterpret_cast<float*>(pb + 8 * kGemmNR * 4 + kGemmNR * 4);
        if (!row) {
          for (int g = 0; g < 8; ++g) q32[g * kGemmNR] = 0;
          start[jj] = 0;
          d[jj] = 0;
          if constexpr (kHasMin) d[kGemmNR + jj] = 0;
          continue;
        }
        const BlockBytes<Block> wb{row + static_cast<size_t>(b) * sizeof(Block)};
        const __m256i q = gemm_levels<Block, kZero, kFiveBit>(wb);
        _mm256_store_si256(reinterpret_cast<__m256i*>(groups), q);
        for (int g = 0; g < 8; ++g) q32[g * kGemmNR] = groups[g];
        // sum(levels): ones (unsigned) times the signed levels, then across the 8 lanes.
        const __m256i sums = _mm256_dpbusd_avx_epi32(_mm256_setzero_si256(), _mm256_set1_epi8(1), q);
        __m128i s4 = _mm_add_epi32(_mm256_castsi256_si128(sums), _mm256_extracti128_si256(sums, 1));
        s4 = _mm_add_epi32(s4, _mm_shuffle_epi32(s4, 0x4E));
        s4 = _mm_add_epi32(s4, _mm_shuffle_epi32(s4, 0xB1));
        start[jj] = -128 * _mm_cvtsi128_si32(s4);
        d[jj] = half(wb.d());
        if constexpr (kHasMin) d[kGemmNR + jj] = half(wb.m());
      }
    }
  }
}

void gemm_pack_a(int64_t rows, int64_t b0, int64_t kb, const BlockQ8A* a, int64_t lda, uint8_t* dst) {
  const __m256i flip = _mm256_set1_epi8(static_cast<char>(0x80));
  alignas(32) int32_t groups[8];
  const int64_t panels = (rows + kGemmMR - 1) / kGemmMR;
  for (int64_t pi = 0; pi < panels; ++pi) {
    uint8_t* panel = dst + static_cast<size_t>(pi * kb) * kGemmABytes;
    for (int ii = 0; ii < kGemmMR; ++ii) {
      const int64_t i = pi * kGemmMR + ii;
      for (int64_t b = 0; b < kb; ++b) {
        uint8_t* pb = panel + static_cast<size_t>(b) * kGemmABytes;
        auto* q32 = reinterpret_cast<int32_t*>(pb) + ii;
        auto* dx = reinterpret_cast<float*>(pb + 8 * kGemmMR * 4);
        float* sx = dx + kGemmMR;
        if (i >= rows) {  // zero activations: 128 after the flip, times dx = 0
          for (int g = 0; g < 8; ++g) q32[g * kGemmMR] = static_cast<int32_t>(0x80808080u);
          dx[ii] = 0;
          sx[ii] = 0;
          continue;
        }
        const BlockQ8A& xb = a[i * lda + b0 + b];
        _mm256_store_si256(reinterpret_cast<__m256i*>(groups), _mm256_xor_si256(load_q8a(xb), flip));
        for (int g = 0; g < 8; ++g) q32[g * kGemmMR] = groups[g];
        dx[ii] = xb.d;
        sx[ii] = xb.s;
      }
    }
  }
}

// c[i * ldc + j] (+)= the 3 x 16 tile of one activation panel and one weight panel over kb blocks.
template <bool kHasMin>
void gemm_micro(int64_t kb, const uint8_t* ap, const uint8_t* bp, float* c, int64_t ldc, bool accumulate) {
  constexpr size_t SB = gemm_b_bytes<kHasMin>();
  __m256 acc[kGemmMR][2];
  for (int i = 0; i < kGemmMR; ++i) acc[i][0] = acc[i][1] = _mm256_setzero_ps();
  for (int64_t b = 0; b < kb; ++b, ap += kGemmABytes, bp += SB) {
    const auto* a32 = reinterpret_cast<const int32_t*>(ap);
    const auto* st = reinterpret_cast<const __m256i*>(bp + 8 * kGemmNR * 4);
    __m256i s[kGemmMR][2];
    for (int i = 0; i < kGemmMR; ++i) {
      s[i][0] = _mm256_loadu_si256(st);
      s[i][1] = _mm256_loadu_si256(st + 1);
    }
#pragma GCC unroll 8
    for (int g = 0; g < 8; ++g) {
      const __m256i b0 = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(bp + g * kGemmNR * 4));
      const __m256i b1 = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(bp + g * kGemmNR * 4 + 32));
      for (int i = 0; i < kGemmMR; ++i) {
        const __m256i av = _mm256_set1_epi32(a32[g * kGemmMR + i]);
        s[i][0] = _mm256_dpbusd_avx_epi32(s[i][0], av, b0);
        s[i][1] = _mm256_dpbusd_avx_epi32(s[i][1], av, b1);
      }
    }
    const float* d = reinterpret_cast<const float*>(bp + 8 * kGemmNR * 4 + kGemmNR * 4);
    const __m256 d0 = _mm256_loadu_ps(d), d1 = _mm256_loadu_ps(d + 8);
    const float* dx = reinterpret_cast<const float*>(ap + 8 * kGemmMR * 4);
    for (int i = 0; i < kGemmMR; ++i) {
      const __m256 x = _mm256_set1_ps(dx[i]);
      acc[i][0] = _mm256_fmadd_ps(_mm256_mul_ps(_mm256_cvtepi32_ps(s[i][0]), d0), x, acc[i][0]);
      acc[i][1] = _mm256_fmadd_ps(_mm256_mul_ps(_mm256_cvtepi32_ps(s[i][1]), d1), x, acc[i][1]);
    }
    if constexpr (kHasMin) {
      const __m256 m0 = _mm256_loadu_ps(d + kGemmNR), m1 = _mm256_loadu_ps(d + kGemmNR + 8);
      for (int i = 0; i < kGemmMR; ++i) {
        const __m256 sx = _mm256_set1_ps(dx[kGemmMR + i]);
        acc[i][0] = _mm256_fmadd_ps(m0, sx, acc[i][0]);
        acc[i][1] = _mm256_fmadd_ps(m1, sx, acc[i][1]);
      }
    }
  }
  for (int i = 0; i < kGemmMR; ++i) {
    float* ci = c + i * ldc;
    if (accumulate) {
      acc[i][0] = _mm256_add_ps(acc[i][0], _mm256_loadu_ps(ci));
      acc[i][1] = _mm256_add_ps(acc[i][1], _mm256_loadu_ps(ci + 8));
    }
    _mm256_storeu_ps(ci, acc[i][0]);
    _mm256_storeu_ps(ci + 8, acc[i][1]);
  }
}

template <typename Block, int kZero, bool kHasMin, bool kFiveBit>
void gemm_q8_t(int64_t m, int64_t n, int64_t k, const BlockQ8A* a, int64_t lda, const uint8_t* w, size_t ldb, float* c,
               int64_t ldc) {
  if (m <= 0 || n <= 0) return;
  const int64_t nb = k / kQuantBlock;
  if (nb <= 0) {
    for (int64_t i = 0; i < m; ++i) std::memset(c + i * ldc, 0, static_cast<size_t>(n) * sizeof(float));
    return;
  }
  const int64_t passes = (nb + kGemmKCB - 1) / kGemmKCB;
  const int64_t kstep = (nb + passes - 1) / passes;
  constexpr size_t SB = gemm_b_bytes<kHasMin>();
  const size_t b_bytes = static_cast<size_t>((kGemmNC / kGemmNR) * kstep) * SB;
  const size_t a_bytes = static_cast<size_t>((kGemmMC / kGemmMR) * kstep) * kGemmABytes;
  auto* bp = reinterpret_cast<uint8_t*>(gemm_scratch((b_bytes + a_bytes) / sizeof(float) + 16));
  uint8_t* ap = bp + b_bytes;
  alignas(32) float edge[kGemmMR * kGemmNR];
  for (int64_t jc = 0; jc < n; jc += kGemmNC) {
    const int64_t nc = n - jc < kGemmNC ? n - jc : kGemmNC;
    for (int64_t pc = 0; pc < nb; pc += kstep) {
      const int64_t kb = nb - pc < kstep ? nb - pc : kstep;
      const bool accumulate = pc > 0;
      gemm_pack_b<Block, kZero, kHasMin, kFiveBit>(nc, pc, kb, w + static_cast<size_t>(jc) * ldb, ldb, bp);
      for (int64_t ic = 0; ic < m; ic += kGemmMC) {
        const int64_t mc = m - ic < kGemmMC ? m - ic : kGemmMC;
        gemm_pack_a(mc, pc, kb, a + ic * lda, lda, ap);
        for (int64_t ir = 0; ir < mc; ir += kGemmMR) {
          const int64_t mr = mc - ir < kGemmMR ? mc - ir : kGemmMR;
          const uint8_t* apanel = ap + static_cast<size_t>((ir / kGemmMR) * kb) * kGemmABytes;
          for (int64_t jr = 0; jr < nc; jr += kGemmNR) {
            const int64_t nr = nc - jr < kGemmNR ? nc - jr : kGemmNR;
            const uint8_t* bpanel = bp + static_cast<size_t>((jr / kGemmNR) * kb) * SB;
            float* ct = c + (ic + ir) * ldc + jc + jr;
            if (mr == kGemmMR && nr == kGemmNR) {
              gemm_micro<kHasMin>(kb, apanel, bpanel, ct, ldc, accumulate);
              continue;
            }
            gemm_micro<kHasMin>(kb, apanel, bpanel, edge, kGemmNR, false);
            for (int64_t i = 0; i < mr; ++i)
              for (int64_t j = 0; j < nr; ++j)
                ct[i * ldc + j] = accumulate ? ct[i * ldc + j] + edge[i * kGemmNR + j] : edge[i * kGemmNR + j];
          }
        }
      }
    }
  }
}

void gemm_q8(DType type, int64_t m, int64_t n, int64_t k, const BlockQ8A* a, int64_t lda, const void* b, size_t ldb,
             float* c, int64_t ldc) {
  const auto* w = static_cast<const uint8_t*>(b);
  switch (type) {
    case DType::Q4_0: return gemm_q8_t<BlockQ4_0, 8, false, false>(m, n, k, a, lda, w, ldb, c, ldc);
    case DType::Q4_1: return gemm_q8_t<BlockQ4_1, 0, true, false>(m, n, k, a, lda, w, ldb, c, ldc);
    case DType::Q5_0: return gemm_q8_t<BlockQ5_0, 16, false, true>(m, n, k, a, lda, w, ldb, c, ldc);
    case DType::Q5_1: return gemm_q8_t<BlockQ5_1, 0, true, true>(m, n, k, a, lda, w, ldb, c, ldc);
    default: return gemm_q8_t<BlockQ8_0, 0, false, false>(m, n, k, a, lda, w, ldb, c, ldc);
  }
}
#endif

using Packed = PackedGemm<6, 16, micro_6x16>;

// constinit: no start-up code runs in this file before the processor has been checked.
constinit const Kernels kTable = {
#if defined(HARK_KERNELS_AVX_VNNI)
    SimdLevel::AVX2VNNI,
#else
    SimdLevel::AVX2,
#endif
    dot_row<float>,
    dot_row<f16_t>,
    dot_q4_0,
    dot_q4_1,
    dot_q5_0,
    dot_q5_1,
    dot_q8_0,
    dot_q_rows,
    dot_q_tiles,
#if defined(HARK_KERNELS_AVX_VNNI)
    quantize_q8a,
    gemm_q8,
#else
    quantize_q8a,
    /*gemm_q8=*/nullptr,
#endif
    dot_w_rows<float>,
    dot_w_rows<f16_t>,
    f16_to_f32_row,
    f32_to_f16_row,
    dequantize_row,
    quantize_row,
    add,
    mul,
    scale,
    axpy,
    axpy_f16,
    axpy_f16_rows,
    axpy_q8_0_rows,
    max,
    exp_sub_sum,
    gelu,
    sigmoid,
    tanh,
    mean_var,
    gemm_f32,
    gemm_f32_nn,
    6,
    16,
    Packed::pack_a,
    Packed::pack_b,
    Packed::pack_b_depth_major,
    Packed::gemm,
    argmax,
};

}  // namespace

#if defined(HARK_KERNELS_AVX_VNNI)
const Kernels* avx2vnni_kernels() { return &kTable; }
#else
const Kernels* avx2_kernels() { return &kTable; }
#endif

}  // namespace hark::cpu::detail
#endif
