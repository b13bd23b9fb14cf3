// WindowSearch: one window's search in steps, so that many windows can be searched in lockstep
// (the batched long-audio pipeline: decode/batched_search). The driver feeds each window's prefix
// into the window's first KV slot, hands the search the prefix's last logits, then repeats: ask
// every search for the rows it wants fed (a token and a KV slot each, slots in ascending order),
// run all rows of all windows as ONE decode_rows step, hand each search its rows' logits. A search
// owns the slots [base_slot, base_slot + n_slots(req)) and forks them itself (copy_sequence).
//
// The searches are the single-window ones (decode_window) cut into steps, with the same rules,
// the same choices and the same outputs:
//   - candidates: greedy at T = 0 (one row); best_of sampled candidates at T > 0, each with its
//     own generator (candidate_rng), the best by candidate_score kept;
//   - beam search at T = 0 with beam_size > 1 (decode/beam_search.h's meaning).
#pragma once
#include <cstdint>
#include <memory>
#include <span>
#include <vector>

#include "decode/greedy.h"

namespace hark::decode {

class WindowSearch {
 public:
  virtual ~WindowSearch() = default;
  // The prefix's last logits (n_vocab values; the base slot holds the prefix at [0, n_past)).
  virtual void start(std::span<const float> logits, int n_past) = 0;
  // Appends the rows to feed at the next position (none: the search is over).
  virtual void rows(std::vector<int32_t>& tokens, std::vector<int>& slots) const = 0;
  // The logits of the rows rows() gave, in that order (n_vocab values each); the search may
  // overwrite them (log-probs in place).
  virtual void step(std::span<float> logits) = 0;
  virtual bool done() const = 0;
  // The kept sequence (avg_logprob set; n_sampled counts every token chosen, n_steps is 0: the
  // driver counts steps). Once, after done().
  virtual WindowTokens finish() = 0;
};

// Runs one window's search from the prefix's last logits (the search's base slot holds the prefix
// at [0, n_past)), each step one decode_batch of its rows. n_steps counts those steps; on an
// abort the result is empty with `aborted` set.
WindowTokens run_window_search(SearchModel& model, WindowSearch& search, std::span<const float> logits, int n_past);

// KV slots a search of `req` uses: beam_size at T = 0, best_of at T > 0.
int search_slots(const WindowRequest& req);
// True when make_window_search makes a beam search for req (T = 0 and beam_size > 1); the other
// searches (greedy, best-of) touch only their own rows and candidates in a step.
bool is_beam_search(const WindowRequest& req);

// The search `req` asks for, in slots [base_slot, base_slot + search_slots(req)) of `model`
// (reserved by the caller). seed: the window's sampling seed (T > 0).
std::unique_ptr<WindowSearch> make_window_search(SearchModel& model, const SpecialTokens& st, const WindowRequest& req,
                                                 int base_slot, uint64_t seed);

}  // namespace hark::decode
