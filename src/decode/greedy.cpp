#include "decode/greedy.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <string>

#include "runtime/error.h"

namespace hark::decode {

namespace {

// splitmix64: the same stream on every platform (the standard distributions are not).
struct Rng {
  uint64_t s;
  uint64_t next() {
    uint64_t z = (s += 0x9E3779B97F4A7C15ull);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
  }
  double uniform() { return static_cast<double>(next() >> 11) * 0x1.0p-53; }  // [0, 1)
};

// A token drawn from softmax(logits / temperature); -inf logits are never drawn.
int32_t sample(const std::vector<float>& logits, float temperature, Rng& rng) {
  const float m = *std::max_element(logits.begin(), logits.end());
  std::vector<double> w(logits.size());
  double sum = 0.0;
  for (size_t i = 0; i < logits.size(); ++i) {
    w[i] = std::isfinite(logits[i]) ? std::exp((static_cast<double>(logits[i]) - m) / temperature) : 0.0;
    sum += w[i];
  }
  const double target = rng.uniform() * sum;
  double acc = 0.0;
  int32_t last = -1;
  for (size_t i = 0; i < w.size(); ++i) {
    if (w[i] <= 0.0) continue;
    acc += w[i];
    last = static_cast<int32_t>(i);
    if (acc > target) return last;
  }
  return last;
}

// One candidate from the logits after the prefix.
WindowTokens run_candidate(Model& model, const SpecialTokens& st, const WindowRequest& req,
                           std::vector<float> logits, int n_past, Rng* rng) {
  const int n_ctx = model.n_text_ctx();
  WindowTokens out;
  while (true) {
    apply_rules(st, req.rules, out.tokens, logits.data());
    const auto argmax = static_cast<int32_t>(std::max_element(logits.begin(), logits.end()) - logits.begin());
    HARK_CHECK(std::isfinite(logits[static_cast<size_t>(argmax)]),
               "decode: every token was ruled out (the logits hold no finite value)");
    const int32_t tok = rng ? sample(logits, req.temperature, *rng) : argmax;
    log_softmax(logits);
    const float lp = logits[static_cast<size_t>(tok)];
    out.tokens.push_back(tok);
    out.probs.push_back(std::exp(lp));
    out.logprobs.push_back(lp);
    out.ts_probs.push_back(record_timestamp_prob(st, logits, tok));
    out.sum_logprob += lp;
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

void log_softmax(std::vector<float>& x) {
  if (x.empty()) return;
  const float m = *std::max_element(x.begin(), x.end());
  if (!std::isfinite(m)) return;  // all masked: leave -inf
  double s = 0.0;
  for (float v : x) s += std::exp(static_cast<double>(v) - m);
  const auto lse = static_cast<float>(m + std::log(s));
  for (float& v : x) v -= lse;
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

double candidate_score(double sum_logprob, int length, float length_penalty) {
  const double len = std::max(1, length);
  const double penalty = length_penalty < 0 ? len : std::pow((5.0 + len) / 6.0, static_cast<double>(length_penalty));
  return sum_logprob / penalty;
}

WindowTokens decode_window(Model& model, const SpecialTokens& st, const WindowRequest& req) {
  const int n_ctx = model.n_text_ctx();
  HARK_CHECK(!req.start.empty() && req.start[0] == st.sot,
             "decode: the start sequence must begin with <|startoftranscript|>");
  HARK_CHECK(req.temperature >= 0.0f && std::isfinite(req.temperature),
             "decode: temperature must be finite and >= 0, got " + std::to_string(req.temperature));
  HARK_CHECK(req.best_of >= 1, "decode: best_of must be >= 1, got " + std::to_string(req.best_of));
  WindowTokens head;
  head.temperature = req.temperature;
  std::vector<float> logits;

  // Pass 1: the previous text and <|startoftranscript|>. Its logits give the no-speech
  // probability, as Whisper reads it at that position.
  std::vector<int32_t> first;
  if (!req.prompt.empty()) {
    first.push_back(st.prev);
    // Keep the prompt's most recent tokens when it would crowd out the window's own text.
    const size_t room = static_cast<size_t>(std::max(0, n_ctx / 2 - 1));
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
  {
    std::vector<float> lp = logits;
    log_softmax(lp);
    head.no_speech_prob = std::exp(lp[static_cast<size_t>(st.no_speech)]);
  }

  // Pass 2: the rest of the start sequence (language, task, no-timestamps).
  if (req.start.size() > 1) {
    const std::vector<int32_t> rest(req.start.begin() + 1, req.start.end());
    if (model.decode(rest, n_past, &logits) != ComputeStatus::Ok) {
      head.aborted = true;
      return head;
    }
    ++head.n_steps;
    n_past += static_cast<int>(rest.size());
  }

  // Candidates (one when greedy), one after another from the shared prefix.
  const bool sampling = req.temperature > 0.0f;
  const int n_candidates = sampling ? req.best_of : 1;
  WindowTokens best;
  double best_score = -std::numeric_limits<double>::infinity();
  int n_steps = head.n_steps, n_sampled = 0;
  for (int c = 0; c < n_candidates; ++c) {
    Rng rng{req.seed ^ (0xD1B54A32D192ED03ull * static_cast<uint64_t>(c + 1))};
    WindowTokens cand = run_candidate(model, st, req, logits, n_past, sampling ? &rng : nullptr);
    n_steps += cand.n_steps;
    n_sampled += cand.n_sampled;
    if (cand.aborted) {
      cand.n_steps = n_steps;
      cand.n_sampled = n_sampled;
      cand.no_speech_prob = head.no_speech_prob;
      return cand;
    }
    int length = static_cast<int>(cand.tokens.size());
    if (length > 0 && cand.tokens.back() == st.eot) --length;
    const double score = candidate_score(cand.sum_logprob, length, req.length_penalty);
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
