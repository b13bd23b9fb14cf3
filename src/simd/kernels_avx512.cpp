// The AVX-512 kernel table (F, BW, VL, DQ, VNNI: Ice Lake, Zen 4 and later).
//
// Compiled with those flags (CMakeLists.txt, by file name) and only called after
// cpu_features.cpp has seen them all. Everything is internal to this file (see
// kernels_internal.h). Tails use masked loads and stores instead of scalar loops. Quantized dots
// use VNNI (vpdpbusd) on 256-bit halves: one block of 32 levels per instruction.
#if defined(__x86_64__) || defined(__i386__)
// GCC 12's AVX-512 headers start some intrinsics from _mm512_undefined_*(), which its own
// uninitialized-use analysis then reports at every call site: noise, not a defect here.
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic ignored "-Wuninitialized"
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#endif
#include <immintrin.h>

#include <cfloat>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <cstring>

#include "runtime/unaligned.h"
#include "simd/gemm_blocked.h"
#include "simd/kernels.h"
#include "simd/kernels_internal.h"
#include "simd/kernels_x86.h"

namespace hark::cpu::detail {
namespace {

// Inputs may start at any byte (weights in the file mapping, kernels.h): vector loads are the
// unaligned (and masked) forms, block fields go through runtime/unaligned.h.

inline __mmask16 tail_mask(int64_t left) {
  return left >= 16 ? static_cast<__mmask16>(0xFFFF) : static_cast<__mmask16>((1u << left) - 1u);
}

// ---- dots ---------------------------------------------------------------------------------

inline __m512 load_f16x16(const f16_t* p) {
  return _mm512_cvtph_ps(_mm256_loadu_si256(reinterpret_cast<const __m256i*>(p)));
}
inline __m512 load_f16x16(const f16_t* p, __mmask16 k) { return _mm512_cvtph_ps(_mm256_maskz_loadu_epi16(k, p)); }

// Sixteen weights as f32 (all, or the lanes of k), from either weight type of dot_row.
inline __m512 load16(const float* p) { return _mm512_loadu_ps(p); }
inline __m512 load16(const float* p, __mmask16 k) { return _mm512_maskz_loadu_ps(k, p); }
inline __m512 load16(const f16_t* p) { return load_f16x16(p); }
inline __m512 load16(const f16_t* p, __mmask16 k) { return load_f16x16(p, k); }

// dot_f32 (W = float) and dot_f16_f32 (W = f16_t).
template <typename W>
float dot_row(int64_t n, const W* w, const float* x) {
  __m512 a0 = _mm512_setzero_ps(), a1 = a0, a2 = a0, a3 = a0;
  int64_t i = 0;
  for (; i + 64 <= n; i += 64) {
    a0 = _mm512_fmadd_ps(load16(w + i), _mm512_loadu_ps(x + i), a0);
    a1 = _mm512_fmadd_ps(load16(w + i + 16), _mm512_loadu_ps(x + i + 16), a1);
    a2 = _mm512_fmadd_ps(load16(w + i + 32), _mm512_loadu_ps(x + i + 32), a2);
    a3 = _mm512_fmadd_ps(load16(w + i + 48), _mm512_loadu_ps(x + i + 48), a3);
  }
  for (; i < n; i += 16) {
    const __mmask16 k = tail_mask(n - i);
    a0 = _mm512_fmadd_ps(load16(w + i, k), _mm512_maskz_loadu_ps(k, x + i), a0);
  }
  return _mm512_reduce_add_ps(_mm512_add_ps(_mm512_add_ps(a0, a1), _mm512_add_ps(a2, a3)));
}

// Horizontal sums, always in one order: halves (i + i+8), quarters (i + i+4), then pairs, as
// _mm512_reduce_add_ps does it. sum4 works on four accumulators at once (14 instructions for four
// sums instead of about 32: with short rows, such as tiny's 384 values or a head's 64, the sums
// are a good part of a tile's work), sum1 on a lone one; both give a sum the same bits, so a
// weight row's result never depends on which rows share its tile (how threads split the rows).
inline float sum1(__m512 a) {
  const __m256 h = _mm256_add_ps(_mm512_extractf32x8_ps(a, 1), _mm512_castps512_ps256(a));
  const __m128 q = _mm_add_ps(_mm256_extractf128_ps(h, 1), _mm256_castps256_ps128(h));
  const __m128 p = _mm_add_ps(q, _mm_permute_ps(q, _MM_SHUFFLE(1, 0, 3, 2)));
  return _mm_cvtss_f32(_mm_add_ss(p, _mm_permute_ps(p, _MM_SHUFFLE(2, 3, 0, 1))));
}
inline __m128 sum4(__m512 a0, __m512 a1, __m512 a2, __m512 a3) {
  // [a0 halves summed | a1 halves summed], [a2 | a3]
  const __m512 s01 = _mm512_add_ps(_mm512_shuffle_f32x4(a0, a1, _MM_SHUFFLE(3, 2, 3, 2)),
                                   _mm512_shuffle_f32x4(a0, a1, _MM_SHUFFLE(1, 0, 1, 0)));
  const __m512 s23 = _mm512_add_ps(_mm512_shuffle_f32x4(a2, a3, _MM_SHUFFLE(3, 2, 3, 2)),
                                   _mm512_shuffle_f32x4(a2, a3, _MM_SHUFFLE(1, 0, 1, 0)));
  // 128-bit lane j: accumulator j's quarters summed
  const __m512 q = _mm512_add_ps(_mm512_shuffle_f32x4(s01, s23, _MM_SHUFFLE(3, 1, 3, 1)),
                                 _mm512_shuffle_f32x4(s01, s23, _MM_SHUFFLE(2, 0, 2, 0)));
  const __m512 p = _mm512_add_ps(q, _mm512_permute_ps(q, _MM_SHUFFLE(1, 0, 3, 2)));
  const __m512 s = _mm512_add_ps(p, _mm512_permute_ps(p, _MM_SHUFFLE(2, 3, 0, 1)));
  return _mm512_castps512_ps128(
      _mm512_permutexvar_ps(_mm512_setr_epi32(0, 4, 8, 12, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0), s));
}

// dot_f32_rows / dot_f16_rows: R weight rows x G activation rows in R * G accumulators. Every 16
// weights of a row are loaded (widened) once and multiplied into all G activation rows; the
// sums of a column of R accumulators come out together (sum4).
// For a few activation rows (memory-bound) the weight rows are read one after another, each in
// memory order: the hardware prefetchers keep up with one stream far better than with R
// interleaved ones (tiny's f16 logits product, 1 row, 2 threads on Zen 4: 2.2-2.5 -> 1.35 ms; a
// probe streaming 40 MB of f16 rows read 35 GB/s this way against 20 with four rows interleaved).
// From kSequentialRowsMaxG + 1 rows on the tile is compute-bound and keeps the rows side by side
// (5 rows: 2.2-2.3 ms side by side, 2.4-2.65 row after row).
constexpr int kSequentialRowsMaxG = 2;

// The longest weight row a side-by-side tile prefetches as one block (see dot_tile): any tile
// whose rows are this short, and a tile later groups read again up to the longer limit.
constexpr size_t kBlockPrefetchMaxRowBytes = 1536;
constexpr size_t kRevisitedBlockPrefetchMaxRowBytes = 4096;

template <typename W, int R, int G, bool kRevisited>
void dot_tile(int64_t n, const uint8_t* w, size_t ws, const float* x, int64_t xs, float* y, int64_t ldy) {
  static_assert(R >= 1 && R <= 4);
  __m512 acc[R][G];
  // The prefetch distance (kernels_internal.h) is counted in whole rows: rows may be short slices
  // of longer ones (attention: a head's 64 keys every n_state values), whose next few rows are
  // only a few cycles ahead. (Base f16 decode step, 1 thread: the score tiles 1.75 -> 1.01
  // Mcycles, from a distance of kPrefetchBytes and none for one activation row.)
  const size_t row_bytes = static_cast<size_t>(n) * sizeof(W);
  constexpr size_t kAheadBytes = G <= kSequentialRowsMaxG ? kPrefetchBytes : kTilePrefetchBytes;
  const size_t ahead = (kAheadBytes + row_bytes - 1) / row_bytes * ws;
  // Each sum is one chain in the order of the values, whichever loop order (a row's result does
  // not depend on the rows it shares a tile with).
  if constexpr (G <= kSequentialRowsMaxG) {
    // Row after row: the chains of different rows are independent, so out-of-order execution
    // overlaps one row's FMA latency with the next row's.
    for (int r = 0; r < R; ++r) {
      const W* wr = reinterpret_cast<const W*>(w + static_cast<size_t>(r) * ws);
      for (int g = 0; g < G; ++g) acc[r][g] = _mm512_setzero_ps();
      int64_t i = 0;
      for (; i + 16 <= n; i += 16) {
        // kPrefetchBytes ahead: within this row or the rows after it, which follow in memory.
        _mm_prefetch(reinterpret_cast<const char*>(wr + i) + ahead, _MM_HINT_T0);
        const __m512 wv = load16(wr + i);
        for (int g = 0; g < G; ++g) acc[r][g] = _mm512_fmadd_ps(wv, _mm512_loadu_ps(x + g * xs + i), acc[r][g]);
      }
      if (i < n) {
        const __mmask16 k = tail_mask(n - i);
        const __m512 wv = load16(wr + i, k);
        for (int g = 0; g < G; ++g)
          acc[r][g] = _mm512_fmadd_ps(wv, _mm512_maskz_loadu_ps(k, x + g * xs + i), acc[r][g]);
      }
    }
  } else {
    // Many activation rows: compute-bound, and the R rows side by side let each activation chunk
    // be loaded once for all of them.
    const W* wr[R];
    for (int r = 0; r < R; ++r) {
      wr[r] = reinterpret_cast<const W*>(w + static_cast<size_t>(r) * ws);
      for (int g = 0; g < G; ++g) acc[r][g] = _mm512_setzero_ps();
    }
    // Short rows that follow one another in memory (the logits product's) make the tile one
    // small block, and R streams of a dozen lines each are too short for the hardware prefetchers
    // to train on. So the block `ahead` bytes on is prefetched in memory order instead, each line
    // once, into L1, at the pace the tile consumes its own (R x 16 values a step). Zen 5, 2
    // threads, f16 logits x 8 rows, fastest of 5 in four alternating rounds: tiny 2.05-2.28 ->
    // 1.51-1.90 ms, base 2.44-3.09 -> 2.31-2.70; tiny decode_chunks B8 step median 6.7 -> 5.4 ms.
    // Longer rows train the prefetchers themselves: large's 2.5 KB rows x 5 activation rows lost
    // 12-15% this way. But a tile that later groups read again from L1 (more than 6 activation
    // rows) gains up to 4 KB rows: tiny's MLP-out product (3 KB rows) x 8 rows 76-85 -> 55-65 us,
    // base's (4 KB) 125-143 -> 106-127 us. Slices of longer rows (attention heads) are not one
    // block.
    const bool one_block =
        ws == row_bytes && row_bytes <= (kRevisited ? kRevisitedBlockPrefetchMaxRowBytes : kBlockPrefetchMaxRowBytes);
    constexpr size_t kStepBytes = static_cast<size_t>(R) * 16 * sizeof(W);
    const char* block_ahead = reinterpret_cast<const char*>(w) + ahead;
    int64_t i = 0;
    for (; i + 16 <= n; i += 16) {
      if (one_block) {
        const char* p = block_ahead + static_cast<size_t>(i) * R * sizeof(W);
        for (size_t o = 0; o < kStepBytes; o += 64) _mm_prefetch(p + o, _MM_HINT_T0);
      }
      __m512 wv[R];
      for (int r = 0; r < R; ++r) {
        if (!one_block) _mm_prefetch(reinterpret_cast<const char*>(wr[r] + i) + ahead, _MM_HINT_T1);
        wv[r] = load16(wr[r] + i);
      }
      for (int g = 0; g < G; ++g) {
        const __m512 xv = _mm512_loadu_ps(x + g * xs + i);
        for (int r = 0; r < R; ++r) acc[r][g] = _mm512_fmadd_ps(wv[r], xv, acc[r][g]);
      }
    }
    if (i < n) {
      const __mmask16 k = tail_mask(n - i);
      __m512 wv[R];
      for (int r = 0; r < R; ++r) wv[r] = load16(wr[r] + i, k);
      for (int g = 0; g < G; ++g) {
        const __m512 xv = _mm512_maskz_loadu_ps(k, x + g * xs + i);
        for (int r = 0; r < R; ++r) acc[r][g] = _mm512_fmadd_ps(wv[r], xv, acc[r][g]);
      }
    }
  }
  for (int g = 0; g < G; ++g) {
    if constexpr (R == 1) {
      y[g * ldy] = sum1(acc[0][g]);
    } else {
      // Rows past R repeat the last one; only R sums are stored.
      const __m128 s = sum4(acc[0][g], acc[1][g], acc[R > 2 ? 2 : R - 1][g], acc[R - 1][g]);
      _mm_mask_storeu_ps(y + g * ldy, static_cast<__mmask8>((1u << R) - 1u), s);
    }
  }
}

// The tile of min(rows_left, 4) weight rows against a group of g activation rows.
template <typename W, bool kRevisited>
void dispatch_tile(int64_t rows_left, int g, int64_t n, const uint8_t* w, size_t ws, const float* x, int64_t xs,
                   float* y, int64_t ldy) {
  switch (rows_left < 4 ? rows_left : 4) {
    case 1: return dot_tile_g<W, 1, kRevisited>(g, n, w, ws, x, xs, y, ldy);
    case 2: return dot_tile_g<W, 2, kRevisited>(g, n, w, ws, x, xs, y, ldy);
    case 3: return dot_tile_g<W, 3, kRevisited>(g, n, w, ws, x, xs, y, ldy);
    default: return dot_tile_g<W, 4, kRevisited>(g, n, w, ws, x, xs, y, ldy);
  }
}

// Weight rows in tiles of R = 4 (the last one to three rows in a smaller tile), activation rows
// in groups of up to 6: 4 x 6 accumulators, 4 weight vectors and one activation vector fill 29
// of the 32 registers. The widening of a weight chunk is paid once per group, and the sums of
// four rows come out together. More than 6 activation rows go in groups as even as can be
// (7 = 4 + 3, 8 = 4 + 4, 13 = 5 + 4 + 4) on each weight tile in turn, so the tile's rows come
// from memory once and from L1 for the later groups:
//  * not 6 + 1 or 6 + 2: a group of one or two from L1 reads the rows one after another, whose
//    single chains of dependent FMAs then set the pace, and widens each weight chunk for only one
//    or two rows (tiny f16 logits: 7 rows as 6 + 1 cost 1 ms more than 6 rows);
//  * not one pass of 7 or 8 in 3-row tiles: measured twice as slow per row as 6 in 4-row tiles
//    on Sapphire Rapids, and a third slower on Zen 4;
//  * not a pass per group over the whole matrix: that reads it from memory once per group
//    (8-row base f16 steps +13%).
template <typename W>
void dot_w_rows(int64_t n, const void* wv, size_t ws, int64_t nw, const float* x, int64_t xs, int64_t nx, float* y,
                int64_t ldy) {
  const auto* w = static_cast<const uint8_t*>(wv);
  const int64_t groups = (nx + 5) / 6;
  for (int64_t r = 0; r < nw; r += 4) {
    const uint8_t* wr = w + static_cast<size_t>(r) * ws;
    int64_t m = 0;
    for (int64_t k = 0; k < groups; ++k) {
      // Group k of `groups` nearly equal ones: the first nx % groups have one row more.
      const int g = static_cast<int>(nx / groups + (k < nx % groups ? 1 : 0));
      const float* xm = x + m * xs;
      float* ym = y + m * ldy + r;
      if (groups > 1) {
        dispatch_tile<W, true>(nw - r, g, n, wr, ws, xm, xs, ym, ldy);
      } else {
        dispatch_tile<W, false>(nw - r, g, n, wr, ws, xm, xs, ym, ldy);
      }
      m += g;
    }
  }
}

// Adds the fifth bit: qh's bit j is exactly the byte mask for level j.
inline __m256i add_q5_high(__m256i q, const uint8_t* qh) {
  uint32_t bits;
  std::memcpy(&bits, qh, 4);
  return _mm256_mask_add_epi8(q, static_cast<__mmask32>(bits), q, _mm256_set1_epi8(0x10));
}

// One VNNI instruction (vpdpbusd).
inline __m256i dot_u8s8(__m256i u, __m256i s) { return _mm256_dpbusd_epi32(_mm256_setzero_si256(), u, s); }

// Unsigned-level types: w = (q - zero) * d (+ m). vpdpbusd multiplies unsigned by signed bytes,
// which is the unsigned level times the activation; the zero point and the min come back through
// s = dx * sum(xq): sum_j w_j x_j = d dx sum q xq + (m - zero d) s.
template <typename Block, int kZero, bool kHasMin, bool kFiveBit>
float dot_unsigned(int64_t n, const void* wv, const BlockQ8A* x) {
  __m256 acc0 = _mm256_setzero_ps(), acc1 = acc0;
  float off0 = 0, off1 = 0;
  const int64_t nb = n / kQuantBlock;
  auto one = [&](int64_t b, __m256& acc, float& off) {
    const auto w = block_at<Block>(wv, b);
    _mm_prefetch(reinterpret_cast<const char*>(w.qs()) + kPrefetchBytes, _MM_HINT_T0);
    __m256i q = q4_levels(w.qs());
    if constexpr (kFiveBit) q = add_q5_high(q, w.qh_bytes());
    const __m256 p = _mm256_cvtepi32_ps(dot_u8s8(q, load_q8a(x[b])));
    const float d = half(w.d());
    acc = _mm256_fmadd_ps(p, _mm256_set1_ps(d * x[b].d), acc);
    float bias = -static_cast<float>(kZero) * d;
    if constexpr (kHasMin) bias = half(w.m());
    off += bias * x[b].s;
  };
  int64_t b = 0;
  for (; b + 2 <= nb; b += 2) {  // two chains, so the FMA latency overlaps
    one(b, acc0, off0);
    one(b + 1, acc1, off1);
  }
  if (b < nb) one(b, acc0, off0);
  return hsum8(_mm256_add_ps(acc0, acc1)) + (off0 + off1);
}

float dot_q8_0(int64_t n, const void* wv, const BlockQ8A* x) {
  __m256 acc0 = _mm256_setzero_ps(), acc1 = acc0;
  const int64_t nb = n / kQuantBlock;
  auto one = [&](int64_t b, __m256& acc) {
    const auto w = block_at<BlockQ8_0>(wv, b);
    _mm_prefetch(reinterpret_cast<const char*>(w.qs()) + kPrefetchBytes, _MM_HINT_T0);
    const __m256i wq = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(w.qs()));
    // Signed x signed as unsigned x signed: |w| * (x with w's sign). Exact for w in [-128, 127].
    const __m256i s = _mm256_sign_epi8(load_q8a(x[b]), wq);
    const __m256i dot = dot_u8s8(_mm256_abs_epi8(wq), s);
    acc = _mm256_fmadd_ps(_mm256_cvtepi32_ps(dot), _mm256_set1_ps(half(w.d()) * x[b].d), acc);
  };
  int64_t b = 0;
  for (; b + 2 <= nb; b += 2) {
    one(b, acc0);
    one(b + 1, acc1);
  }
  if (b < nb) one(b, acc0);
  return hsum8(_mm256_add_ps(acc0, acc1));
}

// Quantizing primitives (kernels_x86.h): a block's values with NaN read as 0.
inline void load_block32(const float* xb, __m512* v0, __m512* v1) {
  *v0 = _mm512_loadu_ps(xb);
  *v1 = _mm512_loadu_ps(xb + 16);
  *v0 = _mm512_maskz_mov_ps(_mm512_cmp_ps_mask(*v0, *v0, _CMP_ORD_Q), *v0);  // NaN reads as 0
  *v1 = _mm512_maskz_mov_ps(_mm512_cmp_ps_mask(*v1, *v1, _CMP_ORD_Q), *v1);
}

float block_amax(const float* xb) {
  __m512 v0, v1;
  load_block32(xb, &v0, &v1);
  return _mm512_reduce_max_ps(_mm512_max_ps(_mm512_abs_ps(v0), _mm512_abs_ps(v1)));
}

int block_levels(const float* xb, float id_value, void* qs) {
  const __m512 lo = _mm512_set1_ps(-127.0f), hi = _mm512_set1_ps(127.0f), id = _mm512_set1_ps(id_value);
  __m512 v0, v1;
  load_block32(xb, &v0, &v1);
  const __m512i q0 = _mm512_cvtps_epi32(_mm512_min_ps(_mm512_max_ps(_mm512_mul_ps(v0, id), lo), hi));
  const __m512i q1 = _mm512_cvtps_epi32(_mm512_min_ps(_mm512_max_ps(_mm512_mul_ps(v1, id), lo), hi));
  _mm_storeu_si128(static_cast<__m128i*>(qs), _mm512_cvtepi32_epi8(q0));
  _mm_storeu_si128(reinterpret_cast<__m128i*>(static_cast<uint8_t*>(qs) + 16), _mm512_cvtepi32_epi8(q1));
  return _mm512_reduce_add_epi32(_mm512_add_epi32(q0, q1));
}

// ---- conversions --------------------------------------------------------------------------

void f16_to_f32_row(const f16_t* x, float* y, int64_t n) {
  for (int64_t i = 0; i < n; i += 16) {
    const __mmask16 k = tail_mask(n - i);
    _mm512_mask_storeu_ps(y + i, k, load_f16x16(x + i, k));
  }
}

void f32_to_f16_row(const float* x, f16_t* y, int64_t n) {
  for (int64_t i = 0; i < n; i += 16) {
    const __mmask16 k = tail_mask(n - i);
    const __m256i h = _mm512_cvtps_ph(_mm512_maskz_loadu_ps(k, x + i), _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC);
    _mm256_mask_storeu_epi16(y + i, k, h);
  }
}

// 32 levels (bytes) to floats, as the scalar definition computes them: (level - zero) * d for
// the symmetric types (the zero point is taken off in integers, so a level at the zero point gives
// the signed zero of 0 * d), level * d + m for the _1 types (level * d is exact, so fusing the add
// changes nothing).
template <int kZero, bool kHasMin>
inline void levels_to_f32(__m256i q, float d, float m, float* y) {
  const __m512 vd = _mm512_set1_ps(d), vm = _mm512_set1_ps(m);
  if constexpr (kZero != 0) q = _mm256_sub_epi8(q, _mm256_set1_epi8(kZero));
  const __m128i parts[2] = {_mm256_castsi256_si128(q), _mm256_extracti128_si256(q, 1)};
  for (int j = 0; j < 2; ++j) {
    const __m512i wide = kZero != 0 ? _mm512_cvtepi8_epi32(parts[j]) : _mm512_cvtepu8_epi32(parts[j]);
    const __m512 f = _mm512_cvtepi32_ps(wide);
    _mm512_storeu_ps(y + 16 * j, kHasMin ? _mm512_fmadd_ps(f, vd, vm) : _mm512_mul_ps(f, vd));
  }
}

void dequantize_q8_0(const void* xv, float* y, int64_t n) {
  for (int64_t b = 0; b < n / kQuantBlock; ++b, y += kQuantBlock) {
    const auto x = block_at<BlockQ8_0>(xv, b);
    const __m512 d = _mm512_set1_ps(half(x.d()));
    const __m128i q0 = _mm_loadu_si128(reinterpret_cast<const __m128i*>(x.qs()));
    const __m128i q1 = _mm_loadu_si128(reinterpret_cast<const __m128i*>(x.qs() + 16));
    _mm512_storeu_ps(y, _mm512_mul_ps(_mm512_cvtepi32_ps(_mm512_cvtepi8_epi32(q0)), d));
    _mm512_storeu_ps(y + 16, _mm512_mul_ps(_mm512_cvtepi32_ps(_mm512_cvtepi8_epi32(q1)), d));
  }
}

// ---- vector math --------------------------------------------------------------------------

void add(int64_t n, const float* a, const float* b, float* y) {
  for (int64_t i = 0; i < n; i += 16) {
    const __mmask16 k = tail_mask(n - i);
    _mm512_mask_storeu_ps(y + i, k, _mm512_add_ps(_mm512_maskz_loadu_ps(k, a + i), _mm512_maskz_loadu_ps(k, b + i)));
  }
}

void mul(int64_t n, const float* a, const float* b, float* y) {
  for (int64_t i = 0; i < n; i += 16) {
    const __mmask16 k = tail_mask(n - i);
    _mm512_mask_storeu_ps(y + i, k, _mm512_mul_ps(_mm512_maskz_loadu_ps(k, a + i), _mm512_maskz_loadu_ps(k, b + i)));
  }
}

void scale(int64_t n, const float* x, float s, float bias, float* y) {
  const __m512 vs = _mm512_set1_ps(s), vb = _mm512_set1_ps(bias);
  for (int64_t i = 0; i < n; i += 16) {
    const __mmask16 k = tail_mask(n - i);
    _mm512_mask_storeu_ps(y + i, k, _mm512_fmadd_ps(_mm512_maskz_loadu_ps(k, x + i), vs, vb));
  }
}

void axpy(int64_t n, float a, const float* x, float* y) {
  const __m512 va = _mm512_set1_ps(a);
  for (int64_t i = 0; i < n; i += 16) {
    const __mmask16 k = tail_mask(n - i);
    _mm512_mask_storeu_ps(y + i, k,
                          _mm512_fmadd_ps(va, _mm512_maskz_loadu_ps(k, x + i), _mm512_maskz_loadu_ps(k, y + i)));
  }
}

void axpy_f16(int64_t n, float a, const f16_t* x, float* y) {
  const __m512 va = _mm512_set1_ps(a);
  for (int64_t i = 0; i < n; i += 16) {
    const __mmask16 k = tail_mask(n - i);
    _mm512_mask_storeu_ps(y + i, k, _mm512_fmadd_ps(va, load_f16x16(x + i, k), _mm512_maskz_loadu_ps(k, y + i)));
  }
}

// Rows ahead that axpy_f16_rows asks for: its rows are a head's slice of the V cache, a couple
// of cache lines every n_state values, a stride the hardware prefetchers follow late; a row's
// work is a few cycles, so the request goes many rows ahead. (Base f16 decode step, 1 thread:
// the values pass 2.27 -> 1.69 Mcycles, with the score tiles' row-based distance below.)
constexpr size_t kAxpyAhead = 64;

// G outputs of 16 * V values at a time stay in registers while the rows go by; each row chunk
// is widened once. Per value the same fused multiply-adds in the same order as axpy_f16.
template <int G, int V>
void axpy_f16_rows_g(int64_t n, int64_t nk, const float* a, int64_t as, const f16_t* x, size_t xs, float* y,
                     int64_t ys) {
  const auto* xb = reinterpret_cast<const uint8_t*>(x);
  for (int64_t i = 0; i < n; i += 16 * V) {
    __mmask16 k[V];
    for (int v = 0; v < V; ++v) k[v] = n - i > 16 * v ? tail_mask(n - i - 16 * v) : static_cast<__mmask16>(0);
    __m512 acc[G][V];
    for (int g = 0; g < G; ++g)
      for (int v = 0; v < V; ++v) acc[g][v] = _mm512_maskz_loadu_ps(k[v], y + g * ys + i + 16 * v);
    for (int64_t t = 0; t < nk; ++t) {
      const f16_t* xr = reinterpret_cast<const f16_t*>(xb + static_cast<size_t>(t) * xs) + i;
      _mm_prefetch(reinterpret_cast<const char*>(xr) + kAxpyAhead * xs, _MM_HINT_T0);
      if constexpr (V > 2) _mm_prefetch(reinterpret_cast<const char*>(xr + 32) + kAxpyAhead * xs, _MM_HINT_T0);
      __m512 xv[V];
      for (int v = 0; v < V; ++v) xv[v] = load_f16x16(xr + 16 * v, k[v]);
      for (int g = 0; g < G; ++g) {
        const __m512 p = _mm512_set1_ps(a[g * as + t]);
        for (int v = 0; v < V; ++v) acc[g][v] = _mm512_fmadd_ps(p, xv[v], acc[g][v]);
      }
    }
    for (int g = 0; g < G; ++g)
      for (int v = 0; v < V; ++v) _mm512_mask_storeu_ps(y + g * ys + i + 16 * v, k[v], acc[g][v]);
  }
}

// Rows of up to 64 values (a head of 64: every Whisper size) go in one pass over the rows for
// up to 6 outputs (4 x 6 accumulators); wider rows or more outputs in chunks of 32.
template <int G>
void axpy_f16_rows_n(int64_t n, int64_t nk, const float* a, int64_t as, const f16_t* x, size_t xs, float* y,
                     int64_t ys) {
  if constexpr (G <= 6) {
    if (n > 32 && n <= 64) return axpy_f16_rows_g<G, 4>(n, nk, a, as, x, xs, y, ys);
  }
  axpy_f16_rows_g<G, 2>(n, nk, a, as, x, xs, y, ys);
}

void axpy_f16_rows(int64_t n, int64_t nk, const float* a, int64_t as, int64_t na, const f16_t* x, size_t xs, float* y,
                   int64_t ys) {
  for_output_groups(na, [&]<int G>(int64_t g) { axpy_f16_rows_n<G>(n, nk, a + g * as, as, x, xs, y + g * ys, ys); });
}

// axpy_f16_rows over q8_0 rows: G outputs of NB blocks (32 * NB values from block b0 on) stay in
// registers while the rows go by; each block is widened to f32 once for all outputs, and its
// scale folds into the output's coefficient.
template <int G, int NB>
void axpy_q8_0_blocks(int64_t b0, int64_t nk, const float* a, int64_t as, const uint8_t* x, size_t xs, float* y,
                      int64_t ys) {
  constexpr size_t kBlock = sizeof(BlockQ8_0);
  float* yb = y + b0 * kQuantBlock;
  __m512 acc[G][2 * NB];
  for (int g = 0; g < G; ++g)
    for (int v = 0; v < 2 * NB; ++v) acc[g][v] = _mm512_loadu_ps(yb + g * ys + 16 * v);
  for (int64_t t = 0; t < nk; ++t) {
    const uint8_t* row = x + static_cast<size_t>(t) * xs + static_cast<size_t>(b0) * kBlock;
    _mm_prefetch(reinterpret_cast<const char*>(row) + kAxpyAhead * xs, _MM_HINT_T0);
    if constexpr (NB > 1) _mm_prefetch(reinterpret_cast<const char*>(row) + 64 + kAxpyAhead * xs, _MM_HINT_T0);
    __m512 lv[2 * NB];
    float d[NB];
    for (int k = 0; k < NB; ++k) {
      const uint8_t* bp = row + k * kBlock;
      d[k] = half(load_f16(bp + offsetof(BlockQ8_0, d)));
      const uint8_t* qs = bp + offsetof(BlockQ8_0, qs);
      lv[2 * k] = _mm512_cvtepi32_ps(_mm512_cvtepi8_epi32(_mm_loadu_si128(reinterpret_cast<const __m128i*>(qs))));
      lv[2 * k + 1] =
          _mm512_cvtepi32_ps(_mm512_cvtepi8_epi32(_mm_loadu_si128(reinterpret_cast<const __m128i*>(qs + 16))));
    }
    for (int g = 0; g < G; ++g) {
      const float at = a[g * as + t];
      for (int k = 0; k < NB; ++k) {
        const __m512 c = _mm512_set1_ps(at * d[k]);
        acc[g][2 * k] = _mm512_fmadd_ps(c, lv[2 * k], acc[g][2 * k]);
        acc[g][2 * k + 1] = _mm512_fmadd_ps(c, lv[2 * k + 1], acc[g][2 * k + 1]);
      }
    }
  }
  for (int g = 0; g < G; ++g)
    for (int v = 0; v < 2 * NB; ++v) _mm512_storeu_ps(yb + g * ys + 16 * v, acc[g][v]);
}

// Two blocks at a time (a head of 64: every Whisper size) for up to 6 outputs (24 accumulators),
// else one.
template <int G>
void axpy_q8_0_rows_n(int64_t n, int64_t nk, const float* a, int64_t as, const uint8_t* x, size_t xs, float* y,
                      int64_t ys) {
  const int64_t nb = n / kQuantBlock;
  int64_t b = 0;
  if constexpr (G <= 6)
    for (; b + 2 <= nb; b += 2) axpy_q8_0_blocks<G, 2>(b, nk, a, as, x, xs, y, ys);
  for (; b < nb; ++b) axpy_q8_0_blocks<G, 1>(b, nk, a, as, x, xs, y, ys);
}

void axpy_q8_0_rows(int64_t n, int64_t nk, const float* a, int64_t as, int64_t na, const void* x, size_t xs, float* y,
                    int64_t ys) {
  const auto* xb = static_cast<const uint8_t*>(x);
  for_output_groups(na, [&]<int G>(int64_t g) { axpy_q8_0_rows_n<G>(n, nk, a + g * as, as, xb, xs, y + g * ys, ys); });
}

float max(int64_t n, const float* x) {
  __m512 m0 = _mm512_set1_ps(-INFINITY), m1 = m0;
  int64_t i = 0;
  for (; i + 32 <= n; i += 32) {
    m0 = _mm512_max_ps(m0, _mm512_loadu_ps(x + i));
    m1 = _mm512_max_ps(m1, _mm512_loadu_ps(x + i + 16));
  }
  for (; i < n; i += 16)
    m0 = _mm512_mask_max_ps(m0, tail_mask(n - i), m0, _mm512_maskz_loadu_ps(tail_mask(n - i), x + i));
  return _mm512_reduce_max_ps(_mm512_max_ps(m0, m1));
}

// exp on 16 lanes, the algorithm of the scalar exp1 (kernels_scalar.cpp); scalef applies 2^n
// without building exponent bits, so n = 128 and n = -126 need no special care.
inline __m512 exp16(__m512 x) {
  const __mmask16 under = _mm512_cmp_ps_mask(x, _mm512_set1_ps(kExpMin), _CMP_LT_OQ);
  const __mmask16 over = _mm512_cmp_ps_mask(x, _mm512_set1_ps(kExpMax), _CMP_GT_OQ);
  // Lanes below kExpMin (masked scores: -inf) compute exp(0) and are zeroed after: clamped to
  // kExpMin they gave a result just under the smallest normal float, and a subnormal result
  // costs a microcode assist (measured 13 cycles per value instead of 0.65 on Sapphire Rapids:
  // a log-softmax over a row with suppressed tokens, an attention tile past the causal end).
  x = _mm512_mask_mov_ps(x, under, _mm512_setzero_ps());
  // Constant first: max/min return the second operand for NaN, so NaN flows through.
  x = _mm512_min_ps(_mm512_set1_ps(kExpMax), _mm512_max_ps(_mm512_set1_ps(kExpMin), x));
  const __m512 n =
      _mm512_roundscale_ps(_mm512_mul_ps(x, _mm512_set1_ps(kLog2e)), _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC);
  __m512 r = _mm512_fnmadd_ps(n, _mm512_set1_ps(kLn2Hi), x);
  r = _mm512_fnmadd_ps(n, _mm512_set1_ps(kLn2Lo), r);
  __m512 p = _mm512_set1_ps(kExpC7);
  p = _mm512_fmadd_ps(p, r, _mm512_set1_ps(kExpC6));
  p = _mm512_fmadd_ps(p, r, _mm512_set1_ps(kExpC5));
  p = _mm512_fmadd_ps(p, r, _mm512_set1_ps(kExpC4));
  p = _mm512_fmadd_ps(p, r, _mm512_set1_ps(kExpC3));
  p = _mm512_fmadd_ps(p, r, _mm512_set1_ps(kExpC2));
  p = _mm512_fmadd_ps(p, r, _mm512_set1_ps(1.0f));
  p = _mm512_fmadd_ps(p, r, _mm512_set1_ps(1.0f));
  __m512 y = _mm512_scalef_ps(p, n);
  y = _mm512_mask_mov_ps(y, under, _mm512_setzero_ps());
  return _mm512_mask_mov_ps(y, over, _mm512_set1_ps(INFINITY));
}

float exp_sub_sum(int64_t n, const float* x, float m, float* y) {
  const __m512 vm = _mm512_set1_ps(m);
  __m512 acc = _mm512_setzero_ps();
  for (int64_t i = 0; i < n; i += 16) {
    const __mmask16 k = tail_mask(n - i);
    const __m512 e = exp16(_mm512_sub_ps(_mm512_maskz_loadu_ps(k, x + i), vm));
    if (y) _mm512_mask_storeu_ps(y + i, k, e);
    acc = _mm512_mask_add_ps(acc, k, acc, e);
  }
  return _mm512_reduce_add_ps(acc);
}

// As the AVX2 argmax: per-lane best and index, NaNs noted and looked for only when seen.
int64_t argmax(int64_t n, const float* x) {
  if (n >= (int64_t{1} << 30)) {  // int32 lane indices; no such row in practice
    int64_t best = 0;
    for (int64_t i = 0; i < n; ++i) {
      if (std::isnan(x[i])) return i;
      if (x[i] > x[best]) best = i;
    }
    return best;
  }
  __m512 best = _mm512_set1_ps(-INFINITY);
  __m512i at = _mm512_setzero_si512(), idx = _mm512_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15);
  __mmask16 nan = 0;
  const __m512i step = _mm512_set1_epi32(16);
  for (int64_t i = 0; i < n; i += 16) {
    const __mmask16 k = tail_mask(n - i);
    const __m512 v = _mm512_maskz_loadu_ps(k, x + i);
    const __mmask16 gt = _mm512_mask_cmp_ps_mask(k, v, best, _CMP_GT_OQ);
    best = _mm512_mask_mov_ps(best, gt, v);
    at = _mm512_mask_mov_epi32(at, gt, idx);
    nan |= _mm512_mask_cmp_ps_mask(k, v, v, _CMP_UNORD_Q);
    idx = _mm512_add_epi32(idx, step);
  }
  if (nan != 0) {
    for (int64_t j = 0; j < n; ++j)
      if (std::isnan(x[j])) return j;
  }
  const float m = _mm512_reduce_max_ps(best);
  if (!(m > -INFINITY)) return 0;  // every value -inf: the first
  const __mmask16 holders = _mm512_cmp_ps_mask(best, _mm512_set1_ps(m), _CMP_EQ_OQ);
  return _mm512_mask_reduce_min_epi32(holders, at);
}

