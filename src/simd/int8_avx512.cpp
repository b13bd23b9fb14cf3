// int8 products of quantized weights (q4_0 .. q8_0) with q8 activations (BlockQ8A) on AVX-512
// VNNI: the AVX-512 table's dot_q_tiles (decoder steps: up to 4 activation rows in weight-row
// tiles, 5 or more, a batch of chunks or beams, in activation-row lanes) and gemm_q8 (encoder:
// many rows).
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

#include "runtime/unaligned.h"
#include "simd/int8_levels_avx512.h"
#include "simd/kernels.h"
#include "simd/kernels_internal.h"

namespace hark::cpu::detail {
namespace {

inline __m512i bytes_0x80() { return _mm512_set1_epi8(static_cast<char>(0x80)); }

// ---- dot_q_tiles, up to 4 activation rows: weight rows in fours -------------------------------
//
// Here the roles swap: weights enter as unsigned levels u (q4/q5 levels as stored, q8_0's plus
// 128) and activations as the signed bytes they are, so sum u x = sum w x + z sum x, where the
// offset z (the zero point: 8, 16, 128 for q8_0; 0 for the _1 types) is one constant per type.
// The correction -z * sum x belongs to the activation block alone: it is computed once per call
// for every activation block and starts the integer sums, and nothing per weight block is spent
// on it. (The GEMM packs its weights once and keeps the layout above.)
//
// Four weight rows share a register: 128-bit lane r holds row r's levels 0..15 (one register)
// or 16..31 (another), and the activation block's bytes 0..15 / 16..31 are broadcast to all four
// lanes. Two vpdpbusd, the second accumulating onto the first, leave four int32 partial sums per
// row, so each (block, activation row) costs two integer products and one conversion, scale and
// accumulate for four weight rows. (Two rows per register, a whole block in each half, needed
// the conversion and scaling twice: 8 vector operations instead of 5 per four rows and
// activation row, which is most of a beam-search step's product.)

template <typename T>
constexpr int kOffset = T::kSigned ? 128 : T::kZero;

// From this many activation rows on, the lanes (below) take the product instead: hot-cache
// cycles per (weight row, block) on Zen 4 for these tiles / the lanes: 4 rows 8.7 / 8.1, 5 rows
// 10.3 / 8.1, 8 rows 14.9 / 8.3, 16 rows 29.8 / 13.6 (1 row: 4.4 here). In real decoder steps
// (bench_kernels decode_chunks) 4 rows came out even and 5 faster.
constexpr int64_t kLanesMinRows = 5;
constexpr int64_t kQuadsMaxRows = kLanesMinRows - 1;

// An activation block's share of that correction: -z * (the sum of its bytes 4j..4j+3 and
// 16+4j..16+4j+3) in dword j, the four partial sums two chained vpdpbusd leave per 128-bit lane.
template <typename T>
inline __m128i block_start(const BlockQ8A& xb) {
  const __m256i z = _mm256_set1_epi8(static_cast<char>(kOffset<T>));
  const __m256i zs =
      _mm256_dpbusd_epi32(_mm256_setzero_si256(), z, _mm256_loadu_si256(reinterpret_cast<const __m256i*>(xb.qs)));
  const __m128i both = _mm_add_epi32(_mm256_castsi256_si128(zs), _mm256_extracti128_si256(zs, 1));
  return _mm_sub_epi32(_mm_setzero_si128(), both);
}

// Bytes [off, off + 16) of four blocks' levels, block r in 128-bit lane r.
// Masked broadcasts from memory rather than inserts: a masked load merges on either vector
// port, where an insert needs the shuffle port, which the header's permutes already keep busy.
inline __m512i quad_bytes(const uint8_t* const* q, int off) {
  const auto at = [&](int r) { return reinterpret_cast<const __m128i*>(q[r] + off); };
  __m512i v = _mm512_broadcast_i32x4(_mm_loadu_si128(at(0)));
  v = _mm512_mask_broadcast_i32x4(v, 0x00F0, _mm_loadu_si128(at(1)));
  v = _mm512_mask_broadcast_i32x4(v, 0x0F00, _mm_loadu_si128(at(2)));
  return _mm512_mask_broadcast_i32x4(v, 0xF000, _mm_loadu_si128(at(3)));
}

// The first 8 bytes of four blocks, block r in qword r: d, then m and qh where the type has them
// (q5_1's header is exactly 8 bytes; the others' are shorter and the rest is levels, unused).
inline __m256i quad_headers(const uint8_t* const* blk) {
  const auto qword = [](const uint8_t* p) {
    int64_t v;
    std::memcpy(&v, p, sizeof v);
    return v;
  };
  const __m128i a = _mm_insert_epi64(_mm_cvtsi64_si128(qword(blk[0])), qword(blk[1]), 1);
  const __m128i b = _mm_insert_epi64(_mm_cvtsi64_si128(qword(blk[2])), qword(blk[3]), 1);
  return _mm256_inserti128_si256(_mm256_castsi128_si256(a), b, 1);
}

// The f16 fields of four blocks' headers side by side, gathered with one word permute: d of
// blocks 0..3 in words 0..3, m in 4..7, the low halves of qh in 8..11 and the high halves in
// 12..15 (the m and qh words only mean something for types that have the field). Scalar loads
// and shifts for these fields were a third of a tile's instructions per block.
// Where m and qh start in a block header, in 16-bit words (0 for a type without the field).
template <typename T>
constexpr short min_word() {
  if constexpr (T::kHasMin) return static_cast<short>(offsetof(typename T::Block, m) / 2);
  return 0;
}
template <typename T>
constexpr short high_word() {
  if constexpr (T::kFiveBit) {
    static_assert(offsetof(typename T::Block, qh) % 2 == 0 && offsetof(typename T::Block, qh) + 4 <= 8);
    return static_cast<short>(offsetof(typename T::Block, qh) / 2);
  }
  return 0;
}

template <typename T>
struct QuadHeader {
  __m128 d;                    // [d0, d1, d2, d3]
  __m128 m;                    // [m0, m1, m2, m3] (types with a min)
  __mmask64 high_lo, high_hi;  // fifth bits: levels 0..15 / 16..31 of block r at bits 16r..16r+15

