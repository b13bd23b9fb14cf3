// gemm_q8 on AMX-INT8 (Intel's tile matrix unit, Sapphire Rapids and later): the encoder's large
// products of quantized weights with q8 activations, where the processor has it. Same contract
// and the same numbers as the AVX-512 VNNI gemm_q8 (int8_avx512.cpp), bit for bit: each depth
// block's integer sum is exact either way and is scaled in the same order, d * dx then (the _1
// types) + m * s.
//
// One TDPBSSD multiplies a 16 x 32 tile of signed activation bytes (xq as quantized) by a 32 x 16
// tile of signed weight levels (level - zero point) into a 16 x 16 tile of int32 sums: one depth
// block of 32 values for 16 rows x 16 columns. The sums leave the tile unit through memory and are
// scaled into 16 f32 accumulators with AVX-512; two blocks are in flight (two result tiles), so
// the tile unit works on one while the vector unit scales the other.
//
// Packed operands per depth block: activations 16 rows x 32 bytes, then dx[16] and s[16];
// weights 8 rows (groups of 4 depth values) x 16 columns x 4 bytes, the layout TDPBSSD reads,
// then d[16] and (the _1 types) m[16]. Rows and columns past the matrix are zeros.
//
// Compiled with the AVX-512 and AMX flags (file name); reached only through the table that
// cpu_features.cpp builds when the processor has AMX-INT8 and Linux granted this process the
// tile state (arch_prctl ARCH_REQ_XCOMP_PERM).
#if defined(__x86_64__) || defined(__i386__)
#if defined(__GNUC__) && !defined(__clang__)
// GCC 12 flags the intrinsics' own undefined pass-through operands (as in int8_avx512.cpp).
#pragma GCC diagnostic ignored "-Wuninitialized"
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#endif
#include <immintrin.h>

#include <cstddef>
#include <cstdint>
#include <cstring>

#include "simd/int8_levels_avx512.h"
#include "simd/kernels.h"
#include "simd/kernels_internal.h"