// gelu on 16 lanes, the algorithm of the scalar gelu1.
inline __m512 gelu16(__m512 x) {
  const __m512 one = _mm512_set1_ps(1.0f), halfv = _mm512_set1_ps(0.5f);
  const __m512 z = _mm512_mul_ps(_mm512_abs_ps(x), _mm512_set1_ps(kSqrtHalf));
  const __m512 t = _mm512_div_ps(one, _mm512_fmadd_ps(halfv, z, one));
  __m512 q = _mm512_set1_ps(kErfcQ[8]);
  for (int i = 7; i >= 0; --i) q = _mm512_fmadd_ps(q, t, _mm512_set1_ps(kErfcQ[i]));
  const __m512 e = _mm512_mul_ps(_mm512_mul_ps(t, q), exp16(_mm512_sub_ps(_mm512_setzero_ps(), _mm512_mul_ps(z, z))));
  const __m512 he = _mm512_mul_ps(halfv, e);
  const __mmask16 pos = _mm512_cmp_ps_mask(x, _mm512_setzero_ps(), _CMP_GE_OQ);
  return _mm512_mul_ps(x, _mm512_mask_sub_ps(he, pos, one, he));
}

inline __m512 sigmoid16(__m512 x) {
  const __m512 one = _mm512_set1_ps(1.0f);
  return _mm512_div_ps(one, _mm512_add_ps(one, exp16(_mm512_sub_ps(_mm512_setzero_ps(), x))));
}

