// Every kernel table this processor runs, function by function: each table against independent
// references (double-precision math, std::exp/std::erf, the scalar quantizers of runtime/quant.h)
// and each SIMD table against the scalar table. Sizes cover SIMD tails and large rows.
//
// Tolerances, and why:
//  * Exact (bit for bit): conversions, dequantization, q8a quantization, add, mul, max. These do
//    the same IEEE operations in every table (level * scale products are exact; see the tables).
//  * f32 sums (dots, GEMM, exp sums, variance): |got - ref| <= c * eps * sqrt(n) * sum|terms|,
//    the growth of rounding error for sums in a few interleaved accumulators.
//  * Quantized dots: the block integer sums are exact; the per-block scale products and the
//    zero-point term through s = d * sum(q) round, so 1e-5 of sum|w x|.
//  * exp: 3e-7 relative (the approximation is within a few ulp); gelu: 1e-6 absolute and 2e-6
//    relative, whichever is looser (the brief's ~1e-6), erf form against std::erf in double.
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <random>
#include <string>
#include <vector>

#include "runtime/dtype.h"
#include "runtime/quant.h"
#include "simd/kernels.h"
#include "simd/kernels_internal.h"

namespace hark::cpu {
namespace {

constexpr double kEps = 1.1920929e-7;  // f32 machine epsilon

std::vector<SimdLevel> supported_levels() {
  std::vector<SimdLevel> v;
  for (SimdLevel l : kSimdLevels)
    if (simd_level_supported(l)) v.push_back(l);
  return v;
}

const Kernels& scalar() { return kernels_for(SimdLevel::Scalar); }

std::vector<float> random_floats(int64_t n, uint32_t seed, float lo = -1.0f, float hi = 1.0f) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> d(lo, hi);
  std::vector<float> v(static_cast<size_t>(n));
  for (float& f : v) f = d(rng);
  return v;
}

const std::vector<int64_t> kSizes = {1, 3, 17, 31, 32, 33, 1500, 51865};
const std::vector<int64_t> kQuantSizes = {32, 64, 96, 384, 1504, 51200};
const DType kWeightTypes[] = {DType::Q4_0, DType::Q4_1, DType::Q5_0, DType::Q5_1, DType::Q8_0};

bool same_bits(float a, float b) {
  if (std::isnan(a) && std::isnan(b)) return true;
  return std::memcmp(&a, &b, 4) == 0;
}

class KernelsTest : public ::testing::TestWithParam<SimdLevel> {
 protected:
  const Kernels& k() const { return kernels_for(GetParam()); }
};

TEST_P(KernelsTest, TableIsCompleteAndLabelled) {
  const Kernels& t = k();
  EXPECT_EQ(t.level, GetParam());
  const void* fns[] = {reinterpret_cast<const void*>(t.dot_f32),
                       reinterpret_cast<const void*>(t.dot_f16_f32),
                       reinterpret_cast<const void*>(t.dot_q4_0),
                       reinterpret_cast<const void*>(t.dot_q4_1),
                       reinterpret_cast<const void*>(t.dot_q5_0),
                       reinterpret_cast<const void*>(t.dot_q5_1),
                       reinterpret_cast<const void*>(t.dot_q8_0),
                       reinterpret_cast<const void*>(t.dot_q_rows),
                       reinterpret_cast<const void*>(t.dot_q_tiles),
                       reinterpret_cast<const void*>(t.quantize_q8a),
                       reinterpret_cast<const void*>(t.dot_f32_rows),
                       reinterpret_cast<const void*>(t.dot_f16_rows),
                       reinterpret_cast<const void*>(t.f16_to_f32_row),
                       reinterpret_cast<const void*>(t.f32_to_f16_row),
                       reinterpret_cast<const void*>(t.dequantize_row),
                       reinterpret_cast<const void*>(t.quantize_row),
                       reinterpret_cast<const void*>(t.add),
                       reinterpret_cast<const void*>(t.mul),
                       reinterpret_cast<const void*>(t.scale),
                       reinterpret_cast<const void*>(t.axpy),
                       reinterpret_cast<const void*>(t.axpy_f16),
                       reinterpret_cast<const void*>(t.axpy_f16_rows),
                       reinterpret_cast<const void*>(t.axpy_q8_0_rows),
                       reinterpret_cast<const void*>(t.max),
                       reinterpret_cast<const void*>(t.exp_sub_sum),
                       reinterpret_cast<const void*>(t.gelu),
                       reinterpret_cast<const void*>(t.sigmoid),
                       reinterpret_cast<const void*>(t.tanh),
                       reinterpret_cast<const void*>(t.mean_var),
                       reinterpret_cast<const void*>(t.gemm_f32),
                       reinterpret_cast<const void*>(t.gemm_f32_nn),
                       reinterpret_cast<const void*>(t.pack_a),
                       reinterpret_cast<const void*>(t.pack_b),
                       reinterpret_cast<const void*>(t.pack_b_depth_major),
                       reinterpret_cast<const void*>(t.gemm_packed),
                       reinterpret_cast<const void*>(t.argmax)};
  for (const void* f : fns) EXPECT_NE(f, nullptr);
  EXPECT_GE(t.gemm_mr, 1);
  EXPECT_LE(t.gemm_mr, kMaxGemmPanel);
  EXPECT_GE(t.gemm_nr, 1);
  EXPECT_LE(t.gemm_nr, kMaxGemmPanel);
  // gemm_q8 is optional; the levels with int8 dot instructions (AVX-512 with VNNI, avx2vnni,
  // dotprod, i8mm) have it.
  if (GetParam() == SimdLevel::AVX512 || GetParam() == SimdLevel::AVX2VNNI || GetParam() == SimdLevel::Dotprod ||
      GetParam() == SimdLevel::I8mm) {
    EXPECT_NE(reinterpret_cast<const void*>(t.gemm_q8), nullptr);
  }
}

TEST_P(KernelsTest, DotF32) {
  for (int64_t n : kSizes) {
    const auto w = random_floats(n, 1), x = random_floats(n, 2);
    double ref = 0, mag = 0;
    for (int64_t i = 0; i < n; ++i) {
      ref += double(w[i]) * x[i];
      mag += std::fabs(double(w[i]) * x[i]);
    }
    const double tol = 4 * kEps * std::sqrt(double(n)) * mag + 1e-30;
    EXPECT_NEAR(k().dot_f32(n, w.data(), x.data()), ref, tol) << "n=" << n;
    EXPECT_NEAR(k().dot_f32(n, w.data(), x.data()), scalar().dot_f32(n, w.data(), x.data()), 2 * tol) << "n=" << n;
  }
}

TEST_P(KernelsTest, DotF16) {
  for (int64_t n : kSizes) {
    const auto wf = random_floats(n, 3), x = random_floats(n, 4);
    std::vector<f16_t> w(static_cast<size_t>(n));
    for (int64_t i = 0; i < n; ++i) w[i] = f32_to_f16(wf[i]);
    double ref = 0, mag = 0;
    for (int64_t i = 0; i < n; ++i) {
      ref += double(f16_to_f32(w[i])) * x[i];
      mag += std::fabs(double(f16_to_f32(w[i])) * x[i]);
    }
    const double tol = 4 * kEps * std::sqrt(double(n)) * mag + 1e-30;
    EXPECT_NEAR(k().dot_f16_f32(n, w.data(), x.data()), ref, tol) << "n=" << n;
    EXPECT_NEAR(k().dot_f16_f32(n, w.data(), x.data()), scalar().dot_f16_f32(n, w.data(), x.data()), 2 * tol);
  }
}

// dot_f32_rows / dot_f16_rows: every tile shape the tables unroll (weight rows 1..9: tiles of 4
// (avx512) or 2-3 (avx2) and the remainders, activation rows 1..13: one group of up to 6, or
// two or three nearly equal ones), weight rows at an odd byte stride (rows from the file mapping may sit at any byte)
// and back to back at an odd address (a product's rows: the tiles that prefetch them as one block),
// strided activation rows and strided outputs; each output against the double-precision dot,
// and bit for bit what the same row gives alone (nw = 1): a weight row's result must not depend
// on which rows share its tile, which is how threads split the rows (same threads, same text).
TEST_P(KernelsTest, WeightRowsDotsOverSeveralRows) {
  for (bool f16 : {false, true}) {
    for (int64_t n : {int64_t{1}, int64_t{15}, int64_t{17}, int64_t{64}, int64_t{384}, int64_t{1500}})
      for (size_t gap : {size_t{3}, size_t{0}}) {
        const int64_t nw_max = 9, nx_max = 13;
        const size_t esize = f16 ? sizeof(f16_t) : sizeof(float);
        const size_t ws = static_cast<size_t>(n) * esize + gap;  // gap 3: odd stride, unaligned rows
        std::vector<uint8_t> wbytes(ws * nw_max + 64);
        const auto wf = random_floats(n * nw_max, static_cast<uint32_t>(n) + 5);
        std::vector<std::vector<double>> wd(nw_max, std::vector<double>(static_cast<size_t>(n)));
        for (int64_t r = 0; r < nw_max; ++r)
          for (int64_t i = 0; i < n; ++i) {
            uint8_t* at = wbytes.data() + 1 + r * ws + i * esize;
            const float v = wf[r * n + i];
            if (f16) {
              const f16_t h = f32_to_f16(v);
              std::memcpy(at, &h, sizeof h);
              wd[r][i] = f16_to_f32(h);
            } else {
              std::memcpy(at, &v, sizeof v);
              wd[r][i] = v;
            }
          }
        const int64_t xs = n + 5;
        const auto x = random_floats(xs * nx_max, static_cast<uint32_t>(n) + 6);
        for (int64_t nw = 1; nw <= nw_max; ++nw) {
          for (int64_t nx = 1; nx <= nx_max; ++nx) {
            const int64_t ldy = nw + 2;
            std::vector<float> y(static_cast<size_t>(ldy * nx), -7.0f);
            (f16 ? k().dot_f16_rows : k().dot_f32_rows)(n, wbytes.data() + 1, ws, nw, x.data(), xs, nx, y.data(), ldy);
            for (int64_t m = 0; m < nx; ++m) {
              for (int64_t r = 0; r < nw; ++r) {
                double ref = 0, mag = 0;
                for (int64_t i = 0; i < n; ++i) {
                  ref += wd[r][i] * x[m * xs + i];
                  mag += std::fabs(wd[r][i] * x[m * xs + i]);
                }
                ASSERT_NEAR(y[m * ldy + r], ref, 4 * kEps * std::sqrt(double(n)) * mag + 1e-30)
                    << (f16 ? "f16" : "f32") << " n=" << n << " nw=" << nw << " nx=" << nx << " r=" << r << " m=" << m;
              }
              for (int64_t r = nw; r < ldy; ++r) ASSERT_EQ(y[m * ldy + r], -7.0f) << "wrote past the tile";
            }
            for (int64_t r = 0; r < nw; ++r) {
              std::vector<float> alone(static_cast<size_t>(nx));
              (f16 ? k().dot_f16_rows : k().dot_f32_rows)(n, wbytes.data() + 1 + r * ws, ws, 1, x.data(), xs, nx,
                                                          alone.data(), 1);
              for (int64_t m = 0; m < nx; ++m)
                ASSERT_TRUE(same_bits(y[m * ldy + r], alone[m]))
                    << (f16 ? "f16" : "f32") << " n=" << n << " nw=" << nw << " nx=" << nx << " r=" << r << " m=" << m;
            }
          }
        }
      }
  }
}

using QDot = float (*)(int64_t, const void*, const BlockQ8A*);
QDot qdot(const Kernels& t, DType type) {
  switch (type) {
    case DType::Q4_0: return t.dot_q4_0;
    case DType::Q4_1: return t.dot_q4_1;
    case DType::Q5_0: return t.dot_q5_0;
    case DType::Q5_1: return t.dot_q5_1;
    default: return t.dot_q8_0;
  }
}

// Weights from quantizing random values (realistic scales), and from random bytes with sane
// scales (every level pattern, including q8_0's -128 that quantizers never produce).
std::vector<uint8_t> weight_row(DType type, int64_t n, uint32_t seed, bool raw_levels) {
  std::vector<uint8_t> w(dtype_row_bytes(type, n));
  if (!raw_levels) {
    const auto f = random_floats(n, seed, -2.0f, 1.5f);
    quantize_row(type, f.data(), w.data(), n);
    return w;
  }
  std::mt19937 rng(seed);
  for (uint8_t& b : w) b = static_cast<uint8_t>(rng());
  // Overwrite the f16 scale (and min) of each block with finite values.
  const size_t bb = dtype_block_bytes(type);
  const bool has_min = type == DType::Q4_1 || type == DType::Q5_1;
  std::uniform_real_distribution<float> d(-0.05f, 0.05f);
  for (size_t off = 0; off < w.size(); off += bb) {
    const f16_t sd = f32_to_f16(d(rng)), sm = f32_to_f16(d(rng));
    std::memcpy(&w[off], &sd, 2);
    if (has_min) std::memcpy(&w[off + 2], &sm, 2);
  }
  return w;
}

TEST_P(KernelsTest, QuantizedDots) {
  for (DType type : kWeightTypes) {
    for (int64_t n : kQuantSizes) {
      for (bool raw : {false, true}) {
        const auto w = weight_row(type, n, static_cast<uint32_t>(n) + 7, raw);
        const auto xf = random_floats(n, static_cast<uint32_t>(n) + 11, -3.0f, 3.0f);
        std::vector<BlockQ8A> xq(static_cast<size_t>(n / kQuantBlock));
        quantize_row_q8a(xf.data(), xq.data(), n);
        std::vector<float> wd(static_cast<size_t>(n));
        dequantize_row(type, w.data(), wd.data(), n);
        double ref = 0, mag = 0;
        for (int64_t i = 0; i < n; ++i) {
          const double xv = double(xq[i / 32].qs[i % 32]) * xq[i / 32].d;
          ref += double(wd[i]) * xv;
          mag += std::fabs(double(wd[i]) * xv);
        }
        const double tol = 1e-5 * mag + 1e-20;
        const float got = qdot(k(), type)(n, w.data(), xq.data());
        EXPECT_NEAR(got, ref, tol) << dtype_name(type) << " n=" << n << " raw=" << raw;
        EXPECT_NEAR(got, qdot(scalar(), type)(n, w.data(), xq.data()), tol) << dtype_name(type) << " n=" << n;
      }
    }
  }
}

TEST_P(KernelsTest, QuantizedDotsOverSeveralRows) {
  // Strided activation rows (a gap of one block between rows) and strided outputs; every group
  // size the kernels unroll (1..4) and a remainder after full groups.
  const int64_t n = 384, nb = n / kQuantBlock, xs = nb + 1;
  for (DType type : kWeightTypes) {
    const auto w = weight_row(type, n, 99, true);
    for (int64_t nx : {1, 2, 3, 4, 5, 7, 9}) {
      const auto xf = random_floats(nx * xs * kQuantBlock, 77, -2.0f, 2.0f);
      std::vector<BlockQ8A> xq(static_cast<size_t>(nx * xs));
      quantize_row_q8a(xf.data(), xq.data(), nx * xs * kQuantBlock);
      std::vector<float> y(static_cast<size_t>(2 * nx), -1.0f);
      k().dot_q_rows(type, n, w.data(), xq.data(), xs, nx, y.data(), 2);
      std::vector<float> wd(static_cast<size_t>(n));
      dequantize_row(type, w.data(), wd.data(), n);
      for (int64_t i = 0; i < nx; ++i) {
        const float single = qdot(scalar(), type)(n, w.data(), xq.data() + i * xs);
        double mag = 0;
        for (int64_t j = 0; j < n; ++j) {
          const BlockQ8A& b = xq[static_cast<size_t>(i * xs + j / 32)];
          mag += std::fabs(double(wd[j]) * b.qs[j % 32] * b.d);
        }
        EXPECT_NEAR(y[2 * i], single, 1e-5 * mag + 1e-20) << dtype_name(type) << " nx=" << nx << " row " << i;
        EXPECT_EQ(y[2 * i + 1], -1.0f) << "wrote between strided outputs";
      }
    }
  }
}

// q8a activation rows xs blocks apart (the gap between rows holds other values).
std::vector<BlockQ8A> q8a_rows(int64_t nrows, int64_t xs, uint32_t seed) {
  const auto xf = random_floats(nrows * xs * kQuantBlock, seed, -2.0f, 2.0f);
  std::vector<BlockQ8A> xq(static_cast<size_t>(nrows * xs));
  quantize_row_q8a(xf.data(), xq.data(), nrows * xs * kQuantBlock);
  return xq;
}

// sum |w_j x_j| of a weight row (dequantized) with a q8a row: the scale of the rounding error.
double q_magnitude(DType type, int64_t n, const uint8_t* w, const BlockQ8A* x) {
  std::vector<float> wd(static_cast<size_t>(n));
  dequantize_row(type, w, wd.data(), n);
  double mag = 0;
  for (int64_t j = 0; j < n; ++j) mag += std::fabs(double(wd[j]) * x[j / 32].qs[j % 32] * x[j / 32].d);
  return mag;
}

TEST_P(KernelsTest, QuantizedDotTilesEveryRowCount) {
  // nw weight rows (an odd byte stride: rows at any address) x nx activation rows (strided), every
  // tile shape and remainder the kernels have (weight rows in 8s, 4s, 2s and a last odd one;
  // activation rows in groups of up to 4 or 8, or from 5 rows on in vector lanes of 8 or 16 with
  // a short last group; rows of 16 blocks or more, 17 and 19 here, read in order four blocks at a
  // time, with a short last group), against the scalar single dots. Each weight row's
  // outputs must also be bit for bit what that row gives alone (nw = 1): results never depend on
  // which weight rows share a tile (how threads split them).
  for (DType type : kWeightTypes) {
    for (int64_t n : {32, 64, 416, 544, 608}) {
      const int64_t nb = n / kQuantBlock, xs = nb + 1;
      const size_t rb = dtype_row_bytes(type, n), ws = rb + 3;
      for (int64_t nw : {1, 2, 3, 4, 5, 7, 8, 11, 17}) {
        std::vector<uint8_t> w(ws * static_cast<size_t>(nw) + 1);
        for (int64_t r = 0; r < nw; ++r) {
          const auto row = weight_row(type, n, static_cast<uint32_t>(31 * r + n), r % 2 == 1);
          std::memcpy(w.data() + 1 + r * ws, row.data(), rb);
        }
        const uint8_t* w0 = w.data() + 1;
        for (int64_t nx : {1, 2, 3, 4, 5, 6, 7, 8, 9, 12, 16, 19}) {
          const auto xq = q8a_rows(nx, xs, static_cast<uint32_t>(nx * 5 + nw));
          const int64_t ldy = nw + 2;
          std::vector<float> y(static_cast<size_t>(nx * ldy), -7.0f);
          k().dot_q_tiles(type, n, w0, ws, nw, xq.data(), xs, nx, y.data(), ldy);
          for (int64_t m = 0; m < nx; ++m) {
            for (int64_t r = 0; r < nw; ++r) {
              const uint8_t* wr = w0 + r * ws;
              const BlockQ8A* xr = xq.data() + m * xs;
              const float got = y[m * ldy + r];
              const double tol = 1e-5 * q_magnitude(type, n, wr, xr) + 1e-20;
              ASSERT_NEAR(got, qdot(scalar(), type)(n, wr, xr), tol)
                  << dtype_name(type) << " n=" << n << " nw=" << nw << " nx=" << nx << " r=" << r << " m=" << m;
            }
            for (int64_t r = nw; r < ldy; ++r) ASSERT_EQ(y[m * ldy + r], -7.0f) << "wrote past the rows";
          }
          for (int64_t r = 0; r < nw; ++r) {
            std::vector<float> alone(static_cast<size_t>(nx));
            k().dot_q_tiles(type, n, w0 + r * ws, ws, 1, xq.data(), xs, nx, alone.data(), 1);
            for (int64_t m = 0; m < nx; ++m)
              ASSERT_TRUE(same_bits(y[m * ldy + r], alone[m]))
                  << dtype_name(type) << " nw=" << nw << " nx=" << nx << " r=" << r << " m=" << m << ": "
                  << y[m * ldy + r] << " vs " << alone[m];
          }
        }
      }
    }
  }
}

// The inputs of an int8 GEMM test: n weight rows of `type`, k deep, ldb bytes apart from an odd
// address (w0), and m activation rows of q8a blocks, lda apart; ldc for an output with spare
// columns. Seeds: the weight row j's is j + seed_mul * k (special rows where j % 3 == special),
// the activations' is a_seed.
struct GemmQ8Inputs {
  int64_t lda = 0, ldc = 0;
  size_t ldb = 0;
  std::vector<uint8_t> w;
  const uint8_t* w0 = nullptr;
  std::vector<BlockQ8A> a;
};
GemmQ8Inputs gemm_q8_inputs(DType type, int64_t m, int64_t n, int64_t k, uint32_t seed_mul, int special,
                            uint32_t a_seed) {
  GemmQ8Inputs in;
  in.lda = k / kQuantBlock + 1;
  const size_t rb = dtype_row_bytes(type, k);
  in.ldb = rb + 5;
  in.w.assign(in.ldb * static_cast<size_t>(n) + 3, 0);
  in.w0 = in.w.data() + 3;  // any address
  for (int64_t j = 0; j < n; ++j) {
    const auto row = weight_row(type, k, static_cast<uint32_t>(j + seed_mul * k), j % 3 == special);
    std::memcpy(in.w.data() + 3 + j * in.ldb, row.data(), rb);
  }
  in.a = q8a_rows(m, in.lda, a_seed);
  in.ldc = n + 3;
  return in;
}

TEST_P(KernelsTest, GemmQ8MatchesQuantizedDots) {
  if (!k().gemm_q8) GTEST_SKIP() << "no int8 GEMM at this level (mul_mat uses the f32 GEMM)";
  struct Shape {
    int64_t m, n, k;
  };
  // Whole and partial register tiles (6 x 32), several packed blocks (96 rows, 256 columns),
  // one and two depth slices (16 blocks each at most).
  const Shape shapes[] = {{1, 1, 32}, {6, 32, 64}, {5, 31, 96}, {37, 33, 544}, {100, 300, 160}, {7, 70, 1024}};
  for (DType type : kWeightTypes) {
    for (const Shape& sh : shapes) {
      const GemmQ8Inputs in = gemm_q8_inputs(type, sh.m, sh.n, sh.k, 17, 0, static_cast<uint32_t>(sh.m + sh.n));
      const auto& [lda, ldc, ldb, w, w0, a] = in;
      std::vector<float> c(static_cast<size_t>(sh.m * ldc), -7.0f);
      k().gemm_q8(type, sh.m, sh.n, sh.k, a.data(), lda, w0, ldb, c.data(), ldc);
      for (int64_t i = 0; i < sh.m; ++i) {
        for (int64_t j = 0; j < sh.n; ++j) {
          const uint8_t* wr = w0 + j * ldb;
          const BlockQ8A* xr = a.data() + i * lda;
          const double tol = 1e-5 * q_magnitude(type, sh.k, wr, xr) + 1e-20;
          ASSERT_NEAR(c[i * ldc + j], qdot(scalar(), type)(sh.k, wr, xr), tol)
              << dtype_name(type) << " " << sh.m << "x" << sh.n << "x" << sh.k << " at " << i << "," << j;
        }
        for (int64_t j = sh.n; j < ldc; ++j) ASSERT_EQ(c[i * ldc + j], -7.0f) << "wrote past the columns";
      }
    }
  }
}

// The AMX GEMM against the VNNI one: the same numbers bit for bit (exact integer block sums,
// scaled in the same order), over whole and partial 16 x 16 tiles, odd and even block counts
// (two blocks are in flight), several packed blocks and depth slices.
TEST(AmxGemm, EqualsTheVnniGemmBitForBit) {
#if !(defined(__x86_64__) || defined(__i386__))
  GTEST_SKIP() << "an x86 build's test (AMX and AVX-512 VNNI)";
#else
  if (!cpu::amx_int8_enabled()) GTEST_SKIP() << "no AMX-INT8 here (or HARK_AMX=0): the AVX-512 VNNI GEMM runs";
  struct Shape {
    int64_t m, n, k;
  };
  const Shape shapes[] = {{1, 1, 32},     {16, 16, 64},   {17, 15, 96},     {15, 17, 32}, {37, 33, 544},
                          {96, 256, 160}, {97, 257, 512}, {100, 300, 1024}, {7, 70, 1056}};
  for (DType type : kWeightTypes) {
    for (const Shape& sh : shapes) {
      const GemmQ8Inputs in = gemm_q8_inputs(type, sh.m, sh.n, sh.k, 5, 1, static_cast<uint32_t>(sh.m * 3 + sh.n));
      const auto& [lda, ldc, ldb, w, w0, a] = in;
      std::vector<float> amx(static_cast<size_t>(sh.m * ldc), -7.0f), vnni = amx;
      cpu::detail::amx_gemm_q8(type, sh.m, sh.n, sh.k, a.data(), lda, w0, ldb, amx.data(), ldc);
      cpu::detail::avx512_gemm_q8(type, sh.m, sh.n, sh.k, a.data(), lda, w0, ldb, vnni.data(), ldc);
      for (size_t i = 0; i < amx.size(); ++i)
        ASSERT_TRUE(same_bits(amx[i], vnni[i]))
            << dtype_name(type) << " " << sh.m << "x" << sh.n << "x" << sh.k << " at " << i / ldc << "," << i % ldc
            << ": " << amx[i] << " vs " << vnni[i];
    }
  }
#endif
}

// The ARM int8 GEMMs (dotprod's sdot tiles, i8mm's smmla tiles) against their level's dots: the
// same numbers bit for bit (exact integer block sums, each scaled and summed as the dot does it),
// over whole and partial 4 x 4 tiles, block counts with and without a remainder of 4, and the
// edges the dots compute; and the NEON, dotprod and i8mm dots give one another's bits.
TEST(ArmGemmQ8, EqualsItsLevelsDotsBitForBit) {
#if !defined(__aarch64__)
  GTEST_SKIP() << "an ARM build's test (dotprod and i8mm)";
#else
  int levels_run = 0;
  for (SimdLevel level : {SimdLevel::Dotprod, SimdLevel::I8mm}) {
    if (!simd_level_supported(level)) continue;
    ++levels_run;
    const Kernels& t = kernels_for(level);
    ASSERT_NE(t.gemm_q8, nullptr) << simd_level_name(level);
    struct Shape {
      int64_t m, n, k;
    };
    const Shape shapes[] = {{1, 1, 32},  {4, 4, 64},  {5, 7, 96},    {8, 12, 32},
                            {4, 8, 128}, {9, 5, 160}, {37, 33, 544}, {7, 70, 1056}};
    for (DType type : kWeightTypes) {
      for (const Shape& sh : shapes) {
        const GemmQ8Inputs in = gemm_q8_inputs(type, sh.m, sh.n, sh.k, 11, 2, static_cast<uint32_t>(sh.m * 5 + sh.n));
        const auto& [lda, ldc, ldb, w, w0, a] = in;
        std::vector<float> c(static_cast<size_t>(sh.m * ldc), -7.0f);
        t.gemm_q8(type, sh.m, sh.n, sh.k, a.data(), lda, w0, ldb, c.data(), ldc);
        for (int64_t i = 0; i < sh.m; ++i)
          for (int64_t j = 0; j < sh.n; ++j) {
            const float want = qdot(t, type)(sh.k, w0 + j * ldb, a.data() + i * lda);
            const float neon = qdot(kernels_for(SimdLevel::Neon), type)(sh.k, w0 + j * ldb, a.data() + i * lda);
            ASSERT_TRUE(same_bits(want, neon)) << simd_level_name(level) << " dot vs neon's, " << dtype_name(type);
            ASSERT_TRUE(same_bits(c[i * ldc + j], want))
                << simd_level_name(level) << " " << dtype_name(type) << " " << sh.m << "x" << sh.n << "x" << sh.k
                << " at " << i << "," << j << ": " << c[i * ldc + j] << " vs " << want;
          }
      }
    }
  }
  if (levels_run == 0) GTEST_SKIP() << "this core has neither dotprod nor i8mm (run it on cortex-a76 or max)";
#endif
}

TEST_P(KernelsTest, QuantizeQ8aMatchesReferenceBitForBit) {
  for (int64_t n : kQuantSizes) {
    auto x = random_floats(n, static_cast<uint32_t>(n), -5.0f, 5.0f);
    // Special blocks: zeros, exact ties at half steps (amax 127 makes the step 1), NaN, inf.
    if (n >= 128) {
      for (int j = 0; j < 32; ++j) x[j] = 0.0f;
      for (int j = 0; j < 32; ++j) x[32 + j] = j == 0 ? 127.0f : static_cast<float>(j) - 15.5f;
      x[64 + 3] = NAN;
      x[96 + 5] = INFINITY;
    }
    std::vector<BlockQ8A> ref(static_cast<size_t>(n / 32)), got(ref.size());
    quantize_row_q8a(x.data(), ref.data(), n);
    k().quantize_q8a(x.data(), got.data(), n);
    for (size_t b = 0; b < ref.size(); ++b) {
      ASSERT_TRUE(same_bits(got[b].d, ref[b].d)) << "block " << b;
      ASSERT_TRUE(same_bits(got[b].s, ref[b].s)) << "block " << b;
      ASSERT_EQ(std::memcmp(got[b].qs, ref[b].qs, 32), 0) << "block " << b << " n=" << n;
    }
  }
}

TEST_P(KernelsTest, F16ConversionsMatchScalarDefinitions) {
  std::vector<f16_t> all(65536);
  for (uint32_t h = 0; h < 65536; ++h) all[h] = static_cast<f16_t>(h);
  std::vector<float> f(65536);
  k().f16_to_f32_row(all.data(), f.data(), 65536);
  for (uint32_t h = 0; h < 65536; ++h) ASSERT_TRUE(same_bits(f[h], f16_to_f32(all[h]))) << "half " << h;
  for (int64_t n : kSizes) {
    // Wide exponent range: normal, subnormal and overflowing halves, and round-to-even ties.
    std::mt19937 rng(static_cast<uint32_t>(n));
    std::vector<float> x(static_cast<size_t>(n));
    for (float& v : x) {
      uint32_t bits = rng();
      bits = (bits & 0x807fffffu) | ((100u + bits % 50u) << 23);  // exponents 2^-27 .. 2^22
      std::memcpy(&v, &bits, 4);
    }
    std::vector<f16_t> h(static_cast<size_t>(n));
    k().f32_to_f16_row(x.data(), h.data(), n);
    for (int64_t i = 0; i < n; ++i) ASSERT_EQ(h[i], f32_to_f16(x[i])) << "value " << x[i];
  }
}

TEST_P(KernelsTest, DequantizeMatchesReferenceBitForBit) {
  for (DType type : {DType::F32, DType::F16, DType::Q4_0, DType::Q4_1, DType::Q5_0, DType::Q5_1, DType::Q8_0}) {
    for (int64_t n : kQuantSizes) {
      for (bool raw : {false, true}) {
        std::vector<uint8_t> w;
        if (dtype_quantized(type)) {
          w = weight_row(type, n, static_cast<uint32_t>(n) * 3 + 1, raw);
        } else {
          const auto f = random_floats(n, static_cast<uint32_t>(n));
          w.resize(dtype_row_bytes(type, n));
          quantize_row(type, f.data(), w.data(), n);
        }
        std::vector<float> ref(static_cast<size_t>(n)), got(static_cast<size_t>(n));
        dequantize_row(type, w.data(), ref.data(), n);
        k().dequantize_row(type, w.data(), got.data(), n);
        for (int64_t i = 0; i < n; ++i)
          ASSERT_TRUE(same_bits(got[i], ref[i])) << dtype_name(type) << " n=" << n << " i=" << i;
      }
    }
  }
}

TEST_P(KernelsTest, ElementWise) {
  for (int64_t n : kSizes) {
    const auto a = random_floats(n, 5, -4, 4), b = random_floats(n, 6, -4, 4);
    std::vector<float> y(static_cast<size_t>(n)), r(static_cast<size_t>(n));
    k().add(n, a.data(), b.data(), y.data());
    for (int64_t i = 0; i < n; ++i) ASSERT_EQ(y[i], a[i] + b[i]);
    k().mul(n, a.data(), b.data(), y.data());
    for (int64_t i = 0; i < n; ++i) ASSERT_EQ(y[i], a[i] * b[i]);
    // scale and axpy may fuse the multiply-add: one rounding instead of two.
    k().scale(n, a.data(), 0.37f, -1.25f, y.data());
    for (int64_t i = 0; i < n; ++i)
      ASSERT_NEAR(y[i], double(a[i]) * 0.37 - 1.25, 2 * kEps * (std::fabs(a[i] * 0.37) + 1.25));
    y = b;
    k().axpy(n, -0.61f, a.data(), y.data());
    for (int64_t i = 0; i < n; ++i)
      ASSERT_NEAR(y[i], b[i] - 0.61 * a[i], 2 * kEps * (std::fabs(b[i]) + std::fabs(0.61 * a[i])));
    std::vector<f16_t> h(static_cast<size_t>(n));
    for (int64_t i = 0; i < n; ++i) h[i] = f32_to_f16(a[i]);
    y = b;
    k().axpy_f16(n, 1.7f, h.data(), y.data());
    for (int64_t i = 0; i < n; ++i) {
      const double e = b[i] + 1.7 * f16_to_f32(h[i]);
      ASSERT_NEAR(y[i], e, 2 * kEps * (std::fabs(b[i]) + std::fabs(1.7 * f16_to_f32(h[i]))));
    }
    // In place, as the ops call them.
    y = a;
    k().scale(n, y.data(), 2.0f, 0.0f, y.data());
    for (int64_t i = 0; i < n; ++i) ASSERT_EQ(y[i], 2.0f * a[i]);
    float mref = -INFINITY;
    for (float v : a) mref = v > mref ? v : mref;
    EXPECT_EQ(k().max(n, a.data()), mref);
    (void)r;
  }
}

// axpy_f16_rows: every output exactly as axpy_f16 row after row would leave it (the attention's
// grouping of queries must change no result), for output counts across the register groups, value
// lengths with tails (up to 64 values and 6 outputs go in one pass of 4 vectors, others in
// chunks of 32), and strided rows.
TEST_P(KernelsTest, AxpyF16RowsIsAxpyF16RowAfterRow) {
  for (int64_t n : {1, 16, 31, 40, 64, 80}) {
    for (int64_t na : {1, 2, 5, 6, 7, 8, 9}) {
      const int64_t nk = 37, as = nk + 3, ys = n + 5;
      const size_t xs = static_cast<size_t>(n + 2) * sizeof(f16_t);
      const auto vals = random_floats(nk * (n + 2), 11, -3, 3);
      std::vector<f16_t> x(vals.size());
      for (size_t i = 0; i < vals.size(); ++i) x[i] = f32_to_f16(vals[i]);
      auto a = random_floats(na * as, 12, 0, 1);
      a[3] = 0.0f;  // masked keys weigh 0
      const auto y0 = random_floats(na * ys, 13, -1, 1);
      std::vector<float> y = y0, want = y0;
      k().axpy_f16_rows(n, nk, a.data(), as, na, x.data(), xs, y.data(), ys);
      for (int64_t t = 0; t < nk; ++t)
        for (int64_t g = 0; g < na; ++g)
          k().axpy_f16(n, a[static_cast<size_t>(g * as + t)], x.data() + t * (n + 2), want.data() + g * ys);
      for (size_t i = 0; i < y.size(); ++i) ASSERT_EQ(y[i], want[i]) << "n " << n << " na " << na << " at " << i;
    }
  }
}

// axpy_q8_0_rows (the values of a q8_0 cross-attention cache): each output as the rows
// dequantized by the reference and summed in double, to f32 rounding; output counts across the
// register groups, 1 to 3 blocks a row (two at a time, then one), strided rows.
TEST_P(KernelsTest, AxpyQ80RowsSumsTheDequantizedRows) {
  for (int64_t n : {32, 64, 96}) {
    for (int64_t na : {1, 2, 5, 6, 7, 8, 9}) {
      const int64_t nk = 37, as = nk + 3, ys = n + 5;
      const size_t xs = dtype_row_bytes(DType::Q8_0, n) + 6;
      const auto vals = random_floats(nk * n, 11, -3, 3);
      std::vector<uint8_t> x(static_cast<size_t>(nk) * xs);
      std::vector<float> deq(vals.size());
      for (int64_t t = 0; t < nk; ++t) {
        quantize_row(DType::Q8_0, vals.data() + t * n, x.data() + t * xs, n);
        dequantize_row(DType::Q8_0, x.data() + t * xs, deq.data() + t * n, n);
      }
      auto a = random_floats(na * as, 12, 0, 1);
      a[3] = 0.0f;  // masked keys weigh 0
      const auto y0 = random_floats(na * ys, 13, -1, 1);
      std::vector<float> y = y0;
      k().axpy_q8_0_rows(n, nk, a.data(), as, na, x.data(), xs, y.data(), ys);
      for (int64_t g = 0; g < na; ++g)
        for (int64_t i = 0; i < ys; ++i) {
          const size_t at = static_cast<size_t>(g * ys + i);
          if (i >= n) {
            ASSERT_EQ(y[at], y0[at]) << "past the row: n " << n << " na " << na;
            continue;
          }
          double want = y0[at], mag = std::fabs(y0[at]);
          for (int64_t t = 0; t < nk; ++t) {
            const double term =
                static_cast<double>(a[static_cast<size_t>(g * as + t)]) * deq[static_cast<size_t>(t * n + i)];
            want += term;
            mag += std::fabs(term);
          }
          ASSERT_NEAR(y[at], want, 1e-6 * mag + 1e-7) << "n " << n << " na " << na << " output " << g << " value " << i;
        }
    }
  }
}

// quantize_row: byte for byte runtime/quant's, for every quantized type (the SIMD tables
// vectorize q8_0): random blocks, an all-zero block, NaN (read as 0), an infinity, subnormals, and
// a block whose scale is exactly 1, so x.5 values are ties that round to even.
TEST_P(KernelsTest, QuantizeRowIsTheReferenceByteForByte) {
  const int64_t n = 9 * kQuantBlock;
  auto x = random_floats(n, 21, -4, 4);
  for (int j = 0; j < kQuantBlock; ++j) x[static_cast<size_t>(kQuantBlock + j)] = 0.0f;
  x[2 * kQuantBlock + 3] = std::nanf("");
  x[3 * kQuantBlock + 5] = INFINITY;
  for (int j = 0; j < kQuantBlock; ++j)
    x[static_cast<size_t>(4 * kQuantBlock + j)] = 1e-41f * static_cast<float>(j - 7);
  const float ties[] = {127.0f, 2.5f, -3.5f, 0.5f, -0.5f, 1.5f, 126.5f, -126.5f};
  for (int j = 0; j < kQuantBlock; ++j) x[static_cast<size_t>(5 * kQuantBlock + j)] = ties[j % 8];
  x[6 * kQuantBlock] = 1e30f;  // a scale past f16's range
  for (DType type : {DType::Q4_0, DType::Q4_1, DType::Q5_0, DType::Q5_1, DType::Q8_0}) {
    std::vector<uint8_t> got(dtype_row_bytes(type, n)), want(got.size());
    k().quantize_row(type, x.data(), got.data(), n);
    quantize_row(type, x.data(), want.data(), n);
    for (size_t i = 0; i < got.size(); ++i)
      ASSERT_EQ(got[i], want[i]) << dtype_name(type) << " byte " << i << " (block " << i / dtype_block_bytes(type)
                                 << ")";
  }
}

TEST_P(KernelsTest, ExpSubSum) {
  for (int64_t n : kSizes) {
    auto x = random_floats(n, 9, -95.0f, 3.0f);
    if (n > 3) x[1] = -INFINITY;  // a masked score
    const float m = 3.0f;
    std::vector<float> y(static_cast<size_t>(n));
    const float s = k().exp_sub_sum(n, x.data(), m, y.data());
    double sref = 0;
    for (int64_t i = 0; i < n; ++i) {
      const float diff = x[i] - m;  // rounded in f32, as the kernels see it
      const double e = diff < -87.34f ? 0.0 : std::exp(double(diff));
      sref += e;
      // Below -87.34 every level returns 0 (where f32 would be subnormal): absolute 1e-37 there.
      ASSERT_NEAR(y[i], e, 3e-7 * e + 1.2e-38) << "x=" << x[i];
    }
    EXPECT_NEAR(s, sref, 4 * kEps * std::sqrt(double(n)) * sref + 3e-7 * sref);
    std::vector<float> ys(static_cast<size_t>(n));
    scalar().exp_sub_sum(n, x.data(), m, ys.data());
    for (int64_t i = 0; i < n; ++i) ASSERT_NEAR(y[i], ys[i], 4e-7 * ys[i] + 1.2e-38);
    // No output row: the same sum, nothing written.
    EXPECT_EQ(k().exp_sub_sum(n, x.data(), m, nullptr), s) << n;
  }
  // Over the whole range where exp is normal, and the edges.
  const float edge[] = {0.0f, -0.0f, 1.0f, -1.0f, 88.7f, 88.0f, -87.3f, -87.0f, 0.3466f, -0.3466f, -120.0f, 100.0f};
  for (float e : edge) {
    float y;
    k().exp_sub_sum(1, &e, 0.0f, &y);
    const double r = e < -87.34f ? 0.0 : std::exp(double(e));
    if (std::isinf(r) || r > 3.4e38) {
      EXPECT_TRUE(std::isinf(y)) << e;
    } else {
      EXPECT_NEAR(y, r, 3e-7 * r + 1.2e-38) << e;
    }
  }
}

// The first index of the largest value: ties keep the first, -inf rows give 0, and a NaN wins
// (the first one), at every length around the vector widths and at a vocabulary's length.
TEST_P(KernelsTest, ArgmaxFirstLargestNanWins) {
  auto first_max = [](const std::vector<float>& x) {
    int64_t best = 0;
    for (size_t i = 0; i < x.size(); ++i) {
      if (std::isnan(x[i])) return static_cast<int64_t>(i);
      if (x[i] > x[static_cast<size_t>(best)]) best = static_cast<int64_t>(i);
    }
    return best;
  };
  std::vector<int64_t> sizes(kSizes.begin(), kSizes.end());
  for (int64_t n = 1; n <= 40; ++n) sizes.push_back(n);
  sizes.push_back(51865);
  for (int64_t n : sizes) {
    std::vector<float> x = random_floats(n, 11, -8.0f, 8.0f);
    EXPECT_EQ(k().argmax(n, x.data()), first_max(x)) << n;
    // Ties: the largest value again at a later index and at an earlier one.
    const int64_t top = first_max(x);
    if (top + 1 < n) {
      x[static_cast<size_t>(n - 1)] = x[static_cast<size_t>(top)];
      EXPECT_EQ(k().argmax(n, x.data()), top) << n;
    }
    if (top > 0) {
      x[0] = x[static_cast<size_t>(top)];
      EXPECT_EQ(k().argmax(n, x.data()), 0) << n;
    }
    // Ruled-out values; then nothing but -inf.
    std::vector<float> masked = random_floats(n, 12, -8.0f, 8.0f);
    for (int64_t i = 0; i < n; i += 2) masked[static_cast<size_t>(i)] = -INFINITY;
    EXPECT_EQ(k().argmax(n, masked.data()), first_max(masked)) << n;
    std::vector<float> none(static_cast<size_t>(n), -INFINITY);
    EXPECT_EQ(k().argmax(n, none.data()), 0) << n;
    // NaNs: the first one, wherever it is and whatever is around it.
    for (int64_t at : {int64_t{0}, n / 2, n - 1}) {
      std::vector<float> bad = random_floats(n, 13, -8.0f, 8.0f);
      bad[static_cast<size_t>(at)] = std::nanf("");
      if (at + 1 < n) bad[static_cast<size_t>(n - 1)] = std::nanf("");
      bad[static_cast<size_t>(at / 2)] = 1e30f;
      EXPECT_EQ(k().argmax(n, bad.data()), first_max(bad)) << n << " NaN at " << at;
    }
  }
}

TEST_P(KernelsTest, GeluErfForm) {
  double worst_abs = 0;
  for (int64_t n : kSizes) {
    const auto x = random_floats(n, 12, -12.0f, 12.0f);
    std::vector<float> y(static_cast<size_t>(n)), ys(static_cast<size_t>(n));
    k().gelu(n, x.data(), y.data());
    scalar().gelu(n, x.data(), ys.data());
    for (int64_t i = 0; i < n; ++i) {
      const double xd = x[i];
      const double r = 0.5 * xd * (1.0 + std::erf(xd / std::sqrt(2.0)));
      const double err = std::fabs(y[i] - r);
      worst_abs = std::max(worst_abs, err);
      ASSERT_LE(err, std::max(1e-6 * std::min(1.0, std::fabs(xd)), 2e-6 * std::fabs(r)) + 1e-30)
          << "x=" << xd << " got " << y[i] << " want " << r;
      ASSERT_NEAR(y[i], ys[i], 4e-7 * std::fabs(ys[i]) + 1e-12);
    }
  }
  // Dense sweep near 0 and in the negative tail, where relative accuracy matters most.
  for (float v = -10.0f; v <= 10.0f; v += 0.01f) {
    float y;
    k().gelu(1, &v, &y);
    const double r = 0.5 * v * (1.0 + std::erf(double(v) / std::sqrt(2.0)));
    ASSERT_LE(std::fabs(y - r), std::max(1e-6 * std::min(1.0, std::fabs(double(v))), 2e-6 * std::fabs(r)) + 1e-30) << v;
    if (v < 0) {
      const double rt = 0.5 * v * std::erfc(-double(v) / std::sqrt(2.0));  // precise tail
      if (rt < -1e-30) {
        ASSERT_NEAR(y, rt, 1e-5 * std::fabs(rt)) << v;
      }
    }
  }
  RecordProperty("worst_abs_error", std::to_string(worst_abs));
}

// Against double-precision std::tanh and 1 / (1 + exp(-x)): within a few ulp of the result, in
// place too, including the series range near 0 (relative accuracy), the saturated tails, the
// infinities and NaN.
TEST_P(KernelsTest, SigmoidAndTanh) {
  auto check = [&](const std::vector<float>& x, const char* what) {
    const int64_t n = static_cast<int64_t>(x.size());
    std::vector<float> s(x.size()), t(x.size()), ss(x.size()), ts(x.size());
    k().sigmoid(n, x.data(), s.data());
    k().tanh(n, x.data(), t.data());
    scalar().sigmoid(n, x.data(), ss.data());
    scalar().tanh(n, x.data(), ts.data());
    for (size_t i = 0; i < x.size(); ++i) {
      const double v = x[i];
      const double rs = 1.0 / (1.0 + std::exp(-v)), rt = std::tanh(v);
      ASSERT_LE(std::fabs(s[i] - rs), 4 * kEps * rs + 1e-37) << what << " sigmoid(" << v << ") = " << s[i];
      ASSERT_LE(std::fabs(t[i] - rt), 4 * kEps * std::fabs(rt) + 1e-37) << what << " tanh(" << v << ") = " << t[i];
      // the scalar table's algorithm, whose steps round apart where the vector ones fuse
      ASSERT_NEAR(s[i], ss[i], 8 * kEps * ss[i] + 1e-37) << what << " " << v;
      ASSERT_NEAR(t[i], ts[i], 8 * kEps * std::fabs(ts[i]) + 1e-37) << what << " " << v;
    }
  };
  for (int64_t n : kSizes) check(random_floats(n, 14, -12.0f, 12.0f), "random");
  std::vector<float> sweep;
  for (float v = -2.0f; v <= 2.0f; v += 0.0009765625f) sweep.push_back(v);
  for (float v = 1e-30f; v < 1.0f; v *= 1.7f) sweep.insert(sweep.end(), {v, -v});
  sweep.insert(sweep.end(), {0.0f, -0.0f, 0.25f, -0.25f, 0.2499999f, 20.0f, -20.0f, 90.0f, -90.0f, 1e30f, -1e30f});
  check(sweep, "sweep");
  const float special[4] = {INFINITY, -INFINITY, std::nanf(""), -0.0f};
  float s[4], t[4];
  k().sigmoid(4, special, s);
  k().tanh(4, special, t);
  EXPECT_EQ(s[0], 1.0f);
  EXPECT_EQ(s[1], 0.0f);
  EXPECT_TRUE(std::isnan(s[2]));
  EXPECT_EQ(t[0], 1.0f);
  EXPECT_EQ(t[1], -1.0f);
  EXPECT_TRUE(std::isnan(t[2]));
  EXPECT_TRUE(std::signbit(t[3]));
  // in place
  std::vector<float> x = random_floats(37, 15, -5.0f, 5.0f), y(x.size());
  k().tanh(37, x.data(), y.data());
  k().tanh(37, x.data(), x.data());
  EXPECT_EQ(x, y);
}

TEST_P(KernelsTest, MeanVar) {
  for (int64_t n : kSizes) {
    auto x = random_floats(n, 13, -3.0f, 5.0f);
    for (float& v : x) v += 100.0f;  // an offset the two passes must not lose
    double mu = 0;
    for (float v : x) mu += v;
    mu /= double(n);
    double var = 0;
    for (float v : x) var += (v - mu) * (v - mu);
    var /= double(n);
    float m, s;
    k().mean_var(n, x.data(), &m, &s);
    EXPECT_NEAR(m, mu, 2 * kEps * 105.0) << n;
    EXPECT_NEAR(s, var, 1e-5 * var + 1e-6) << n;  // f32 lanes, and the mean rounded to f32
  }
}

// gemm_f32 (B a row per output: b[j * ldb + p]) or gemm_f32_nn (B depth-major: b[p * ldb + j])
// over shapes with edges in every dimension, against the double-precision sum; no write past n.
// gemm_f32_nn must also give the bits gemm_f32 gives on B transposed: the same micro-kernel sums
// in the same order, only the packing differs.
void check_gemm(const Kernels& kern, bool depth_major_b) {
  struct Shape {
    int64_t m, n, k, pad;
  };
  const Shape shapes[] = {{1, 1, 1, 0},      {3, 17, 5, 1},    {17, 31, 33, 3},    {13, 33, 257, 0}, {25, 65, 300, 7},
                          {100, 40, 600, 0}, {37, 600, 70, 2}, {150, 130, 384, 0}, {144, 64, 256, 0}};
  for (const Shape& sh : shapes) {
    const int64_t lda = sh.k + sh.pad, ldc = sh.n + sh.pad;
    const int64_t ldb = depth_major_b ? sh.n + 2 * sh.pad : sh.k + 2 * sh.pad;
    const auto a = random_floats(sh.m * lda, 21), b = random_floats((depth_major_b ? sh.k : sh.n) * ldb, 22);
    auto bv = [&](int64_t j, int64_t p) { return depth_major_b ? b[p * ldb + j] : b[j * ldb + p]; };
    std::vector<float> c(static_cast<size_t>(sh.m * ldc), 123.0f);
    (depth_major_b ? kern.gemm_f32_nn : kern.gemm_f32)(sh.m, sh.n, sh.k, a.data(), lda, b.data(), ldb, c.data(), ldc);
    std::vector<float> ct;  // depth-major: gemm_f32 on B transposed
    if (depth_major_b) {
      std::vector<float> bt(static_cast<size_t>(sh.n * sh.k));
      for (int64_t j = 0; j < sh.n; ++j)
        for (int64_t p = 0; p < sh.k; ++p) bt[j * sh.k + p] = bv(j, p);
      ct.assign(c.size(), 123.0f);
      kern.gemm_f32(sh.m, sh.n, sh.k, a.data(), lda, bt.data(), sh.k, ct.data(), ldc);
    }
    for (int64_t i = 0; i < sh.m; ++i) {
      for (int64_t j = 0; j < sh.n; ++j) {
        double ref = 0, mag = 0;
        for (int64_t p = 0; p < sh.k; ++p) {
          ref += double(a[i * lda + p]) * bv(j, p);
          mag += std::fabs(double(a[i * lda + p]) * bv(j, p));
        }
        ASSERT_NEAR(c[i * ldc + j], ref, 4 * kEps * std::sqrt(double(sh.k)) * mag + 1e-30)
            << "m=" << sh.m << " n=" << sh.n << " k=" << sh.k << " at " << i << "," << j;
        if (depth_major_b) {
          ASSERT_TRUE(same_bits(c[i * ldc + j], ct[i * ldc + j]))
              << "m=" << sh.m << " n=" << sh.n << " at " << i << "," << j;
        }
      }
      for (int64_t j = sh.n; j < ldc; ++j) ASSERT_EQ(c[i * ldc + j], 123.0f) << "wrote past n";
    }
  }
}

// gemm_packed on operands packed by pack_a and pack_b (or pack_b_depth_major) gives the bits
// gemm_f32 gives on the unpacked ones (one depth slice: k <= 256), stores only m x n, adds to C
// with accumulate, and reads the first k steps of B panels packed deeper (ldbp > k).
TEST_P(KernelsTest, GemmPackedIsGemmOnPackedPanels) {
  const Kernels& kern = k();
  const auto round_up = [](int64_t x, int64_t r) { return (x + r - 1) / r * r; };
  struct Shape {
    int64_t m, n, k, deeper;
  };
  const Shape shapes[] = {{1, 1, 1, 0},      {3, 17, 5, 3},    {17, 31, 33, 0},   {144, 256, 64, 0},
                          {144, 64, 256, 0}, {60, 220, 64, 0}, {25, 65, 200, 56}, {13, 40, 7, 1}};
  for (const Shape& sh : shapes) {
    for (bool depth_major : {false, true}) {
      const int64_t kp = sh.k + sh.deeper;  // the B panels' packed depth
      const int64_t ldc = sh.n + 3;
      const auto a = random_floats(sh.m * sh.k, 31), b = random_floats(sh.n * kp, 32);
      // B(j, p) for p < kp: row-major b[j * kp + p], or depth-major bt[p * n + j]
      std::vector<float> bt(static_cast<size_t>(sh.n * kp));
      for (int64_t j = 0; j < sh.n; ++j)
        for (int64_t p = 0; p < kp; ++p) bt[p * sh.n + j] = b[j * kp + p];
      // packed operands 64-byte aligned (B's must be): 16 floats of slack to align into
      std::vector<float> ap_mem(static_cast<size_t>(round_up(sh.m, kern.gemm_mr) * sh.k + 16), -7.0f);
      std::vector<float> bp_mem(static_cast<size_t>(round_up(sh.n, kern.gemm_nr) * kp + 16), -7.0f);
      const auto aligned = [](std::vector<float>& v) {
        void* p = v.data();
        size_t room = v.size() * sizeof(float);
        return static_cast<float*>(std::align(64, sizeof(float), p, room));
      };
      float* ap = aligned(ap_mem);
      float* bp = aligned(bp_mem);
      kern.pack_a(sh.m, sh.k, a.data(), sh.k, ap);
      if (depth_major)
        kern.pack_b_depth_major(sh.n, kp, bt.data(), sh.n, bp);
      else
        kern.pack_b(sh.n, kp, b.data(), kp, bp);

      std::vector<float> want(static_cast<size_t>(sh.m * ldc), 123.0f), got = want;
      kern.gemm_f32(sh.m, sh.n, sh.k, a.data(), sh.k, b.data(), kp, want.data(), ldc);
      kern.gemm_packed(sh.m, sh.n, sh.k, ap, bp, kp, got.data(), ldc, false);
      for (int64_t i = 0; i < sh.m; ++i) {
        for (int64_t j = 0; j < sh.n; ++j)
          ASSERT_TRUE(same_bits(got[i * ldc + j], want[i * ldc + j]))
              << "m=" << sh.m << " n=" << sh.n << " k=" << sh.k << " depth_major=" << depth_major << " at " << i << ","
              << j;
        for (int64_t j = sh.n; j < ldc; ++j) ASSERT_EQ(got[i * ldc + j], 123.0f) << "wrote past n";
      }
      // accumulate: C + A B^T, the sum added to what C held
      std::vector<float> acc(got.size());
      for (size_t i = 0; i < acc.size(); ++i) acc[i] = 0.5f * static_cast<float>(i % 7);
      std::vector<float> acc_want = acc;
      kern.gemm_packed(sh.m, sh.n, sh.k, ap, bp, kp, acc.data(), ldc, true);
      for (int64_t i = 0; i < sh.m; ++i) {
        for (int64_t j = 0; j < sh.n; ++j) {
          const float w = acc_want[i * ldc + j] + want[i * ldc + j];
          ASSERT_TRUE(same_bits(acc[i * ldc + j], w))
              << "accumulate m=" << sh.m << " n=" << sh.n << " at " << i << "," << j;
        }
        for (int64_t j = sh.n; j < ldc; ++j) ASSERT_EQ(acc[i * ldc + j], acc_want[i * ldc + j]) << "wrote past n";
      }
    }
  }
}

TEST_P(KernelsTest, GemmF32) { check_gemm(k(), false); }
TEST_P(KernelsTest, GemmF32DepthMajorB) { check_gemm(k(), true); }

std::string level_name(const ::testing::TestParamInfo<SimdLevel>& info) { return simd_level_name(info.param); }

INSTANTIATE_TEST_SUITE_P(Levels, KernelsTest, ::testing::ValuesIn(supported_levels()), level_name);

TEST(KernelDispatch, BestLevelIsSupportedAndEnvLowersIt) {
  EXPECT_TRUE(simd_level_supported(SimdLevel::Scalar));
  EXPECT_TRUE(simd_level_supported(best_simd_level()));
  const char* old = std::getenv("HARK_SIMD");
  const std::string saved = old ? old : "";
  unsetenv("HARK_SIMD");
  const SimdLevel best = best_simd_level();
  setenv("HARK_SIMD", "scalar", 1);
  EXPECT_EQ(best_simd_level(), SimdLevel::Scalar);
  // Every supported level by name gives itself; a name of the other family (or no level) lowers
  // nothing. Asking for more than the hardware has never raises the level.
  for (SimdLevel l : kSimdLevelsBestFirst) {
    setenv("HARK_SIMD", simd_level_name(l), 1);
    EXPECT_TRUE(simd_level_supported(best_simd_level())) << simd_level_name(l);
    if (simd_level_supported(l)) {
      EXPECT_EQ(best_simd_level(), l);
    } else if (l != SimdLevel::Scalar && !simd_level_includes(best, l) &&
               (l >= SimdLevel::Neon) != (best >= SimdLevel::Neon)) {
      EXPECT_EQ(best_simd_level(), best) << simd_level_name(l) << " is of the other family";
    }
  }
  // At or below the level asked for (avx2vnni without AVX-VNNI: avx2 or lower).
  if (best != SimdLevel::Scalar && best < SimdLevel::Neon) {
    setenv("HARK_SIMD", "avx2vnni", 1);
    EXPECT_LE(static_cast<int>(best_simd_level()), static_cast<int>(SimdLevel::AVX2VNNI));
  }
  EXPECT_TRUE(simd_level_includes(best, SimdLevel::Scalar));
  EXPECT_TRUE(simd_level_includes(SimdLevel::AVX512, SimdLevel::AVX2));
  EXPECT_FALSE(simd_level_includes(SimdLevel::AVX2, SimdLevel::AVX512));
  EXPECT_FALSE(simd_level_includes(SimdLevel::I8mm, SimdLevel::AVX2));
  EXPECT_TRUE(simd_level_includes(SimdLevel::Dotprod, SimdLevel::Neon));
  if (old) {
    setenv("HARK_SIMD", saved.c_str(), 1);
  } else {
    unsetenv("HARK_SIMD");
  }
  EXPECT_EQ(kernels_for(SimdLevel::Scalar).level, SimdLevel::Scalar);
}

}  // namespace
}  // namespace hark::cpu
