#include "decode/beam_stepper.h"

#include <algorithm>
#include <cmath>
#include <limits>

#include "decode/beam_search.h"
#include "runtime/error.h"

namespace hark::decode {

namespace {

class BeamStepper final : public WindowSearch {
 public:
  BeamStepper(Model& model, const SpecialTokens& st, const WindowRequest& req, int base_slot)
      : model_(model), st_(st), req_(req), base_(base_slot), n_beams_(req.beam_size), n_ctx_(model.n_text_ctx()),
        max_finished_(static_cast<size_t>(beam_max_candidates(req.beam_size, req.patience))) {}

  void start(std::span<const float> logits, int n_past) override {
    // The first step has one parent, the prefix in the base slot.
    beams_.assign(1, Beam{});
    beams_[0].slot = base_;
    beams_[0].w.temperature = req_.temperature;
    pos_ = n_past;
    advance(logits, {0});
  }

  void rows(std::vector<int32_t>& tokens, std::vector<int>& slots) const override {
    if (done_) return;
    for (size_t b : order_) {
      tokens.push_back(beams_[b].w.tokens.back());
      slots.push_back(beams_[b].slot);
    }
  }

  void step(std::span<const float> logits) override {
    HARK_CHECK(logits.size() == order_.size() * static_cast<size_t>(st_.n_vocab),
               "beam search: the step returned the wrong number of logits");
    ++pos_;
    std::vector<size_t> row_of(beams_.size(), 0);
    for (size_t r = 0; r < order_.size(); ++r) row_of[order_[r]] = r;
    advance(logits, row_of);
  }

  bool done() const override { return done_; }

  WindowTokens finish() override {
    // Too few finished: the live beams join them, most likely first (when the search was cut short).
    if (finished_.size() < static_cast<size_t>(n_beams_)) {
      std::stable_sort(beams_.begin(), beams_.end(),
                       [](const Beam& a, const Beam& b) { return a.w.sum_logprob > b.w.sum_logprob; });
      for (Beam& b : beams_) {
        if (finished_.size() >= static_cast<size_t>(n_beams_) || b.w.tokens.empty()) break;
        finished_.push_back(std::move(b.w));
      }
    }
    HARK_CHECK(!finished_.empty(), "beam search: no candidate (max_tokens 0?)");
    size_t best = 0;
    double best_score = -std::numeric_limits<double>::infinity();
    for (size_t c = 0; c < finished_.size(); ++c) {
      const double score = candidate_score(finished_[c], st_.eot, req_.length_penalty);
      if (c == 0 || score > best_score) {
        best_score = score;
        best = c;
      }
    }
    WindowTokens r = std::move(finished_[best]);
    r.avg_logprob = r.tokens.empty() ? 0.0 : r.sum_logprob / static_cast<double>(r.tokens.size());
    r.n_sampled = n_sampled_;
    r.n_steps = 0;
    return r;
  }

 private:
  struct Beam {
    WindowTokens w;
    int slot = 0;
  };
  struct Proposal {
    double score;  // the parent's sum of log-probs + this token's
    int parent;
    int32_t token;
  };

  // The k most likely tokens of a log-prob row, most likely first (ties: the lower id), none that
  // is ruled out (-inf).
  static void top_tokens(const std::vector<float>& lp, int k, std::vector<int32_t>& top) {
    top.clear();
    for (size_t i = 0; i < lp.size(); ++i) {
      const float v = lp[i];
      if (!std::isfinite(v)) continue;
      if (static_cast<int>(top.size()) == k && v <= lp[static_cast<size_t>(top.back())]) continue;
      auto at = std::upper_bound(top.begin(), top.end(), v,
                                 [&](float x, int32_t t) { return x > lp[static_cast<size_t>(t)]; });
      top.insert(at, static_cast<int32_t>(i));
      if (static_cast<int>(top.size()) > k) top.pop_back();
    }
  }