  explicit QuadHeader(const uint8_t* const* blk) {
    constexpr short m_word = min_word<T>(), h_word = high_word<T>();
    const __m256i idx = _mm256_setr_epi16(0, 4, 8, 12, m_word, m_word + 4, m_word + 8, m_word + 12,  //
                                          h_word, h_word + 4, h_word + 8, h_word + 12,               //
                                          h_word + 1, h_word + 5, h_word + 9, h_word + 13);
    const __m256i f = _mm256_permutexvar_epi16(idx, quad_headers(blk));
    const __m128i f_lo = _mm256_castsi256_si128(f);
    d = _mm_cvtph_ps(f_lo);
    if constexpr (T::kHasMin) m = _mm_cvtph_ps(_mm_unpackhi_epi64(f_lo, f_lo));
    if constexpr (T::kFiveBit) {
      const __m128i f_hi = _mm256_extracti128_si256(f, 1);
      high_lo = _cvtu64_mask64(static_cast<uint64_t>(_mm_cvtsi128_si64(f_hi)));
      high_hi = _cvtu64_mask64(static_cast<uint64_t>(_mm_extract_epi64(f_hi, 1)));
    }
  }
};

// Four weight blocks' unsigned levels: lo = levels 0..15 of each, hi = levels 16..31.
template <typename T>
inline void quad_levels(const uint8_t* const* blk, const QuadHeader<T>& h, __m512i& lo, __m512i& hi) {
  using Block = typename T::Block;
  const uint8_t* qs[4];
  for (int r = 0; r < 4; ++r) qs[r] = BlockBytes<Block>{blk[r]}.qs();
  if constexpr (T::kSigned) {
    const __m512i flip = _mm512_set1_epi8(static_cast<char>(0x80));  // w + 128 as unsigned bytes
    lo = _mm512_xor_si512(quad_bytes(qs, 0), flip);
    hi = _mm512_xor_si512(quad_bytes(qs, 16), flip);
  } else {
    // Levels 0..15 are the low nibbles of the 16 bytes, 16..31 the high ones.
    const __m512i v = quad_bytes(qs, 0), low4 = _mm512_set1_epi8(0x0F);
    lo = _mm512_and_si512(v, low4);
    hi = _mm512_and_si512(_mm512_srli_epi16(v, 4), low4);
    if constexpr (T::kFiveBit) {
      const __m512i five = _mm512_set1_epi8(0x10);
      lo = _mm512_mask_add_epi8(lo, h.high_lo, lo, five);
      hi = _mm512_mask_add_epi8(hi, h.high_hi, hi, five);
    }
  }
}

// [a, b, c, d] as [a x 4, b x 4, c x 4, d x 4] (kFirstOnly: [a, 0, 0, 0, b, 0, 0, 0, ...]: the
// min term goes into one lane per row, so the row's lane sum counts it once).
template <bool kFirstOnly>
inline __m512 quad_spread(__m128 v) {
  const __m512 f = _mm512_castps128_ps512(v);
  const __m512i idx = _mm512_setr_epi32(0, 0, 0, 0, 1, 1, 1, 1, 2, 2, 2, 2, 3, 3, 3, 3);
  if constexpr (kFirstOnly) return _mm512_maskz_permutexvar_ps(0x1111, idx, f);
  return _mm512_permutexvar_ps(idx, f);
}

// Four weight blocks unpacked once for every activation row they meet: levels (lo, hi as
// quad_levels) and d (and m) spread to their lanes.
template <typename T>
struct QuadBlocks {
  __m512i lo, hi;
  __m512 d, m;

