#include "decode/greedy.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <string>

#include "runtime/error.h"

namespace hark::decode {

void log_softmax(std::vector<float>& x) {
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

WindowTokens decode_window_greedy(WhisperRunner& runner, const SpecialTokens& st, const WindowRequest& req) {
  const int n_ctx = runner.hparams().n_text_ctx;
  HARK_CHECK(!req.start.empty() && req.start[0] == st.sot,
             "decode: the start sequence must begin with <|startoftranscript|>");
  WindowTokens out;
  std::vector<float> logits;

  // Pass 1: the previous text and <|startoftranscript|>. Its logits give the no-speech
  // probability and the language distribution, as Whisper reads them at that position.
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
  if (runner.decode(first, n_past, &logits) != ComputeStatus::Ok) {
    out.aborted = true;
    return out;
  }
  ++out.n_steps;
  n_past += static_cast<int>(first.size());
  {
    std::vector<float> lp = logits;
    log_softmax(lp);
    out.no_speech_prob = std::exp(lp[static_cast<size_t>(st.no_speech)]);
  }

  // Pass 2: the rest of the start sequence (language, task, no-timestamps).
  if (req.start.size() > 1) {
    const std::vector<int32_t> rest(req.start.begin() + 1, req.start.end());
    if (runner.decode(rest, n_past, &logits) != ComputeStatus::Ok) {
      out.aborted = true;
      return out;
    }
    ++out.n_steps;
    n_past += static_cast<int>(rest.size());
  }

  // Sampling: one token per step until end-of-text or a limit.
  while (true) {
    apply_rules(st, req.rules, out.tokens, logits.data());
    const auto best = static_cast<int32_t>(std::max_element(logits.begin(), logits.end()) - logits.begin());
    HARK_CHECK(std::isfinite(logits[static_cast<size_t>(best)]),
               "decode: every token was ruled out (the logits hold no finite value)");
    log_softmax(logits);
    const float lp = logits[static_cast<size_t>(best)];
    out.tokens.push_back(best);
    out.probs.push_back(std::exp(lp));
    out.sum_logprob += lp;
    if (best == st.eot) break;
    if (static_cast<int>(out.tokens.size()) >= req.max_tokens || n_past + 1 > n_ctx) break;
    if (runner.decode({&best, 1}, n_past, &logits) != ComputeStatus::Ok) {
      out.aborted = true;
      break;
    }
    ++out.n_steps;
    ++n_past;
  }
  out.avg_logprob = out.tokens.empty() ? 0.0 : out.sum_logprob / static_cast<double>(out.tokens.size());
  return out;
}

}  // namespace hark::decode
