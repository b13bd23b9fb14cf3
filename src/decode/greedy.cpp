#include "decode/greedy.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <string>

#include "decode/sampling.h"
#include "decode/window_search.h"
#include "runtime/error.h"

namespace hark::decode {

namespace {

// One candidate from the logits after the prefix.
WindowTokens run_candidate(SearchModel& model, const SpecialTokens& st, const WindowRequest& req,
                           std::vector<float> logits, int n_past, Rng* rng) {
  const int n_ctx = model.n_text_ctx();
  WindowTokens out = window_start_tokens(req);
  while (true) {
    const int32_t tok = choose_token(st, req, logits, rng, out);
    ++out.n_sampled;
    if (tok == st.eot) break;
    if (static_cast<int>(out.tokens.size()) >= req.max_tokens || n_past + 1 > n_ctx) break;
    if (model.decode({&tok, 1}, n_past, &logits) != ComputeStatus::Ok) {
      out.aborted = true;
      break;
    }
    ++out.n_steps;
    ++n_past;
  }
  out.avg_logprob = out.tokens.empty() ? 0.0 : out.sum_logprob / static_cast<double>(out.tokens.size());
  return out;
}

}  // namespace

size_t prompt_room(const WindowRequest& req, int n_ctx) {
  const size_t half = static_cast<size_t>(std::max(0, n_ctx / 2 - 1));
  // The start sequence, the forced tokens and one chosen token must fit after <|startofprev|>.
  const size_t fixed = 1 + req.start.size() + req.forced.size() + 1;
  return std::min(half, static_cast<size_t>(n_ctx) > fixed ? static_cast<size_t>(n_ctx) - fixed : 0);
}

WindowTokens window_start_tokens(const WindowRequest& req) {
  WindowTokens w;
  w.temperature = req.temperature;
  w.tokens = req.forced;
  w.probs.assign(req.forced.size(), 1.0f);
  w.logprobs.assign(req.forced.size(), 0.0f);
  w.ts_probs.assign(req.forced.size(), TimestampProb{});
  return w;
}

void record_token(const SpecialTokens& st, WindowTokens& w, int32_t token, std::span<const float> logprobs) {
  const float lp = logprobs[static_cast<size_t>(token)];
  w.tokens.push_back(token);
  w.probs.push_back(std::exp(lp));
  w.logprobs.push_back(lp);
  w.ts_probs.push_back(record_timestamp_prob(st, logprobs, token));
  w.sum_logprob += lp;
}

int32_t choose_token(const SpecialTokens& st, const WindowRequest& req, std::span<float> logits, Rng* rng,
                     WindowTokens& w) {
  apply_rules(st, req.rules, w.tokens, logits.data());
  const int32_t argmax = row_argmax(logits);
  HARK_CHECK(std::isfinite(logits[static_cast<size_t>(argmax)]),
             "decode: every token was ruled out (the logits hold no finite value)");
  const int32_t tok = rng ? sample(logits, req.temperature, *rng) : argmax;
  log_softmax(logits);
  record_token(st, w, tok, logits);
  return tok;
}

int detect_language(const SpecialTokens& st, const std::vector<float>& sot_logits, std::vector<float>* probs) {
  if (st.n_languages == 0 || sot_logits.size() < static_cast<size_t>(st.lang_first + st.n_languages)) return -1;
  // Softmax over the language tokens only: the other tokens are not candidates.
  std::vector<float> l(sot_logits.begin() + st.lang_first, sot_logits.begin() + st.lang_first + st.n_languages);
  const int best = static_cast<int>(std::max_element(l.begin(), l.end()) - l.begin());
  if (probs) {
    log_softmax(l);
    probs->resize(l.size());
    for (size_t i = 0; i < l.size(); ++i) (*probs)[i] = std::exp(l[i]);
  }
  return best;
}

double candidate_score(double sum_logprob, int length, float length_penalty, bool power) {
  const double len = std::max(1, length);
  const double alpha = static_cast<double>(length_penalty);
  const double penalty = power ? std::pow(len, alpha) : length_penalty < 0 ? len : std::pow((5.0 + len) / 6.0, alpha);
  return sum_logprob / penalty;
}

double candidate_score(const WindowTokens& w, int32_t eot, const WindowRequest& req) {
  int length = static_cast<int>(w.tokens.size());
  if (length > 0 && w.tokens.back() == eot) --length;
  return candidate_score(w.sum_logprob, length, req.length_penalty, req.length_penalty_power);
}

WindowTokens take_best_candidate(std::vector<WindowTokens>& candidates, int32_t eot, const WindowRequest& req) {
  HARK_CHECK(!candidates.empty(), "decode: no candidate to choose from");
  size_t best = 0;
  double best_score = candidate_score(candidates[0], eot, req);
  for (size_t c = 1; c < candidates.size(); ++c) {
    const double score = candidate_score(candidates[c], eot, req);
    if (score > best_score) {
      best_score = score;
      best = c;
    }
  }
  WindowTokens r = std::move(candidates[best]);
  r.avg_logprob = r.tokens.empty() ? 0.0 : r.sum_logprob / static_cast<double>(r.tokens.size());
  return r;
}

WindowTokens decode_window(SearchModel& model, const SpecialTokens& st, const WindowRequest& req) {
  const int n_ctx = model.n_text_ctx();
  HARK_CHECK(!req.start.empty() && req.start[0] == st.sot,
             "decode: the start sequence must begin with <|startoftranscript|>");
  HARK_CHECK(req.temperature >= 0.0f && std::isfinite(req.temperature),
             "decode: temperature must be finite and >= 0, got " + std::to_string(req.temperature));
  HARK_CHECK(req.best_of >= 1, "decode: best_of must be >= 1, got " + std::to_string(req.best_of));
  HARK_CHECK(req.beam_size >= 1, "decode: beam_size must be >= 1, got " + std::to_string(req.beam_size));
  HARK_CHECK(req.patience > 0.0f && std::isfinite(req.patience),
             "decode: patience must be finite and > 0, got " + std::to_string(req.patience));
  WindowTokens head;
  head.temperature = req.temperature;
  std::vector<float> logits;

  // Pass 1: the previous text and <|startoftranscript|>. Its logits give the no-speech
  // probability, as Whisper reads it at that position.
  std::vector<int32_t> first;
  if (!req.prompt.empty()) {
    first.push_back(st.prev);
    // Keep the prompt's most recent tokens when it would crowd out the window's own text.
    const size_t room = prompt_room(req, n_ctx);
    const size_t skip = req.prompt.size() > room ? req.prompt.size() - room : 0;
    first.insert(first.end(), req.prompt.begin() + static_cast<std::ptrdiff_t>(skip), req.prompt.end());
  }
  first.push_back(st.sot);
  int n_past = 0;
  if (model.decode(first, n_past, &logits) != ComputeStatus::Ok) {
    head.aborted = true;
    return head;
  }
  ++head.n_steps;
  n_past += static_cast<int>(first.size());
  head.no_speech_prob = static_cast<float>(
      std::exp(static_cast<double>(logits[static_cast<size_t>(st.no_speech)]) - log_sum_exp(logits)));

  // Pass 2: the rest of the start sequence (language, task, no-timestamps) and the forced tokens.
  if (req.start.size() > 1 || !req.forced.empty()) {
    std::vector<int32_t> rest(req.start.begin() + 1, req.start.end());
    rest.insert(rest.end(), req.forced.begin(), req.forced.end());
    if (model.decode(rest, n_past, &logits) != ComputeStatus::Ok) {
      head.aborted = true;
      return head;
    }
    ++head.n_steps;
    n_past += static_cast<int>(rest.size());
  }

  // The search from the shared prefix: beam search at T = 0 with beams, best-of's candidates in
  // lockstep at T > 0; else one candidate (greedy) or several one after another, below.
  const bool sampling = req.temperature > 0.0f;
  if ((!sampling && req.beam_size > 1) || (sampling && req.best_of > 1 && req.batch_candidates)) {
    model.reserve_sequences(search_slots(req));
    WindowTokens r = run_window_search(model, *make_window_search(model, st, req, 0, req.seed), logits, n_past);
    r.no_speech_prob = head.no_speech_prob;
    r.temperature = req.temperature;
    r.n_steps += head.n_steps;
    return r;
  }
  const int n_candidates = sampling ? req.best_of : 1;
  WindowTokens best;
  double best_score = -std::numeric_limits<double>::infinity();
  int n_steps = head.n_steps, n_sampled = 0;
  for (int c = 0; c < n_candidates; ++c) {
    Rng rng = candidate_rng(req.seed, c);
    WindowTokens cand = run_candidate(model, st, req, logits, n_past, sampling ? &rng : nullptr);
    n_steps += cand.n_steps;
    n_sampled += cand.n_sampled;
    if (cand.aborted) {
      cand.n_steps = n_steps;
      cand.n_sampled = n_sampled;
      cand.no_speech_prob = head.no_speech_prob;
      return cand;
    }
    const double score = candidate_score(cand, st.eot, req);
    if (c == 0 || score > best_score) {  // ties keep the earlier candidate
      best_score = score;
      best = std::move(cand);
    }
  }
  best.no_speech_prob = head.no_speech_prob;
  best.temperature = req.temperature;
  best.n_steps = n_steps;
  best.n_sampled = n_sampled;
  return best;
}

}  // namespace hark::decode