  explicit QuadBlocks(const uint8_t* const* blk) {
    const QuadHeader<T> head(blk);
    quad_levels<T>(blk, head, lo, hi);
    d = quad_spread<false>(head.d);
    if constexpr (T::kHasMin) m = quad_spread<true>(head.m);
  }

  // acc plus these blocks against activation bytes laid out as the weights are (xlo, xhi), with
  // the activation blocks' -z * sum x (start), d (dx) and s (sx) in the matching lanes.
  __m512 dot(__m512 acc, __m512i start, __m512i xlo, __m512i xhi, __m512 dx, __m512 sx) const {
    __m512i sum = kOffset<T> != 0 ? start : _mm512_setzero_si512();
    sum = _mm512_dpbusd_epi32(sum, lo, xlo);
    sum = _mm512_dpbusd_epi32(sum, hi, xhi);
    acc = _mm512_fmadd_ps(_mm512_mul_ps(_mm512_cvtepi32_ps(sum), d), dx, acc);
    if constexpr (T::kHasMin) acc = _mm512_fmadd_ps(m, sx, acc);
    return acc;
  }
};

// The sums of the four lanes of each 128-bit lane, as [row 0, row 1, row 2, row 3]; lanes
// (0 + 2) + (1 + 3), the same whatever rows share the register.
inline __m128 lane_sums(__m512 v) {
  const __m512 p = _mm512_add_ps(v, _mm512_permute_ps(v, _MM_SHUFFLE(1, 0, 3, 2)));
  const __m512 s = _mm512_add_ps(p, _mm512_permute_ps(p, _MM_SHUFFLE(2, 3, 0, 1)));
  return _mm512_castps512_ps128(
      _mm512_permutexvar_ps(_mm512_setr_epi32(0, 4, 8, 12, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0), s));
}

// Bytes [off, off + 16) of an activation block in all four 128-bit lanes.
inline __m512i x_quarter(const BlockQ8A& xb, int off) {
  return _mm512_broadcast_i32x4(_mm_loadu_si128(reinterpret_cast<const __m128i*>(xb.qs + off)));
}

// Four weight rows (rows[0..3]; a tile of fewer rows repeats its last one) x G activation rows in
// G accumulators of four lanes per row. start[g * nb + b]: activation block (g, b)'s -z * sum x
// in the four lanes' groups (unused when z = 0). Writes y[g * ldy + r] for r < nwrite.
template <typename T, int G>
void q_tile(int64_t nb, const uint8_t* const* rows, const BlockQ8A* x, int64_t xs, const __m128i* start, float* y,
            int64_t ldy, int nwrite) {
  using Block = typename T::Block;
  __m512 acc[G];
  for (int g = 0; g < G; ++g) acc[g] = _mm512_setzero_ps();
  for (int64_t b = 0; b < nb; ++b) {
    const size_t off = static_cast<size_t>(b) * sizeof(Block);
    const uint8_t* blk[4];
    for (int r = 0; r < 4; ++r) {
      blk[r] = rows[r] + off;
      _mm_prefetch(reinterpret_cast<const char*>(blk[r]) + kPrefetchBytes, _MM_HINT_T0);
    }
    const QuadBlocks<T> wq(blk);
#pragma GCC unroll 8
    for (int g = 0; g < G; ++g) {
      const BlockQ8A& xb = x[g * xs + b];
      __m512i st = _mm512_setzero_si512();
      if constexpr (kOffset<T> != 0) st = _mm512_broadcast_i32x4(_mm_load_si128(start + g * nb + b));
      acc[g] = wq.dot(acc[g], st, x_quarter(xb, 0), x_quarter(xb, 16), _mm512_set1_ps(xb.d), _mm512_set1_ps(xb.s));
    }
  }
  const __mmask8 keep = static_cast<__mmask8>((1u << nwrite) - 1u);
  for (int g = 0; g < G; ++g) _mm_mask_storeu_ps(y + g * ldy, keep, lane_sums(acc[g]));
}

// All weight rows against G activation rows: tiles of 4 rows, then the last one to three rows
// in a tile that repeats its last row.
template <typename T, int G>
void q_rows_g(int64_t nb, const uint8_t* w, size_t ws, int64_t nw, const BlockQ8A* x, int64_t xs, const __m128i* start,
              float* y, int64_t ldy) {
  int64_t r = 0;
  for (; r + 4 <= nw; r += 4) {
    const uint8_t* rows[4] = {w + r * ws, w + (r + 1) * ws, w + (r + 2) * ws, w + (r + 3) * ws};
    q_tile<T, G>(nb, rows, x, xs, start, y + r, ldy, 4);
  }
  if (r < nw) {
    const int left = static_cast<int>(nw - r);
    const uint8_t* rows[4];
    for (int i = 0; i < 4; ++i) rows[i] = w + (r + (i < left ? i : left - 1)) * ws;
    q_tile<T, G>(nb, rows, x, xs, start, y + r, ldy, left);
  }
}

// ---- long rows: four blocks of one weight row per register ----------------------------------
//
// Four weight rows side by side are four interleaved streams, which the hardware prefetchers
// follow worse than one (as for f16, kernels_avx512.cpp). For rows of kInOrderMinBlocks blocks or
// more, lane j holds block 4q + j of one row instead, so the rows are read one after another, each
// in memory order; the activation rows are rearranged once per call to match (block 4q + j's
// bytes, start, d and s in lane j). The same operations per four blocks and activation row as the
// tiles above, plus one horizontal sum per row and activation row, which short rows cannot repay
// (tiny's 384-value rows: no gain). The path depends on the matrix only, so up to 4 activation
// rows a row decoded with others gives the bits it gives alone.
// Measured (Zen 4, 2 threads, bench_kernels mul_mat/own, 1 row): large_dec q8_0 0.31-0.35 ->
// 0.15-0.25 ms, q5_0 0.18-0.26 -> 0.13-0.15; 5 rows q5_0 0.33-0.35 -> 0.28-0.29; small q5_0
// decoder step 9.8-10.0 -> 6.4-6.9 ms (bench_transcribe).
constexpr int64_t kInOrderMinBlocks = 16;

// Activation blocks 4q .. 4q + 3 in the lanes' layout (zeros past the last block: such a lane's
// weight block repeats the last one and adds nothing).
struct alignas(64) XQuad {
  __m512i lo, hi;  // bytes 0..15 / 16..31 of block 4q + j in lane j
  __m512i start;   // lane j: block 4q + j's block_start
  __m512 dx;       // lane j: block 4q + j's d, four times
  __m512 s;        // lane j: block 4q + j's s (the _1 types' min term)
};

template <typename T>
void arrange_x(const BlockQ8A* x, int64_t nb, XQuad* out) {
  for (int64_t q = 0; q * 4 < nb; ++q) {
    alignas(64) uint8_t lo[64] = {}, hi[64] = {};
    alignas(64) int32_t st[16] = {};
    alignas(64) float dx[16] = {}, sx[16] = {};
    for (int j = 0; j < 4 && q * 4 + j < nb; ++j) {
      const BlockQ8A& xb = x[q * 4 + j];
      std::memcpy(lo + 16 * j, xb.qs, 16);
      std::memcpy(hi + 16 * j, xb.qs + 16, 16);
      if constexpr (kOffset<T> != 0) _mm_store_si128(reinterpret_cast<__m128i*>(st + 4 * j), block_start<T>(xb));
      for (int i = 0; i < 4; ++i) {
        dx[4 * j + i] = xb.d;
        sx[4 * j + i] = xb.s;
      }
    }
    out[q].lo = _mm512_load_si512(lo);
    out[q].hi = _mm512_load_si512(hi);
    out[q].start = _mm512_load_si512(st);
    out[q].dx = _mm512_load_ps(dx);
    out[q].s = _mm512_load_ps(sx);
  }
}

// The 16 lanes of a row's accumulator folded to 4, in a fixed order (the row's result never
// depends on the rows beside it).
inline __m128 fold4(__m512 v) {
  const __m256 h = _mm256_add_ps(_mm512_castps512_ps256(v), _mm512_extractf32x8_ps(v, 1));
  return _mm_add_ps(_mm256_castps256_ps128(h), _mm256_extractf128_ps(h, 1));
}

// Four weight rows (a short tile repeats its last row), each read in order, against G activation
// rows (xq + g * nq: row g's arrangement); y[g * ldy + r] for r < nwrite. Each (row, activation
// row) sum takes the same steps whatever G and whatever rows share the tile, so a row decoded in
// a batch gives the bits it gives alone.
template <typename T, int G>
void q_row_quads(int64_t nb, const uint8_t* const* rows, const XQuad* xq, float* y, int64_t ldy, int nwrite) {
  using Block = typename T::Block;
  const int64_t nq = (nb + 3) / 4;
  __m128 sums[G][4];
  for (int r = 0; r < 4; ++r) {
    const uint8_t* row = rows[r];
    __m512 acc[G];
    for (int g = 0; g < G; ++g) acc[g] = _mm512_setzero_ps();
    for (int64_t q = 0; q < nq; ++q) {
      const uint8_t* blk[4];
      for (int j = 0; j < 4; ++j)
        blk[j] = row + static_cast<size_t>(q * 4 + j < nb ? q * 4 + j : nb - 1) * sizeof(Block);
      _mm_prefetch(reinterpret_cast<const char*>(blk[0]) + kPrefetchBytes, _MM_HINT_T0);
      if constexpr (4 * sizeof(Block) > 64)
        _mm_prefetch(reinterpret_cast<const char*>(blk[0]) + kPrefetchBytes + 64, _MM_HINT_T0);
      const QuadBlocks<T> wq(blk);
#pragma GCC unroll 8
      for (int g = 0; g < G; ++g) {
        const XQuad& xb = xq[g * nq + q];
        acc[g] = wq.dot(acc[g], xb.start, xb.lo, xb.hi, xb.dx, xb.s);
      }
    }
    for (int g = 0; g < G; ++g) sums[g][r] = fold4(acc[g]);
  }
  const __mmask8 keep = static_cast<__mmask8>((1u << nwrite) - 1u);
  for (int g = 0; g < G; ++g) {
    // [row 0, row 1, row 2, row 3]: each entry's additions involve its own row only.
    const __m128 total = _mm_hadd_ps(_mm_hadd_ps(sums[g][0], sums[g][1]), _mm_hadd_ps(sums[g][2], sums[g][3]));
    _mm_mask_storeu_ps(y + g * ldy, keep, total);
  }
}

template <typename T, int G>
void q_rows_quads_g(int64_t nb, const uint8_t* w, size_t ws, int64_t nw, const XQuad* xq, float* y, int64_t ldy) {
  int64_t r = 0;
  for (; r + 4 <= nw; r += 4) {
    const uint8_t* rows[4] = {w + r * ws, w + (r + 1) * ws, w + (r + 2) * ws, w + (r + 3) * ws};
    q_row_quads<T, G>(nb, rows, xq, y + r, ldy, 4);
  }
  if (r < nw) {
    const int left = static_cast<int>(nw - r);
    const uint8_t* rows[4];
    for (int i = 0; i < 4; ++i) rows[i] = w + (r + (i < left ? i : left - 1)) * ws;
    q_row_quads<T, G>(nb, rows, xq, y + r, ldy, left);
  }
}

// Every weight row against nx activation rows (in groups of up to 8), rows read in order.
template <typename T>
void q_rows_in_order(int64_t nb, const uint8_t* w, size_t ws, int64_t nw, const BlockQ8A* x, int64_t xs, int64_t nx,
                     float* y, int64_t ldy) {
  const int64_t nq = (nb + 3) / 4;
  auto* xq = reinterpret_cast<XQuad*>(
      gemm_scratch(static_cast<size_t>(kQuadsMaxRows * nq) * sizeof(XQuad) / sizeof(float) + 16));
  for (int64_t m = 0; m < nx; m += kQuadsMaxRows) {
    const int64_t g = nx - m < kQuadsMaxRows ? nx - m : kQuadsMaxRows;
    for (int64_t i = 0; i < g; ++i) arrange_x<T>(x + (m + i) * xs, nb, xq + i * nq);
    float* ym = y + m * ldy;
    switch (g) {
      case 1: q_rows_quads_g<T, 1>(nb, w, ws, nw, xq, ym, ldy); break;
      case 2: q_rows_quads_g<T, 2>(nb, w, ws, nw, xq, ym, ldy); break;
      case 3: q_rows_quads_g<T, 3>(nb, w, ws, nw, xq, ym, ldy); break;
      default: q_rows_quads_g<T, 4>(nb, w, ws, nw, xq, ym, ldy); break;
    }
  }
}

template <typename T>
void q_tiles_quads(int64_t n, const void* wv, size_t ws, int64_t nw, const BlockQ8A* x, int64_t xs, int64_t nx,
                   float* y, int64_t ldy) {
  const auto* w = static_cast<const uint8_t*>(wv);
  const int64_t nb = n / kQuantBlock;
  if (nb >= kInOrderMinBlocks) return q_rows_in_order<T>(nb, w, ws, nw, x, xs, nx, y, ldy);
  // The activation blocks' corrections for a group of rows, -z * (the sum of bytes 4j..4j+3 and
  // 16+4j..16+4j+3) in lane j: in this thread's GEMM scratch (64-byte aligned; no GEMM runs in
  // the thread meanwhile).
  __m128i* start = nullptr;
  if constexpr (kOffset<T> != 0)
    start = reinterpret_cast<__m128i*>(gemm_scratch(static_cast<size_t>(kQuadsMaxRows * nb) * 4));
  for (int64_t m = 0; m < nx; m += kQuadsMaxRows) {
    const BlockQ8A* xm = x + m * xs;
    float* ym = y + m * ldy;
    const int64_t g = nx - m < kQuadsMaxRows ? nx - m : kQuadsMaxRows;
    if constexpr (kOffset<T> != 0)
      for (int64_t i = 0; i < g; ++i)
        for (int64_t b = 0; b < nb; ++b) _mm_store_si128(start + i * nb + b, block_start<T>(xm[i * xs + b]));
    switch (g) {
      case 1: q_rows_g<T, 1>(nb, w, ws, nw, xm, xs, start, ym, ldy); break;
      case 2: q_rows_g<T, 2>(nb, w, ws, nw, xm, xs, start, ym, ldy); break;
      case 3: q_rows_g<T, 3>(nb, w, ws, nw, xm, xs, start, ym, ldy); break;
      default: q_rows_g<T, 4>(nb, w, ws, nw, xm, xs, start, ym, ldy); break;
    }
  }
}

// ---- lanes: activation rows in vector lanes, weight bytes broadcast --------------------------
//
// Several activation rows (beams, a batch of chunks) make the products above compute-bound, and
// there each (block, activation row) paid for its f32 conversion, scaling and accumulation on
// four partial sums of every weight row (the lanes of a 128-bit group): 5 vector operations for
// 128 products. Here lane g of a register belongs to activation row g instead: the activations
// are transposed once per call (dword k of a block: bytes 4k..4k+3, for each row in its lane),
// and the weight block's dword k is broadcast to every lane, so eight vpdpbusd leave each lane
// the whole block's integer sum, then one conversion, scaling and accumulation serve up to 8
// (ymm) or 16 (zmm) activation rows. The weights are the unsigned operand: levels + 128 (their
// signed levels, block_levels, with the top bit flipped), which adds 128 * sum(xq) to a lane's
// sum; each block's sum starts at -128 * sum(xq), an activation-side constant computed once per
// call. Per block and activation row the arithmetic is the int8 GEMM's: the exact integer sum,
// times d, fused-multiplied by dx into the accumulator (plus m * s for the _1 types), block by
// block in order, so among calls of 5 or more rows a row's result does not depend on which rows
// share the call; against the tiles of 1 to 4 rows it differs in the summation order only (the
// tiles keep four partial sums per block), within the products' stated tolerance.
// Measured (Zen 4, 2 threads, bench_kernels decode_chunks --cross-kv=q8_0, tiles -> lanes):
// 8 rows tiny q8_0 3.6-3.7 -> 3.1-3.4 ms, base q5_0 6.8 -> 5.7-6.0; 16 rows tiny q8_0 7.5 ->
// 5.4-5.6, base q5_0 13.6-13.9 -> 10.4-10.8; decode_batch 8 rows base q5_0 6.1-6.3 -> 4.5.

inline int32_t dword_at(const uint8_t* p) {
  int32_t v;
  std::memcpy(&v, p, sizeof v);
  return v;
}

// Lane vectors of 8 (AVX-512VL on ymm) or 16 (zmm) int32/f32: the operations lane_rows needs,
// one definition per width.
template <int L>
struct Lanes;
template <>
struct Lanes<8> {
  using I = __m256i;
  using F = __m256;
  static I load(const void* p) { return _mm256_load_si256(static_cast<const __m256i*>(p)); }
  static F loadf(const float* p) { return _mm256_load_ps(p); }
  static I bcast(const uint8_t* p) { return _mm256_set1_epi32(dword_at(p)); }
  static I dot(I acc, I u, I s) { return _mm256_dpbusd_epi32(acc, u, s); }
  static F zero() { return _mm256_setzero_ps(); }
  static F scaled(F acc, I sum, float d, F dx) {
    return _mm256_fmadd_ps(_mm256_mul_ps(_mm256_cvtepi32_ps(sum), _mm256_set1_ps(d)), dx, acc);
  }
  static F fma(float m, F sx, F acc) { return _mm256_fmadd_ps(_mm256_set1_ps(m), sx, acc); }
  static void storef(float* p, F v) { _mm256_store_ps(p, v); }
};
template <>
struct Lanes<16> {
  using I = __m512i;
  using F = __m512;
  static I load(const void* p) { return _mm512_load_si512(p); }
  static F loadf(const float* p) { return _mm512_load_ps(p); }
  static I bcast(const uint8_t* p) { return _mm512_set1_epi32(dword_at(p)); }
  static I dot(I acc, I u, I s) { return _mm512_dpbusd_epi32(acc, u, s); }
  static F zero() { return _mm512_setzero_ps(); }
  static F scaled(F acc, I sum, float d, F dx) {
    return _mm512_fmadd_ps(_mm512_mul_ps(_mm512_cvtepi32_ps(sum), _mm512_set1_ps(d)), dx, acc);
  }
  static F fma(float m, F sx, F acc) { return _mm512_fmadd_ps(_mm512_set1_ps(m), sx, acc); }
  static void storef(float* p, F v) { _mm512_store_ps(p, v); }
};

// Dword k of eight activation rows' block (rows past the last are zeros): an 8 x 8 transpose.
inline void transpose8(const __m256i r[8], __m256i out[8]) {
  __m256i t[8], u[8];
  for (int i = 0; i < 4; ++i) {
    t[2 * i] = _mm256_unpacklo_epi32(r[2 * i], r[2 * i + 1]);
    t[2 * i + 1] = _mm256_unpackhi_epi32(r[2 * i], r[2 * i + 1]);
  }
  for (int h = 0; h < 2; ++h) {  // rows 0..3, then 4..7
    u[4 * h + 0] = _mm256_unpacklo_epi64(t[4 * h], t[4 * h + 2]);
    u[4 * h + 1] = _mm256_unpackhi_epi64(t[4 * h], t[4 * h + 2]);
    u[4 * h + 2] = _mm256_unpacklo_epi64(t[4 * h + 1], t[4 * h + 3]);
    u[4 * h + 3] = _mm256_unpackhi_epi64(t[4 * h + 1], t[4 * h + 3]);
  }
  for (int k = 0; k < 4; ++k) {
    out[k] = _mm256_permute2x128_si256(u[k], u[4 + k], 0x20);
    out[k + 4] = _mm256_permute2x128_si256(u[k], u[4 + k], 0x31);
  }
}

// The activation rows as the lanes need them, per block b: 8 dwords (k) of L lanes, then the
// block's starting sums (-128 * sum xq), dx and s, each L lanes.
template <int L>
struct LaneActs {
  static constexpr size_t kBlockBytes = (8 + 3) * L * 4;
  uint8_t* base;
  const uint8_t* block(int64_t b) const { return base + static_cast<size_t>(b) * kBlockBytes; }

