// The ARM tables' quantized dots, over the instruction that sums a block's byte products (NEON's
// smull + sadalp, or sdot): the levels of a q4 / q5 block as two int8 vectors, and the dots
// themselves. In an anonymous namespace, like gemm_blocked.h: each ARM translation unit (NEON,
// +dotprod) gets its own copy compiled with its own flags, never one shared through the linker.
#pragma once
#if defined(__aarch64__)
#include <arm_neon.h>

#include <cstddef>
#include <cstdint>
#include <cstring>

#include "runtime/dtype.h"
#include "runtime/quant.h"
#include "runtime/unaligned.h"
#include "simd/kernels_neon.h"

namespace hark::cpu::detail {
namespace {

// A block's f16 scale as f32 in one instruction (fcvt), where the portable f16_to_f32 is a call
// with branches, once per 32 products: a third of a dotprod q8_0 dot's instructions. Every f16
// value converts exactly either way (NaN payloads aside).
inline float scale_f32(f16_t h) {
  __fp16 v;
  std::memcpy(&v, &h, sizeof v);
  return static_cast<float>(v);
}

// The 32 levels in value order (low nibbles, then high; bit j of qh as level j's fifth bit for
// q5), minus the zero point.
template <int kZero, bool kFiveBit, typename Block>
inline void block_levels_s8(const BlockBytes<Block>& w, int8x16_t* lo, int8x16_t* hi) {
  const uint8x16_t qs = vld1q_u8(w.qs());
  uint8x16_t l = vandq_u8(qs, vdupq_n_u8(0x0F));
  uint8x16_t h = vshrq_n_u8(qs, 4);
  if constexpr (kFiveBit) {
    // The bytes of qh spread over the lanes they cover, each lane testing its own bit.
    uint8_t qh[4];
    std::memcpy(qh, w.p + offsetof(Block, qh), 4);
    static constexpr uint8_t kBits[16] = {1, 2, 4, 8, 16, 32, 64, 128, 1, 2, 4, 8, 16, 32, 64, 128};
    const uint8x16_t bits = vld1q_u8(kBits);
    l = vorrq_u8(l, vandq_u8(vtstq_u8(vcombine_u8(vdup_n_u8(qh[0]), vdup_n_u8(qh[1])), bits), vdupq_n_u8(0x10)));
    h = vorrq_u8(h, vandq_u8(vtstq_u8(vcombine_u8(vdup_n_u8(qh[2]), vdup_n_u8(qh[3])), bits), vdupq_n_u8(0x10)));
  }
  *lo = vsubq_s8(vreinterpretq_s8_u8(l), vdupq_n_s8(kZero));
  *hi = vsubq_s8(vreinterpretq_s8_u8(h), vdupq_n_s8(kZero));
}

// A weight row's block as the dots and the int8 GEMMs take it: its 32 levels as two vectors, its
// scale and (q4_1, q5_1) its min, which multiplies the activation block's sum.
template <typename Block, int kZero, bool kHasMin, bool kFiveBit>
struct UnsignedLevels {
  static void levels(const uint8_t* row, int64_t b, int8x16_t* lo, int8x16_t* hi, float* d, float* m) {
    const auto w = block_at<Block>(row, b);
    block_levels_s8<kZero, kFiveBit>(w, lo, hi);
    *d = scale_f32(w.d());
    if constexpr (kHasMin) *m = scale_f32(w.m());
  }
  static constexpr bool kMin = kHasMin;
};

struct Q8Levels {
  static void levels(const uint8_t* row, int64_t b, int8x16_t* lo, int8x16_t* hi, float* d, float*) {
    const auto w = block_at<BlockQ8_0>(row, b);
    *lo = vld1q_s8(w.qs_i8());
    *hi = vld1q_s8(w.qs_i8() + 16);
    *d = scale_f32(w.d());
  }
  static constexpr bool kMin = false;
};

using LevelsQ4_0 = UnsignedLevels<BlockQ4_0, 8, false, false>;
using LevelsQ4_1 = UnsignedLevels<BlockQ4_1, 0, true, false>;
using LevelsQ5_0 = UnsignedLevels<BlockQ5_0, 16, false, true>;
using LevelsQ5_1 = UnsignedLevels<BlockQ5_1, 0, true, true>;

// A block's results, a result a lane (d, dx: the weight and activation scales; s: the integer
// sums; m, xs: the weight min and the activation sum, for q4_1 / q5_1), into their sums, as
// dot_blocks takes a block. Before a row's last multiple of 4 blocks, into the accumulator of the
// block's phase (block % 4): acc + (d * dx) * s, then acc + m * xs, each fused. After it, each
// rounded (d * dx * s [+ m * xs]) and added to the sum. These steps in one place keep every GEMM
// tile's results the bits of its dots.
template <bool kMin>
inline void add_block_fused(float32x4_t& phase, float32x4_t d, float32x4_t dx, float32x4_t s, float32x4_t m,
                            float32x4_t xs) {
  phase = vfmaq_f32(phase, vmulq_f32(d, dx), s);
  if constexpr (kMin) phase = vfmaq_f32(phase, m, xs);
}
template <bool kMin>
inline void add_block_rounded(float32x4_t& sum, float32x4_t d, float32x4_t dx, float32x4_t s, float32x4_t m,
                              float32x4_t xs) {
  float32x4_t v = vmulq_f32(vmulq_f32(d, dx), s);
  if constexpr (kMin) v = vaddq_f32(v, vmulq_f32(m, xs));
  sum = vaddq_f32(sum, v);
}

// The four phase accumulators of a result added as faddp adds a vector's lanes: (p0 + p1) + (p2 + p3).
inline float32x4_t add_phases(float32x4_t p0, float32x4_t p1, float32x4_t p2, float32x4_t p3) {
  return vaddq_f32(vaddq_f32(p0, p1), vaddq_f32(p2, p3));
}

#if defined(__ARM_FEATURE_DOTPROD)
// sdot: four byte products summed into each int32 lane (the dotprod and i8mm files' block dot).
inline int32x4_t sdot16(int32x4_t acc, int8x16_t a, int8x16_t b) { return vdotq_s32(acc, a, b); }
#endif

// The sum over a row's blocks, as every ARM quantized kernel computes it. A block's integer dot is
// exact whatever the instruction (Dot(acc, levels, bytes) adds 16 level x byte products into
// acc). Blocks 4k .. 4k+3 go to the four lanes of one f32 accumulator (lane p: acc + (d * dx) *
// sum, then acc + m * s, each fused), the lanes are added as faddp adds them ((l0 + l1) + (l2 +
// l3)), and the blocks after the last multiple of 4 follow one by one (d * dx * sum [+ m * s],
// then added). Four blocks share one conversion, one scaling and one accumulate, a third of a
// block's instructions on its own. The GEMM tiles (kernels_dotprod.cpp, kernels_i8mm.cpp) take
// the same steps for each result, so a GEMM gives its dots' bits.
template <typename L, int32x4_t (*Dot)(int32x4_t, int8x16_t, int8x16_t)>
inline float dot_blocks(int64_t n, const void* wv, const BlockQ8A* x) {
  const auto* w = static_cast<const uint8_t*>(wv);
  const int64_t nb = n / kQuantBlock, nb4 = nb / 4 * 4;
  float32x4_t acc = vdupq_n_f32(0);
  for (int64_t b = 0; b < nb4; b += 4) {
    int32x4_t s[4];
    float d[4], m[4] = {0, 0, 0, 0}, dx[4], xs[4];
    for (int i = 0; i < 4; ++i) {
      int8x16_t lo, hi;
      L::levels(w, b + i, &lo, &hi, &d[i], &m[i]);
      s[i] = Dot(Dot(vdupq_n_s32(0), lo, vld1q_s8(x[b + i].qs)), hi, vld1q_s8(x[b + i].qs + 16));
      dx[i] = x[b + i].d;
      xs[i] = x[b + i].s;
    }
    const int32x4_t sums = vpaddq_s32(vpaddq_s32(s[0], s[1]), vpaddq_s32(s[2], s[3]));
    add_block_fused<L::kMin>(acc, vld1q_f32(d), vld1q_f32(dx), vcvtq_f32_s32(sums), vld1q_f32(m), vld1q_f32(xs));
  }
  float sum = vaddvq_f32(acc);
  for (int64_t b = nb4; b < nb; ++b) {
    int8x16_t lo, hi;
    float d, m = 0;
    L::levels(w, b, &lo, &hi, &d, &m);
    const int32x4_t s = Dot(Dot(vdupq_n_s32(0), lo, vld1q_s8(x[b].qs)), hi, vld1q_s8(x[b].qs + 16));
    float v = d * x[b].d * static_cast<float>(vaddvq_s32(s));
    if constexpr (L::kMin) v += m * x[b].s;
    sum += v;
  }
  return sum;
}

// An int8 GEMM for every weight type, from a tile kernel over one of the level types above:
// Tile<Levels>::run(nb, a, lda, b, ldb, c, ldc) computes kTileM x kTileN results; the edges go
// through `dot` (the same bits: every tile takes dot_blocks' steps).
template <template <typename> class Tile, typename DotFor>
inline void gemm_q8_tiled(DType type, int64_t m, int64_t n, int64_t k, const BlockQ8A* a, int64_t lda, const void* bv,
                          size_t ldb, float* c, int64_t ldc, DotFor dot_for) {
  const auto run = [&](auto levels) {
    using T = Tile<decltype(levels)>;
    const auto* b = static_cast<const uint8_t*>(bv);
    const int64_t nb = k / kQuantBlock;
    const int64_t mt = m / T::kTileM * T::kTileM, nt = n / T::kTileN * T::kTileN;
    for (int64_t j = 0; j < nt; j += T::kTileN)
      for (int64_t i = 0; i < mt; i += T::kTileM)
        T::run(nb, a + i * lda, lda, b + static_cast<size_t>(j) * ldb, ldb, c + i * ldc + j, ldc);
    const auto dot = dot_for(type);
    for (int64_t i = 0; i < m; ++i)
      for (int64_t j = i < mt ? nt : 0; j < n; ++j)
        c[i * ldc + j] = dot(k, b + static_cast<size_t>(j) * ldb, a + i * lda);
  };
  switch (type) {
    case DType::Q4_0: return run(LevelsQ4_0{});
    case DType::Q4_1: return run(LevelsQ4_1{});
    case DType::Q5_0: return run(LevelsQ5_0{});
    case DType::Q5_1: return run(LevelsQ5_1{});
    default: return run(Q8Levels{});
  }
}

// Every quantized entry of a kernel table over one block-dot instruction: the dot per weight type,
// dot_q_rows, and dot_q_tiles row by row (a weight row's results are the same however the rows
// are split over threads).
template <int32x4_t (*Dot)(int32x4_t, int8x16_t, int8x16_t)>
struct QuantDots {
  static float q4_0(int64_t n, const void* w, const BlockQ8A* x) { return dot_blocks<LevelsQ4_0, Dot>(n, w, x); }
  static float q4_1(int64_t n, const void* w, const BlockQ8A* x) { return dot_blocks<LevelsQ4_1, Dot>(n, w, x); }
  static float q5_0(int64_t n, const void* w, const BlockQ8A* x) { return dot_blocks<LevelsQ5_0, Dot>(n, w, x); }
  static float q5_1(int64_t n, const void* w, const BlockQ8A* x) { return dot_blocks<LevelsQ5_1, Dot>(n, w, x); }
  static float q8_0(int64_t n, const void* w, const BlockQ8A* x) { return dot_blocks<Q8Levels, Dot>(n, w, x); }

