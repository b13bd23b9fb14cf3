// int8 products of quantized weights (q4_0 .. q8_0) with q8 activations (BlockQ8A) on AVX-512
// VNNI: the AVX-512 table's dot_q_tiles (decoder steps: a few activation rows) and gemm_q8
// (encoder: many rows).
//
// Both multiply with vpdpbusd, which takes unsigned bytes times signed bytes. In the GEMM, weights
// enter as signed levels (level - zero point: q4_0 -8..7, q5_0 -16..15, q8_0 as stored; the _1 types'
// unsigned levels 0..31 fit too) and activations as unsigned bytes xq + 128 (an xor with 0x80).
// The 128 * sum(w) that adds is taken off by starting each block's integer sum at -128 * sum(w),
// computed once per packed weight block, so no step depends on the activation row (the decoder's
// tiles swap the roles, see below):
//   sum_j w_j x_j = d dx sum_j (q_j - zero) xq_j  (+ m * s for the _1 types, s = dx * sum xq).
// Each block's integer sum becomes f32 and is scaled by d * dx; sums stay exact in int32 (32
// products of at most 255 * 128).
//
// Compiled with the AVX-512 flags (file name) and reached only through the AVX-512 table, which
// cpu_features.cpp picks only when F, BW, VL, DQ and VNNI are all present. Everything but the two
// entry points is internal to this file (see kernels_internal.h).
#if defined(__x86_64__) || defined(__i386__)
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic ignored "-Wuninitialized"
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#endif
#include <immintrin.h>

#include <cstddef>
#include <cstdint>
#include <cstring>

#include "backend/cpu/int8_levels_avx512.h"
#include "backend/cpu/kernels.h"
#include "backend/cpu/kernels_internal.h"
#include "runtime/unaligned.h"

