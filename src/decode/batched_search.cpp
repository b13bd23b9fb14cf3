#include "decode/batched_search.h"

#include <algorithm>
#include <cmath>
#include <memory>
#include <string>

#include "decode/window_search.h"
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
  HARK_CHECK(req.patience > 0.0f && std::isfinite(req.patience),
             "decode batched: patience must be finite and > 0, got " + std::to_string(req.patience));
  HARK_CHECK(!sampling || seeds.size() == windows.size(), "decode batched: sampling needs one seed per window, got " +
                                                              std::to_string(seeds.size()) + " for " +
                                                              std::to_string(windows.size()));
  const size_t B = windows.size();
  const auto nv = static_cast<size_t>(st.n_vocab);
  const int k = search_slots(req);  // checks best_of / beam_size too
  const bool beams = is_beam_search(req);
  HARK_CHECK(k >= 1, "decode batched: best_of and beam_size must be >= 1");
  model.reserve_sequences(static_cast<int>(B) * k);
  BatchedWindows out;
  out.rows.resize(B);

  std::vector<std::unique_ptr<WindowSearch>> searches;
  for (size_t b = 0; b < B; ++b)
    searches.push_back(make_window_search(model, st, req, static_cast<int>(b) * k, sampling ? seeds[b] : 0));

  // The prefix as decode_window feeds it ([<|startofprev|> prompt tail] <|startoftranscript|>
  // [language, task, ...]), here one position per step with every window's base slot feeding the
  // same token.
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

  std::vector<int> base_slots(B);
  for (size_t b = 0; b < B; ++b) base_slots[b] = static_cast<int>(b) * k;
  std::vector<float> logits;
  std::vector<float> no_speech(B, 0.0f);
  std::vector<float> lp;
  for (size_t i = 0; i < prefix.size(); ++i) {
    const std::vector<int32_t> same(B, prefix[i]);
    if (model.decode_rows(same, base_slots, windows, static_cast<int>(i), &logits) != ComputeStatus::Ok) {
      out.aborted = true;
      return out;
    }
    ++out.n_steps;
    if (i == sot_at) {
      // The logits right after <|startoftranscript|>: each window's no-speech probability.
      for (size_t b = 0; b < B; ++b) {
        lp.assign(logits.begin() + static_cast<std::ptrdiff_t>(b * nv), logits.begin() + static_cast<std::ptrdiff_t>((b + 1) * nv));
        log_softmax(lp);
        no_speech[b] = std::exp(lp[static_cast<size_t>(st.no_speech)]);
      }
    }
  }
  const int n_prefix = static_cast<int>(prefix.size());
  for (size_t b = 0; b < B; ++b)
    searches[b]->start(std::span<const float>(logits).subspan(b * nv, nv), n_prefix);

  // Then one step per position with the rows of every search still going, window by window (so
  // the slots ascend).
  std::vector<int32_t> tokens;
  std::vector<int> slots, row_windows;
  std::vector<size_t> first_row(B + 1);
  for (int pos = n_prefix;; ++pos) {
    tokens.clear();
    slots.clear();
    row_windows.clear();
    for (size_t b = 0; b < B; ++b) {
      first_row[b] = tokens.size();
      if (!searches[b]->done()) searches[b]->rows(tokens, slots);
      row_windows.resize(tokens.size(), windows[b]);
    }
    first_row[B] = tokens.size();
    if (tokens.empty()) break;
    if (model.decode_rows(tokens, slots, row_windows, pos, &logits) != ComputeStatus::Ok) {
      out.aborted = true;
      break;
    }
    ++out.n_steps;
    HARK_CHECK(logits.size() == tokens.size() * nv, "decode batched: the step returned the wrong number of logits");
    auto step = [&](size_t b) {
      if (first_row[b] == first_row[b + 1]) return;
      searches[b]->step(std::span<float>(logits).subspan(first_row[b] * nv, (first_row[b + 1] - first_row[b]) * nv));
    };
    if (beams) {
      for (size_t b = 0; b < B; ++b) step(b);  // a beam step forks slots through the model: one at a time
    } else {
      // Greedy and best-of windows touch only their own rows and candidates: at once.
      model.run_rows(static_cast<int64_t>(B), [&](int64_t b) { step(static_cast<size_t>(b)); });
    }
  }
  for (size_t b = 0; b < B; ++b) {
    WindowTokens& w = out.rows[b];
    if (!out.aborted) w = searches[b]->finish();
    w.no_speech_prob = no_speech[b];
    w.temperature = req.temperature;
    w.aborted = out.aborted;
  }
  return out;
}

}  // namespace hark::decode