// tanh on 16 lanes, the algorithm of the scalar tanh1.
inline __m512 tanh16(__m512 x) {
  const __m512 a = _mm512_abs_ps(x);
  const __m512 x2 = _mm512_mul_ps(x, x);
  __m512 p = _mm512_set1_ps(kTanhSeries[5]);
  for (int i = 4; i >= 0; --i) p = _mm512_fmadd_ps(p, x2, _mm512_set1_ps(kTanhSeries[i]));
  const __m512 one = _mm512_set1_ps(1.0f);
  const __m512 e = exp16(_mm512_mul_ps(a, _mm512_set1_ps(-2.0f)));
  const __m512 r = _mm512_div_ps(_mm512_sub_ps(one, e), _mm512_add_ps(one, e));
  const __m512 signed_r = _mm512_or_ps(r, _mm512_and_ps(x, _mm512_set1_ps(-0.0f)));
  return _mm512_mask_mul_ps(signed_r, _mm512_cmp_ps_mask(a, _mm512_set1_ps(kTanhSeriesMax), _CMP_LT_OQ), x, p);
}

// f(x) on 16 lanes at a time, the tail masked.
template <__m512 (*F)(__m512)>
void map16(int64_t n, const float* x, float* y) {
  for (int64_t i = 0; i < n; i += 16) {
    const __mmask16 k = tail_mask(n - i);
    _mm512_mask_storeu_ps(y + i, k, F(_mm512_maskz_loadu_ps(k, x + i)));
  }
}

