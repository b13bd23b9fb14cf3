#include "decode/logit_math.h"

#include <algorithm>
#include <cmath>
#include <limits>

#include "simd/kernels.h"

namespace hark::decode {

namespace {

const cpu::Kernels& kernels() {
  static const cpu::Kernels& k = cpu::kernels_for(cpu::best_simd_level());
  return k;
}

}  // namespace

float row_max(std::span<const float> x) {
  if (x.empty()) return -std::numeric_limits<float>::infinity();
  return kernels().max(static_cast<int64_t>(x.size()), x.data());
}

int32_t row_argmax(std::span<const float> x) {
  if (x.empty()) return 0;
  // One SIMD pass. A NaN wins (the first one), so the callers' finiteness check on the winner
  // rejects a broken row instead of quietly picking among its other values.
  return static_cast<int32_t>(kernels().argmax(static_cast<int64_t>(x.size()), x.data()));
}

double log_sum_exp(std::span<const float> x) {
  const float m = row_max(x);
  if (!std::isfinite(m))
    return m == std::numeric_limits<float>::infinity() ? m : -std::numeric_limits<double>::infinity();
  const float s = kernels().exp_sub_sum(static_cast<int64_t>(x.size()), x.data(), m, nullptr);
  return static_cast<double>(m) + std::log(static_cast<double>(s));
}

void log_softmax(std::span<float> x) {
  if (x.empty()) return;
  const float m = row_max(x);
  if (!std::isfinite(m)) return;  // all masked: leave -inf
  const auto n = static_cast<int64_t>(x.size());
  const float s = kernels().exp_sub_sum(n, x.data(), m, nullptr);
  const float lse = m + std::log(s);
  kernels().scale(n, x.data(), 1.0f, -lse, x.data());
}

void softmax_weights(std::span<const float> x, float temperature, std::vector<float>& w,
                     std::vector<double>& block_sums) {
  const auto n = static_cast<int64_t>(x.size());
  w.resize(x.size());
  block_sums.clear();
  if (n == 0) return;
  const float m = row_max(x);
  if (!std::isfinite(m)) {  // nothing can be drawn: every weight 0
    std::fill(w.begin(), w.end(), 0.0f);
    block_sums.assign(static_cast<size_t>((n + kSoftmaxBlock - 1) / kSoftmaxBlock), 0.0);
    return;
  }
  const float inv_t = 1.0f / temperature;
  // (x - m) / T as one scale: x * (1/T) - m/T; then exp of each block with its sum.
  kernels().scale(n, x.data(), inv_t, -m * inv_t, w.data());
  for (int64_t b = 0; b < n; b += kSoftmaxBlock) {
    const int64_t len = std::min(kSoftmaxBlock, n - b);
    block_sums.push_back(kernels().exp_sub_sum(len, w.data() + b, 0.0f, w.data() + b));
  }
}

}  // namespace hark::decode