namespace hark::cpu::detail {
namespace {

inline __m512i bytes_0x80() { return _mm512_set1_epi8(static_cast<char>(0x80)); }

// ---- dot_q_tiles: weight rows in pairs x up to 8 activation rows -------------------------------
//
// Here the roles swap: weights enter as unsigned levels u (q4/q5 levels as stored, q8_0's plus
// 128) and activations as the signed bytes they are, so sum u x = sum w x + z sum x, where the
// offset z (the zero point: 8, 16, 128 for q8_0; 0 for the _1 types) is one constant per type.
// The correction -z * sum x belongs to the activation block alone: it is computed once per call
// for every activation block and starts the integer sums, and nothing per weight block is spent
// on it. (The GEMM packs its weights once and keeps the layout above.)

template <typename T>
constexpr int kOffset = T::kSigned ? 128 : T::kZero;

// Two weight rows' blocks in one register: bytes 0..31 row r0's levels, 32..63 row r1's, so
// one vpdpbusd against an activation block broadcast to both halves does both rows' dots.
template <typename T>
inline __m512i pair_levels(const uint8_t* b0, const uint8_t* b1) {
  using Block = typename T::Block;
  const BlockBytes<Block> w0{b0}, w1{b1};
  if constexpr (T::kSigned) {
    const __m512i q = _mm512_inserti64x4(
        _mm512_castsi256_si512(_mm256_loadu_si256(reinterpret_cast<const __m256i*>(w0.qs()))),
        _mm256_loadu_si256(reinterpret_cast<const __m256i*>(w1.qs())), 1);
    return _mm512_xor_si512(q, bytes_0x80());  // w + 128 as unsigned bytes
  } else {
    const __m256i both = _mm256_inserti128_si256(
        _mm256_castsi128_si256(_mm_loadu_si128(reinterpret_cast<const __m128i*>(w0.qs()))),
        _mm_loadu_si128(reinterpret_cast<const __m128i*>(w1.qs())), 1);
    // [r0, r0, r1, r1] in 128-bit lanes, then the odd lanes shifted: low nibbles (values 0..15)
    // then high nibbles (16..31) of each row.
    __m512i z = _mm512_castsi256_si512(both);
    z = _mm512_shuffle_i64x2(z, z, _MM_SHUFFLE(1, 1, 0, 0));
    const __m512i shift = _mm512_set_epi64(0x0004000400040004, 0x0004000400040004, 0, 0, 0x0004000400040004,
                                           0x0004000400040004, 0, 0);
    __m512i q = _mm512_and_si512(_mm512_srlv_epi16(z, shift), _mm512_set1_epi8(0x0F));
    if constexpr (T::kFiveBit) {
      const uint64_t bits = uint64_t{w0.qh()} | (uint64_t{w1.qh()} << 32);
      q = _mm512_mask_add_epi8(q, _cvtu64_mask64(bits), q, _mm512_set1_epi8(0x10));
    }
    return q;
  }
}

// Two f16 values as [a x 8, b x 8] (kFirstOnly: [a, 0 x 7, b, 0 x 7]).
template <bool kFirstOnly>
inline __m512 pair_f16(f16_t a, f16_t b) {
  const __m128 f = _mm_cvtph_ps(_mm_cvtsi32_si128(static_cast<int>(uint32_t{a} | (uint32_t{b} << 16))));
  const __m512i idx = _mm512_set_epi32(1, 1, 1, 1, 1, 1, 1, 1, 0, 0, 0, 0, 0, 0, 0, 0);
  if constexpr (kFirstOnly) return _mm512_maskz_permutexvar_ps(0x0101, idx, _mm512_castps128_ps512(f));
  return _mm512_permutexvar_ps(idx, _mm512_castps128_ps512(f));
}

inline float hsum_lo(__m512 v) {
  const __m256 h = _mm512_castps512_ps256(v);
  __m128 s = _mm_add_ps(_mm256_castps256_ps128(h), _mm256_extractf128_ps(h, 1));
  s = _mm_add_ps(s, _mm_movehl_ps(s, s));
  s = _mm_add_ss(s, _mm_movehdup_ps(s));
  return _mm_cvtss_f32(s);
}
inline float hsum_hi(__m512 v) {
  return hsum_lo(_mm512_castsi512_ps(_mm512_shuffle_i64x2(_mm512_castps_si512(v), _mm512_castps_si512(v),
                                                          _MM_SHUFFLE(3, 2, 3, 2))));
}

inline __m512i load_x(const BlockQ8A& xb) {
  return _mm512_broadcast_i64x4(_mm256_loadu_si256(reinterpret_cast<const __m256i*>(xb.qs)));
}

// Weight loops read every block once while computing on it for a while; they outrun the
// hardware prefetchers, so they ask for the weights this far ahead (as kernels_avx512.cpp).
constexpr int kPrefetchBytes = 4096;

// P pairs of weight rows (rows[2p], rows[2p + 1]; a pair may repeat a row) x G activation rows
// in P * G accumulators. start[g * nb + b]: activation block (g, b)'s -z * sum x per group of
// four (unused when z = 0). Writes y[g * ldy + r] for r < nwrite.
template <typename T, int P, int G>
void q_tile(int64_t nb, const uint8_t* const* rows, const BlockQ8A* x, int64_t xs, const __m256i* start, float* y,
            int64_t ldy, int nwrite) {
  using Block = typename T::Block;
  __m512 acc[P][G];
  for (int p = 0; p < P; ++p)
    for (int g = 0; g < G; ++g) acc[p][g] = _mm512_setzero_ps();
  for (int64_t b = 0; b < nb; ++b) {
    const size_t off = static_cast<size_t>(b) * sizeof(Block);
    __m512i w[P];
    __m512 d[P], m[P];
    for (int p = 0; p < P; ++p) {
      const uint8_t* b0 = rows[2 * p] + off;
      const uint8_t* b1 = rows[2 * p + 1] + off;
      _mm_prefetch(reinterpret_cast<const char*>(b0) + kPrefetchBytes, _MM_HINT_T0);
      _mm_prefetch(reinterpret_cast<const char*>(b1) + kPrefetchBytes, _MM_HINT_T0);
      w[p] = pair_levels<T>(b0, b1);
      const BlockBytes<Block> w0{b0}, w1{b1};
      d[p] = pair_f16<false>(w0.d(), w1.d());
      if constexpr (T::kHasMin) m[p] = pair_f16<true>(w0.m(), w1.m());
    }
#pragma GCC unroll 8
    for (int g = 0; g < G; ++g) {
      const BlockQ8A& xb = x[g * xs + b];
      const __m512i xv = load_x(xb);
      __m512i s0 = _mm512_setzero_si512();
      if constexpr (kOffset<T> != 0) s0 = _mm512_broadcast_i64x4(_mm256_load_si256(start + g * nb + b));
      const __m512 dx = _mm512_set1_ps(xb.d);
      for (int p = 0; p < P; ++p) {
        const __m512 dot = _mm512_cvtepi32_ps(_mm512_dpbusd_epi32(s0, w[p], xv));
        acc[p][g] = _mm512_fmadd_ps(_mm512_mul_ps(dot, d[p]), dx, acc[p][g]);
        if constexpr (T::kHasMin) acc[p][g] = _mm512_fmadd_ps(m[p], _mm512_set1_ps(xb.s), acc[p][g]);
      }
    }
  }
  for (int p = 0; p < P; ++p)
    for (int g = 0; g < G; ++g) {
      y[g * ldy + 2 * p] = hsum_lo(acc[p][g]);
      if (2 * p + 1 < nwrite) y[g * ldy + 2 * p + 1] = hsum_hi(acc[p][g]);
    }
}

// All weight rows against G activation rows: tiles of 4 rows (two pairs), then a pair, then a
// last odd row paired with itself.
template <typename T, int G>
void q_rows_g(int64_t nb, const uint8_t* w, size_t ws, int64_t nw, const BlockQ8A* x, int64_t xs,
              const __m256i* start, float* y, int64_t ldy) {
  int64_t r = 0;
  for (; r + 4 <= nw; r += 4) {
    const uint8_t* rows[4] = {w + r * ws, w + (r + 1) * ws, w + (r + 2) * ws, w + (r + 3) * ws};
    q_tile<T, 2, G>(nb, rows, x, xs, start, y + r, ldy, 4);
  }
  for (; r + 2 <= nw; r += 2) {
    const uint8_t* rows[2] = {w + r * ws, w + (r + 1) * ws};
    q_tile<T, 1, G>(nb, rows, x, xs, start, y + r, ldy, 2);
  }
  if (r < nw) {
    const uint8_t* rows[2] = {w + r * ws, w + r * ws};
    q_tile<T, 1, G>(nb, rows, x, xs, start, y + r, ldy, 1);
  }
}

template <typename T>
void q_tiles(int64_t n, const void* wv, size_t ws, int64_t nw, const BlockQ8A* x, int64_t xs, int64_t nx, float* y,
             int64_t ldy) {
  const auto* w = static_cast<const uint8_t*>(wv);
  const int64_t nb = n / kQuantBlock;
  // The activation blocks' corrections, -z * (sum of each group of four), for up to 8 rows: in
  // this thread's GEMM scratch (64-byte aligned; no GEMM runs in the thread meanwhile).
  __m256i* start = nullptr;
  if constexpr (kOffset<T> != 0) start = reinterpret_cast<__m256i*>(gemm_scratch(static_cast<size_t>(8 * nb) * 8));
  for (int64_t m = 0; m < nx; m += 8) {
    const BlockQ8A* xm = x + m * xs;
    float* ym = y + m * ldy;
    const int64_t g = nx - m < 8 ? nx - m : 8;
    if constexpr (kOffset<T> != 0) {
      const __m256i z = _mm256_set1_epi8(static_cast<char>(kOffset<T>));
      for (int64_t i = 0; i < g; ++i)
        for (int64_t b = 0; b < nb; ++b) {
          const __m256i xq = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(xm[i * xs + b].qs));
          const __m256i zs = _mm256_dpbusd_epi32(_mm256_setzero_si256(), z, xq);
          _mm256_store_si256(start + i * nb + b, _mm256_sub_epi32(_mm256_setzero_si256(), zs));
        }
    }
    switch (g) {
      case 1: q_rows_g<T, 1>(nb, w, ws, nw, xm, xs, start, ym, ldy); break;
      case 2: q_rows_g<T, 2>(nb, w, ws, nw, xm, xs, start, ym, ldy); break;
      case 3: q_rows_g<T, 3>(nb, w, ws, nw, xm, xs, start, ym, ldy); break;
      case 4: q_rows_g<T, 4>(nb, w, ws, nw, xm, xs, start, ym, ldy); break;
      case 5: q_rows_g<T, 5>(nb, w, ws, nw, xm, xs, start, ym, ldy); break;
      case 6: q_rows_g<T, 6>(nb, w, ws, nw, xm, xs, start, ym, ldy); break;
      case 7: q_rows_g<T, 7>(nb, w, ws, nw, xm, xs, start, ym, ldy); break;
      default: q_rows_g<T, 8>(nb, w, ws, nw, xm, xs, start, ym, ldy); break;
    }
  }
}

// ---- gemm_q8: packed panels around a 6 x 32 register tile ---------------------------------------
//
// As gemm_blocked.h for f32, but packing bytes: per depth block of 32 values, a weight panel of
// 32 columns holds 8 groups x 32 columns x 4 levels (one vpdpbusd operand per group and 16
// columns), then each column's -128 * sum(levels), d and m; an activation panel of 6 rows holds
// 8 groups x 6 rows x 4 bytes (xq + 128, broadcast per row), then dx and s. The micro-kernel
// runs a block's 8 groups into 12 integer sums (6 rows x 2 x 16 columns), then scales them into
// 12 f32 accumulators.

constexpr int kMR = 6, kNR = 32;
constexpr int64_t kKCB = 16;  // depth blocks per slice (512 values)
constexpr int64_t kNC = 256;  // weight rows per packed block
constexpr int64_t kMC = 96;   // activation rows per packed block (a multiple of kMR)

template <typename T>
constexpr size_t b_block_bytes() {
  return 8 * kNR * 4 + kNR * 4 /* start */ + kNR * 4 /* d */ + (T::kHasMin ? kNR * 4 : 0) /* m */;
}
constexpr size_t kABlockBytes = 8 * kMR * 4 + kMR * 4 /* dx */ + kMR * 4 /* s */;

// Weight rows [0, cols) (at most kNC), depth blocks [b0, b0 + kb), into panels of kNR columns;
// columns past cols are zeros (levels and scales), so they add nothing.
template <typename T>
void pack_b(int64_t cols, int64_t b0, int64_t kb, const uint8_t* w, size_t ldb, uint8_t* dst) {
  using Block = typename T::Block;
  constexpr size_t SB = b_block_bytes<T>();
  const __m256i group_at = _mm256_setr_epi32(0, kNR, 2 * kNR, 3 * kNR, 4 * kNR, 5 * kNR, 6 * kNR, 7 * kNR);
  const int64_t panels = (cols + kNR - 1) / kNR;
  for (int64_t pj = 0; pj < panels; ++pj) {
    uint8_t* panel = dst + static_cast<size_t>(pj * kb) * SB;
    for (int jj = 0; jj < kNR; ++jj) {
      const int64_t j = pj * kNR + jj;
      const uint8_t* row = j < cols ? w + static_cast<size_t>(j) * ldb + static_cast<size_t>(b0) * sizeof(Block) : nullptr;
      for (int64_t b = 0; b < kb; ++b) {
        uint8_t* pb = panel + static_cast<size_t>(b) * SB;
        auto* q32 = reinterpret_cast<int32_t*>(pb) + jj;
        auto* start = reinterpret_cast<int32_t*>(pb + 8 * kNR * 4);
        auto* d = reinterpret_cast<float*>(pb + 8 * kNR * 4 + kNR * 4);
        auto* m = d + kNR;
        if (!row) {
          _mm256_i32scatter_epi32(q32, group_at, _mm256_setzero_si256(), 4);
          start[jj] = 0;
          d[jj] = 0;
          if constexpr (T::kHasMin) m[jj] = 0;
          continue;
        }
        const uint8_t* blk = row + static_cast<size_t>(b) * sizeof(Block);
        const __m256i q = block_levels<T>(blk);
        _mm256_i32scatter_epi32(q32, group_at, q, 4);
        const __m256i sums = _mm256_dpbusd_epi32(_mm256_setzero_si256(), _mm256_set1_epi8(1), q);
        start[jj] = -128 * _mm512_reduce_add_epi32(_mm512_zextsi256_si512(sums));
        const BlockBytes<Block> wb{blk};
        d[jj] = half(wb.d());
        if constexpr (T::kHasMin) m[jj] = half(wb.m());
      }
    }
  }
}

// Activation rows [0, rows) (at most kMC), blocks [b0, b0 + kb), into panels of kMR rows; rows
// past `rows` are zero activations (dx = s = 0), so they add nothing.
void pack_a(int64_t rows, int64_t b0, int64_t kb, const BlockQ8A* a, int64_t lda, uint8_t* dst) {
  const __m256i group_at = _mm256_setr_epi32(0, kMR, 2 * kMR, 3 * kMR, 4 * kMR, 5 * kMR, 6 * kMR, 7 * kMR);
  const __m256i flip = _mm256_set1_epi8(static_cast<char>(0x80));
  const int64_t panels = (rows + kMR - 1) / kMR;
  for (int64_t pi = 0; pi < panels; ++pi) {
    uint8_t* panel = dst + static_cast<size_t>(pi * kb) * kABlockBytes;
    for (int ii = 0; ii < kMR; ++ii) {
      const int64_t i = pi * kMR + ii;
      for (int64_t b = 0; b < kb; ++b) {
        uint8_t* pb = panel + static_cast<size_t>(b) * kABlockBytes;
        auto* q32 = reinterpret_cast<int32_t*>(pb) + ii;
        auto* dx = reinterpret_cast<float*>(pb + 8 * kMR * 4);
        float* s = dx + kMR;
        if (i >= rows) {
          _mm256_i32scatter_epi32(q32, group_at, flip, 4);
          dx[ii] = 0;
          s[ii] = 0;
          continue;
        }
        const BlockQ8A& xb = a[i * lda + b0 + b];
        const __m256i q = _mm256_xor_si256(_mm256_loadu_si256(reinterpret_cast<const __m256i*>(xb.qs)), flip);
        _mm256_i32scatter_epi32(q32, group_at, q, 4);
        dx[ii] = xb.d;
        s[ii] = xb.s;
      }
    }
  }
}

// c[i * ldc + j] (+)= the kMR x kNR tile of one activation panel and one weight panel over kb blocks.
template <typename T>
void micro_q8(int64_t kb, const uint8_t* ap, const uint8_t* bp, float* c, int64_t ldc, bool accumulate) {
  constexpr size_t SB = b_block_bytes<T>();
  __m512 acc[kMR][2];
#pragma GCC unroll 6
  for (int i = 0; i < kMR; ++i) acc[i][0] = acc[i][1] = _mm512_setzero_ps();
  for (int64_t b = 0; b < kb; ++b, ap += kABlockBytes, bp += SB) {
    const auto* a32 = reinterpret_cast<const int32_t*>(ap);
    const auto* st = reinterpret_cast<const __m512i*>(bp + 8 * kNR * 4);
    __m512i s[kMR][2];
#pragma GCC unroll 6
    for (int i = 0; i < kMR; ++i) {
      s[i][0] = _mm512_loadu_si512(st);
      s[i][1] = _mm512_loadu_si512(st + 1);
    }
#pragma GCC unroll 8
    for (int g = 0; g < 8; ++g) {
      const __m512i b0 = _mm512_loadu_si512(bp + g * kNR * 4), b1 = _mm512_loadu_si512(bp + g * kNR * 4 + 64);
#pragma GCC unroll 6
      for (int i = 0; i < kMR; ++i) {
        const __m512i av = _mm512_set1_epi32(a32[g * kMR + i]);
        s[i][0] = _mm512_dpbusd_epi32(s[i][0], av, b0);
        s[i][1] = _mm512_dpbusd_epi32(s[i][1], av, b1);
      }
    }
    const float* d = reinterpret_cast<const float*>(bp + 8 * kNR * 4 + kNR * 4);
    const __m512 d0 = _mm512_loadu_ps(d), d1 = _mm512_loadu_ps(d + 16);
    const float* dx = reinterpret_cast<const float*>(ap + 8 * kMR * 4);
#pragma GCC unroll 6
    for (int i = 0; i < kMR; ++i) {
      const __m512 x = _mm512_set1_ps(dx[i]);
      acc[i][0] = _mm512_fmadd_ps(_mm512_mul_ps(_mm512_cvtepi32_ps(s[i][0]), d0), x, acc[i][0]);
      acc[i][1] = _mm512_fmadd_ps(_mm512_mul_ps(_mm512_cvtepi32_ps(s[i][1]), d1), x, acc[i][1]);
    }
    if constexpr (T::kHasMin) {
      const __m512 m0 = _mm512_loadu_ps(d + kNR), m1 = _mm512_loadu_ps(d + kNR + 16);
#pragma GCC unroll 6
      for (int i = 0; i < kMR; ++i) {
        const __m512 sx = _mm512_set1_ps(dx[kMR + i]);
        acc[i][0] = _mm512_fmadd_ps(m0, sx, acc[i][0]);
        acc[i][1] = _mm512_fmadd_ps(m1, sx, acc[i][1]);
      }
    }
  }
#pragma GCC unroll 6
  for (int i = 0; i < kMR; ++i) {
    float* ci = c + i * ldc;
    if (accumulate) {
      acc[i][0] = _mm512_add_ps(acc[i][0], _mm512_loadu_ps(ci));
      acc[i][1] = _mm512_add_ps(acc[i][1], _mm512_loadu_ps(ci + 16));
    }
    _mm512_storeu_ps(ci, acc[i][0]);
    _mm512_storeu_ps(ci + 16, acc[i][1]);
  }
}

template <typename T>
void gemm_q8_t(int64_t m, int64_t n, int64_t k, const BlockQ8A* a, int64_t lda, const uint8_t* w, size_t ldb,
               float* c, int64_t ldc) {
  if (m <= 0 || n <= 0) return;
  const int64_t nb = k / kQuantBlock;
  if (nb <= 0) {
    for (int64_t i = 0; i < m; ++i) std::memset(c + i * ldc, 0, static_cast<size_t>(n) * sizeof(float));
    return;
  }
  // Equal depth slices, so a depth just over a slice does not leave a thin last one.
  const int64_t passes = (nb + kKCB - 1) / kKCB;
  const int64_t kstep = (nb + passes - 1) / passes;
  constexpr size_t SB = b_block_bytes<T>();
  const size_t b_bytes = static_cast<size_t>((kNC / kNR) * kstep) * SB;
  const size_t a_bytes = static_cast<size_t>((kMC / kMR) * kstep) * kABlockBytes;
  auto* bp = reinterpret_cast<uint8_t*>(gemm_scratch((b_bytes + a_bytes) / sizeof(float) + 16));
  uint8_t* ap = bp + b_bytes;
  alignas(64) float edge[kMR * kNR];

  for (int64_t jc = 0; jc < n; jc += kNC) {
    const int64_t nc = n - jc < kNC ? n - jc : kNC;
    for (int64_t pc = 0; pc < nb; pc += kstep) {
      const int64_t kb = nb - pc < kstep ? nb - pc : kstep;
      const bool accumulate = pc > 0;
      pack_b<T>(nc, pc, kb, w + static_cast<size_t>(jc) * ldb, ldb, bp);
      for (int64_t ic = 0; ic < m; ic += kMC) {
        const int64_t mc = m - ic < kMC ? m - ic : kMC;
        pack_a(mc, pc, kb, a + ic * lda, lda, ap);
        for (int64_t ir = 0; ir < mc; ir += kMR) {
          const int64_t mr = mc - ir < kMR ? mc - ir : kMR;
          const uint8_t* apanel = ap + static_cast<size_t>((ir / kMR) * kb) * kABlockBytes;
          for (int64_t jr = 0; jr < nc; jr += kNR) {
            const int64_t nr = nc - jr < kNR ? nc - jr : kNR;
            const uint8_t* bpanel = bp + static_cast<size_t>((jr / kNR) * kb) * SB;
            float* ct = c + (ic + ir) * ldc + jc + jr;
            if (mr == kMR && nr == kNR) {
              micro_q8<T>(kb, apanel, bpanel, ct, ldc, accumulate);
              continue;
            }
            // Edge tile: the full tile into a buffer, then only its live part into C.
            micro_q8<T>(kb, apanel, bpanel, edge, kNR, false);
            for (int64_t i = 0; i < mr; ++i)
              for (int64_t j = 0; j < nr; ++j)
                ct[i * ldc + j] = accumulate ? ct[i * ldc + j] + edge[i * kNR + j] : edge[i * kNR + j];
          }
        }
      }
    }
  }
}

}  // namespace

