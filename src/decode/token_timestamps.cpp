#include "decode/token_timestamps.h"

#include <algorithm>
#include <cmath>

#include "decode/logit_math.h"

namespace hark::decode {

namespace {
// One timestamp step is 0.02 s = 2 units of 10 ms.
constexpr int64_t kUnitsPerTimestamp = 2;
// Keeps pt finite when every timestamp was ruled out (whisper.cpp divides by the same guard).
constexpr double kMassGuard = 1e-10;
}  // namespace

TimestampProb record_timestamp_prob(const SpecialTokens& st, std::span<const float> logprobs, int32_t chosen) {
  TimestampProb r;
  const auto n = static_cast<int32_t>(logprobs.size());
  if (st.timestamp_begin < n) {
    // Ruled-out timestamps are -inf and weigh nothing; the mass is exp of their log-sum-exp.
    const std::span<const float> ts = logprobs.subspan(static_cast<size_t>(st.timestamp_begin));
    const double mass = std::exp(log_sum_exp(ts));
    const int32_t best = row_argmax(ts);
    const double p_best = std::exp(static_cast<double>(ts[static_cast<size_t>(best)]));
    if (p_best > 0.0) r.tid = st.timestamp_begin + best;
    r.pt = static_cast<float>(p_best / (mass + kMassGuard));
    r.ptsum = static_cast<float>(mass);
  }
  if (st.is_timestamp(chosen) && chosen < n) {
    // A timestamp taken is its own best guess, as sure as its probability.
    r.tid = chosen;
    r.pt = static_cast<float>(std::exp(static_cast<double>(logprobs[static_cast<size_t>(chosen)])));
  }
  return r;
}

double voice_length(std::string_view text) {
  double len = 0.0;
  for (char c : text) {
    if (c == ' ')
      len += 0.01;
    else if (c == ',')
      len += 2.0;
    else if (c == '.' || c == '!' || c == '?')
      len += 3.0;
    else if (c >= '0' && c <= '9')
      len += 3.0;
    else
      len += 1.0;
  }
  return len;
}

std::vector<TokenTime> assign_token_times(const SpecialTokens& st, std::span<const TimedTokenInput> tokens,
                                          int64_t window_offset, int64_t seg_t0, int64_t seg_t1, float thold_pt,
                                          float thold_ptsum) {
  const size_t n = tokens.size();
  std::vector<TokenTime> out(n);
  if (n == 0) return out;
  seg_t1 = std::max(seg_t1, seg_t0);

  // bound[j]: where token j starts (bound[n]: where the last one ends); -1 while unknown.
  std::vector<int64_t> bound(n + 1, -1);
  bound[0] = seg_t0;
  bound[n] = seg_t1;
  int64_t last = seg_t0;  // the latest boundary placed from a timestamp; later ones must pass it
  for (size_t j = 0; j < n; ++j) {
    const TimestampProb& ts = tokens[j].ts;
    if (ts.tid < st.timestamp_begin || !(ts.pt > thold_pt) || !(ts.ptsum > thold_ptsum)) continue;
    const int64_t t = window_offset + static_cast<int64_t>(ts.tid - st.timestamp_begin) * kUnitsPerTimestamp;
    if (t > last && t <= seg_t1) {
      bound[j] = t;
      last = t;
    }
  }

  // Between two placed boundaries, each token gets a share of the time by its spoken length.
  size_t k0 = 0;
  while (k0 < n) {
    size_t k1 = k0 + 1;
    while (bound[k1] < 0) ++k1;
    double total = 0.0;
    for (size_t j = k0; j < k1; ++j) total += voice_length(tokens[j].text);
    const double span = static_cast<double>(bound[k1] - bound[k0]);
    double acc = 0.0;
    for (size_t j = k0 + 1; j < k1; ++j) {
      acc += total > 0.0 ? voice_length(tokens[j - 1].text) / total : 1.0 / static_cast<double>(k1 - k0);
      bound[j] = bound[k0] + static_cast<int64_t>(std::llround(span * acc));
    }
    k0 = k1;
  }

  // Rounding can not break the order, but the bounds are kept inside the segment and in order
  // regardless: each token ends where the next begins.
  for (size_t j = 0; j <= n; ++j) {
    bound[j] = std::clamp(bound[j], seg_t0, seg_t1);
    if (j > 0) bound[j] = std::max(bound[j], bound[j - 1]);
  }
  for (size_t j = 0; j < n; ++j) out[j] = {bound[j], bound[j + 1]};
  return out;
}

}  // namespace hark::decode
