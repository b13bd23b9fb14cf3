// The NEON kernel table: every ARMv8-A core (Advanced SIMD is part of AArch64, so this file needs
// no flags and runs on any 64-bit ARM). The table starts as the scalar one and replaces what the
// decoder and encoder spend their time in: the f32 and f16 dots (f16 widened with fcvtl), the
// quantized dots (widening multiplies, smull + sadalp), the f32 GEMM micro-kernel, conversions and
// the exp-based vector math. kernels_dotprod.cpp builds on this table with sdot.
//
// Sized for a core of the Cortex-A76 / Neoverse N1 class and later: 32 vector registers of 128
// bits, two FMA pipes of 4-cycle latency, so a loop needs 8 independent FMA chains to keep both
// busy; the GEMM tile (8 x 12: 24 accumulators, 2 registers of A, 3 of B) has 24.
#if defined(__aarch64__)
#include <arm_neon.h>

#include <cmath>
#include <cstring>

#include "runtime/unaligned.h"
#include "simd/gemm_blocked.h"
#include "simd/kernels_internal.h"
#include "simd/kernels_neon.h"
#include "simd/neon_levels.h"

namespace hark::cpu::detail {
namespace neon {

// ---- loads: inputs may start at any byte (kernels.h); LD1 takes any address on Linux ---------

float32x4_t load4(const float* p) { return vld1q_f32(p); }
float32x4_t load4(const f16_t* p) { return vcvt_f32_f16(vreinterpret_f16_u16(vld1_u16(p))); }
float load1(const float* p, int64_t i) { return load_f32(p, i); }
float load1(const f16_t* p, int64_t i) { return f16_to_f32(load_f16(p, i)); }

// ---- dots ---------------------------------------------------------------------------------

namespace {

// dot_f32 / dot_f16_f32: eight chains of 4 lanes (both FMA pipes busy), then a tail.
template <typename W>
float dot_row(int64_t n, const W* w, const float* x) {
  float32x4_t a[8];
  for (auto& v : a) v = vdupq_n_f32(0.0f);
  int64_t i = 0;
  for (; i + 32 <= n; i += 32)
    for (int u = 0; u < 8; ++u) a[u] = vfmaq_f32(a[u], load4(w + i + 4 * u), vld1q_f32(x + i + 4 * u));
  for (; i + 4 <= n; i += 4) a[0] = vfmaq_f32(a[0], load4(w + i), vld1q_f32(x + i));
  const float32x4_t s = vaddq_f32(vaddq_f32(vaddq_f32(a[0], a[1]), vaddq_f32(a[2], a[3])),
                                  vaddq_f32(vaddq_f32(a[4], a[5]), vaddq_f32(a[6], a[7])));
  float sum = vaddvq_f32(s);
  for (; i < n; ++i) sum += load1(w, i) * load1(x, i);
  return sum;
}

// R weight rows x G activation rows: one 4-lane chain per pair, summed across lanes, then the
// tail. A row's result is the same whichever tile it falls in (the rows left over go through
// R = 1), so it does not depend on how the rows are split over threads.
template <typename W, int R, int G>
void dot_tile(int64_t n, const uint8_t* w, size_t ws, const float* x, int64_t xs, float* y, int64_t ldy) {
  float32x4_t acc[R][G];
  for (auto& row : acc)
    for (auto& v : row) v = vdupq_n_f32(0.0f);
  const W* wr[R];
  for (int r = 0; r < R; ++r) wr[r] = reinterpret_cast<const W*>(w + static_cast<size_t>(r) * ws);
  int64_t i = 0;
  for (; i + 4 <= n; i += 4) {
    float32x4_t xv[G];
    for (int g = 0; g < G; ++g) xv[g] = vld1q_f32(x + g * xs + i);
    for (int r = 0; r < R; ++r) {
      const float32x4_t wv = load4(wr[r] + i);
      for (int g = 0; g < G; ++g) acc[r][g] = vfmaq_f32(acc[r][g], wv, xv[g]);
    }
  }
  for (int r = 0; r < R; ++r)
    for (int g = 0; g < G; ++g) {
      float s = vaddvq_f32(acc[r][g]);
      for (int64_t j = i; j < n; ++j) s += load1(wr[r], j) * x[g * xs + j];
      y[g * ldy + r] = s;
    }
}

template <typename W, int G>
void dot_rows_g(int64_t n, const uint8_t* w, size_t ws, int64_t nw, const float* x, int64_t xs, float* y, int64_t ldy) {
  constexpr int R = G <= 2 ? 4 : 3;  // R * G accumulators, R + G loads: at most 28 registers
  int64_t r = 0;
  for (; r + R <= nw; r += R) dot_tile<W, R, G>(n, w + static_cast<size_t>(r) * ws, ws, x, xs, y + r, ldy);
  for (; r < nw; ++r) dot_tile<W, 1, G>(n, w + static_cast<size_t>(r) * ws, ws, x, xs, y + r, ldy);
}

// Activation rows in groups of up to 4; each group takes every weight row in turn.
template <typename W>
void dot_w_rows(int64_t n, const void* wv, size_t ws, int64_t nw, const float* x, int64_t xs, int64_t nx, float* y,
                int64_t ldy) {
  const auto* w = static_cast<const uint8_t*>(wv);
  for (int64_t m = 0; m < nx;) {
    const int64_t g = nx - m >= 4 ? 4 : nx - m;
    const float* xg = x + m * xs;
    float* yg = y + m * ldy;
    switch (g) {
      case 1: dot_rows_g<W, 1>(n, w, ws, nw, xg, xs, yg, ldy); break;
      case 2: dot_rows_g<W, 2>(n, w, ws, nw, xg, xs, yg, ldy); break;
      case 3: dot_rows_g<W, 3>(n, w, ws, nw, xg, xs, yg, ldy); break;
      default: dot_rows_g<W, 4>(n, w, ws, nw, xg, xs, yg, ldy); break;
    }
    m += g;
  }
}

}  // namespace

float dot_f32(int64_t n, const float* w, const float* x) { return dot_row(n, w, x); }
float dot_f16_f32(int64_t n, const f16_t* w, const float* x) { return dot_row(n, w, x); }

void dot_f32_rows(int64_t n, const void* w, size_t ws, int64_t nw, const float* x, int64_t xs, int64_t nx, float* y,
                  int64_t ldy) {
  dot_w_rows<float>(n, w, ws, nw, x, xs, nx, y, ldy);
}
void dot_f16_rows(int64_t n, const void* w, size_t ws, int64_t nw, const float* x, int64_t xs, int64_t nx, float* y,
                  int64_t ldy) {
  dot_w_rows<f16_t>(n, w, ws, nw, x, xs, nx, y, ldy);
}

// ---- quantized dots (neon_levels.h's dot_blocks; the dotprod and i8mm tables give their bits) ---

namespace {

// sum of a[j] * b[j] over 16 bytes, widening: smull / smull2 into int16, pairwise into int32.
inline int32x4_t dot16(int32x4_t acc, int8x16_t a, int8x16_t b) {
  acc = vpadalq_s16(acc, vmull_s8(vget_low_s8(a), vget_low_s8(b)));
  return vpadalq_s16(acc, vmull_high_s8(a, b));
}

}  // namespace

using Dots = QuantDots<dot16>;

// ---- conversions --------------------------------------------------------------------------

void f16_to_f32_row(const f16_t* x, float* y, int64_t n) {
  int64_t i = 0;
  for (; i + 4 <= n; i += 4) vst1q_f32(y + i, load4(x + i));
  for (; i < n; ++i) y[i] = load1(x, i);
}

// fcvtn rounds to nearest even (the default FPCR mode, which hark never changes), as f32_to_f16.
void f32_to_f16_row(const float* x, f16_t* y, int64_t n) {
  int64_t i = 0;
  for (; i + 4 <= n; i += 4) vst1_u16(y + i, vreinterpret_u16_f16(vcvt_f16_f32(vld1q_f32(x + i))));
  for (; i < n; ++i) y[i] = f32_to_f16(load_f32(x, i));
}

// ---- vector math --------------------------------------------------------------------------
// Element-wise kernels may run in place (kernels.h): each vector is loaded before it is stored.

void add(int64_t n, const float* a, const float* b, float* y) {
  int64_t i = 0;
  for (; i + 4 <= n; i += 4) vst1q_f32(y + i, vaddq_f32(vld1q_f32(a + i), vld1q_f32(b + i)));
  for (; i < n; ++i) y[i] = load_f32(a, i) + load_f32(b, i);
}

void mul(int64_t n, const float* a, const float* b, float* y) {
  int64_t i = 0;
  for (; i + 4 <= n; i += 4) vst1q_f32(y + i, vmulq_f32(vld1q_f32(a + i), vld1q_f32(b + i)));
  for (; i < n; ++i) y[i] = load_f32(a, i) * load_f32(b, i);
}

// x*s + bias rounded twice, as the scalar table (no fused multiply-add).
void scale(int64_t n, const float* x, float s, float bias, float* y) {
  const float32x4_t vs = vdupq_n_f32(s), vb = vdupq_n_f32(bias);
  int64_t i = 0;
  for (; i + 4 <= n; i += 4) vst1q_f32(y + i, vaddq_f32(vmulq_f32(vld1q_f32(x + i), vs), vb));
  for (; i < n; ++i) y[i] = load_f32(x, i) * s + bias;
}

template <typename X>
void axpy_row(int64_t n, float a, const X* x, float* y) {
  const float32x4_t va = vdupq_n_f32(a);
  int64_t i = 0;
  for (; i + 4 <= n; i += 4) vst1q_f32(y + i, vfmaq_f32(vld1q_f32(y + i), va, load4(x + i)));
  for (; i < n; ++i) y[i] = std::fma(a, load1(x, i), y[i]);
}

void axpy(int64_t n, float a, const float* x, float* y) { axpy_row(n, a, x, y); }
void axpy_f16(int64_t n, float a, const f16_t* x, float* y) { axpy_row(n, a, x, y); }

// Each output gets exactly axpy_f16's operations, one x row after another.
void axpy_f16_rows(int64_t n, int64_t nk, const float* a, int64_t as, int64_t na, const f16_t* x, size_t xs, float* y,
                   int64_t ys) {
  for (int64_t t = 0; t < nk; ++t) {
    const auto* xt = reinterpret_cast<const f16_t*>(reinterpret_cast<const uint8_t*>(x) + static_cast<size_t>(t) * xs);
    for (int64_t g = 0; g < na; ++g) axpy_row(n, a[g * as + t], xt, y + g * ys);
  }
}

float max(int64_t n, const float* x) {
  float32x4_t m = vdupq_n_f32(-INFINITY);
  int64_t i = 0;
  // fmax: a NaN loses to a number, as the scalar `v > m ? v : m` (which never picks a NaN).
  for (; i + 4 <= n; i += 4) m = vmaxnmq_f32(m, vld1q_f32(x + i));
  float r = vmaxnmvq_f32(m);
  for (; i < n; ++i) {
    const float v = load_f32(x, i);
    r = v > r ? v : r;
  }
  return r;
}

// exp on 4 lanes, the algorithm of the scalar exp1 (kernels_scalar.cpp).
float32x4_t exp4(float32x4_t x) {
  const uint32x4_t under = vcltq_f32(x, vdupq_n_f32(kExpMin));
  const uint32x4_t over = vcgtq_f32(x, vdupq_n_f32(kExpMax));
  const uint32x4_t nan = vmvnq_u32(vceqq_f32(x, x));
  // Clamped so the arithmetic below stays finite; the special lanes are set at the end.
  float32x4_t xc = vminq_f32(vmaxq_f32(x, vdupq_n_f32(kExpMin)), vdupq_n_f32(kExpMax));
  xc = vbslq_f32(nan, vdupq_n_f32(0.0f), xc);
  const float32x4_t n = vrndnq_f32(vmulq_f32(xc, vdupq_n_f32(kLog2e)));  // to nearest even
  float32x4_t r = vfmsq_f32(xc, n, vdupq_n_f32(kLn2Hi));
  r = vfmsq_f32(r, n, vdupq_n_f32(kLn2Lo));
  float32x4_t p = vdupq_n_f32(kExpC7);
  p = vfmaq_f32(vdupq_n_f32(kExpC6), p, r);
  p = vfmaq_f32(vdupq_n_f32(kExpC5), p, r);
  p = vfmaq_f32(vdupq_n_f32(kExpC4), p, r);
  p = vfmaq_f32(vdupq_n_f32(kExpC3), p, r);
  p = vfmaq_f32(vdupq_n_f32(kExpC2), p, r);
  p = vfmaq_f32(vdupq_n_f32(1.0f), p, r);
  p = vfmaq_f32(vdupq_n_f32(1.0f), p, r);
  // 2^n as two normal factors: n reaches 128 and -126, beyond a single exponent field.
  const int32x4_t ni = vcvtq_s32_f32(n);
  const int32x4_t h = vshrq_n_s32(ni, 1);
  const int32x4_t bias = vdupq_n_s32(127);
  const float32x4_t s1 = vreinterpretq_f32_s32(vshlq_n_s32(vaddq_s32(h, bias), 23));
  const float32x4_t s2 = vreinterpretq_f32_s32(vshlq_n_s32(vaddq_s32(vsubq_s32(ni, h), bias), 23));
  float32x4_t y = vmulq_f32(vmulq_f32(p, s1), s2);
  y = vbslq_f32(under, vdupq_n_f32(0.0f), y);
  y = vbslq_f32(over, vdupq_n_f32(INFINITY), y);
  return vbslq_f32(nan, x, y);
}

float exp_sub_sum(int64_t n, const float* x, float m, float* y) {
  const float32x4_t vm = vdupq_n_f32(m);
  float32x4_t acc = vdupq_n_f32(0.0f);
  int64_t i = 0;
  for (; i + 4 <= n; i += 4) {
    const float32x4_t e = exp4(vsubq_f32(vld1q_f32(x + i), vm));
    if (y) vst1q_f32(y + i, e);
    acc = vaddq_f32(acc, e);
  }
  float s = vaddvq_f32(acc);
  if (i < n) {
    float tx[4] = {0, 0, 0, 0}, ty[4];
    for (int64_t j = i; j < n; ++j) tx[j - i] = load_f32(x, j);
    vst1q_f32(ty, exp4(vsubq_f32(vld1q_f32(tx), vm)));
    for (int64_t j = i; j < n; ++j) {
      if (y) y[j] = ty[j - i];
      s += ty[j - i];
    }
  }
  return s;
}

// gelu on 4 lanes, the algorithm of the scalar gelu1.
float32x4_t gelu4(float32x4_t x) {
  const float32x4_t z = vmulq_f32(vabsq_f32(x), vdupq_n_f32(kSqrtHalf));
  const float32x4_t t = vdivq_f32(vdupq_n_f32(1.0f), vfmaq_f32(vdupq_n_f32(1.0f), vdupq_n_f32(0.5f), z));
  float32x4_t q = vdupq_n_f32(kErfcQ[8]);
  for (int i = 7; i >= 0; --i) q = vfmaq_f32(vdupq_n_f32(kErfcQ[i]), q, t);
  const float32x4_t e = vmulq_f32(vmulq_f32(t, q), exp4(vnegq_f32(vmulq_f32(z, z))));
  const float32x4_t half_e = vmulq_f32(vdupq_n_f32(0.5f), e);
  const float32x4_t phi = vbslq_f32(vcgeq_f32(x, vdupq_n_f32(0.0f)), vsubq_f32(vdupq_n_f32(1.0f), half_e), half_e);
  return vmulq_f32(x, phi);
}

float32x4_t sigmoid4(float32x4_t x) {
  return vdivq_f32(vdupq_n_f32(1.0f), vaddq_f32(vdupq_n_f32(1.0f), exp4(vnegq_f32(x))));
}

// tanh on 4 lanes, the algorithm of the scalar tanh1.
float32x4_t tanh4(float32x4_t x) {
  const float32x4_t a = vabsq_f32(x);
  const float32x4_t x2 = vmulq_f32(x, x);
  float32x4_t p = vdupq_n_f32(kTanhSeries[5]);
  for (int i = 4; i >= 0; --i) p = vfmaq_f32(vdupq_n_f32(kTanhSeries[i]), p, x2);
  const float32x4_t series = vmulq_f32(x, p);
  const float32x4_t e = exp4(vmulq_f32(vdupq_n_f32(-2.0f), a));
  const float32x4_t mag = vdivq_f32(vsubq_f32(vdupq_n_f32(1.0f), e), vaddq_f32(vdupq_n_f32(1.0f), e));
  // copysign: the magnitude's bits with x's sign bit.
  const uint32x4_t sign = vdupq_n_u32(0x80000000u);
  const float32x4_t big = vbslq_f32(sign, x, mag);
  return vbslq_f32(vcltq_f32(a, vdupq_n_f32(kTanhSeriesMax)), series, big);
}

// f(x) on 4 lanes at a time, the tail through a padded copy.
template <float32x4_t (*F)(float32x4_t)>
void map4(int64_t n, const float* x, float* y) {
  int64_t i = 0;
  for (; i + 4 <= n; i += 4) vst1q_f32(y + i, F(vld1q_f32(x + i)));
  if (i < n) {
    float t[4] = {0, 0, 0, 0};
    for (int64_t j = i; j < n; ++j) t[j - i] = load_f32(x, j);
    vst1q_f32(t, F(vld1q_f32(t)));
    for (int64_t j = i; j < n; ++j) y[j] = t[j - i];
  }
}

void gelu(int64_t n, const float* x, float* y) { map4<gelu4>(n, x, y); }
void sigmoid(int64_t n, const float* x, float* y) { map4<sigmoid4>(n, x, y); }
void tanh(int64_t n, const float* x, float* y) { map4<tanh4>(n, x, y); }

// ---- GEMM ---------------------------------------------------------------------------------

namespace {

// The 8 x 12 tile: for each depth step, 8 values of A (2 registers) times 12 of B (3), each
// product an fmla by element into one of 24 accumulators.
void micro_8x12(int64_t kc, const float* ap, const float* bp, float* c, int64_t ldc, bool accumulate) {
  float32x4_t acc[8][3];
  for (auto& row : acc)
    for (auto& v : row) v = vdupq_n_f32(0.0f);
  for (int64_t p = 0; p < kc; ++p, ap += 8, bp += 12) {
    const float32x4_t a0 = vld1q_f32(ap), a1 = vld1q_f32(ap + 4);
    const float32x4_t b0 = vld1q_f32(bp), b1 = vld1q_f32(bp + 4), b2 = vld1q_f32(bp + 8);
#define HARK_ROW(i, a, lane)                           \
  acc[i][0] = vfmaq_laneq_f32(acc[i][0], b0, a, lane); \
  acc[i][1] = vfmaq_laneq_f32(acc[i][1], b1, a, lane); \
  acc[i][2] = vfmaq_laneq_f32(acc[i][2], b2, a, lane);
    HARK_ROW(0, a0, 0)
    HARK_ROW(1, a0, 1)
    HARK_ROW(2, a0, 2)
    HARK_ROW(3, a0, 3)
    HARK_ROW(4, a1, 0)
    HARK_ROW(5, a1, 1)
    HARK_ROW(6, a1, 2)
    HARK_ROW(7, a1, 3)
#undef HARK_ROW
  }
  for (int i = 0; i < 8; ++i)
    for (int j = 0; j < 3; ++j) {
      float* ct = c + i * ldc + 4 * j;
      vst1q_f32(ct, accumulate ? vaddq_f32(vld1q_f32(ct), acc[i][j]) : acc[i][j]);
    }
}

// A panels of 8 x 256 (8 KB) stay in L1 (64 KB on A76/N1), a B block of 256 x 768 (768 KB) in
// L2 with room to spare on N1/N2's 1 MB, most of A76's 512 KB.
constexpr GemmBlocking kBlocking{128, 256, 768};

}  // namespace

void gemm_f32(int64_t m, int64_t n, int64_t k, const float* a, int64_t lda, const float* b, int64_t ldb, float* c,
              int64_t ldc) {
  gemm_blocked<8, 12>(m, n, k, a, lda, b, ldb, c, ldc, kBlocking, micro_8x12);
}

void gemm_f32_nn(int64_t m, int64_t n, int64_t k, const float* a, int64_t lda, const float* b, int64_t ldb, float* c,
                 int64_t ldc) {
  gemm_blocked<8, 12, true>(m, n, k, a, lda, b, ldb, c, ldc, kBlocking, micro_8x12);
}

using Packed = PackedGemm<8, 12, micro_8x12>;

// The table: the scalar one with this file's kernels in place of its loops, and the quantized
// entries (dots, dot_q_rows, dot_q_tiles) from `dots`.
Kernels table(SimdLevel level, const QDots& dots) {
  Kernels k = scalar_kernels();
  k.level = level;
  k.dot_f32 = dot_f32;
  k.dot_f16_f32 = dot_f16_f32;
  k.dot_q4_0 = dots.q4_0;
  k.dot_q4_1 = dots.q4_1;
  k.dot_q5_0 = dots.q5_0;
  k.dot_q5_1 = dots.q5_1;
  k.dot_q8_0 = dots.q8_0;
  k.dot_q_rows = dots.rows;
  k.dot_q_tiles = dots.tiles;
  k.dot_f32_rows = dot_f32_rows;
  k.dot_f16_rows = dot_f16_rows;
  k.f16_to_f32_row = f16_to_f32_row;
  k.f32_to_f16_row = f32_to_f16_row;
  k.add = add;
  k.mul = mul;
  k.scale = scale;
  k.axpy = axpy;
  k.axpy_f16 = axpy_f16;
  k.axpy_f16_rows = axpy_f16_rows;
  k.max = max;
  k.exp_sub_sum = exp_sub_sum;
  k.gelu = gelu;
  k.sigmoid = sigmoid;
  k.tanh = tanh;
  k.gemm_f32 = gemm_f32;
  k.gemm_f32_nn = gemm_f32_nn;
  k.gemm_mr = 8;
  k.gemm_nr = 12;
  k.pack_a = Packed::pack_a;
  k.pack_b = Packed::pack_b;
  k.pack_b_depth_major = Packed::pack_b_depth_major;
  k.gemm_packed = Packed::gemm;
  return k;
}

}  // namespace neon

const Kernels* neon_kernels() {
  static const Kernels k = neon::table(SimdLevel::Neon, neon::Dots::kEntries);
  return &k;
}

}  // namespace hark::cpu::detail
#endif  // __aarch64__