void gelu(int64_t n, const float* x, float* y) { map16<gelu16>(n, x, y); }
void sigmoid(int64_t n, const float* x, float* y) { map16<sigmoid16>(n, x, y); }
void tanh(int64_t n, const float* x, float* y) { map16<tanh16>(n, x, y); }

// Two passes. Lanes sum in f32 over chunks of 1024 values (32 per lane), chunks in double: long
// rows keep the accuracy of short ones.
constexpr int64_t kSumChunk = 1024;

inline double hsum_double(__m512 v) {
  const __m512d lo = _mm512_cvtps_pd(_mm512_castps512_ps256(v));
  const __m512d hi = _mm512_cvtps_pd(_mm256_castpd_ps(_mm512_extractf64x4_pd(_mm512_castps_pd(v), 1)));
  return _mm512_reduce_add_pd(_mm512_add_pd(lo, hi));
}

template <bool kSquares>
double chunked_sum(int64_t n, const float* x, float c) {
  const __m512 vc = _mm512_set1_ps(c);
  double total = 0;
  for (int64_t c0 = 0; c0 < n; c0 += kSumChunk) {
    const int64_t c1 = n - c0 < kSumChunk ? n : c0 + kSumChunk;
    __m512 s0 = _mm512_setzero_ps(), s1 = s0;
    for (int64_t i = c0; i < c1; i += 32) {
      const __mmask16 k0 = tail_mask(c1 - i), k1 = tail_mask(c1 - i - 16 > 0 ? c1 - i - 16 : 0);
      __m512 v0 = _mm512_maskz_loadu_ps(k0, x + i), v1 = _mm512_maskz_loadu_ps(k1, x + i + 16);
      if constexpr (kSquares) {
        v0 = _mm512_maskz_sub_ps(k0, v0, vc);
        v1 = _mm512_maskz_sub_ps(k1, v1, vc);
        s0 = _mm512_fmadd_ps(v0, v0, s0);
        s1 = _mm512_fmadd_ps(v1, v1, s1);
      } else {
        s0 = _mm512_add_ps(s0, v0);
        s1 = _mm512_add_ps(s1, v1);
      }
    }
    total += hsum_double(_mm512_add_ps(s0, s1));
  }
  return total;
}

