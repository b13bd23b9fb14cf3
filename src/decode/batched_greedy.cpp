#include "decode/batched_greedy.h"

#include <algorithm>
#include <cmath>
#include <string>

#include "decode/sampling.h"
#include "runtime/error.h"

namespace hark::decode {

BatchedWindows decode_windows_batched(Model& model, const SpecialTokens& st, const WindowRequest& req,
                                      std::span<const int> windows, std::span<const uint64_t> seeds) {
  const int n_ctx = model.n_text_ctx();
  const bool sampling = req.temperature > 0.0f;
  HARK_CHECK(!windows.empty(), "decode batched: no windows");
  HARK_CHECK(!req.start.empty() && req.start[0] == st.sot,
             "decode batched: the start sequence must begin with <|startoftranscript|>");
  HARK_CHECK(req.temperature >= 0.0f && std::isfinite(req.temperature),
             "decode batched: temperature must be finite and >= 0, got " + std::to_string(req.temperature));
  HARK_CHECK(sampling || req.beam_size == 1, "decode batched: beam search (beam_size " + std::to_string(req.beam_size) +
                                                 ") is not batched across windows; decode such windows one by one");
  HARK_CHECK(!sampling || req.best_of == 1, "decode batched: best_of " + std::to_string(req.best_of) +
                                                " is not batched across windows; decode such windows one by one");
  HARK_CHECK(!sampling || seeds.size() == windows.size(), "decode batched: sampling needs one seed per window, got " +
                                                              std::to_string(seeds.size()) + " for " +
                                                              std::to_string(windows.size()));
  const size_t B = windows.size();
  const auto nv = static_cast<size_t>(st.n_vocab);
  BatchedWindows out;
  out.rows.resize(B);
  for (WindowTokens& w : out.rows) w.temperature = req.temperature;

  // The prefix as decode_window feeds it ([<|startofprev|> prompt tail] <|startoftranscript|>
  // [language, task, ...]), here one position per step with every row feeding the same token.
  std::vector<int32_t> prefix;
  if (!req.prompt.empty()) {
    prefix.push_back(st.prev);
    const size_t room = static_cast<size_t>(std::max(0, n_ctx / 2 - 1));
    const size_t skip = req.prompt.size() > room ? req.prompt.size() - room : 0;
    prefix.insert(prefix.end(), req.prompt.begin() + static_cast<std::ptrdiff_t>(skip), req.prompt.end());
  }
  const size_t sot_at = prefix.size();
  prefix.insert(prefix.end(), req.start.begin(), req.start.end());
  HARK_CHECK(static_cast<int>(prefix.size()) < n_ctx, "decode batched: the prompt and start sequence fill the text context");

  std::vector<int> slots(B), live(B);
  for (size_t b = 0; b < B; ++b) slots[b] = live[b] = static_cast<int>(b);
  std::vector<float> logits;
  for (size_t i = 0; i < prefix.size(); ++i) {
    const std::vector<int32_t> same(B, prefix[i]);
    if (model.decode_rows(same, slots, windows, static_cast<int>(i), &logits) != ComputeStatus::Ok) {
      out.aborted = true;
      return out;
    }
    ++out.n_steps;
    if (i == sot_at) {
      // The logits right after <|startoftranscript|>: each row's no-speech probability.
      for (size_t b = 0; b < B; ++b) {
        std::vector<float> lp(logits.begin() + static_cast<std::ptrdiff_t>(b * nv),
                              logits.begin() + static_cast<std::ptrdiff_t>((b + 1) * nv));
        log_softmax(lp);
        out.rows[b].no_speech_prob = std::exp(lp[static_cast<size_t>(st.no_speech)]);
      }
    }
  }
  int n_past = static_cast<int>(prefix.size());

  std::vector<Rng> rngs;
  for (size_t b = 0; b < B; ++b) rngs.push_back(candidate_rng(sampling ? seeds[b] : 0, 0));
  std::vector<std::vector<float>> row_logits(B);
  for (size_t b = 0; b < B; ++b)
    row_logits[b].assign(logits.begin() + static_cast<std::ptrdiff_t>(b * nv),
                         logits.begin() + static_cast<std::ptrdiff_t>((b + 1) * nv));
  std::vector<int32_t> next_tokens;
  std::vector<int> next_live, next_windows;
  while (!live.empty()) {
    next_tokens.clear();
    next_live.clear();
    next_windows.clear();
    for (int b : live) {
      WindowTokens& w = out.rows[static_cast<size_t>(b)];
      const int32_t tok = choose_token(st, req, row_logits[static_cast<size_t>(b)], sampling ? &rngs[static_cast<size_t>(b)] : nullptr, w);
      ++w.n_sampled;
      // As the single-window search: end-of-text, the token limit or a full context ends the row.
      if (tok == st.eot || static_cast<int>(w.tokens.size()) >= req.max_tokens || n_past + 1 > n_ctx) continue;
      next_tokens.push_back(tok);
      next_live.push_back(b);
      next_windows.push_back(windows[static_cast<size_t>(b)]);
    }
    live.swap(next_live);
    if (live.empty()) break;
    // Rows in slot order; a row that dropped out leaves a gap (per-row attention nodes then).
    if (model.decode_rows(next_tokens, live, next_windows, n_past, &logits) != ComputeStatus::Ok) {
      out.aborted = true;
      break;
    }
    ++out.n_steps;
    ++n_past;
    for (size_t k = 0; k < live.size(); ++k)
      row_logits[static_cast<size_t>(live[k])].assign(logits.begin() + static_cast<std::ptrdiff_t>(k * nv),
                                                      logits.begin() + static_cast<std::ptrdiff_t>((k + 1) * nv));
  }
  for (WindowTokens& w : out.rows) {
    w.avg_logprob = w.tokens.empty() ? 0.0 : w.sum_logprob / static_cast<double>(w.tokens.size());
    w.aborted = out.aborted;
  }
  return out;
}

}  // namespace hark::decode
