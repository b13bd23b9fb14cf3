#include "decode/timestamp_rules.h"

#include <algorithm>
#include <cmath>
#include <limits>

#include "decode/logit_math.h"

namespace hark::decode {

namespace {

constexpr float kNegInf = -std::numeric_limits<float>::infinity();

void mask_range(float* logits, int32_t begin, int32_t end) {
  for (int32_t i = std::max(begin, 0); i < end; ++i) logits[i] = kNegInf;
}

// Each token the window has produced, once: a token produced twice is penalised once.
void penalise_repeats(float penalty, std::span<const int32_t> sampled, int32_t n_vocab, float* logits) {
  std::vector<int32_t> ids(sampled.begin(), sampled.end());
  std::sort(ids.begin(), ids.end());
  ids.erase(std::unique(ids.begin(), ids.end()), ids.end());
  for (int32_t id : ids) {
    if (id < 0 || id >= n_vocab) continue;
    float& l = logits[id];
    l = l > 0 ? l / penalty : l * penalty;
  }
}

// The tokens that would end an n-gram equal to one earlier in `sampled` (its first n - 1 tokens
// are the last n - 1 produced) get -inf.
void forbid_repeated_ngrams(int n, std::span<const int32_t> sampled, int32_t n_vocab, float* logits) {
  const size_t len = sampled.size(), head = static_cast<size_t>(n - 1);
  if (len < head + 1) return;  // no earlier n-gram yet
  const std::span<const int32_t> tail = sampled.subspan(len - head);
  for (size_t i = 0; i + head < len; ++i)
    if (std::equal(tail.begin(), tail.end(), sampled.begin() + static_cast<std::ptrdiff_t>(i))) {
      const int32_t next = sampled[i + head];
      if (next >= 0 && next < n_vocab) logits[next] = kNegInf;
    }
}

}  // namespace

std::vector<int32_t> default_suppressed(const SpecialTokens& st) {
  std::vector<int32_t> ids = {st.sot, st.translate, st.transcribe, st.solm, st.prev, st.no_speech};
  for (int i = 0; i < st.n_languages; ++i) ids.push_back(st.lang_first + i);
  return ids;
}

void apply_rules(const SpecialTokens& st, const RuleOptions& opt, std::span<const int32_t> sampled, float* logits) {
  const int32_t n_vocab = st.n_vocab;
  if (opt.repetition_penalty != 1.0f) penalise_repeats(opt.repetition_penalty, sampled, n_vocab, logits);
  if (opt.no_repeat_ngram_size > 0) forbid_repeated_ngrams(opt.no_repeat_ngram_size, sampled, n_vocab, logits);
  for (int32_t id : opt.suppress)
    if (id >= 0 && id < n_vocab) logits[id] = kNegInf;

  if (opt.suppress_blank && sampled.empty()) {
    for (int32_t id : opt.blank_tokens)
      if (id >= 0 && id < n_vocab) logits[id] = kNegInf;
    logits[st.eot] = kNegInf;
  }

  if (!opt.timestamps) {
    // Without timestamps every timestamp token is out; <|notimestamps|> is part of the prompt.
    mask_range(logits, st.timestamp_begin, n_vocab);
    logits[st.no_timestamps] = kNegInf;
    return;
  }
  logits[st.no_timestamps] = kNegInf;

  const size_t n = sampled.size();
  const bool last_ts = n >= 1 && st.is_timestamp(sampled[n - 1]);
  // With no token before the last, the last one opens the window: treat it as a completed pair
  // so that text must follow.
  const bool penultimate_ts = n < 2 || st.is_timestamp(sampled[n - 2]);
  if (last_ts) {
    if (penultimate_ts)
      mask_range(logits, st.timestamp_begin, n_vocab);  // a pair just closed (or opened): text next
    else
      mask_range(logits, 0, st.eot);  // an open segment just closed: timestamp or end-of-text next
  }

  // Timestamps never go backwards; after a closing timestamp the next opening one may equal it,
  // otherwise (inside a segment) the next timestamp must be strictly later: no empty segments.
  int32_t last_timestamp = -1;
  for (size_t i = n; i-- > 0;)
    if (st.is_timestamp(sampled[i])) {
      last_timestamp = sampled[i];
      break;
    }
  if (last_timestamp >= 0) {
    const int32_t min_next = (last_ts && !penultimate_ts) ? last_timestamp : last_timestamp + 1;
    mask_range(logits, st.timestamp_begin, std::min(min_next, n_vocab));
  }

  if (n == 0) {
    // The window starts with a timestamp, not too late.
    mask_range(logits, 0, st.timestamp_begin);
    if (opt.max_initial_timestamp_index >= 0)
      mask_range(logits, st.timestamp_begin + opt.max_initial_timestamp_index + 1, n_vocab);
  }

  // If timestamps together are more likely than the best text token, the next token must be one.
  // Both sides are log-probabilities under the same normaliser, so it cancels: compare the log
  // mass of the timestamps with the best text logit directly (both -inf: nothing to force).
  const double ts_mass = log_sum_exp({logits + st.timestamp_begin, static_cast<size_t>(n_vocab - st.timestamp_begin)});
  const float best_text = row_max({logits, static_cast<size_t>(st.timestamp_begin)});
  if (ts_mass > static_cast<double>(best_text)) mask_range(logits, 0, st.timestamp_begin);
}

}  // namespace hark::decode