void avx512_dot_q_tiles(DType type, int64_t n, const void* w, size_t ws, int64_t nw, const BlockQ8A* x, int64_t xs,
                        int64_t nx, float* y, int64_t ldy) {
  switch (type) {
    case DType::Q4_0: return q_tiles<Q4_0>(n, w, ws, nw, x, xs, nx, y, ldy);
    case DType::Q4_1: return q_tiles<Q4_1>(n, w, ws, nw, x, xs, nx, y, ldy);
    case DType::Q5_0: return q_tiles<Q5_0>(n, w, ws, nw, x, xs, nx, y, ldy);
    case DType::Q5_1: return q_tiles<Q5_1>(n, w, ws, nw, x, xs, nx, y, ldy);
    default: return q_tiles<Q8_0>(n, w, ws, nw, x, xs, nx, y, ldy);
  }
}

void avx512_gemm_q8(DType type, int64_t m, int64_t n, int64_t k, const BlockQ8A* a, int64_t lda, const void* b,
                    size_t ldb, float* c, int64_t ldc) {
  const auto* w = static_cast<const uint8_t*>(b);
  switch (type) {
    case DType::Q4_0: return gemm_q8_t<Q4_0>(m, n, k, a, lda, w, ldb, c, ldc);
    case DType::Q4_1: return gemm_q8_t<Q4_1>(m, n, k, a, lda, w, ldb, c, ldc);
    case DType::Q5_0: return gemm_q8_t<Q5_0>(m, n, k, a, lda, w, ldb, c, ldc);
    case DType::Q5_1: return gemm_q8_t<Q5_1>(m, n, k, a, lda, w, ldb, c, ldc);
    default: return gemm_q8_t<Q8_0>(m, n, k, a, lda, w, ldb, c, ldc);
  }
}

}  // namespace hark::cpu::detail
#endif
