#include "decode/best_of.h"

#include <algorithm>

#include "decode/sampling.h"
#include "runtime/error.h"

namespace hark::decode {

WindowTokens sample_best_of(Model& model, const SpecialTokens& st, const WindowRequest& req,
                            const std::vector<float>& logits, int n_past) {
  const int n = req.best_of;
  const int n_ctx = model.n_text_ctx();
  const size_t n_vocab = logits.size();
  model.reserve_sequences(n);

  struct Candidate {
    WindowTokens w;
    Rng rng;
    bool running = true;
  };
  std::vector<Candidate> cands(static_cast<size_t>(n));
  WindowTokens result;
  int n_sampled = 0;
  // A candidate stops as a lone one would: at end-of-text, at the token cap, or when the text
  // context has no room for its last token.
  std::vector<float> row_buf;  // one row at a time: the rules and log-softmax work in place
  auto choose = [&](Candidate& c, std::vector<float>& row, int pos) {
    const int32_t tok = choose_token(st, req, row, &c.rng, c.w);
    ++n_sampled;
    c.running = tok != st.eot && static_cast<int>(c.w.tokens.size()) < req.max_tokens && pos + 1 <= n_ctx;
  };

  // First tokens: every candidate draws from the prefix's logits; those that go on fork slot 0.
  for (int c = 0; c < n; ++c) {
    Candidate& cand = cands[static_cast<size_t>(c)];
    cand.rng = candidate_rng(req.seed, c);
    row_buf = logits;
    choose(cand, row_buf, n_past);
    if (cand.running && c > 0) model.copy_sequence(0, c, n_past);
  }

  // Then one batch step per position with the candidates still running (candidate c in slot c).
  std::vector<int32_t> tokens;
  std::vector<int> seqs;
  std::vector<float> rows;
  for (int pos = n_past;; ++pos) {
    tokens.clear();
    seqs.clear();
    for (int c = 0; c < n; ++c)
      if (cands[static_cast<size_t>(c)].running) {
        tokens.push_back(cands[static_cast<size_t>(c)].w.tokens.back());
        seqs.push_back(c);
      }
    if (seqs.empty()) break;
    if (model.decode_batch(tokens, seqs, pos, &rows) != ComputeStatus::Ok) {
      result.aborted = true;
      result.n_sampled = n_sampled;
      return result;
    }
    ++result.n_steps;
    HARK_CHECK(rows.size() == n_vocab * seqs.size(), "best_of: the batch step returned the wrong number of logits");
    for (size_t r = 0; r < seqs.size(); ++r) {
      const auto* row = rows.data() + r * n_vocab;
      row_buf.assign(row, row + n_vocab);
      choose(cands[static_cast<size_t>(seqs[r])], row_buf, pos + 1);
    }
  }

  // The best candidate; ties keep the earlier one.
  size_t best = 0;
  double best_score = candidate_score(cands[0].w, st.eot, req.length_penalty);
  for (size_t c = 1; c < cands.size(); ++c) {
    const double score = candidate_score(cands[c].w, st.eot, req.length_penalty);
    if (score > best_score) {
      best_score = score;
      best = c;
    }
  }
  const int n_steps = result.n_steps;
  result = std::move(cands[best].w);
  result.avg_logprob = result.tokens.empty() ? 0.0 : result.sum_logprob / static_cast<double>(result.tokens.size());
  result.n_steps = n_steps;
  result.n_sampled = n_sampled;
  return result;
}

}  // namespace hark::decode
