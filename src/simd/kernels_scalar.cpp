// The scalar kernel table: plain C++ for any processor, and the yardstick the SIMD tables are
// tested against. It evaluates the same formulas as the SIMD tables (integer block dots, the exp
// and erfc approximations of kernels_internal.h), so the levels differ only in summation order.
#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <new>

#include "runtime/unaligned.h"
#include "simd/gemm_blocked.h"
#include "simd/kernels.h"
#include "simd/kernels_internal.h"

namespace hark::cpu::detail {

float* gemm_scratch(size_t n) {
  struct Scratch {
    float* p = nullptr;
    size_t n = 0;
    ~Scratch() { ::operator delete[](p, std::align_val_t{64}); }
  };
  thread_local Scratch s;
  if (s.n < n) {
    ::operator delete[](s.p, std::align_val_t{64});
    s.p = nullptr;
    s.n = 0;
    s.p = static_cast<float*>(::operator new[](n * sizeof(float), std::align_val_t{64}));
    s.n = n;
  }
  return s.p;
}

namespace {

// Every input array is read through load_f32/load_f16/block_at (runtime/unaligned.h): weights come
// straight from the file mapping at any byte address (kernels.h). Outputs are aligned.

// ---- dots ---------------------------------------------------------------------------------

float dot_f32(int64_t n, const float* w, const float* x) {
  // Four partial sums: shorter dependency chains, and closer to the SIMD tables' rounding.
  float s0 = 0, s1 = 0, s2 = 0, s3 = 0;
  int64_t i = 0;
  for (; i + 4 <= n; i += 4) {
    s0 += load_f32(w, i) * load_f32(x, i);
    s1 += load_f32(w, i + 1) * load_f32(x, i + 1);
    s2 += load_f32(w, i + 2) * load_f32(x, i + 2);
    s3 += load_f32(w, i + 3) * load_f32(x, i + 3);
  }
  for (; i < n; ++i) s0 += load_f32(w, i) * load_f32(x, i);
  return (s0 + s1) + (s2 + s3);
}

float dot_f16_f32(int64_t n, const f16_t* w, const float* x) {
  float s0 = 0, s1 = 0;
  int64_t i = 0;
  for (; i + 2 <= n; i += 2) {
    s0 += f16_to_f32(load_f16(w, i)) * load_f32(x, i);
    s1 += f16_to_f32(load_f16(w, i + 1)) * load_f32(x, i + 1);
  }
  for (; i < n; ++i) s0 += f16_to_f32(load_f16(w, i)) * load_f32(x, i);
  return s0 + s1;
}

// The 32 levels of a q4 / q5 block in value order, before the zero point: value j is the low
// (j < 16) or high nibble of qs[j % 16], plus bit j of qh as its fifth bit for q5.
template <bool kFiveBit, typename Block>
void block_levels(const BlockBytes<Block>& w, int (&q)[kQuantBlock]) {
  const uint8_t* qs = w.qs();
  uint32_t qh = 0;
  if constexpr (kFiveBit) qh = w.qh();
  for (int j = 0; j < 16; ++j) {
    q[j] = (qs[j] & 0x0F) | static_cast<int>((qh >> j) & 1u) << 4;
    q[j + 16] = (qs[j] >> 4) | static_cast<int>((qh >> (j + 16)) & 1u) << 4;
  }
}

// Unsigned-level types: w = (q - zero) * d (+ m). Each block's integer dot is exact; only the
// per-block scaling rounds. The min comes back through s: sum_j (q_j d + m) x_j = d dx sum q_j xq_j + m s.
template <typename Block, int kZero, bool kHasMin, bool kFiveBit>
float dot_unsigned(int64_t n, const void* wv, const BlockQ8A* x) {
  float sum = 0;
  for (int64_t b = 0; b < n / kQuantBlock; ++b) {
    const auto w = block_at<Block>(wv, b);
    int q[kQuantBlock];
    block_levels<kFiveBit>(w, q);
    int acc = 0;
    for (int j = 0; j < kQuantBlock; ++j) acc += (q[j] - kZero) * x[b].qs[j];
    float v = f16_to_f32(w.d()) * x[b].d * static_cast<float>(acc);
    if constexpr (kHasMin) v += f16_to_f32(w.m()) * x[b].s;
    sum += v;
  }
  return sum;
}

float dot_q4_0(int64_t n, const void* w, const BlockQ8A* x) {
  return dot_unsigned<BlockQ4_0, 8, false, false>(n, w, x);
}
float dot_q4_1(int64_t n, const void* w, const BlockQ8A* x) { return dot_unsigned<BlockQ4_1, 0, true, false>(n, w, x); }
float dot_q5_0(int64_t n, const void* w, const BlockQ8A* x) {
  return dot_unsigned<BlockQ5_0, 16, false, true>(n, w, x);
}
float dot_q5_1(int64_t n, const void* w, const BlockQ8A* x) { return dot_unsigned<BlockQ5_1, 0, true, true>(n, w, x); }

float dot_q8_0(int64_t n, const void* wv, const BlockQ8A* x) {
  float sum = 0;
  for (int64_t b = 0; b < n / kQuantBlock; ++b) {
    const auto w = block_at<BlockQ8_0>(wv, b);
    const int8_t* qs = w.qs_i8();
    int acc = 0;
    for (int j = 0; j < kQuantBlock; ++j) acc += qs[j] * x[b].qs[j];
    sum += f16_to_f32(w.d()) * x[b].d * static_cast<float>(acc);
  }
  return sum;
}

void dot_f32_rows(int64_t n, const void* w, size_t ws, int64_t nw, const float* x, int64_t xs, int64_t nx, float* y,
                  int64_t ldy) {
  for (int64_t r = 0; r < nw; ++r)
    for (int64_t m = 0; m < nx; ++m)
      y[m * ldy + r] = dot_f32(n, reinterpret_cast<const float*>(static_cast<const uint8_t*>(w) + r * ws), x + m * xs);
}

void dot_f16_rows(int64_t n, const void* w, size_t ws, int64_t nw, const float* x, int64_t xs, int64_t nx, float* y,
                  int64_t ldy) {
  for (int64_t r = 0; r < nw; ++r)
    for (int64_t m = 0; m < nx; ++m)
      y[m * ldy + r] =
          dot_f16_f32(n, reinterpret_cast<const f16_t*>(static_cast<const uint8_t*>(w) + r * ws), x + m * xs);
}

void dot_q_rows(DType type, int64_t n, const void* w, const BlockQ8A* x, int64_t x_stride, int64_t nx, float* y,
                int64_t y_stride) {
  float (*dot)(int64_t, const void*, const BlockQ8A*) = dot_q8_0;
  switch (type) {
    case DType::Q4_0: dot = dot_q4_0; break;
    case DType::Q4_1: dot = dot_q4_1; break;
    case DType::Q5_0: dot = dot_q5_0; break;
    case DType::Q5_1: dot = dot_q5_1; break;
    default: break;
  }
  for (int64_t i = 0; i < nx; ++i) y[i * y_stride] = dot(n, w, x + i * x_stride);
}

// Bit-for-bit the reference quantize_row_q8a (runtime/quant.cpp): NaN reads as 0, d = amax/127,
// levels round(x * (1/d)) half to even, clamped to +-127. nearbyint rounds half to even in the
// default floating-point environment, which hark never changes.
void quantize_q8a(const float* x, BlockQ8A* y, int64_t n) {
  for (int64_t b = 0; b < n / kQuantBlock; ++b) {
    float v[kQuantBlock];
    float amax = 0;
    for (int j = 0; j < kQuantBlock; ++j) {
      const float f = load_f32(x, b * kQuantBlock + j);
      v[j] = std::isnan(f) ? 0.0f : f;
      amax = std::fmax(amax, std::fabs(v[j]));
    }
    const float d = amax / 127.0f;
    const float id = d != 0.0f ? 1.0f / d : 0.0f;
    int sum = 0;
    for (int j = 0; j < kQuantBlock; ++j) {
      float l = v[j] * id;
      if (std::isnan(l)) l = 0.0f;  // inf * 0, when the block holds an infinity
      l = std::fmin(std::fmax(l, -127.0f), 127.0f);
      const int q = static_cast<int>(std::nearbyint(l));
      y[b].qs[j] = static_cast<int8_t>(q);
      sum += q;
    }
    y[b].d = d;
    y[b].s = d * static_cast<float>(sum);
  }
}

// ---- conversions --------------------------------------------------------------------------

void f16_to_f32_row(const f16_t* x, float* y, int64_t n) {
  for (int64_t i = 0; i < n; ++i) y[i] = f16_to_f32(load_f16(x, i));
}

void f32_to_f16_row(const float* x, f16_t* y, int64_t n) {
  for (int64_t i = 0; i < n; ++i) y[i] = f32_to_f16(load_f32(x, i));
}

// Products of a level (<= 5 bits) and an f16 scale (11 bits) are exact in f32, so every table
// dequantizes to the same bits whether it fuses the multiply-add or not.
template <typename Block, int kZero, bool kHasMin, bool kFiveBit>
void dequantize_unsigned(const void* xv, float* y, int64_t n) {
  for (int64_t b = 0; b < n / kQuantBlock; ++b, y += kQuantBlock) {
    const auto x = block_at<Block>(xv, b);
    int q[kQuantBlock];
    block_levels<kFiveBit>(x, q);
    const float d = f16_to_f32(x.d());
    float m = 0;
    if constexpr (kHasMin) m = f16_to_f32(x.m());
    for (int j = 0; j < kQuantBlock; ++j) {
      y[j] = kHasMin ? static_cast<float>(q[j]) * d + m : static_cast<float>(q[j] - kZero) * d;
    }
  }
}

void dequantize_row(DType type, const void* xv, float* y, int64_t n) {
  const int64_t nb = n / kQuantBlock;
  switch (type) {
    case DType::F32: std::memcpy(y, xv, static_cast<size_t>(n) * sizeof(float)); return;
    case DType::F16: f16_to_f32_row(static_cast<const f16_t*>(xv), y, n); return;
    case DType::Q4_0: return dequantize_unsigned<BlockQ4_0, 8, false, false>(xv, y, n);
    case DType::Q4_1: return dequantize_unsigned<BlockQ4_1, 0, true, false>(xv, y, n);
    case DType::Q5_0: return dequantize_unsigned<BlockQ5_0, 16, false, true>(xv, y, n);
    case DType::Q5_1: return dequantize_unsigned<BlockQ5_1, 0, true, true>(xv, y, n);
    case DType::Q8_0: {
      for (int64_t b = 0; b < nb; ++b, y += kQuantBlock) {
        const auto x = block_at<BlockQ8_0>(xv, b);
        const int8_t* qs = x.qs_i8();
        const float d = f16_to_f32(x.d());
        for (int j = 0; j < kQuantBlock; ++j) y[j] = static_cast<float>(qs[j]) * d;
      }
      return;
    }
    case DType::I32: break;
  }
  // Not a weight type (callers check before computing); zeros rather than garbage.
  std::memset(y, 0, static_cast<size_t>(n) * sizeof(float));
}

// ---- vector math --------------------------------------------------------------------------
// Outputs may alias inputs element for element (ops compute in place), so no restrict here.

void add(int64_t n, const float* a, const float* b, float* y) {
  for (int64_t i = 0; i < n; ++i) y[i] = load_f32(a, i) + load_f32(b, i);
}

void mul(int64_t n, const float* a, const float* b, float* y) {
  for (int64_t i = 0; i < n; ++i) y[i] = load_f32(a, i) * load_f32(b, i);
}

void scale(int64_t n, const float* x, float s, float bias, float* y) {
  for (int64_t i = 0; i < n; ++i) y[i] = load_f32(x, i) * s + bias;
}

void axpy(int64_t n, float a, const float* x, float* y) {
  for (int64_t i = 0; i < n; ++i) y[i] += a * load_f32(x, i);
}

void axpy_f16(int64_t n, float a, const f16_t* x, float* y) {
  for (int64_t i = 0; i < n; ++i) y[i] += a * f16_to_f32(load_f16(x, i));
}

void axpy_f16_rows(int64_t n, int64_t nk, const float* a, int64_t as, int64_t na, const f16_t* x, size_t xs, float* y,
                   int64_t ys) {
  for (int64_t t = 0; t < nk; ++t)
    for (int64_t g = 0; g < na; ++g)
      axpy_f16(n, a[g * as + t], reinterpret_cast<const f16_t*>(reinterpret_cast<const uint8_t*>(x) + t * xs),
               y + g * ys);
}

void axpy_q8_0_rows(int64_t n, int64_t nk, const float* a, int64_t as, int64_t na, const void* x, size_t xs, float* y,
                    int64_t ys) {
  for (int64_t t = 0; t < nk; ++t) {
    const void* row = static_cast<const uint8_t*>(x) + t * xs;
    for (int64_t g = 0; g < na; ++g) {
      float* yg = y + g * ys;
      for (int64_t b = 0; b < n / kQuantBlock; ++b) {
        const auto blk = block_at<BlockQ8_0>(row, b);
        const int8_t* qs = blk.qs_i8();
        const float c = a[g * as + t] * f16_to_f32(blk.d());
        for (int j = 0; j < kQuantBlock; ++j) yg[b * kQuantBlock + j] += c * static_cast<float>(qs[j]);
      }
    }
  }
}

float max(int64_t n, const float* x) {
  float m = -INFINITY;
  for (int64_t i = 0; i < n; ++i) {
    const float v = load_f32(x, i);
    m = v > m ? v : m;
  }
  return m;
}

// p * 2^n for integer n in [-126, 128], by two normal factors applied in turn (2^128 alone is not
// a float, and 2^-126 times p < 1 must round only once).
float scale_pow2(float p, int n) {
  const int h = n / 2;
  uint32_t b1 = static_cast<uint32_t>(h + 127) << 23, b2 = static_cast<uint32_t>(n - h + 127) << 23;
  float f1, f2;
  std::memcpy(&f1, &b1, 4);
  std::memcpy(&f2, &b2, 4);
  return p * f1 * f2;
}

float exp1(float x) {
  if (std::isnan(x)) return x;
  if (x < kExpMin) return 0.0f;
  if (x > kExpMax) return INFINITY;
  const float n = std::nearbyint(x * kLog2e);
  float r = x - n * kLn2Hi;  // exact (see kernels_internal.h)
  r = r - n * kLn2Lo;
  float p = kExpC7;
  p = p * r + kExpC6;
  p = p * r + kExpC5;
  p = p * r + kExpC4;
  p = p * r + kExpC3;
  p = p * r + kExpC2;
  p = p * r + 1.0f;
  p = p * r + 1.0f;
  return scale_pow2(p, static_cast<int>(n));
}

float exp_sub_sum(int64_t n, const float* x, float m, float* y) {
  float sum = 0;
  for (int64_t i = 0; i < n; ++i) {
    const float e = exp1(load_f32(x, i) - m);
    if (y) y[i] = e;
    sum += e;
  }
  return sum;
}

int64_t argmax(int64_t n, const float* x) {
  int64_t best = 0;
  float m = load_f32(x, 0);
  for (int64_t i = 0; i < n && !std::isnan(m); ++i) {
    const float v = load_f32(x, i);
    if (v > m || std::isnan(v)) m = v, best = i;
  }
  return best;
}

// x * Phi(x), Phi(x) = erfc(-x/sqrt2)/2, with erfc from kernels_internal.h: the upper half uses
// 1 - erfc/2 (no cancellation, Phi >= 1/2), the lower half erfc/2 itself (relative accuracy in
// the tail).
float gelu1(float x) {
  const float z = std::fabs(x) * kSqrtHalf;
  const float t = 1.0f / (1.0f + 0.5f * z);
  float q = kErfcQ[8];
  for (int i = 7; i >= 0; --i) q = q * t + kErfcQ[i];
  const float e = t * q * exp1(-(z * z));
  const float phi = x >= 0.0f ? 1.0f - 0.5f * e : 0.5f * e;
  return x * phi;
}

void gelu(int64_t n, const float* x, float* y) {
  for (int64_t i = 0; i < n; ++i) y[i] = gelu1(load_f32(x, i));
}

float sigmoid1(float x) { return 1.0f / (1.0f + exp1(-x)); }

float tanh1(float x) {
  const float a = std::fabs(x);
  if (a < kTanhSeriesMax) {
    const float x2 = x * x;
    float p = kTanhSeries[5];
    for (int i = 4; i >= 0; --i) p = p * x2 + kTanhSeries[i];
    return x * p;
  }
  const float e = exp1(-2.0f * a);
  return std::copysign((1.0f - e) / (1.0f + e), x);
}

void sigmoid(int64_t n, const float* x, float* y) {
  for (int64_t i = 0; i < n; ++i) y[i] = sigmoid1(load_f32(x, i));
}

void tanh(int64_t n, const float* x, float* y) {
  for (int64_t i = 0; i < n; ++i) y[i] = tanh1(load_f32(x, i));
}

void mean_var(int64_t n, const float* x, float* mean, float* var) {
  if (n <= 0) {
    *mean = 0;
    *var = 0;
    return;
  }
  double s = 0;
  for (int64_t i = 0; i < n; ++i) s += load_f32(x, i);
  const double mu = s / static_cast<double>(n);
  double v = 0;
  for (int64_t i = 0; i < n; ++i) {
    const double d = load_f32(x, i) - mu;
    v += d * d;
  }
  *mean = static_cast<float>(mu);
  *var = static_cast<float>(v / static_cast<double>(n));
}

// ---- GEMM ---------------------------------------------------------------------------------

// A small register tile in plain C++; the compiler vectorizes what the baseline ISA allows.
template <int MR, int NR>
void micro_generic(int64_t kc, const float* ap, const float* bp, float* c, int64_t ldc, bool accumulate) {
  float t[MR][NR] = {};
  for (int64_t p = 0; p < kc; ++p, ap += MR, bp += NR) {
    for (int i = 0; i < MR; ++i) {
      for (int j = 0; j < NR; ++j) t[i][j] += ap[i] * bp[j];
    }
  }
  for (int i = 0; i < MR; ++i) {
    for (int j = 0; j < NR; ++j) c[i * ldc + j] = accumulate ? c[i * ldc + j] + t[i][j] : t[i][j];
  }
}

void gemm_f32(int64_t m, int64_t n, int64_t k, const float* a, int64_t lda, const float* b, int64_t ldb, float* c,
              int64_t ldc) {
  constexpr GemmBlocking blk{64, 256, 256};
  gemm_blocked<4, 8>(m, n, k, a, lda, b, ldb, c, ldc, blk, micro_generic<4, 8>);
}

void gemm_f32_nn(int64_t m, int64_t n, int64_t k, const float* a, int64_t lda, const float* b, int64_t ldb, float* c,
                 int64_t ldc) {
  constexpr GemmBlocking blk{64, 256, 256};
  gemm_blocked<4, 8, true>(m, n, k, a, lda, b, ldb, c, ldc, blk, micro_generic<4, 8>);
}

// Weight rows one at a time through dot_q_rows: this level has no tiles across weight rows.
void dot_q_tiles(DType type, int64_t n, const void* w, size_t ws, int64_t nw, const BlockQ8A* x, int64_t xs, int64_t nx,
                 float* y, int64_t ldy) {
  for (int64_t r = 0; r < nw; ++r)
    dot_q_rows(type, n, static_cast<const uint8_t*>(w) + static_cast<size_t>(r) * ws, x, xs, nx, y + r, ldy);
}

using Packed = PackedGemm<4, 8, micro_generic<4, 8>>;

// constinit: the table is ready before any static constructor elsewhere could ask for it.
constinit const Kernels kTable = {
    SimdLevel::Scalar,
    dot_f32,
    dot_f16_f32,
    dot_q4_0,
    dot_q4_1,
    dot_q5_0,
    dot_q5_1,
    dot_q8_0,
    dot_q_rows,
    dot_q_tiles,
    quantize_q8a,
    /*gemm_q8=*/nullptr,
    dot_f32_rows,
    dot_f16_rows,
    f16_to_f32_row,
    f32_to_f16_row,
    dequantize_row,
    ::hark::quantize_row,
    add,
    mul,
    scale,
    axpy,
    axpy_f16,
    axpy_f16_rows,
    axpy_q8_0_rows,
    max,
    exp_sub_sum,
    gelu,
    sigmoid,
    tanh,
    mean_var,
    gemm_f32,
    gemm_f32_nn,
    4,
    8,
    Packed::pack_a,
    Packed::pack_b,
    Packed::pack_b_depth_major,
    Packed::gemm,
    argmax,
};

}  // namespace

const Kernels& scalar_kernels() { return kTable; }

#if !(defined(__x86_64__) || defined(__i386__))
const Kernels* avx2_kernels() { return nullptr; }
const Kernels* avx2vnni_kernels() { return nullptr; }
const Kernels* avx512_kernels() { return nullptr; }
#endif
#if !defined(__aarch64__)
const Kernels* neon_kernels() { return nullptr; }
const Kernels* dotprod_kernels() { return nullptr; }
const Kernels* i8mm_kernels() { return nullptr; }
#endif

}  // namespace hark::cpu::detail
