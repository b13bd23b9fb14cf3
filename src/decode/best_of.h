// The candidates search, a decode::WindowSearch (decode/window_search.h): greedy at temperature 0
// (one candidate), best-of sampling at temperature > 0. A window's `best_of` candidates are
// sampled in lockstep, one row per candidate still running (finished candidates drop out), each
// in its own KV-cache slot forked from the shared prefix. Each candidate has its own seeded
// generator (decode/sampling.h), so it draws the same tokens as when decoded alone: the batching
// never changes the text. The best is kept by summed log-probability over the length penalty
// (decode/greedy.h candidate_score), ties to the earlier.
#pragma once
#include <cstdint>
#include <memory>

#include "decode/window_search.h"

namespace hark::decode {

// Candidates in slots [base_slot, base_slot + (T > 0 ? best_of : 1)); seed: the window's
// sampling seed (candidate c draws with candidate_rng(seed, c)).
std::unique_ptr<WindowSearch> make_candidates_search(SearchModel& model, const SpecialTokens& st,
                                                     const WindowRequest& req, int base_slot, uint64_t seed);

}  // namespace hark::decode