namespace hark::cpu::detail {
namespace {

constexpr int kTile = 16;     // rows and columns of a result tile
constexpr int64_t kKCB = 16;  // depth blocks per slice (as the VNNI GEMM: same sums, same order)
constexpr int64_t kNC =
    512;  // weight rows per packed block (larger than the VNNI GEMM's: A is packed once per block of them)
constexpr int64_t kMC = 96;  // activation rows per packed block (a multiple of kTile)

constexpr size_t kABlockBytes = kTile * 32 + kTile * 4 /* dx */ + kTile * 4 /* s */;
template <typename T>
constexpr size_t b_block_bytes() {
  return 8 * kTile * 4 + kTile * 4 /* d */ + (T::kHasMin ? kTile * 4 : 0) /* m */;
}

// The tile shapes: 0, 1 results (16 x 64 bytes); 2, 3 activations (16 x 32); 4, 5 weights (8 x 64).
struct alignas(64) TileConfig {
  uint8_t palette_id = 1;
  uint8_t start_row = 0;
  uint8_t reserved[14] = {};
  uint16_t colsb[16] = {64, 64, 32, 32, 64, 64};
  uint8_t rows[16] = {16, 16, 16, 16, 8, 8};
};

template <typename T>
void pack_b(int64_t cols, int64_t b0, int64_t kb, const uint8_t* w, size_t ldb, uint8_t* dst) {
  using Block = typename T::Block;
  constexpr size_t SB = b_block_bytes<T>();
  const __m256i group_at =
      _mm256_setr_epi32(0, kTile, 2 * kTile, 3 * kTile, 4 * kTile, 5 * kTile, 6 * kTile, 7 * kTile);
  const int64_t panels = (cols + kTile - 1) / kTile;
  for (int64_t pj = 0; pj < panels; ++pj) {
    uint8_t* panel = dst + static_cast<size_t>(pj * kb) * SB;
    for (int jj = 0; jj < kTile; ++jj) {
      const int64_t j = pj * kTile + jj;
      const uint8_t* row =
          j < cols ? w + static_cast<size_t>(j) * ldb + static_cast<size_t>(b0) * sizeof(Block) : nullptr;
      for (int64_t b = 0; b < kb; ++b) {
        uint8_t* pb = panel + static_cast<size_t>(b) * SB;
        auto* q32 = reinterpret_cast<int32_t*>(pb) + jj;
        auto* d = reinterpret_cast<float*>(pb + 8 * kTile * 4);
        if (!row) {
          _mm256_i32scatter_epi32(q32, group_at, _mm256_setzero_si256(), 4);
          d[jj] = 0;
          if constexpr (T::kHasMin) d[kTile + jj] = 0;
          continue;
        }
        const uint8_t* blk = row + static_cast<size_t>(b) * sizeof(Block);
        _mm256_i32scatter_epi32(q32, group_at, block_levels<T>(blk), 4);
        const BlockBytes<Block> wb{blk};
        d[jj] = half(wb.d());
        if constexpr (T::kHasMin) d[kTile + jj] = half(wb.m());
      }
    }
  }
}

void pack_a(int64_t rows, int64_t b0, int64_t kb, const BlockQ8A* a, int64_t lda, uint8_t* dst) {
  const int64_t panels = (rows + kTile - 1) / kTile;
  for (int64_t pi = 0; pi < panels; ++pi) {
    uint8_t* panel = dst + static_cast<size_t>(pi * kb) * kABlockBytes;
    for (int ii = 0; ii < kTile; ++ii) {
      const int64_t i = pi * kTile + ii;
      for (int64_t b = 0; b < kb; ++b) {
        uint8_t* pb = panel + static_cast<size_t>(b) * kABlockBytes;
        auto* dx = reinterpret_cast<float*>(pb + kTile * 32);
        float* s = dx + kTile;
        if (i >= rows) {
          std::memset(pb + ii * 32, 0, 32);
          dx[ii] = 0;
          s[ii] = 0;
          continue;
        }
        const BlockQ8A& xb = a[i * lda + b0 + b];
        std::memcpy(pb + ii * 32, xb.qs, 32);
        dx[ii] = xb.d;
        s[ii] = xb.s;
      }
    }
  }
}

// The 16 x 16 integer sums of one block (in `sums`) scaled into the accumulators.
template <typename T>
inline void scale_block(const int32_t* sums, const uint8_t* ab, const uint8_t* bb, __m512 (&acc)[kTile]) {
  const __m512 d = _mm512_loadu_ps(reinterpret_cast<const float*>(bb + 8 * kTile * 4));
  const float* dx = reinterpret_cast<const float*>(ab + kTile * 32);
#pragma GCC unroll 16
  for (int i = 0; i < kTile; ++i) {
    const __m512 v = _mm512_cvtepi32_ps(_mm512_load_si512(sums + i * kTile));
    acc[i] = _mm512_fmadd_ps(_mm512_mul_ps(v, d), _mm512_set1_ps(dx[i]), acc[i]);
  }
  if constexpr (T::kHasMin) {
    const __m512 m = _mm512_loadu_ps(reinterpret_cast<const float*>(bb + 8 * kTile * 4 + kTile * 4));
#pragma GCC unroll 16
    for (int i = 0; i < kTile; ++i) acc[i] = _mm512_fmadd_ps(m, _mm512_set1_ps(dx[kTile + i]), acc[i]);
  }
}

// c[i * ldc + j] (+)= the 16 x 16 tile of one activation panel and one weight panel over kb
// blocks, for i < mr, j < nr. Software-pipelined over the two result tiles: block b + 1's product
// is issued before block b's sums are scaled, so the tile unit and the vector unit overlap.
// (Every access to `acc` has a constant index once unrolled, so the accumulators stay in
// registers.)
template <typename T>
void micro_amx(int64_t kb, const uint8_t* ap, const uint8_t* bp, float* c, int64_t ldc, bool accumulate, int64_t mr,
               int64_t nr) {
  constexpr size_t SB = b_block_bytes<T>();
  alignas(64) int32_t sums[kTile * kTile];
  __m512 acc[kTile];
#pragma GCC unroll 16
  for (int i = 0; i < kTile; ++i) acc[i] = _mm512_setzero_ps();
  auto a_of = [&](int64_t b) { return ap + static_cast<size_t>(b) * kABlockBytes; };
  auto b_of = [&](int64_t b) { return bp + static_cast<size_t>(b) * SB; };

  _tile_loadd(2, a_of(0), 32);
  _tile_loadd(4, b_of(0), 64);
  _tile_zero(0);
  _tile_dpbssd(0, 2, 4);
  for (int64_t b = 0; b < kb; b += 2) {
    const bool odd = b + 1 < kb;
    if (odd) {
      _tile_loadd(3, a_of(b + 1), 32);
      _tile_loadd(5, b_of(b + 1), 64);
      _tile_zero(1);
      _tile_dpbssd(1, 3, 5);
    }
    _tile_stored(0, sums, 64);
    scale_block<T>(sums, a_of(b), b_of(b), acc);
    if (odd) {
      if (b + 2 < kb) {
        _tile_loadd(2, a_of(b + 2), 32);
        _tile_loadd(4, b_of(b + 2), 64);
        _tile_zero(0);
        _tile_dpbssd(0, 2, 4);
      }
      _tile_stored(1, sums, 64);
      scale_block<T>(sums, a_of(b + 1), b_of(b + 1), acc);
    }
  }
  const __mmask16 live = nr >= kTile ? static_cast<__mmask16>(0xFFFF) : static_cast<__mmask16>((1u << nr) - 1);
#pragma GCC unroll 16
  for (int i = 0; i < kTile; ++i) {
    if (i >= mr) break;
    float* ci = c + i * ldc;
    __m512 v = acc[i];
    if (accumulate) v = _mm512_add_ps(v, _mm512_maskz_loadu_ps(live, ci));
    _mm512_mask_storeu_ps(ci, live, v);
  }
}

template <typename T>
void gemm_amx_t(int64_t m, int64_t n, int64_t k, const BlockQ8A* a, int64_t lda, const uint8_t* w, size_t ldb, float* c,
                int64_t ldc) {
  if (m <= 0 || n <= 0) return;
  const int64_t nb = k / kQuantBlock;
  if (nb <= 0) {
    for (int64_t i = 0; i < m; ++i) std::memset(c + i * ldc, 0, static_cast<size_t>(n) * sizeof(float));
    return;
  }
  // Equal depth slices, as the VNNI GEMM cuts them (the slices' sums meet in C in the same order).
  const int64_t passes = (nb + kKCB - 1) / kKCB;
  const int64_t kstep = (nb + passes - 1) / passes;
  constexpr size_t SB = b_block_bytes<T>();
  const size_t b_bytes = static_cast<size_t>((kNC / kTile) * kstep) * SB;
  const size_t a_bytes = static_cast<size_t>((kMC / kTile) * kstep) * kABlockBytes;
  auto* bp = reinterpret_cast<uint8_t*>(gemm_scratch((b_bytes + a_bytes) / sizeof(float) + 16));
  uint8_t* ap = bp + b_bytes;

  static const TileConfig config;
  _tile_loadconfig(&config);
  for (int64_t jc = 0; jc < n; jc += kNC) {
    const int64_t nc = n - jc < kNC ? n - jc : kNC;
    for (int64_t pc = 0; pc < nb; pc += kstep) {
      const int64_t kb = nb - pc < kstep ? nb - pc : kstep;
      const bool accumulate = pc > 0;
      pack_b<T>(nc, pc, kb, w + static_cast<size_t>(jc) * ldb, ldb, bp);
      for (int64_t ic = 0; ic < m; ic += kMC) {
        const int64_t mc = m - ic < kMC ? m - ic : kMC;
        pack_a(mc, pc, kb, a + ic * lda, lda, ap);
        for (int64_t ir = 0; ir < mc; ir += kTile) {
          const int64_t mr = mc - ir < kTile ? mc - ir : kTile;
          const uint8_t* apanel = ap + static_cast<size_t>((ir / kTile) * kb) * kABlockBytes;
          for (int64_t jr = 0; jr < nc; jr += kTile) {
            const int64_t nr = nc - jr < kTile ? nc - jr : kTile;
            const uint8_t* bpanel = bp + static_cast<size_t>((jr / kTile) * kb) * SB;
            micro_amx<T>(kb, apanel, bpanel, c + (ic + ir) * ldc + jc + jr, ldc, accumulate, mr, nr);
          }
        }
      }
    }
  }
  _tile_release();
}

}  // namespace

void amx_gemm_q8(DType type, int64_t m, int64_t n, int64_t k, const BlockQ8A* a, int64_t lda, const void* b, size_t ldb,
                 float* c, int64_t ldc) {
  const auto* w = static_cast<const uint8_t*>(b);
  switch (type) {
    case DType::Q4_0: return gemm_amx_t<Q4_0>(m, n, k, a, lda, w, ldb, c, ldc);
    case DType::Q4_1: return gemm_amx_t<Q4_1>(m, n, k, a, lda, w, ldb, c, ldc);
    case DType::Q5_0: return gemm_amx_t<Q5_0>(m, n, k, a, lda, w, ldb, c, ldc);
    case DType::Q5_1: return gemm_amx_t<Q5_1>(m, n, k, a, lda, w, ldb, c, ldc);
    default: return gemm_amx_t<Q8_0>(m, n, k, a, lda, w, ldb, c, ldc);
  }
}

}  // namespace hark::cpu::detail
#endif
