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

template <typename T>
struct Tile4x4 {
  static constexpr int64_t kTileM = 4, kTileN = 4;
  static void run(int64_t nb, const BlockQ8A* a, int64_t lda, const uint8_t* b, size_t ldb, float* c, int64_t ldc) {
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
