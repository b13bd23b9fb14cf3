// The I8mm kernel table: Dotprod's, with an int8 GEMM on ARMv8.6's matrix multiply (smmla: a 2x8
// by 8x2 byte product into a 2x2 int32 tile, twice sdot's products an instruction; Cortex-A510/
// A710/X2 and later, Neoverse V1/N2, Graviton 3, Apple M2). Compiled with
// -march=armv8.6-a+dotprod+i8mm (CMakeLists.txt, by file name) and only called after
// cpu_features.cpp found I8MM in AT_HWCAP2.
//
// Only the GEMM changes: a dot of one activation row (the decoder's single-token step) would fill
// half of each smmla, so the dots stay sdot's. A block's integer dot is exact either way, and the
// scaling and the sums are dot_blocks' steps lane by lane (neon_levels.h), so every result is
// the dots' bits, as on the dotprod level.
#if defined(__aarch64__)
#include <arm_neon.h>

#include "simd/kernels_internal.h"
#include "simd/kernels_neon.h"
#include "simd/neon_levels.h"

namespace hark::cpu::detail {
namespace {

using Dots = QuantDots<sdot16>;

// Two rows' 8-byte chunk `c` (0..3 of a block's 32 bytes, given as its two 16-byte halves) side by
// side: the 2x8 operand smmla takes.
inline int8x16_t pair_chunk(int8x16_t lo0, int8x16_t hi0, int8x16_t lo1, int8x16_t hi1, int c) {
  const int64x2_t r0 = vreinterpretq_s64_s8(c < 2 ? lo0 : hi0), r1 = vreinterpretq_s64_s8(c < 2 ? lo1 : hi1);
  return vreinterpretq_s8_s64(c % 2 == 0 ? vzip1q_s64(r0, r1) : vzip2q_s64(r0, r1));
}

// 4 activation rows x 4 weight rows as four 2x2 smmla tiles; tile (p, q)'s lanes are
// (2p, 2q), (2p, 2q+1), (2p+1, 2q), (2p+1, 2q+1) as (activation row, weight row). Each lane is
// scaled and accumulated as dot_blocks does for its result (lane block % 4 of its accumulator is
// acc[block % 4][p][q]'s lane), so every result is the dot's bits.
template <typename T>
struct Tile4x4 {
  static constexpr int64_t kTileM = 4, kTileN = 4;
  static void run(int64_t nb, const BlockQ8A* a, int64_t lda, const uint8_t* b, size_t ldb, float* c, int64_t ldc) {
    const int64_t nb4 = nb / 4 * 4;
    float32x4_t acc[4][2][2], sum[2][2] = {{vdupq_n_f32(0), vdupq_n_f32(0)}, {vdupq_n_f32(0), vdupq_n_f32(0)}};
    for (auto& phase : acc)
      for (auto& row : phase)
        for (auto& v : row) v = vdupq_n_f32(0);
    const auto add_lanes = [&] {
      for (int p = 0; p < 2; ++p)
        for (int q = 0; q < 2; ++q) sum[p][q] = add_phases(acc[0][p][q], acc[1][p][q], acc[2][p][q], acc[3][p][q]);
    };
    for (int64_t blk = 0; blk < nb; ++blk) {
      int8x16_t wlo[4], whi[4];
      float d[4], m[4] = {0, 0, 0, 0};
      for (int j = 0; j < 4; ++j) T::levels(b + static_cast<size_t>(j) * ldb, blk, &wlo[j], &whi[j], &d[j], &m[j]);
      int8x16_t w[2][4];
      for (int q = 0; q < 2; ++q)
        for (int ch = 0; ch < 4; ++ch)
          w[q][ch] = pair_chunk(wlo[2 * q], whi[2 * q], wlo[2 * q + 1], whi[2 * q + 1], ch);
      if (blk == nb4) add_lanes();
      for (int p = 0; p < 2; ++p) {
        const BlockQ8A &x0 = a[(2 * p) * lda + blk], &x1 = a[(2 * p + 1) * lda + blk];
        const int8x16_t l0 = vld1q_s8(x0.qs), h0 = vld1q_s8(x0.qs + 16);
        const int8x16_t l1 = vld1q_s8(x1.qs), h1 = vld1q_s8(x1.qs + 16);
        int8x16_t x[4];
        for (int ch = 0; ch < 4; ++ch) x[ch] = pair_chunk(l0, h0, l1, h1, ch);
        const float32x4_t xd = vcombine_f32(vdup_n_f32(x0.d), vdup_n_f32(x1.d));
        const float32x4_t xs = vcombine_f32(vdup_n_f32(x0.s), vdup_n_f32(x1.s));
        for (int q = 0; q < 2; ++q) {
          int32x4_t isum = vdupq_n_s32(0);
          for (int ch = 0; ch < 4; ++ch) isum = vmmlaq_s32(isum, x[ch], w[q][ch]);
          const float32x4_t s = vcvtq_f32_s32(isum);
          const float32x2_t dq = vld1_f32(&d[2 * q]), mq = vld1_f32(&m[2 * q]);
          const float32x4_t dv = vcombine_f32(dq, dq), mv = vcombine_f32(mq, mq);
          if (blk < nb4)
            add_block_fused<T::kMin>(acc[blk & 3][p][q], dv, xd, s, mv, xs);
          else
            add_block_rounded<T::kMin>(sum[p][q], dv, xd, s, mv, xs);
        }
      }
    }
    if (nb == nb4) add_lanes();
    for (int p = 0; p < 2; ++p)
      for (int q = 0; q < 2; ++q) {
        vst1_f32(c + (2 * p) * ldc + 2 * q, vget_low_f32(sum[p][q]));
        vst1_f32(c + (2 * p + 1) * ldc + 2 * q, vget_high_f32(sum[p][q]));
      }
  }
};

void gemm_q8(DType type, int64_t m, int64_t n, int64_t k, const BlockQ8A* a, int64_t lda, const void* b, size_t ldb,
             float* c, int64_t ldc) {
  gemm_q8_tiled<Tile4x4>(type, m, n, k, a, lda, b, ldb, c, ldc, Dots::for_type);
}

}  // namespace

const Kernels* i8mm_kernels() {
  static const Kernels k = [] {
    Kernels t = neon::table(SimdLevel::I8mm, Dots::kEntries);
    t.gemm_q8 = gemm_q8;
    return t;
  }();
  return &k;
}

}  // namespace hark::cpu::detail
#endif  // __aarch64__
