#include "decode/sampling.h"

#include <algorithm>
#include <cmath>
#include <vector>

namespace hark::decode {

int32_t sample(std::span<const float> logits, float temperature, Rng& rng) {
  const float m = *std::max_element(logits.begin(), logits.end());
  std::vector<double> w(logits.size());
  double sum = 0.0;
  for (size_t i = 0; i < logits.size(); ++i) {
    w[i] = std::isfinite(logits[i]) ? std::exp((static_cast<double>(logits[i]) - m) / temperature) : 0.0;
    sum += w[i];
  }
  const double target = rng.uniform() * sum;
  double acc = 0.0;
  int32_t last = -1;
  for (size_t i = 0; i < w.size(); ++i) {
    if (w[i] <= 0.0) continue;
    acc += w[i];
    last = static_cast<int32_t>(i);
    if (acc > target) return last;
  }
  return last;
}

}  // namespace hark::decode
