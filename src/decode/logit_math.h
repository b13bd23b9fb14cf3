// Vector math over one row of logits (n_vocab values, 51,865 for multilingual Whisper): the
// maxima, log-sum-exps and softmaxes that the rules, the searches and sampling take every step,
// for every row of a batch. They run on the CPU backend's SIMD kernels (its exp is accurate to a
// few float ulps) with float sums: a scalar double exp per value made this host-side work a third
// of a beam or best-of step on tiny. -inf values are excluded tokens: they weigh exactly 0.
#pragma once
#include <cstdint>
#include <span>
#include <vector>

namespace hark::decode {

// The largest value; -inf for an empty row.
float row_max(std::span<const float> x);
// The index of the first largest value (0 for an empty row); a NaN counts as largest.
int32_t row_argmax(std::span<const float> x);
// log(sum(exp(x))); -inf for an empty or all -inf row.
double log_sum_exp(std::span<const float> x);
// log(softmax(x)) in place. -inf stays -inf; an all -inf row stays all -inf.
void log_softmax(std::span<float> x);
// w = exp((x - max) / temperature), block by block: `block_sums[i]` is the sum of w over
// [i * kSoftmaxBlock, ...), so a draw can find its block without a serial pass over the row.
constexpr int64_t kSoftmaxBlock = 1024;
void softmax_weights(std::span<const float> x, float temperature, std::vector<float>& w,
                     std::vector<double>& block_sums);

}  // namespace hark::decode
