#include "decode/sampling.h"

#include <vector>

#include "decode/logit_math.h"

namespace hark::decode {

int32_t sample(std::span<const float> logits, float temperature, Rng& rng) {
  // Per-thread buffers: a step draws for every row of a batch and allocates nothing once grown.
  thread_local std::vector<float> w;
  thread_local std::vector<double> block_sums;
  softmax_weights(logits, temperature, w, block_sums);
  double total = 0.0;
  for (double b : block_sums) total += b;
  const double target = rng.uniform() * total;

  // The block the draw falls in, then the token inside it; a draw that rounding carries past a
  // block's end goes on into the next ones, and the last token that can be drawn is the answer
  // of last resort.
  double before = 0.0;
  size_t block = 0;
  while (block + 1 < block_sums.size() && before + block_sums[block] <= target) before += block_sums[block++];
  double acc = before;
  int32_t last = -1;
  for (size_t i = block * static_cast<size_t>(kSoftmaxBlock); i < w.size(); ++i) {
    if (w[i] <= 0.0f) continue;
    acc += w[i];
    last = static_cast<int32_t>(i);
    if (acc > target) return last;
  }
  for (size_t i = block * static_cast<size_t>(kSoftmaxBlock); last < 0 && i-- > 0;)
    if (w[i] > 0.0f) last = static_cast<int32_t>(i);
  return last;
}

}  // namespace hark::decode
