// The factory of window searches and the single-window driver. The searches themselves:
// decode/best_of.cpp (candidates: greedy, best-of), decode/beam_search.cpp (beams).
#include "decode/window_search.h"

#include <string>

#include "decode/beam_search.h"
#include "decode/best_of.h"
#include "runtime/error.h"

namespace hark::decode {

int search_slots(const WindowRequest& req) {
  if (req.temperature > 0.0f) return req.best_of;
  return req.beam_size;
}

bool is_beam_search(const WindowRequest& req) { return req.temperature <= 0.0f && req.beam_size > 1; }

std::unique_ptr<WindowSearch> make_window_search(SearchModel& model, const SpecialTokens& st, const WindowRequest& req,
                                                 int base_slot, uint64_t seed) {
  HARK_CHECK(req.best_of >= 1, "decode: best_of must be >= 1, got " + std::to_string(req.best_of));
  HARK_CHECK(req.beam_size >= 1, "decode: beam_size must be >= 1, got " + std::to_string(req.beam_size));
  if (is_beam_search(req)) return make_beam_search(model, st, req, base_slot);
  return make_candidates_search(model, st, req, base_slot, seed);
}

WindowTokens run_window_search(SearchModel& model, WindowSearch& search, std::span<const float> logits, int n_past) {
  search.start(logits, n_past);
  std::vector<int32_t> tokens;
  std::vector<int> slots;
  std::vector<float> rows;
  int n_steps = 0;
  for (int pos = n_past;; ++pos) {
    tokens.clear();
    slots.clear();
    if (!search.done()) search.rows(tokens, slots);
    if (tokens.empty()) break;
    if (model.decode_batch(tokens, slots, pos, &rows) != ComputeStatus::Ok) {
      WindowTokens aborted;
      aborted.aborted = true;
      aborted.n_steps = n_steps;
      return aborted;
    }
    ++n_steps;
    search.step(rows);
  }
  WindowTokens r = search.finish();
  r.n_steps = n_steps;
  return r;
}

}  // namespace hark::decode
