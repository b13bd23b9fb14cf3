// Greedy decoding of one 30 s window: after the encoder has run, feed the prompt and the start
// sequence, then take the most likely allowed token (timestamp rules applied to the logits) until
// end-of-text, the token limit or the text context runs out.
#pragma once
#include <cstdint>
#include <vector>

#include "decode/timestamp_rules.h"
#include "model/whisper_runner.h"

namespace hark::decode {

struct WindowRequest {
  std::vector<int32_t> prompt;  // earlier text (ordinary tokens), fed after <|startofprev|>; may be empty
  std::vector<int32_t> start;   // <|startoftranscript|> [language, task] [<|notimestamps|>]
  RuleOptions rules;
  int max_tokens = 224;         // sampled tokens at most (Whisper: n_text_ctx / 2)
};

struct WindowTokens {
  std::vector<int32_t> tokens;  // sampled, end-of-text included when it was produced
  std::vector<float> probs;     // probability of each sampled token (after the rules)
  double sum_logprob = 0.0;
  double avg_logprob = 0.0;     // over the sampled tokens, end-of-text included
  float no_speech_prob = 0.0f;  // P(<|nospeech|>) right after <|startoftranscript|>
  bool aborted = false;
  int n_steps = 0;              // decoder graph runs
};

// The runner must have encoded the window. Throws hark::Error on inconsistent input.
WindowTokens decode_window_greedy(WhisperRunner& runner, const SpecialTokens& st, const WindowRequest& req);

// log(softmax(logits)) computed stably, in place; returns nothing. -inf stays -inf.
void log_softmax(std::vector<float>& logits);

// The language Whisper would pick: the most likely language token after <|startoftranscript|>.
// Returns its index (0 = "en") and fills `probs` (per language) when given. -1 for English-only
// models (no language tokens).
int detect_language(const SpecialTokens& st, const std::vector<float>& sot_logits, std::vector<float>* probs = nullptr);

}  // namespace hark::decode
