// The search of several independent windows in lockstep (the batched long-audio pipeline): B
// chunks already encoded into windows, their prompt and start sequence fed as B rows per step,
// then every window's search (decode/window_search.h: greedy, best-of candidates or beams) names
// its rows, and all rows of all windows run as ONE decode_rows graph per step (each weight read
// once per step for all of them). Every window keeps its own rules, history and KV slots and stops
// on its own: a finished search drops out of the next step.
//
// Window b's search uses slots [b * k, (b + 1) * k), k = search_slots(req) (1 greedy, best_of,
// beam_size); each window's result equals decode_window's for that window alone.
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

// windows[b]: the model window search b reads (the model needs the windows reserved; slots are
// reserved here). seeds[b]: window b's sampling seed (T > 0; may be empty at T = 0). Throws
// hark::Error on inconsistent input.
BatchedWindows decode_windows_batched(Model& model, const SpecialTokens& st, const WindowRequest& req,
                                      std::span<const int> windows, std::span<const uint64_t> seeds);

}  // namespace hark::decode
