#include "transcribe/decode_policy.h"

#include <algorithm>
#include <cmath>

namespace hark {

uint64_t mix_seed(uint64_t seed, int64_t seek, int pass) {
  uint64_t z = seed ^ (0x9E3779B97F4A7C15ull * static_cast<uint64_t>(seek + 1)) ^
               (0xC2B2AE3D27D4EB4Full * static_cast<uint64_t>(pass + 1));
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
  return z ^ (z >> 31);
}

DecodePolicy decode_policy(const LoadedModel& m, const JobRequest& req, const TranscribeParams& p, int n_text_ctx) {
  DecodePolicy d;
  decode::WindowRequest& wreq = d.request;
  wreq.rules.timestamps = p.timestamps;
  wreq.rules.suppress = req.suppress;
  wreq.rules.blank_tokens = m.blank;
  wreq.rules.suppress_blank = p.suppress_blank;
  wreq.rules.repetition_penalty = p.repetition_penalty;
  wreq.rules.no_repeat_ngram_size = p.no_repeat_ngram_size;
  wreq.rules.max_initial_timestamp_index =
      p.max_initial_timestamp < 0 ? -1
                                  : static_cast<int>(std::lround(std::min(p.max_initial_timestamp, 60.0f) / 0.02f));
  wreq.max_tokens = p.max_tokens_per_window > 0 ? std::min(p.max_tokens_per_window, n_text_ctx / 2) : n_text_ctx / 2;
  wreq.best_of = p.best_of;
  wreq.length_penalty = p.length_penalty;
  wreq.length_penalty_power = p.length_penalty_power;
  wreq.beam_size = p.beam_size;  // used at temperature 0 only (best_of at T > 0), as OpenAI
  wreq.patience = p.patience;
  d.thresholds.compression_ratio = p.compression_ratio_threshold;
  d.thresholds.logprob = p.logprob_threshold;
  d.thresholds.no_speech = p.no_speech_threshold;
  d.thresholds.logprob_low = p.logprob_low_threshold;
  // The temperatures of each window: the list given, or the first, then up by temperature_inc to 1.0.
  if (!p.temperatures.empty()) {
    d.temperatures = p.temperatures;
    return d;
  }
  d.temperatures = {p.temperature};
  if (p.temperature_inc > 0.0f)
    for (int k = 1; p.temperature + static_cast<float>(k) * p.temperature_inc <= 1.0f + 1e-6f; ++k)
      d.temperatures.push_back(p.temperature + static_cast<float>(k) * p.temperature_inc);
  return d;
}

double text_compression_ratio(const LoadedModel& m, const decode::WindowTokens& w) {
  const SpecialTokens& st = m.file->vocab().special();
  std::vector<int32_t> text;
  for (int32_t id : w.tokens)
    if (st.is_text(id)) text.push_back(id);
  return decode::compression_ratio(m.tokenizer->decode(text));
}

}  // namespace hark