// ---- GEMM ---------------------------------------------------------------------------------

// 12 x 32 register tile: 24 accumulators and 2 B vectors of the 32 zmm registers; A values are
// broadcast from memory. Per step of p: 24 FMAs against 2 vector loads and 12 broadcasts.
void micro_12x32(int64_t kc, const float* ap, const float* bp, float* c, int64_t ldc, bool accumulate) {
  __m512 c0[12], c1[12];
#pragma GCC unroll 12
  for (int i = 0; i < 12; ++i) c0[i] = c1[i] = _mm512_setzero_ps();
  for (int64_t p = 0; p < kc; ++p, ap += 12, bp += 32) {
    const __m512 b0 = _mm512_load_ps(bp), b1 = _mm512_load_ps(bp + 16);
#pragma GCC unroll 12
    for (int i = 0; i < 12; ++i) {
      const __m512 a = _mm512_set1_ps(ap[i]);
      c0[i] = _mm512_fmadd_ps(a, b0, c0[i]);
      c1[i] = _mm512_fmadd_ps(a, b1, c1[i]);
    }
  }
#pragma GCC unroll 12
  for (int i = 0; i < 12; ++i) {
    float* ci = c + i * ldc;
    if (accumulate) {
      c0[i] = _mm512_add_ps(c0[i], _mm512_loadu_ps(ci));
      c1[i] = _mm512_add_ps(c1[i], _mm512_loadu_ps(ci + 16));
    }
    _mm512_storeu_ps(ci, c0[i]);
    _mm512_storeu_ps(ci + 16, c1[i]);
  }
}

