// The Dotprod kernel table: NEON with ARMv8.2's int8 dot product (sdot: four byte products summed
// into each int32 lane in one instruction; Cortex-A55/A76 and later, every recent phone core).
// Compiled with -march=armv8.2-a+dotprod (CMakeLists.txt, by file name) and only called after
// cpu_features.cpp found ASIMDDP in AT_HWCAP; everything here is internal to the file.
//
// The quantized dots replace NEON's smull + sadalp pairs (four instructions a 16-byte half) with
// one sdot; a block's integer dot is exact either way, and the scaling and the sum over blocks are
// the scalar table's expressions in its order, so the results are its bits exactly.
#if defined(__aarch64__)
#include <arm_neon.h>

#include <cstring>

#include "runtime/unaligned.h"
#include "simd/kernels_internal.h"
#include "simd/kernels_neon.h"
#include "simd/neon_levels.h"

namespace hark::cpu::detail {
namespace {

// sdot: four byte products summed into each int32 lane.
inline int32x4_t sdot16(int32x4_t acc, int8x16_t a, int8x16_t b) { return vdotq_s32(acc, a, b); }

using Dots = QuantDots<sdot16>;

// ---- the int8 GEMM (encoder products of quantized weights) -------------------------------------
// Tiles of 4 activation rows x 4 weight rows: each weight block's levels are unpacked once for
// the 4 activation rows, each activation block loaded once for the 4 weight rows. Every result is
// the dot's own expression (block by block: d * dx * integer sum [+ m * s], added in block order),
// so the GEMM gives dot_q_tiles' bits.

template <typename Block, int kZero, bool kHasMin, bool kFiveBit>
struct Unsigned {
  static void levels(const uint8_t* row, int64_t b, int8x16_t* lo, int8x16_t* hi, float* d, float* m) {
    const auto w = block_at<Block>(row, b);
    block_levels_s8<kZero, kFiveBit>(w, lo, hi);
    *d = f16_to_f32(w.d());
    if constexpr (kHasMin) *m = f16_to_f32(w.m());
  }
  static constexpr bool kMin = kHasMin;
};

struct Q8 {
  static void levels(const uint8_t* row, int64_t b, int8x16_t* lo, int8x16_t* hi, float* d, float*) {
    const auto w = block_at<BlockQ8_0>(row, b);
    *lo = vld1q_s8(w.qs_i8());
    *hi = vld1q_s8(w.qs_i8() + 16);
    *d = f16_to_f32(w.d());
  }
  static constexpr bool kMin = false;
};

template <typename T>
void gemm_tile4(int64_t nb, const BlockQ8A* a, int64_t lda, const uint8_t* b, size_t ldb, float* c, int64_t ldc) {
  float sum[4][4] = {};
  for (int64_t blk = 0; blk < nb; ++blk) {
    int8x16_t lo[4], hi[4];
    float d[4], m[4] = {0, 0, 0, 0};
    for (int j = 0; j < 4; ++j) T::levels(b + static_cast<size_t>(j) * ldb, blk, &lo[j], &hi[j], &d[j], &m[j]);
    for (int i = 0; i < 4; ++i) {
      const BlockQ8A& x = a[i * lda + blk];
      const int8x16_t xl = vld1q_s8(x.qs), xh = vld1q_s8(x.qs + 16);
      for (int j = 0; j < 4; ++j) {
        const int32x4_t acc = vdotq_s32(vdotq_s32(vdupq_n_s32(0), lo[j], xl), hi[j], xh);
        float v = d[j] * x.d * static_cast<float>(vaddvq_s32(acc));
        if constexpr (T::kMin) v += m[j] * x.s;
        sum[i][j] += v;
      }
    }
  }
  for (int i = 0; i < 4; ++i)
    for (int j = 0; j < 4; ++j) c[i * ldc + j] = sum[i][j];
}

template <typename T>
void gemm_q8_as(DType type, int64_t m, int64_t n, int64_t k, const BlockQ8A* a, int64_t lda, const void* bv, size_t ldb,
                float* c, int64_t ldc) {
  const auto* b = static_cast<const uint8_t*>(bv);
  const int64_t nb = k / kQuantBlock;
  const int64_t m4 = m / 4 * 4, n4 = n / 4 * 4;
  for (int64_t j = 0; j < n4; j += 4)
    for (int64_t i = 0; i < m4; i += 4)
      gemm_tile4<T>(nb, a + i * lda, lda, b + static_cast<size_t>(j) * ldb, ldb, c + i * ldc + j, ldc);
  // The edges through the dots themselves (the same bits).
  const Dots::Fn dot = Dots::for_type(type);
  for (int64_t i = 0; i < m; ++i)
    for (int64_t j = i < m4 ? n4 : 0; j < n; ++j)
      c[i * ldc + j] = dot(k, b + static_cast<size_t>(j) * ldb, a + i * lda);
}

void gemm_q8(DType type, int64_t m, int64_t n, int64_t k, const BlockQ8A* a, int64_t lda, const void* b, size_t ldb,
             float* c, int64_t ldc) {
  switch (type) {
    case DType::Q4_0: return gemm_q8_as<Unsigned<BlockQ4_0, 8, false, false>>(type, m, n, k, a, lda, b, ldb, c, ldc);
    case DType::Q4_1: return gemm_q8_as<Unsigned<BlockQ4_1, 0, true, false>>(type, m, n, k, a, lda, b, ldb, c, ldc);
    case DType::Q5_0: return gemm_q8_as<Unsigned<BlockQ5_0, 16, false, true>>(type, m, n, k, a, lda, b, ldb, c, ldc);
    case DType::Q5_1: return gemm_q8_as<Unsigned<BlockQ5_1, 0, true, true>>(type, m, n, k, a, lda, b, ldb, c, ldc);
    default: return gemm_q8_as<Q8>(type, m, n, k, a, lda, b, ldb, c, ldc);
  }
}

}  // namespace

const Kernels* dotprod_kernels() {
  static const Kernels k = [] {
    Kernels t = neon::table(SimdLevel::Dotprod, Dots::kEntries);
    t.gemm_q8 = gemm_q8;
    return t;
  }();
  return &k;
}

// No i8mm table yet (smmla GEMM): cpu_features.cpp then stops at Dotprod.
const Kernels* i8mm_kernels() { return nullptr; }

}  // namespace hark::cpu::detail
#endif  // __aarch64__
