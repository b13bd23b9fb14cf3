// The cache-blocked driver around a GEMM micro-kernel, shared by every kernel level.
//
//   C(i, j) = sum_p A(i, p) * B(j, p)   (A: m rows of k, B: n rows of k, both row-major)
//
// Both operands are "one row per output": A rows are activations, B rows are weight rows in
// file layout. The driver copies blocks of them into panels laid out the way the micro-kernel
// reads them (MR values of A and NR values of B per step of p, contiguous), zero-padded to whole
// panels, so the micro-kernel has no edge cases and streams memory linearly:
//
//   for each NC-wide block of B columns (rows of B):
//     for each KC-deep slice of p:        pack B block  (KC x NC, stays in L2)
//       for each MC-tall block of A:      pack A block  (MC x KC)
//         for each MR-row panel of A:     (MR x KC, stays in L1 across the next loop)
//           for each NR-column panel of B: micro-kernel -> MR x NR tile of C
//
// Each ISA translation unit includes this and instantiates it with its own micro-kernel and block
// sizes, so everything here lives in an anonymous namespace: one copy per instruction set, never
// shared through the linker.
#pragma once
#if defined(__AVX512F__)
#include <immintrin.h>
#endif
#include <cstdint>
#include <cstring>

#include "runtime/unaligned.h"
#include "simd/kernels_internal.h"