void gemm_f32(int64_t m, int64_t n, int64_t k, const float* a, int64_t lda, const float* b, int64_t ldb, float* c,
              int64_t ldc) {
  // Deep K slices (fewer passes over C) and wide column blocks (activations packed once per
  // 1024 weight rows) measured best on Zen 4; the B block then lives in L2/L3, which the
  // micro-kernel's slow stream through it (one 128-byte row per 24 FMAs) tolerates.
  constexpr GemmBlocking blk{240, 448, 1024};
  gemm_blocked<12, 32>(m, n, k, a, lda, b, ldb, c, ldc, blk, micro_12x32);
}

void gemm_f32_nn(int64_t m, int64_t n, int64_t k, const float* a, int64_t lda, const float* b, int64_t ldb, float* c,
                 int64_t ldc) {
  constexpr GemmBlocking blk{240, 448, 1024};
  gemm_blocked<12, 32, true>(m, n, k, a, lda, b, ldb, c, ldc, blk, micro_12x32);
}

using Packed = PackedGemm<12, 32, micro_12x32>;

// constinit: no start-up code runs in this file before the processor has been checked.
constinit const Kernels kTable = {
    SimdLevel::AVX512,
    dot_row<float>,
    dot_row<f16_t>,
    dot_q4_0,
    dot_q4_1,
    dot_q5_0,
    dot_q5_1,
    dot_q8_0,
    dot_q_rows,
    avx512_dot_q_tiles,
    quantize_q8a,
    avx512_gemm_q8,
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
    12,
    32,
    Packed::pack_a,
    Packed::pack_b,
    Packed::pack_b_depth_major,
    Packed::gemm,
    argmax,
};

}  // namespace

const Kernels* avx512_kernels() { return &kTable; }

}  // namespace hark::cpu::detail
#endif
