// Tests for the scalar reference quantizers (runtime/quant.h).
//
// Three kinds of check:
//  * error bounds: quantize -> dequantize stays within the bound each type's definition promises,
//    measured against the scale actually stored in the block (see bound_* below);
//  * layout: blocks written byte by byte from the dtype.h definitions dequantize to the values
//    the definition gives, and quantizing those values gives back the identical bytes;
//  * errors: i32 and ragged rows are rejected with hark::Error.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>
#include <random>
#include <vector>

#include "runtime/error.h"
#include "runtime/quant.h"

namespace hark {
namespace {

const DType kQuantTypes[] = {DType::Q4_0, DType::Q4_1, DType::Q5_0, DType::Q5_1, DType::Q8_0};
const int64_t kSizes[] = {32, 64, 384, 1536, 51872};

f16_t le16(const uint8_t* p) { return static_cast<f16_t>(p[0] | p[1] << 8); }

// Scale and min as stored in block `i` of a quantized row (f16, little-endian, at offset 0 and
// 2; the min only exists for the _1 types).
void block_scale(DType t, const std::vector<uint8_t>& q, int64_t i, float* d, float* m) {
  const uint8_t* b = q.data() + i * dtype_block_bytes(t);
  *d = f16_to_f32(le16(b));
  *m = (t == DType::Q4_1 || t == DType::Q5_1) ? f16_to_f32(le16(b + 2)) : 0.0f;
}

std::vector<uint8_t> quantize(DType t, const std::vector<float>& x) {
  std::vector<uint8_t> q(dtype_row_bytes(t, static_cast<int64_t>(x.size())));
  quantize_row(t, x.data(), q.data(), static_cast<int64_t>(x.size()));
  return q;
}

std::vector<float> dequantize(DType t, const std::vector<uint8_t>& q, int64_t n) {
  std::vector<float> y(n);
  dequantize_row(t, q.data(), y.data(), n);
  return y;
}

// Checks every block of a round trip against its type's promise. Tolerances, per block, with d
// and m the stored (f16-rounded) scale and min, amax the block's largest |x|, and
// eps = 1e-6 * amax for f32 arithmetic:
//  q8_0:  |x - y| <= d/2 + eps, and d is amax/127 to f16 precision (so |x - y| <~ amax/254).
//  q4_0, q5_0 (levels -L..L-1, L = 8, 16): the signed extreme lands on level -L (checked), so
//         t = x/d lies in [-L, L] up to f16 rounding. Inside [-L-1/2, L-1/2]: |x - y| <= d/2 +
//         eps; beyond (opposite-sign values bigger than (L-1/2)d, which must clamp):
//         |x - y| <= (t-L+1)|d| + eps <= |d| + eps. And |d| = amax/L to f16 precision.
//  q4_1, q5_1 (levels 0..N, N = 15, 31): |x - y| <= d/2 + |min - m| + eps, where |min - m| is
//         the f16 rounding of the min (<= 2^-11 |min|); and N*d spans max - m to f16 precision.
void expect_within_bounds(DType t, const std::vector<float>& x, const std::vector<float>& y,
                          const std::vector<uint8_t>& q) {
  ASSERT_EQ(x.size(), y.size());
  const int64_t nblocks = static_cast<int64_t>(x.size()) / kQuantBlock;
  for (int64_t i = 0; i < nblocks; ++i) {
    const float* xb = x.data() + i * kQuantBlock;
    const float* yb = y.data() + i * kQuantBlock;
    float lo = xb[0], hi = xb[0], amax = 0.0f;
    for (int j = 0; j < kQuantBlock; ++j) {
      lo = std::min(lo, xb[j]);
      hi = std::max(hi, xb[j]);
      amax = std::max(amax, std::fabs(xb[j]));
    }
    float d, m;
    block_scale(t, q, i, &d, &m);
    const float eps = 1e-6f * amax;
    const float f16_rel = 1.0f / 1024;  // twice f16's half-ulp relative rounding, for slack

    switch (t) {
      case DType::Q8_0:
        EXPECT_NEAR(d, amax / 127, amax / 127 * f16_rel) << "block " << i;
        for (int j = 0; j < kQuantBlock; ++j)
          EXPECT_LE(std::fabs(xb[j] - yb[j]), 0.5f * d + eps) << "block " << i << " value " << j;
        break;
      case DType::Q4_0:
      case DType::Q5_0: {
        const float L = t == DType::Q4_0 ? 8.0f : 16.0f;
        EXPECT_NEAR(std::fabs(d), amax / L, amax / L * f16_rel) << "block " << i;
        // The signed extreme (first of largest magnitude) sits on level -L, not clamped at L-1.
        for (int j = 0; j < kQuantBlock; ++j) {
          if (std::fabs(xb[j]) == amax) {
            if (amax > 0) {
              EXPECT_NEAR(xb[j] / d, -L, L * f16_rel) << "block " << i;
            }
            break;
          }
        }
        for (int j = 0; j < kQuantBlock; ++j) {
          const float tj = d != 0 ? xb[j] / d : 0.0f;
          EXPECT_GE(tj, -L * (1 + f16_rel));
          EXPECT_LE(tj, L * (1 + f16_rel));
          const float steps = tj > L - 0.5f ? tj - (L - 1) : 0.5f;
          EXPECT_LE(std::fabs(xb[j] - yb[j]), steps * std::fabs(d) + eps) << "block " << i << " value " << j;
        }
        break;
      }
      case DType::Q4_1:
      case DType::Q5_1: {
        const float N = t == DType::Q4_1 ? 15.0f : 31.0f;
        EXPECT_LE(std::fabs(m - lo), std::fabs(lo) / 2048 + 1e-30f) << "block " << i;
        EXPECT_NEAR(N * d, std::max(hi - m, 0.0f), std::fabs(hi - m) * f16_rel + eps) << "block " << i;
        for (int j = 0; j < kQuantBlock; ++j)
          EXPECT_LE(std::fabs(xb[j] - yb[j]), 0.5f * d + std::fabs(lo - m) + eps) << "block " << i << " value " << j;
        break;
      }
      default: FAIL() << "not a quantized type";
    }
  }
}

void check_round_trip(DType t, const std::vector<float>& x) {
  SCOPED_TRACE(std::string(dtype_name(t)) + ", " + std::to_string(x.size()) + " values");
  const auto q = quantize(t, x);
  const auto y = dequantize(t, q, static_cast<int64_t>(x.size()));
  expect_within_bounds(t, x, y, q);
}

std::vector<float> random_row(int64_t n, uint32_t seed) {
  // Gaussian values with a scale that changes from block to block, plus rare outliers, so
  // blocks differ in range, sign balance and which side holds the extreme.
  std::mt19937 rng(seed);
  std::normal_distribution<float> normal(0.0f, 1.0f);
  std::uniform_real_distribution<float> scale(0.01f, 10.0f);
  std::uniform_int_distribution<int> coin(0, 99);
  std::vector<float> x(n);
  for (int64_t i = 0; i < n; i += kQuantBlock) {
    const float s = scale(rng);
    for (int j = 0; j < kQuantBlock; ++j) {
      float v = normal(rng) * s;
      if (coin(rng) == 0) v *= 20.0f;
      x[i + j] = v;
    }
  }
  return x;
}

TEST(Quant, RandomRowsStayWithinBounds) {
  for (DType t : kQuantTypes)
    for (int64_t n : kSizes) check_round_trip(t, random_row(n, static_cast<uint32_t>(n) * 7 + 1));
}

TEST(Quant, UniformRowsStayWithinBounds) {
  std::mt19937 rng(42);
  std::uniform_real_distribution<float> u(-1.0f, 1.0f);
  for (DType t : kQuantTypes) {
    std::vector<float> x(1536);
    for (float& v : x) v = u(rng);
    check_round_trip(t, x);
  }
}

TEST(Quant, OddBlocksStayWithinBounds) {
  std::vector<std::vector<float>> rows;
  rows.push_back(std::vector<float>(64, 0.0f));   // all zeros
  rows.push_back(std::vector<float>(64, 0.3f));   // constant, not exact in f16
  rows.push_back(std::vector<float>(64, -2.5f));  // constant negative, exact in f16
  std::vector<float> spike(64, 0.0f);
  spike[5] = 100.0f;
  spike[40] = -0.001f;
  rows.push_back(spike);
  std::vector<float> neg(64);
  for (int i = 0; i < 64; ++i) neg[i] = -1.0f - 0.37f * static_cast<float>(i);  // negative only
  rows.push_back(neg);
  std::vector<float> pos(64);
  for (int i = 0; i < 64; ++i) pos[i] = 1000.0f + static_cast<float>(i);  // large offset
  rows.push_back(pos);
  for (DType t : kQuantTypes)
    for (const auto& x : rows) check_round_trip(t, x);
}

TEST(Quant, ZeroBlocksQuantizeToZeroScale) {
  // All-zero input must give scale (and min) +0 and exact zeros back, with no division by zero.
  const std::vector<float> zeros(32, 0.0f);
  for (DType t : kQuantTypes) {
    const auto q = quantize(t, zeros);
    EXPECT_EQ(q[0], 0);
    EXPECT_EQ(q[1], 0);
    if (t == DType::Q4_1 || t == DType::Q5_1) {
      EXPECT_EQ(q[2], 0);
      EXPECT_EQ(q[3], 0);
    }
    for (float v : dequantize(t, q, 32)) EXPECT_EQ(v, 0.0f) << dtype_name(t);
  }
  // Negative zeros too: the scale bytes stay canonical +0.
  const std::vector<float> neg_zeros(32, -0.0f);
  for (DType t : kQuantTypes) {
    const auto q = quantize(t, neg_zeros);
    EXPECT_EQ(q[0] | q[1], 0) << dtype_name(t);
  }
}

TEST(Quant, TinyBlocksBelowF16RangeBecomeZero) {
  // A scale below f16's smallest subnormal rounds to 0 (stored as +0, not -0); values come back
  // as 0 (the _1 types keep them as the f16-rounded min, also 0 here), never NaN.
  for (float v0 : {1e-12f, -1e-12f}) {
    const std::vector<float> x(32, v0);
    for (DType t : kQuantTypes) {
      const auto q = quantize(t, x);
      EXPECT_EQ(q[0] | q[1], 0) << dtype_name(t);
      for (float v : dequantize(t, q, 32)) EXPECT_EQ(v, 0.0f) << dtype_name(t);
    }
  }
}

TEST(Quant, NanReadsAsZero) {
  // Documented behaviour: a NaN input is quantized as if it were 0; the rest of the block is
  // unaffected.
  std::vector<float> x = random_row(64, 3);
  std::vector<float> x0 = x;
  x[7] = std::numeric_limits<float>::quiet_NaN();
  x[40] = -std::numeric_limits<float>::quiet_NaN();
  x0[7] = 0.0f;
  x0[40] = 0.0f;
  for (DType t : kQuantTypes) EXPECT_EQ(quantize(t, x), quantize(t, x0)) << dtype_name(t);
}

TEST(Quant, InfinityDoesNotCrash) {
  // Infinities are outside any f16 scale; the block dequantizes to non-finite values but
  // quantizing must be well defined and leave other blocks alone.
  std::vector<float> x = random_row(64, 5);
  x[3] = std::numeric_limits<float>::infinity();
  for (DType t : kQuantTypes) {
    const auto y = dequantize(t, quantize(t, x), 64);
    for (int j = 32; j < 64; ++j) EXPECT_TRUE(std::isfinite(y[j])) << dtype_name(t);
  }
}

TEST(Quant, F32CopiesExactly) {
  const auto x = random_row(384, 9);
  const auto q = quantize(DType::F32, x);
  ASSERT_EQ(q.size(), x.size() * 4);
  EXPECT_EQ(std::memcmp(q.data(), x.data(), q.size()), 0);
  EXPECT_EQ(dequantize(DType::F32, q, 384), x);
}

TEST(Quant, F16RoundTrip) {
  // Values representable in f16 round-trip exactly; others to within f16's half ulp (2^-11
  // relative for normal halves). f16 keeps NaN, unlike the block types.
  std::vector<float> exact = {0.0f,        -0.0f, 1.0f, -2.5f, 65504.0f, 6.103515625e-05f, 5.960464477539063e-08f,
                              0.099975586f};
  auto y = dequantize(DType::F16, quantize(DType::F16, exact), static_cast<int64_t>(exact.size()));
  for (size_t i = 0; i < exact.size(); ++i) {
    EXPECT_EQ(y[i], exact[i]);
    EXPECT_EQ(std::signbit(y[i]), std::signbit(exact[i]));
  }
  const auto x = random_row(1536, 11);
  const auto q = quantize(DType::F16, x);
  ASSERT_EQ(q.size(), x.size() * 2);
  for (size_t i = 0; i < x.size(); ++i) EXPECT_EQ(le16(q.data() + 2 * i), f32_to_f16(x[i]));
  y = dequantize(DType::F16, q, 1536);
  for (size_t i = 0; i < x.size(); ++i)
    EXPECT_LE(std::fabs(y[i] - x[i]), std::max(std::fabs(x[i]) / 2048, 0x1p-25f)) << i;
  const std::vector<float> nan = {std::numeric_limits<float>::quiet_NaN()};
  EXPECT_TRUE(std::isnan(dequantize(DType::F16, quantize(DType::F16, nan), 1)[0]));
}

TEST(Quant, RowsMatchRowByRow) {
  for (DType t : {DType::F32, DType::F16, DType::Q4_0, DType::Q4_1, DType::Q5_0, DType::Q5_1, DType::Q8_0}) {
    const int64_t rows = 5, cols = 384;
    const auto x = random_row(rows * cols, 13);
    const size_t row_bytes = dtype_row_bytes(t, cols);
    std::vector<uint8_t> all(rows * row_bytes);
    EXPECT_EQ(quantize_rows(t, x.data(), all.data(), rows, cols), rows * row_bytes);
    for (int64_t r = 0; r < rows; ++r) {
      std::vector<uint8_t> one(row_bytes);
      quantize_row(t, x.data() + r * cols, one.data(), cols);
      EXPECT_EQ(std::memcmp(one.data(), all.data() + r * row_bytes, row_bytes), 0) << dtype_name(t) << " row " << r;
    }
  }
}

TEST(Quant, UnalignedBuffersWork) {
  // Model-file tensor data can start at any byte; the reference reads blocks via memcpy.
  const auto x = random_row(64, 17);
  for (DType t : kQuantTypes) {
    const auto aligned = quantize(t, x);
    std::vector<uint8_t> buf(aligned.size() + 1);
    quantize_row(t, x.data(), buf.data() + 1, 64);
    EXPECT_EQ(std::memcmp(buf.data() + 1, aligned.data(), aligned.size()), 0);
    std::vector<float> y(64);
    dequantize_row(t, buf.data() + 1, y.data(), 64);
    EXPECT_EQ(y, dequantize(t, aligned, 64)) << dtype_name(t);
  }
}

// ---- layout: blocks built byte by byte ------------------------------------------------------

// f16 bit patterns used below, little-endian byte pairs.
constexpr uint8_t kHalf0_5[2] = {0x00, 0x38};    // 0.5
constexpr uint8_t kHalfM0_25[2] = {0x00, 0xb4};  // -0.25
constexpr uint8_t kHalf0_25[2] = {0x00, 0x34};   // 0.25
constexpr uint8_t kHalf0_125[2] = {0x00, 0x30};  // 0.125
constexpr uint8_t kHalfM3[2] = {0x00, 0xc2};     // -3.0
constexpr uint8_t kHalf1[2] = {0x00, 0x3c};      // 1.0

TEST(QuantLayout, HalfConstantsAreWhatTheyClaim) {
  EXPECT_EQ(f16_to_f32(le16(kHalf0_5)), 0.5f);
  EXPECT_EQ(f16_to_f32(le16(kHalfM0_25)), -0.25f);
  EXPECT_EQ(f16_to_f32(le16(kHalf0_25)), 0.25f);
  EXPECT_EQ(f16_to_f32(le16(kHalf0_125)), 0.125f);
  EXPECT_EQ(f16_to_f32(le16(kHalfM3)), -3.0f);
  EXPECT_EQ(f16_to_f32(le16(kHalf1)), 1.0f);
}

void expect_bytes_round_trip(DType t, const std::vector<uint8_t>& block, const std::vector<float>& y) {
  const auto again = quantize(t, y);
  EXPECT_EQ(again, block) << dtype_name(t) << ": quantize(dequantize(block)) changed the bytes";
}

TEST(QuantLayout, Q4_0) {
  // d = 0.5; qs[j] low nibble j (value j), high nibble 15-j (value j+16).
  std::vector<uint8_t> b = {kHalf0_5[0], kHalf0_5[1]};
  for (int j = 0; j < 16; ++j) b.push_back(static_cast<uint8_t>(j | (15 - j) << 4));
  ASSERT_EQ(b.size(), sizeof(BlockQ4_0));
  const auto y = dequantize(DType::Q4_0, b, 32);
  for (int j = 0; j < 16; ++j) {
    EXPECT_EQ(y[j], (j - 8) * 0.5f) << j;
    EXPECT_EQ(y[j + 16], (15 - j - 8) * 0.5f) << j;
  }
  EXPECT_EQ(y[0], -4.0f);
  EXPECT_EQ(y[16], 3.5f);
  expect_bytes_round_trip(DType::Q4_0, b, y);

  // A literal block with a negative scale: d = -0.25, nibble 0 gives +2 (the extreme), nibble
  // 15 gives -1.75, nibble 8 gives 0.
  std::vector<uint8_t> n = {kHalfM0_25[0], kHalfM0_25[1], 0xf0};
  for (int j = 1; j < 16; ++j) n.push_back(0x88);
  const auto z = dequantize(DType::Q4_0, n, 32);
  EXPECT_EQ(z[0], 2.0f);
  EXPECT_EQ(z[16], -1.75f);
  for (int j = 1; j < 16; ++j) {
    EXPECT_EQ(z[j], 0.0f);
    EXPECT_EQ(z[j + 16], 0.0f);
  }
  expect_bytes_round_trip(DType::Q4_0, n, z);
}

TEST(QuantLayout, Q4_1) {
  // d = 0.5, m = -3; low nibbles 0..15, high nibbles a permutation (7j mod 16).
  std::vector<uint8_t> b = {kHalf0_5[0], kHalf0_5[1], kHalfM3[0], kHalfM3[1]};
  for (int j = 0; j < 16; ++j) b.push_back(static_cast<uint8_t>(j | ((7 * j) % 16) << 4));
  ASSERT_EQ(b.size(), sizeof(BlockQ4_1));
  const auto y = dequantize(DType::Q4_1, b, 32);
  for (int j = 0; j < 16; ++j) {
    EXPECT_EQ(y[j], j * 0.5f - 3.0f) << j;
    EXPECT_EQ(y[j + 16], ((7 * j) % 16) * 0.5f - 3.0f) << j;
  }
  EXPECT_EQ(y[15], 4.5f);
  expect_bytes_round_trip(DType::Q4_1, b, y);
}

TEST(QuantLayout, Q5_0Literal) {
  // d = 0.5. qs[0] = 0x3a: value 0 low bits 0xa, value 16 low bits 0x3. qh bit 0 set (value 0
  // gets 16 added), bit 16 clear. So value 0 = (0x1a - 16) * 0.5 = 5, value 16 = (3-16)*0.5.
  // qh bit 31 (byte 3, bit 7) set for value 31, whose low bits are qs[15]'s high nibble (0).
  // Every other q is 0 | 0 = 0, i.e. -16 * 0.5 = -8.
  std::vector<uint8_t> b = {kHalf0_5[0], kHalf0_5[1], 0x01, 0x00, 0x00, 0x80, 0x3a};
  for (int j = 1; j < 16; ++j) b.push_back(0x00);
  ASSERT_EQ(b.size(), sizeof(BlockQ5_0));
  const auto y = dequantize(DType::Q5_0, b, 32);
  EXPECT_EQ(y[0], 5.0f);
  EXPECT_EQ(y[16], -6.5f);
  EXPECT_EQ(y[31], 0.0f);
  for (int j = 1; j < 32; ++j) {
    if (j != 16 && j != 31) {
      EXPECT_EQ(y[j], -8.0f) << j;
    }
  }
  expect_bytes_round_trip(DType::Q5_0, b, y);
}

// Builds a q5 block's qh and qs bytes from 5-bit levels, straight from the dtype.h definition.
void put_q5(const int* q, uint8_t* qh, uint8_t* qs) {
  uint32_t high = 0;
  for (int j = 0; j < 32; ++j) high |= static_cast<uint32_t>((q[j] >> 4) & 1) << j;
  qh[0] = high & 0xff;
  qh[1] = (high >> 8) & 0xff;
  qh[2] = (high >> 16) & 0xff;
  qh[3] = high >> 24;
  for (int j = 0; j < 16; ++j) qs[j] = static_cast<uint8_t>((q[j] & 15) | (q[j + 16] & 15) << 4);
}

TEST(QuantLayout, Q5_0Permutation) {
  // d = 0.25 and q_j = (13j + 5) mod 32, a permutation of 0..31 (so the extreme level 0 occurs).
  int q[32];
  for (int j = 0; j < 32; ++j) q[j] = (13 * j + 5) % 32;
  std::vector<uint8_t> b(sizeof(BlockQ5_0));
  b[0] = kHalf0_25[0];
  b[1] = kHalf0_25[1];
  put_q5(q, &b[2], &b[6]);
  const auto y = dequantize(DType::Q5_0, b, 32);
  for (int j = 0; j < 32; ++j) EXPECT_EQ(y[j], (q[j] - 16) * 0.25f) << j;
  expect_bytes_round_trip(DType::Q5_0, b, y);
}

TEST(QuantLayout, Q5_1) {
  // d = 0.125, m = 1, q_j = (11j + 3) mod 32.
  int q[32];
  for (int j = 0; j < 32; ++j) q[j] = (11 * j + 3) % 32;
  std::vector<uint8_t> b(sizeof(BlockQ5_1));
  b[0] = kHalf0_125[0];
  b[1] = kHalf0_125[1];
  b[2] = kHalf1[0];
  b[3] = kHalf1[1];
  put_q5(q, &b[4], &b[8]);
  const auto y = dequantize(DType::Q5_1, b, 32);
  for (int j = 0; j < 32; ++j) EXPECT_EQ(y[j], q[j] * 0.125f + 1.0f) << j;
  expect_bytes_round_trip(DType::Q5_1, b, y);

  // Literal: only qh byte 1 bit 2 set (value 10 gets +16), all nibbles 0 except qs[10] low = 1.
  std::vector<uint8_t> l = {kHalf0_125[0], kHalf0_125[1], kHalf1[0], kHalf1[1], 0x00, 0x04, 0x00, 0x00};
  for (int j = 0; j < 16; ++j) l.push_back(j == 10 ? 0x01 : 0x00);
  const auto z = dequantize(DType::Q5_1, l, 32);
  for (int j = 0; j < 32; ++j) EXPECT_EQ(z[j], j == 10 ? 17 * 0.125f + 1.0f : 1.0f) << j;
}

TEST(QuantLayout, Q8_0) {
  // d = 0.5, qs_j = 8j - 127 (from -127 up to 121), stored as two's complement bytes.
  std::vector<uint8_t> b = {kHalf0_5[0], kHalf0_5[1]};
  for (int j = 0; j < 32; ++j) b.push_back(static_cast<uint8_t>(static_cast<int8_t>(8 * j - 127)));
  ASSERT_EQ(b.size(), sizeof(BlockQ8_0));
  EXPECT_EQ(b[2], 0x81);  // -127
  const auto y = dequantize(DType::Q8_0, b, 32);
  for (int j = 0; j < 32; ++j) EXPECT_EQ(y[j], (8 * j - 127) * 0.5f) << j;
  expect_bytes_round_trip(DType::Q8_0, b, y);
}

TEST(QuantLayout, MultiBlockRowsAreConsecutiveBlocks) {
  // Block i of a row is bytes [i*block_bytes, (i+1)*block_bytes) and covers values 32i..32i+31.
  const auto x = random_row(96, 21);
  for (DType t : kQuantTypes) {
    const auto q = quantize(t, x);
    const size_t bb = dtype_block_bytes(t);
    for (int i = 0; i < 3; ++i) {
      const std::vector<float> xi(x.begin() + 32 * i, x.begin() + 32 * (i + 1));
      const auto qi = quantize(t, xi);
      EXPECT_EQ(std::memcmp(qi.data(), q.data() + i * bb, bb), 0) << dtype_name(t) << " " << i;
    }
  }
}

// ---- q8a -------------------------------------------------------------------------------------

TEST(QuantQ8A, ScaleSumAndValues) {
  const auto x = random_row(384, 23);
  std::vector<BlockQ8A> b(384 / 32);
  quantize_row_q8a(x.data(), b.data(), 384);
  for (size_t i = 0; i < b.size(); ++i) {
    float amax = 0.0f;
    for (int j = 0; j < 32; ++j) amax = std::max(amax, std::fabs(x[32 * i + j]));
    EXPECT_EQ(b[i].d, amax / 127.0f) << i;  // f32 scale, no f16 rounding
    int sum = 0, extreme = 0;
    for (int j = 0; j < 32; ++j) {
      const float xv = x[32 * i + j];
      // nearbyint rounds half to even in the default mode, the documented rule.
      EXPECT_EQ(b[i].qs[j], static_cast<int>(std::nearbyint(xv * (1.0f / b[i].d)))) << i << "," << j;
      EXPECT_LE(std::fabs(xv - b[i].qs[j] * b[i].d), 0.5f * b[i].d + 1e-6f * amax);
      sum += b[i].qs[j];
      extreme = std::max(extreme, std::abs(static_cast<int>(b[i].qs[j])));
    }
    EXPECT_EQ(extreme, 127) << "the largest |x| maps to the extreme level";
    EXPECT_EQ(b[i].s, b[i].d * static_cast<float>(sum)) << i;
  }
}

TEST(QuantQ8A, ZeroBlockAndTies) {
  std::vector<float> x(64, 0.0f);
  // Second block: amax 127 gives d = 1, so 2.5 and -0.5 sit exactly on ties: half to even.
  x[32] = 127.0f;
  x[33] = 2.5f;
  x[34] = -0.5f;
  x[35] = 3.5f;
  std::vector<BlockQ8A> b(2);
  quantize_row_q8a(x.data(), b.data(), 64);
  EXPECT_EQ(b[0].d, 0.0f);
  EXPECT_EQ(b[0].s, 0.0f);
  for (int j = 0; j < 32; ++j) EXPECT_EQ(b[0].qs[j], 0);
  EXPECT_EQ(b[1].d, 1.0f);
  EXPECT_EQ(b[1].qs[0], 127);
  EXPECT_EQ(b[1].qs[1], 2);
  EXPECT_EQ(b[1].qs[2], 0);
  EXPECT_EQ(b[1].qs[3], 4);
  EXPECT_EQ(b[1].s, 133.0f);
}

// ---- errors ----------------------------------------------------------------------------------

TEST(QuantErrors, I32IsRejected) {
  std::vector<float> f(32, 1.0f);
  std::vector<uint8_t> buf(32 * 4);
  EXPECT_THROW(dequantize_row(DType::I32, buf.data(), f.data(), 32), Error);
  EXPECT_THROW(quantize_row(DType::I32, f.data(), buf.data(), 32), Error);
  EXPECT_THROW(quantize_rows(DType::I32, f.data(), buf.data(), 1, 32), Error);
}

TEST(QuantErrors, RaggedRowsAreRejected) {
  std::vector<float> f(64, 1.0f);
  std::vector<uint8_t> buf(256);
  for (DType t : kQuantTypes) {
    EXPECT_THROW(quantize_row(t, f.data(), buf.data(), 33), Error) << dtype_name(t);
    EXPECT_THROW(dequantize_row(t, buf.data(), f.data(), 33), Error) << dtype_name(t);
    EXPECT_THROW(quantize_rows(t, f.data(), buf.data(), 1, 48), Error) << dtype_name(t);
    EXPECT_THROW(quantize_row(t, f.data(), buf.data(), -32), Error) << dtype_name(t);
  }
  std::vector<BlockQ8A> q(2);
  EXPECT_THROW(quantize_row_q8a(f.data(), q.data(), 40), Error);
  // Plain types have block size 1: any length works.
  EXPECT_NO_THROW(quantize_row(DType::F32, f.data(), buf.data(), 33));
  EXPECT_NO_THROW(quantize_row(DType::F16, f.data(), buf.data(), 33));
}

TEST(QuantErrors, EmptyRowsAreFine) {
  EXPECT_NO_THROW(quantize_row(DType::Q4_0, nullptr, nullptr, 0));
  EXPECT_NO_THROW(dequantize_row(DType::F32, nullptr, nullptr, 0));
  EXPECT_EQ(quantize_rows(DType::Q8_0, nullptr, nullptr, 0, 64), 0u);
}

}  // namespace
}  // namespace hark
