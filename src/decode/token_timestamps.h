// Token timestamps from the timestamp-token probabilities (whisper.cpp's token_timestamps), in two
// parts:
//   - record_timestamp_prob: at every step of a search, what the model thought of the timestamps
//     when it chose a token: the most likely timestamp token (tid), its share of the timestamp mass
//     (pt) and that mass itself (ptsum). Greedy, best-of and beam search all call it on the same
//     rule-filtered log-probabilities they rank tokens by.
//   - assign_token_times: once a segment is cut, a start and an end per text token. A token whose
//     step was sure of a timestamp (pt > thold_pt, ptsum > thold_ptsum) that lies after the last
//     one placed and not past the segment's end starts there; the tokens between two placed
//     boundaries share that stretch in proportion to how long their text takes to say.
// No audio-energy refinement (whisper.cpp's further step): times come from the model alone.
#pragma once
#include <cstdint>
#include <span>
#include <string_view>
#include <vector>

#include "model/hparams.h"

namespace hark::decode {

struct TimestampProb {
  int32_t tid = -1;    // the most likely timestamp token at that step (-1: all were ruled out)
  float pt = 0.0f;     // its probability over the timestamp mass (the chosen one's p if it was a timestamp)
  float ptsum = 0.0f;  // the probability of all timestamp tokens together
};

// logprobs: the step's rule-filtered log-probabilities (n_vocab values, -inf for ruled-out
// tokens); chosen: the token taken at that step.
TimestampProb record_timestamp_prob(const SpecialTokens& st, std::span<const float> logprobs, int32_t chosen);

struct TimedTokenInput {
  std::string_view text;  // the token's bytes (its spoken length is estimated from them)
  TimestampProb ts;
};

struct TokenTime {
  int64_t t0 = 0, t1 = 0;  // 10 ms units, absolute
};

// The text tokens of one segment [seg_t0, seg_t1] (10 ms units, absolute; timestamp token
// timestamp_begin + i stands at window_offset + 2 i). Every returned interval lies inside the
// segment, and t0 <= t1 <= next t0 throughout.
std::vector<TokenTime> assign_token_times(const SpecialTokens& st, std::span<const TimedTokenInput> tokens,
                                          int64_t window_offset, int64_t seg_t0, int64_t seg_t1, float thold_pt,
                                          float thold_ptsum);

// How long a token's text takes to say, relative to other tokens: a letter 1, a digit or a
// sentence end 3 (said as a word or followed by a pause), a comma 2, a space next to nothing.
double voice_length(std::string_view text);

}  // namespace hark::decode
