// Best-of sampling on the batched step: at temperature > 0 a window's `best_of` candidates are
// sampled in lockstep, one decoder graph per step with one row per candidate still running
// (finished candidates drop out), each candidate in its own KV-cache slot forked from the shared
// prefix. Each candidate has its own seeded generator (decode/sampling.h), so it draws the same
// tokens as when decoded alone: the batching never changes the text. The best is kept by summed
// log-probability over the length penalty (decode/greedy.h candidate_score), ties to the earlier.
#pragma once
#include <vector>

#include "decode/greedy.h"

namespace hark::decode {

// `logits`: the shared prefix's last logits; slot 0 holds the prefix at positions [0, n_past).
// n_steps counts the batch steps, n_sampled every candidate's tokens.
WindowTokens sample_best_of(Model& model, const SpecialTokens& st, const WindowRequest& req,
                            const std::vector<float>& logits, int n_past);

}  // namespace hark::decode
