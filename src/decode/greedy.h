// The search for one 30 s window's tokens: after the encoder has run, feed the prompt and the start
// sequence, then choose tokens (timestamp rules and suppression applied to the logits) until
// end-of-text, the token limit or the text context runs out.
//   - temperature 0: greedy, the most likely allowed token each step; with beam_size > 1 beam
//     search instead (decode/beam_search.h), as OpenAI's decoder (beams at T = 0, best-of at T > 0);
//   - temperature T > 0: `best_of` candidates, each sampled from softmax(logits / T) with a seeded
//     generator (same seed, same tokens), the best kept by summed log-probability over the length
//     penalty (OpenAI's MaximumLikelihoodRanker).
// Log-probabilities are those of the rule-filtered logits at temperature 1, as the reference
// sums them. The shared prefix is decoded once; best-of's candidates then step in lockstep as one
// batch (decode/best_of.h), or one after another on one slot (batch_candidates = false).
#pragma once
#include <cstdint>
#include <span>
#include <vector>

#include "decode/logit_math.h"
#include "decode/search_model.h"
#include "decode/timestamp_rules.h"
#include "decode/token_timestamps.h"

namespace hark::decode {

struct WindowRequest {
  std::vector<int32_t> prompt;  // earlier text (ordinary tokens), fed after <|startofprev|>; may be empty
  std::vector<int32_t> start;   // <|startoftranscript|> [language, task] [<|notimestamps|>]
  // The text begins with these (faster-whisper's prefix): fed after `start`, every sequence
  // holding them as chosen tokens (probability 1, nothing added to sum_logprob) that the rules
  // see, the search choosing from their end. Counted in max_tokens. May be empty.
  std::vector<int32_t> forced;
  RuleOptions rules;
  int max_tokens = 224;               // sampled tokens at most (Whisper: n_text_ctx / 2)
  float temperature = 0.0f;           // 0: greedy
  int best_of = 1;                    // candidates at temperature > 0
  float length_penalty = -1.0f;       // < 0: score = sum_logprob / length; else / ((5 + length) / 6)^alpha
  bool length_penalty_power = false;  // score = sum_logprob / length^length_penalty (CTranslate2's)
  uint64_t seed = 0;                  // of the sampling generator (temperature > 0)
  int beam_size = 1;                  // > 1: beam search at temperature 0
  float patience = 1.0f;              // beam search: finished candidates gathered = round(beam_size * patience)
  bool batch_candidates = true;       // best-of: candidates in lockstep (one batch step); false: one by one
};

struct WindowTokens {
  std::vector<int32_t> tokens;          // sampled, end-of-text included when it was produced
  std::vector<float> probs;             // probability of each sampled token (after the rules)
  std::vector<float> logprobs;          // its log-probability
  std::vector<TimestampProb> ts_probs;  // the timestamps' probabilities at each token's step
  double sum_logprob = 0.0;
  double avg_logprob = 0.0;     // over the sampled tokens, end-of-text included
  float no_speech_prob = 0.0f;  // P(<|nospeech|>) right after <|startoftranscript|>
  float temperature = 0.0f;
  bool aborted = false;
  int n_steps = 0;    // decoder graph runs (prefix passes included)
  int n_sampled = 0;  // tokens chosen, over every candidate
};

// The model must have encoded the window. Throws hark::Error on inconsistent input.
WindowTokens decode_window(SearchModel& model, const SpecialTokens& st, const WindowRequest& req);

// Appends `token` to w with its log-probability from `logprobs` (the step's rule-filtered
// log-softmax, n_vocab values): the one place a chosen token's per-token outputs are recorded.
void record_token(const SpecialTokens& st, WindowTokens& w, int32_t token, std::span<const float> logprobs);

struct Rng;
// One step of one sequence that holds w: the rules applied to `logits`, the token chosen (argmax
// when rng is null, else drawn from softmax(logits / req.temperature)) and recorded in w. `logits`
// is left as the step's log-probabilities. Throws when the rules left no token.
int32_t choose_token(const SpecialTokens& st, const WindowRequest& req, std::span<float> logits, Rng* rng,
                     WindowTokens& w);

// The ranking score of a candidate: sum_logprob / penalty, where length counts the tokens before
// end-of-text and penalty is length (length_penalty < 0) or ((5 + length) / 6)^length_penalty
// (OpenAI's), or with `power` length^length_penalty (CTranslate2's).
double candidate_score(double sum_logprob, int length, float length_penalty, bool power = false);
// The score of a finished candidate (length: its tokens before end-of-text) under req's penalty.
double candidate_score(const WindowTokens& w, int32_t eot, const WindowRequest& req);
// The candidate with the best score (ties: the earlier), moved out, with its avg_logprob set.
// `candidates` must not be empty.
WindowTokens take_best_candidate(std::vector<WindowTokens>& candidates, int32_t eot, const WindowRequest& req);

// The prompt tokens a window keeps at most (its most recent): half the text context (Whisper's),
// less when the start sequence and forced tokens would leave no room for the text.
size_t prompt_room(const WindowRequest& req, int n_ctx);

// What every sequence of a window's search starts with: the request's forced tokens, chosen.
WindowTokens window_start_tokens(const WindowRequest& req);

// The language Whisper would pick: the most likely language token after <|startoftranscript|>.
// Returns its index (0 = "en") and fills `probs` (per language) when given. -1 for English-only
// models (no language tokens).
int detect_language(const SpecialTokens& st, const std::vector<float>& sot_logits, std::vector<float>* probs = nullptr);

}  // namespace hark::decode
