#include "decode/best_of.h"

#include <memory>
#include <string>
#include <vector>

#include "decode/sampling.h"
#include "runtime/error.h"

namespace hark::decode {

namespace {

// n candidates, candidate c in slot base + c: greedy (n = 1, no generator) or sampled, each
// candidate with its own generator. All draw their first token from the prefix's logits; those
// that go on get the prefix copied from the base slot. A candidate stops as a lone one does: at
// end-of-text, at the token cap, or when the text context has no room for its last token.
class CandidatesSearch final : public WindowSearch {
 public:
  CandidatesSearch(SearchModel& model, const SpecialTokens& st, const WindowRequest& req, int base_slot, uint64_t seed)
      : model_(model),
        st_(st),
        req_(req),
        base_(base_slot),
        n_ctx_(model.n_text_ctx()),
        sampling_(req.temperature > 0.0f),
        cands_(static_cast<size_t>(sampling_ ? req.best_of : 1)) {
    for (size_t c = 0; c < cands_.size(); ++c) {
      cands_[c].rng = candidate_rng(seed, static_cast<int>(c));
      cands_[c].w = window_start_tokens(req);
    }
  }

  void start(std::span<const float> logits, int n_past) override {
    pos_ = n_past;
    for (size_t c = 0; c < cands_.size(); ++c) {
      row_.assign(logits.begin(), logits.end());  // every candidate rules the prefix's row its own way
      choose(cands_[c], row_);
      ++n_sampled_;
      if (cands_[c].running && c > 0) model_.copy_sequence(base_, base_ + static_cast<int>(c), n_past);
    }
  }

  void rows(std::vector<int32_t>& tokens, std::vector<int>& slots) const override {
    for (size_t c = 0; c < cands_.size(); ++c)
      if (cands_[c].running) {
        tokens.push_back(cands_[c].w.tokens.back());
        slots.push_back(base_ + static_cast<int>(c));
      }
  }

  void step(std::span<float> logits) override {
    const size_t nv = static_cast<size_t>(st_.n_vocab);
    ++pos_;
    running_.clear();
    for (Candidate& c : cands_)
      if (c.running) running_.push_back(&c);
    HARK_CHECK(running_.size() * nv <= logits.size(), "decode: a step returned too few logits for its rows");
    // Each row is its candidate's alone (ruled in place, drawn with the candidate's own
    // generator), so the model may work on them at once.
    model_.run_rows(static_cast<int64_t>(running_.size()), [&](int64_t r) {
      choose(*running_[static_cast<size_t>(r)], logits.subspan(static_cast<size_t>(r) * nv, nv));
    });
    n_sampled_ += static_cast<int>(running_.size());
  }

  bool done() const override {
    for (const Candidate& c : cands_)
      if (c.running) return false;
    return true;
  }

  WindowTokens finish() override {
    std::vector<WindowTokens> all;
    for (Candidate& c : cands_) all.push_back(std::move(c.w));
    WindowTokens r = take_best_candidate(all, st_.eot, req_);
    r.n_sampled = n_sampled_;
    r.n_steps = 0;
    return r;
  }

 private:
  struct Candidate {
    WindowTokens w;
    Rng rng;
    bool running = true;
  };

  // The next token of c from its logits at pos_ (changed in place); it would be fed at pos_.
  void choose(Candidate& c, std::span<float> row) {
    const int32_t tok = choose_token(st_, req_, row, sampling_ ? &c.rng : nullptr, c.w);
    c.running = tok != st_.eot && static_cast<int>(c.w.tokens.size()) < req_.max_tokens && pos_ + 1 <= n_ctx_;
  }

  SearchModel& model_;
  const SpecialTokens& st_;
  const WindowRequest& req_;
  const int base_;
  const int n_ctx_;
  const bool sampling_;
  std::vector<Candidate> cands_;
  std::vector<float> row_;           // the prefix's row, copied for each candidate
  std::vector<Candidate*> running_;  // this step's rows, in order
  int pos_ = 0;                      // where the candidates' last tokens go
  int n_sampled_ = 0;
};

}  // namespace

std::unique_ptr<WindowSearch> make_candidates_search(SearchModel& model, const SpecialTokens& st,
                                                     const WindowRequest& req, int base_slot, uint64_t seed) {
  return std::make_unique<CandidatesSearch>(model, st, req, base_slot, seed);
}

}  // namespace hark::decode