  // Ranks every beam's proposals from its logits row, keeps the next beams and the finished
  // candidates, decides whether the search goes on, and forks slots for the next step.
  void advance(std::span<const float> logits, const std::vector<size_t>& row_of) {
    const size_t nv = static_cast<size_t>(st_.n_vocab);
    if (lps_.size() < beams_.size()) lps_.resize(beams_.size());
    props_.clear();
    for (size_t b = 0; b < beams_.size(); ++b) {
      const float* row = logits.data() + row_of[b] * nv;
      std::vector<float>& lp = lps_[b];
      lp.assign(row, row + nv);
      apply_rules(st_, req_.rules, beams_[b].w.tokens, lp.data());
      log_softmax(lp);
      top_tokens(lp, n_beams_ + 1, top_);
      for (int32_t t : top_) props_.push_back({beams_[b].w.sum_logprob + lp[static_cast<size_t>(t)], static_cast<int>(b), t});
    }
    HARK_CHECK(!props_.empty() || !finished_.empty(),
               "decode: every token was ruled out (the logits hold no finite value)");
    std::stable_sort(props_.begin(), props_.end(), [](const Proposal& a, const Proposal& b) { return a.score > b.score; });

    // Walk down the ranking: end-of-text finishes a candidate, anything else is a next beam.
    next_.clear();
    for (const Proposal& p : props_) {
      WindowTokens w = beams_[static_cast<size_t>(p.parent)].w;
      record_token(st_, w, p.token, lps_[static_cast<size_t>(p.parent)]);
      if (p.token == st_.eot) {
        if (finished_.size() < max_finished_) finished_.push_back(std::move(w));  // best first
      } else {
        next_.push_back({std::move(w), beams_[static_cast<size_t>(p.parent)].slot});
      }
      ++n_sampled_;
      if (static_cast<int>(next_.size()) == n_beams_) break;
    }
    beams_.swap(next_);
    order_.clear();
    if (finished_.size() >= max_finished_ || beams_.empty() ||
        static_cast<int>(beams_[0].w.tokens.size()) >= req_.max_tokens || pos_ + 1 > n_ctx_) {
      done_ = true;
      return;
    }

    // Slots: a parent's first child keeps the parent's slot (no copy); the other children take
    // slots no child kept and get a copy of their parent's positions [0, pos).
    std::vector<char> kept(static_cast<size_t>(n_beams_), 0);
    std::vector<size_t> forked;
    for (size_t b = 0; b < beams_.size(); ++b) {
      char& k = kept[static_cast<size_t>(beams_[b].slot - base_)];
      if (k) forked.push_back(b);
      k = 1;
    }
    int free_slot = 0;
    for (size_t b : forked) {
      while (kept[static_cast<size_t>(free_slot)]) ++free_slot;
      kept[static_cast<size_t>(free_slot)] = 1;
      model_.copy_sequence(beams_[b].slot, base_ + free_slot, pos_);
      beams_[b].slot = base_ + free_slot;
    }
    // Rows in slot order.
    for (size_t b = 0; b < beams_.size(); ++b) order_.push_back(b);
    std::sort(order_.begin(), order_.end(), [&](size_t a, size_t b) { return beams_[a].slot < beams_[b].slot; });
  }

  Model& model_;
  const SpecialTokens& st_;
  const WindowRequest& req_;
  const int base_;
  const int n_beams_;
  const int n_ctx_;
  const size_t max_finished_;
  std::vector<Beam> beams_, next_;
  std::vector<WindowTokens> finished_;  // in the order gathered
  std::vector<std::vector<float>> lps_;  // each beam's log-probs this step; kept so steps do not allocate
  std::vector<Proposal> props_;
  std::vector<int32_t> top_;
  std::vector<size_t> order_;  // the beams in slot order: the rows of the next step
  int pos_ = 0;                // where the beams' last tokens go (every slot holds [0, pos))
  int n_sampled_ = 0;
  bool done_ = false;
};

}  // namespace

std::unique_ptr<WindowSearch> make_beam_stepper(Model& model, const SpecialTokens& st, const WindowRequest& req,
                                                int base_slot) {
  return std::make_unique<BeamStepper>(model, st, req, base_slot);
}

}  // namespace hark::decode