namespace hark::cpu::detail {
namespace {

struct GemmBlocking {
  int64_t mc, kc, nc;  // MC a multiple of MR, NC of NR
};

// Rows [0, rows) of src (stride ld), columns [0, depth), into panels of R rows: panel q holds
// rows q*R .. q*R+R-1 as depth steps of R values. Rows past `rows` are zeros. src may start at
// any byte (f32 weights used in place from the file mapping), so it is read with load_f32.
template <int R>
inline void pack_panels(int64_t rows, int64_t depth, const float* src, int64_t ld, float* dst) {
  for (int64_t r0 = 0; r0 < rows; r0 += R) {
    const int64_t live = rows - r0 < R ? rows - r0 : R;
    float* out = dst + r0 * depth;
    // Four source rows per pass: reads stay sequential along each row, and the strided writes
    // land in one cache line per step.
    int64_t i = 0;
    for (; i + 4 <= live; i += 4) {
      const float* s0 = src + (r0 + i) * ld;
      const float* s1 = s0 + ld;
      const float* s2 = s1 + ld;
      const float* s3 = s2 + ld;
      float* o = out + i;
      int64_t p = 0;
#if defined(__AVX512F__)
      // 16 depth steps of the four rows at a time: a 4 x 16 block transposed in registers into
      // sixteen 4-value pieces, one 16-byte store each (the scalar loop: 64 loads, 64 stores).
      // Lane L of u[j] holds the four rows at depth p + 4L + j. (Attention's blocks: the packing
      // was a quarter of the time beside the micro-kernel's half.)
      if constexpr (R % 4 == 0) {
        for (; p + 16 <= depth; p += 16, o += 16 * R) {
          const __m512 a0 = _mm512_loadu_ps(s0 + p), a1 = _mm512_loadu_ps(s1 + p);
          const __m512 a2 = _mm512_loadu_ps(s2 + p), a3 = _mm512_loadu_ps(s3 + p);
          const __m512 lo01 = _mm512_unpacklo_ps(a0, a1), hi01 = _mm512_unpackhi_ps(a0, a1);
          const __m512 lo23 = _mm512_unpacklo_ps(a2, a3), hi23 = _mm512_unpackhi_ps(a2, a3);
          const __m512 u[4] = {_mm512_shuffle_ps(lo01, lo23, _MM_SHUFFLE(1, 0, 1, 0)),
                               _mm512_shuffle_ps(lo01, lo23, _MM_SHUFFLE(3, 2, 3, 2)),
                               _mm512_shuffle_ps(hi01, hi23, _MM_SHUFFLE(1, 0, 1, 0)),
                               _mm512_shuffle_ps(hi01, hi23, _MM_SHUFFLE(3, 2, 3, 2))};
          for (int j = 0; j < 4; ++j) {
            _mm_storeu_ps(o + (0 + j) * R, _mm512_castps512_ps128(u[j]));
            _mm_storeu_ps(o + (4 + j) * R, _mm512_extractf32x4_ps(u[j], 1));
            _mm_storeu_ps(o + (8 + j) * R, _mm512_extractf32x4_ps(u[j], 2));
            _mm_storeu_ps(o + (12 + j) * R, _mm512_extractf32x4_ps(u[j], 3));
          }
        }
      }
#endif
      for (; p < depth; ++p, o += R) {
        o[0] = load_f32(s0 + p);
        o[1] = load_f32(s1 + p);
        o[2] = load_f32(s2 + p);
        o[3] = load_f32(s3 + p);
      }
    }
    for (; i < live; ++i) {
      const float* s = src + (r0 + i) * ld;
      float* o = out + i;
      for (int64_t p = 0; p < depth; ++p, o += R) *o = load_f32(s + p);
    }
    if (live < R) {
      for (int64_t p = 0; p < depth; ++p) {
        for (int64_t q = live; q < R; ++q) out[p * R + q] = 0.0f;
      }
    }
  }
}

// Columns [0, cols) of a depth-major src (value (j, p) at src[p * ld + j]) into the same panels
// of R: each depth step of a panel is R consecutive values of src, so packing is a copy.
template <int R>
inline void pack_panels_depth_major(int64_t cols, int64_t depth, const float* src, int64_t ld, float* dst) {
  for (int64_t c0 = 0; c0 < cols; c0 += R) {
    const int64_t live = cols - c0 < R ? cols - c0 : R;
    float* out = dst + c0 * depth;
    const float* s = src + c0;
    if (live == R) {
      // A constant size, so the copy is a few vector moves instead of a call to memcpy.
      for (int64_t p = 0; p < depth; ++p, out += R, s += ld) std::memcpy(out, s, R * sizeof(float));
      continue;
    }
    for (int64_t p = 0; p < depth; ++p, out += R, s += ld) {
      std::memcpy(out, s, static_cast<size_t>(live) * sizeof(float));
      for (int64_t q = live; q < R; ++q) out[q] = 0.0f;
    }
  }
}

// The m x n block of C from packed operands of depth k: A panels (MR rows each) at ap + i * k,
// B panels (NR rows) at bp + j * ldbp (ldbp >= k: panels packed deeper than this product reads).
// Full tiles go straight to C; edge tiles are made whole in a buffer and only their live part is
// stored (added, with accumulate), so nothing past m x n is touched.
template <int MR, int NR, typename Micro>
void gemm_panels(int64_t m, int64_t n, int64_t k, const float* ap, const float* bp, int64_t ldbp, float* c, int64_t ldc,
                 bool accumulate, Micro micro) {
  alignas(64) float edge[MR * NR];
  for (int64_t ir = 0; ir < m; ir += MR) {
    const int64_t mr = m - ir < MR ? m - ir : MR;
    const float* apanel = ap + ir * k;
    for (int64_t jr = 0; jr < n; jr += NR) {
      const int64_t nr = n - jr < NR ? n - jr : NR;
      float* ct = c + ir * ldc + jr;
      if (mr == MR && nr == NR) {
        micro(k, apanel, bp + jr * ldbp, ct, ldc, accumulate);
        continue;
      }
      micro(k, apanel, bp + jr * ldbp, edge, static_cast<int64_t>(NR), false);
      for (int64_t i = 0; i < mr; ++i) {
        for (int64_t j = 0; j < nr; ++j) {
          ct[i * ldc + j] = accumulate ? ct[i * ldc + j] + edge[i * NR + j] : edge[i * NR + j];
        }
      }
    }
  }
}

// micro(kc, ap, bp, c, ldc, accumulate): c[i*ldc + j] (+)= sum_p ap[p*MR + i] * bp[p*NR + j]
// for the full MR x NR tile.
// kBDepthMajor: B(j, p) is b[p * ldb + j] (C = A B, the values of a depth step side by side, as
// attention's V) instead of b[j * ldb + p] (C = A B^T, a weight row per output).
template <int MR, int NR, bool kBDepthMajor = false, typename Micro>
void gemm_blocked(int64_t m, int64_t n, int64_t k, const float* a, int64_t lda, const float* b, int64_t ldb, float* c,
                  int64_t ldc, const GemmBlocking& blk, Micro micro) {
  if (m <= 0 || n <= 0) return;
  if (k <= 0) {
    for (int64_t i = 0; i < m; ++i) std::memset(c + i * ldc, 0, static_cast<size_t>(n) * sizeof(float));
    return;
  }
  // Equal slices of p, so a K just above KC does not leave a thin, inefficient last slice.
  const int64_t passes = (k + blk.kc - 1) / blk.kc;
  const int64_t kstep = (k + passes - 1) / passes;
  float* bp = gemm_scratch(static_cast<size_t>(blk.kc * blk.nc + blk.mc * blk.kc));
  float* ap = bp + blk.kc * blk.nc;

  for (int64_t jc = 0; jc < n; jc += blk.nc) {
    const int64_t nc = n - jc < blk.nc ? n - jc : blk.nc;
    for (int64_t pc = 0; pc < k; pc += kstep) {
      const int64_t kc = k - pc < kstep ? k - pc : kstep;
      if constexpr (kBDepthMajor)
        pack_panels_depth_major<NR>(nc, kc, b + pc * ldb + jc, ldb, bp);
      else
        pack_panels<NR>(nc, kc, b + jc * ldb + pc, ldb, bp);
      for (int64_t ic = 0; ic < m; ic += blk.mc) {
        const int64_t mc = m - ic < blk.mc ? m - ic : blk.mc;
        pack_panels<MR>(mc, kc, a + ic * lda + pc, lda, ap);
        gemm_panels<MR, NR>(mc, nc, kc, ap, bp, kc, c + ic * ldc + jc, ldc, /*accumulate=*/pc > 0, micro);
      }
    }
  }
}

// The driver's pieces for callers that pack their operands once and multiply them many times
// (attention: a head's keys and values, a block's queries, reused across tiles and blocks).
template <int MR, int NR, auto Micro>
struct PackedGemm {
  static void pack_a(int64_t rows, int64_t depth, const float* src, int64_t ld, float* dst) {
    pack_panels<MR>(rows, depth, src, ld, dst);
  }
  static void pack_b(int64_t rows, int64_t depth, const float* src, int64_t ld, float* dst) {
    pack_panels<NR>(rows, depth, src, ld, dst);
  }
  static void pack_b_depth_major(int64_t cols, int64_t depth, const float* src, int64_t ld, float* dst) {
    pack_panels_depth_major<NR>(cols, depth, src, ld, dst);
  }
  static void gemm(int64_t m, int64_t n, int64_t k, const float* ap, const float* bp, int64_t ldbp, float* c,
                   int64_t ldc, bool accumulate) {
    if (m <= 0 || n <= 0) return;
    gemm_panels<MR, NR>(m, n, k, ap, bp, ldbp, c, ldc, accumulate, Micro);
  }
};

}  // namespace
}  // namespace hark::cpu::detail