  using Fn = float (*)(int64_t n, const void* w, const BlockQ8A* x);
  static Fn for_type(DType type) {
    switch (type) {
      case DType::Q4_0: return q4_0;
      case DType::Q4_1: return q4_1;
      case DType::Q5_0: return q5_0;
      case DType::Q5_1: return q5_1;
      default: return q8_0;
    }
  }

  static void rows(DType type, int64_t n, const void* w, const BlockQ8A* x, int64_t xs, int64_t nx, float* y,
                   int64_t ys) {
    const Fn dot = for_type(type);
    for (int64_t i = 0; i < nx; ++i) y[i * ys] = dot(n, w, x + i * xs);
  }

  static void tiles(DType type, int64_t n, const void* w, size_t ws, int64_t nw, const BlockQ8A* x, int64_t xs,
                    int64_t nx, float* y, int64_t ldy) {
    for (int64_t r = 0; r < nw; ++r)
      rows(type, n, static_cast<const uint8_t*>(w) + static_cast<size_t>(r) * ws, x, xs, nx, y + r, ldy);
  }

  // The table's quantized entries (kernels_neon.h's QDots).
  static constexpr neon::QDots kEntries{q4_0, q4_1, q5_0, q5_1, q8_0, rows, tiles};
};

}  // namespace
}  // namespace hark::cpu::detail
#endif
