// The Dotprod kernel table: NEON with ARMv8.2's int8 dot product (sdot: four byte products summed
// into each int32 lane in one instruction; Cortex-A55/A76 and later, every recent phone core).
// Compiled with -march=armv8.2-a+dotprod (CMakeLists.txt, by file name) and only called after
// cpu_features.cpp found ASIMDDP in AT_HWCAP; everything here is internal to the file.
//
// The quantized dots replace NEON's smull + sadalp pairs (four instructions a 16-byte half) with
// one sdot; a block's integer dot is exact either way and the rest is neon_levels.h's dot_blocks,
// so the results are the NEON table's bits.
#if defined(__aarch64__)
#include <arm_neon.h>

#include <cstring>

#include "runtime/unaligned.h"
#include "simd/kernels_internal.h"
#include "simd/kernels_neon.h"
#include "simd/neon_levels.h"

namespace hark::cpu::detail {
namespace {

using Dots = QuantDots<sdot16>;

// ---- the int8 GEMM (encoder products of quantized weights) -------------------------------------
// Tiles of 4 activation rows x 4 weight rows: each weight block's levels are unpacked once for
// the 4 activation rows, each activation block loaded once for the 4 weight rows. A row's four
// block sums go to one vector (lanes: weight rows), scaled and accumulated as dot_blocks does
// for each result (lane block % 4 of its accumulator is acc[block % 4][i]'s lane j), so every
// result is the dot's bits.
template <typename T>
struct Tile4x4 {
  static constexpr int64_t kTileM = 4, kTileN = 4;
  static void run(int64_t nb, const BlockQ8A* a, int64_t lda, const uint8_t* b, size_t ldb, float* c, int64_t ldc) {
    const int64_t nb4 = nb / 4 * 4;
    float32x4_t acc[4][4];
    for (auto& phase : acc)
      for (auto& v : phase) v = vdupq_n_f32(0);
    float32x4_t sum[4] = {vdupq_n_f32(0), vdupq_n_f32(0), vdupq_n_f32(0), vdupq_n_f32(0)};
    int8x16_t lo[4], hi[4];
    float d[4], m[4] = {0, 0, 0, 0};
    const auto sums_of = [&](const BlockQ8A& x) {
      const int8x16_t xl = vld1q_s8(x.qs), xh = vld1q_s8(x.qs + 16);
      int32x4_t s[4];
      for (int j = 0; j < 4; ++j) s[j] = vdotq_s32(vdotq_s32(vdupq_n_s32(0), lo[j], xl), hi[j], xh);
      return vcvtq_f32_s32(vpaddq_s32(vpaddq_s32(s[0], s[1]), vpaddq_s32(s[2], s[3])));
    };
    for (int64_t blk = 0; blk < nb; ++blk) {
      for (int j = 0; j < 4; ++j) T::levels(b + static_cast<size_t>(j) * ldb, blk, &lo[j], &hi[j], &d[j], &m[j]);
      const float32x4_t dv = vld1q_f32(d), mv = vld1q_f32(m);
      if (blk == nb4)
        for (int i = 0; i < 4; ++i) sum[i] = add_phases(acc[0][i], acc[1][i], acc[2][i], acc[3][i]);
      for (int i = 0; i < 4; ++i) {
        const BlockQ8A& x = a[i * lda + blk];
        const float32x4_t dx = vdupq_n_f32(x.d), s = sums_of(x), xs = vdupq_n_f32(x.s);
        if (blk < nb4)
          add_block_fused<T::kMin>(acc[blk & 3][i], dv, dx, s, mv, xs);
        else
          add_block_rounded<T::kMin>(sum[i], dv, dx, s, mv, xs);
      }
    }
    if (nb == nb4)
      for (int i = 0; i < 4; ++i) sum[i] = add_phases(acc[0][i], acc[1][i], acc[2][i], acc[3][i]);
    for (int i = 0; i < 4; ++i) vst1q_f32(c + i * ldc, sum[i]);
  }
};

void gemm_q8(DType type, int64_t m, int64_t n, int64_t k, const BlockQ8A* a, int64_t lda, const void* b, size_t ldb,
             float* c, int64_t ldc) {
  gemm_q8_tiled<Tile4x4>(type, m, n, k, a, lda, b, ldb, c, ldc, Dots::for_type);
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

}  // namespace hark::cpu::detail
#endif  // __aarch64__
