// The row math of decode/logit_math.h against plain double loops, on rows the size of a real
// vocabulary (so every SIMD tail and softmax block is crossed) with excluded (-inf) tokens, and
// sampling's draws against the distribution they come from.
#include "decode/logit_math.h"

#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <random>
#include <vector>

#include "decode/sampling.h"

namespace hark {
namespace {

constexpr float kNegInf = -std::numeric_limits<float>::infinity();

std::vector<float> random_row(size_t n, uint32_t seed, int every_masked) {
  std::mt19937 gen(seed);
  std::normal_distribution<float> nd(0.0f, 4.0f);
  std::vector<float> x(n);
  for (size_t i = 0; i < n; ++i)
    x[i] = (every_masked > 0 && i % static_cast<size_t>(every_masked) == 3) ? kNegInf : nd(gen);
  return x;
}

double ref_log_sum_exp(const std::vector<float>& x) {
  double m = -INFINITY;
  for (float v : x) m = std::max(m, static_cast<double>(v));
  if (m == -INFINITY) return m;
  double s = 0;
  for (float v : x) s += std::exp(static_cast<double>(v) - m);
  return m + std::log(s);
}

TEST(LogitMath, LogSumExpAndLogSoftmaxMatchDouble) {
  for (size_t n : {size_t{1}, size_t{15}, size_t{17}, size_t{1501}, size_t{51865}}) {
    std::vector<float> x = random_row(n, static_cast<uint32_t>(n), 7);
    if (n == 1) x[0] = 2.5f;
    const double ref = ref_log_sum_exp(x);
    EXPECT_NEAR(decode::log_sum_exp(x), ref, 1e-5 * std::max(1.0, std::fabs(ref))) << n;
    std::vector<float> y = x;
    decode::log_softmax(y);
    for (size_t i = 0; i < n; ++i) {
      if (x[i] == kNegInf) {
        EXPECT_EQ(y[i], kNegInf) << i;
      } else {
        EXPECT_NEAR(y[i], x[i] - ref, 2e-5) << n << " " << i;
      }
    }
  }
}

TEST(LogitMath, EmptyAndFullyMaskedRows) {
  std::vector<float> none(100, kNegInf);
  EXPECT_EQ(decode::log_sum_exp(none), -INFINITY);
  EXPECT_EQ(decode::log_sum_exp(std::vector<float>{}), -INFINITY);
  EXPECT_EQ(decode::row_max(std::vector<float>{}), kNegInf);
  decode::log_softmax(none);
  for (float v : none) EXPECT_EQ(v, kNegInf);
}

TEST(LogitMath, ArgmaxTakesTheFirstOfEqualMaxima) {
  std::vector<float> x = random_row(51865, 3, 0);
  x[40000] = 100.0f;
  x[50000] = 100.0f;
  EXPECT_EQ(decode::row_argmax(x), 40000);
  x[17] = 100.0f;
  EXPECT_EQ(decode::row_argmax(x), 17);
}

TEST(LogitMath, SoftmaxWeightsAndBlockSums) {
  const std::vector<float> x = random_row(51865, 5, 11);
  std::vector<float> w;
  std::vector<double> blocks;
  decode::softmax_weights(x, 0.5f, w, blocks);
  ASSERT_EQ(w.size(), x.size());
  ASSERT_EQ(blocks.size(), (x.size() + decode::kSoftmaxBlock - 1) / decode::kSoftmaxBlock);
  double m = -INFINITY;
  for (float v : x) m = std::max(m, static_cast<double>(v));
  for (size_t i = 0; i < x.size(); ++i) {
    const double ref = std::exp((static_cast<double>(x[i]) - m) / 0.5);
    EXPECT_NEAR(w[i], ref, 1e-5 * std::max(ref, 1e-3)) << i;
  }
  for (size_t b = 0; b < blocks.size(); ++b) {
    double s = 0;
    for (size_t i = b * decode::kSoftmaxBlock; i < std::min(x.size(), (b + 1) * decode::kSoftmaxBlock); ++i) s += w[i];
    EXPECT_NEAR(blocks[b], s, 1e-5 * std::max(s, 1.0)) << b;
  }
}

// Draws follow softmax(x / T) (a chi-square-free check: each token's count within 5 sigma of its
// expectation), never an excluded token, and the same seed draws the same tokens.
TEST(LogitMath, SamplingFollowsTheDistributionAndNeverDrawsExcluded) {
  std::vector<float> x(5000, kNegInf);
  // Three likely tokens in different softmax blocks, and many unlikely ones.
  x[10] = 1.0f;
  x[2100] = 1.5f;
  x[4999] = 0.5f;
  for (size_t i = 3000; i < 3100; ++i) x[i] = -3.0f;
  const float T = 0.7f;
  double z = 0;
  for (float v : x) z += v == kNegInf ? 0.0 : std::exp(static_cast<double>(v) / T);
  decode::Rng rng{42}, again{42};
  std::vector<int> count(x.size(), 0);
  const int n = 20000;
  for (int k = 0; k < n; ++k) {
    const int32_t t = decode::sample(x, T, rng);
    ASSERT_GE(t, 0);
    ASSERT_NE(x[static_cast<size_t>(t)], kNegInf) << t;
    ASSERT_EQ(decode::sample(x, T, again), t);
    ++count[static_cast<size_t>(t)];
  }
  for (size_t i : {size_t{10}, size_t{2100}, size_t{4999}}) {
    const double p = std::exp(static_cast<double>(x[i]) / T) / z;
    EXPECT_NEAR(count[i], n * p, 5 * std::sqrt(n * p * (1 - p))) << i;
  }
  // A row with one possible token always draws it.
  std::vector<float> one(3000, kNegInf);
  one[2999] = -50.0f;
  EXPECT_EQ(decode::sample(one, 1.0f, rng), 2999);
}

}  // namespace
}  // namespace hark