  LaneActs(const BlockQ8A* x, int64_t xs, int64_t g, int64_t nb, uint8_t* scratch) : base(scratch) {
    for (int64_t b = 0; b < nb; ++b) {
      uint8_t* pb = base + static_cast<size_t>(b) * kBlockBytes;
      auto* start = reinterpret_cast<int32_t*>(pb + 8 * L * 4);
      auto* dx = reinterpret_cast<float*>(start + L);
      float* sx = dx + L;
      for (int h = 0; h < L / 8; ++h) {
        __m256i rows[8], dwords[8];
        for (int i = 0; i < 8; ++i) {
          const int64_t row = 8 * h + i;
          rows[i] = row < g ? _mm256_loadu_si256(reinterpret_cast<const __m256i*>(x[row * xs + b].qs))
                            : _mm256_setzero_si256();
        }
        transpose8(rows, dwords);
        __m256i sum = _mm256_setzero_si256();
        for (int k = 0; k < 8; ++k) {
          _mm256_store_si256(reinterpret_cast<__m256i*>(pb + (k * L + 8 * h) * 4), dwords[k]);
          sum = _mm256_dpbusd_epi32(sum, _mm256_set1_epi8(1), dwords[k]);
        }
        _mm256_store_si256(reinterpret_cast<__m256i*>(start + 8 * h), _mm256_mullo_epi32(sum, _mm256_set1_epi32(-128)));
        for (int i = 0; i < 8; ++i) {
          const int64_t row = 8 * h + i;
          dx[8 * h + i] = row < g ? x[row * xs + b].d : 0.0f;
          sx[8 * h + i] = row < g ? x[row * xs + b].s : 0.0f;
        }
      }
    }
  }
};

// Weight rows[0..R) (a short group repeats its last row) against the activations in the lanes;
// y[g * ldy + r] for g < G, r < nwrite.
template <typename T, int L, int R>
void lane_rows(int64_t nb, const uint8_t* const* rows, const LaneActs<L>& xa, int64_t G, float* y, int64_t ldy,
               int nwrite) {
  using V = Lanes<L>;
  using Block = typename T::Block;
  typename V::F acc[R];
  for (int r = 0; r < R; ++r) acc[r] = V::zero();
  // The unsigned levels go through memory (a broadcast per dword): written a block ahead, so
  // the broadcasts read settled lines rather than waiting on store forwarding.
  alignas(32) uint8_t u[2][R][32];
  float d[2][R], m[2][R];
  const __m256i flip = _mm256_set1_epi8(static_cast<char>(0x80));
  auto unpack = [&](int64_t b, int slot) {
    const size_t off = static_cast<size_t>(b) * sizeof(Block);
    for (int r = 0; r < R; ++r) {
      const uint8_t* blk = rows[r] + off;
      _mm_prefetch(reinterpret_cast<const char*>(blk) + kPrefetchBytes, _MM_HINT_T0);
      _mm256_store_si256(reinterpret_cast<__m256i*>(u[slot][r]), _mm256_xor_si256(block_levels<T>(blk), flip));
      const BlockBytes<Block> wb{blk};
      d[slot][r] = half(wb.d());
      if constexpr (T::kHasMin) m[slot][r] = half(wb.m());
    }
  };
  unpack(0, 0);
  for (int64_t b = 0; b < nb; ++b) {
    const int cur = static_cast<int>(b & 1);
    if (b + 1 < nb) unpack(b + 1, cur ^ 1);
    const uint8_t* pb = xa.block(b);
    typename V::I sum[R];
    const typename V::I start = V::load(pb + 8 * L * 4);
    for (int r = 0; r < R; ++r) sum[r] = start;
#pragma GCC unroll 8
    for (int k = 0; k < 8; ++k) {
      const typename V::I xk = V::load(pb + k * L * 4);
      for (int r = 0; r < R; ++r) sum[r] = V::dot(sum[r], V::bcast(u[cur][r] + 4 * k), xk);
    }
    const typename V::F dx = V::loadf(reinterpret_cast<const float*>(pb + 9 * L * 4));
    for (int r = 0; r < R; ++r) acc[r] = V::scaled(acc[r], sum[r], d[cur][r], dx);
    if constexpr (T::kHasMin) {
      const typename V::F sx = V::loadf(reinterpret_cast<const float*>(pb + 10 * L * 4));
      for (int r = 0; r < R; ++r) acc[r] = V::fma(m[cur][r], sx, acc[r]);
    }
  }
  alignas(64) float out[L];
  for (int r = 0; r < nwrite; ++r) {
    V::storef(out, acc[r]);
    for (int64_t g = 0; g < G; ++g) y[g * ldy + r] = out[g];
  }
}

template <typename T, int L>
void lane_tiles(int64_t nb, const uint8_t* w, size_t ws, int64_t nw, const BlockQ8A* x, int64_t xs, int64_t g, float* y,
                int64_t ldy) {
  constexpr int R = 8;
  auto* scratch = reinterpret_cast<uint8_t*>(gemm_scratch(static_cast<size_t>(nb) * LaneActs<L>::kBlockBytes / 4 + 16));
  const LaneActs<L> xa(x, xs, g, nb, scratch);
  int64_t r = 0;
  for (; r + R <= nw; r += R) {
    const uint8_t* rows[R];
    for (int i = 0; i < R; ++i) rows[i] = w + (r + i) * ws;
    lane_rows<T, L, R>(nb, rows, xa, g, y + r, ldy, R);
  }
  if (r < nw) {
    const int left = static_cast<int>(nw - r);
    const uint8_t* rows[R];
    for (int i = 0; i < R; ++i) rows[i] = w + (r + (i < left ? i : left - 1)) * ws;
    lane_rows<T, L, R>(nb, rows, xa, g, y + r, ldy, left);
  }
}

template <typename T>
void q_tiles(int64_t n, const void* wv, size_t ws, int64_t nw, const BlockQ8A* x, int64_t xs, int64_t nx, float* y,
             int64_t ldy) {
  if (nx < kLanesMinRows) return q_tiles_quads<T>(n, wv, ws, nw, x, xs, nx, y, ldy);
  const auto* w = static_cast<const uint8_t*>(wv);
  const int64_t nb = n / kQuantBlock;
  for (int64_t m = 0; m < nx; m += 16) {
    const int64_t g = nx - m < 16 ? nx - m : 16;
    if (g <= 8)
      lane_tiles<T, 8>(nb, w, ws, nw, x + m * xs, xs, g, y + m * ldy, ldy);
    else
      lane_tiles<T, 16>(nb, w, ws, nw, x + m * xs, xs, g, y + m * ldy, ldy);
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
      const uint8_t* row =
          j < cols ? w + static_cast<size_t>(j) * ldb + static_cast<size_t>(b0) * sizeof(Block) : nullptr;
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
void gemm_q8_t(int64_t m, int64_t n, int64_t k, const BlockQ8A* a, int64_t lda, const uint8_t* w, size_t ldb, float* c,
               int64_t ldc) {
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
