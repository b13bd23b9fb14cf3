// The search of several independent windows in lockstep (the batched long-audio pipeline): B
// chunks already encoded into windows, their prompt and start sequence fed as B rows per step,
// then one token per row per step, all rows as ONE decode_rows graph (each weight read once per
// step for all of them). Every row keeps its own timestamp rules and history (choose_token and
// record_token, the single-window search's own, so the rules are identical) and stops on its own:
// a finished row drops out of the next step.
//
// At temperature 0 each row is greedy; above 0 each row draws one sample with candidate 0's
// generator of its own seed, as decode_window does with best_of 1. Beam search and best_of > 1
// are not batched here (the caller decodes such windows one by one with decode_window).
#pragma once
#include <cstdint>
#include <span>
#include <vector>

#include "decode/greedy.h"

namespace hark::decode {

struct BatchedWindows {
  std::vector<WindowTokens> rows;  // one per window asked for, in that order
  int n_steps = 0;                 // decoder graph runs (a step of all rows once)
  bool aborted = false;
};

// windows[b]: the model window row b reads (row b decodes in slot b, so the model needs
// max(B, windows) slots and windows reserved). seeds[b]: row b's sampling seed (T > 0; may be empty
// at T = 0). Throws hark::Error for a request this search does not do (beam_size > 1 at T = 0,
// best_of > 1 at T > 0) or inconsistent input.
BatchedWindows decode_windows_batched(Model& model, const SpecialTokens& st, const WindowRequest& req,
                                      std::span<const int> windows, std::span<const uint64_t> seeds);

}  // namespace hark::decode
