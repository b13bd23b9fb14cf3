// Whisper's constraints on the next token of a window, applied to the logits before a token is
// chosen (greedy, best-of or beam alike). With timestamps on they keep the output well formed:
//   - <|notimestamps|> is never produced;
//   - the first token is a timestamp, at most `max_initial_timestamp` (1.0 s by default);
//   - timestamps come in pairs (a closing one directly before the next opening one), except that a
//     single timestamp may end the window right before end-of-text;
//   - timestamps never decrease, and a segment never has zero length;
//   - when the probability mass of all timestamps beats the most likely text token, a timestamp is
//     forced (text tokens are masked).
// Blank and suppressed tokens never start a window's text (suppress_blank, suppress list).
// Before these, two penalties on what the window has produced (CTranslate2's, which
// faster-whisper offers): repetition_penalty divides a produced token's positive logit and
// multiplies a negative one (> 1 makes repeats less likely); no_repeat_ngram_size n forbids the
// token that would repeat an n-gram the window already holds.
#pragma once
#include <cstdint>
#include <span>
#include <vector>

#include "model/hparams.h"

namespace hark::decode {

struct RuleOptions {
  bool timestamps = true;
  // Index of the largest allowed first timestamp (in 0.02 s steps); 50 = 1.0 s. Negative: no limit.
  int max_initial_timestamp_index = 50;
  bool suppress_blank = true;         // no blank or end-of-text as the very first sampled token
  std::vector<int32_t> blank_tokens;  // ids of " " and similar, suppressed at the start
  std::vector<int32_t> suppress;      // ids never produced (non-speech symbols, task tokens, ...)
  float repetition_penalty = 1.0f;    // > 0; 1: none
  int no_repeat_ngram_size = 0;       // 0: none
};

// `sampled`: the tokens produced so far in this window (not the prompt/start sequence).
// logits: n_vocab values, modified in place (forbidden tokens get -infinity).
void apply_rules(const SpecialTokens& st, const RuleOptions& opt, std::span<const int32_t> sampled, float* logits);

// The special tokens that are never sampled as text (start tokens, language and task tokens,
// start-of-prev, start-of-lm, no-speech), on top of any caller list.
std::vector<int32_t> default_suppressed(const SpecialTokens& st);

}  // namespace hark::decode
