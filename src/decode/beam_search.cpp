#include "decode/beam_search.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <span>

#include "decode/logit_math.h"
#include "runtime/error.h"

namespace hark::decode {

namespace {

// The k most likely tokens of a log-prob row into `top`, most likely first (ties: the lower id),
// none that is ruled out (-inf). It runs for every beam at every step between two graphs, so most
// of the row is passed over in chunks: once k tokens are held, a chunk whose maximum (the SIMD
// row_max) is not above the k-th best cannot change the result.
void top_tokens(std::span<const float> lp, int k, std::vector<int32_t>& top) {
  constexpr size_t kChunk = 256;
  top.clear();  // the caller's vector, kept from step to step: no allocation once it has grown
  top.reserve(static_cast<size_t>(k) + 1);
  float bar = -std::numeric_limits<float>::infinity();  // a value must be above it (NaN never is)
  for (size_t c = 0; c < lp.size(); c += kChunk) {
    const size_t end = std::min(lp.size(), c + kChunk);
    if (static_cast<int>(top.size()) == k && !(row_max(lp.subspan(c, end - c)) > bar)) continue;
    for (size_t i = c; i < end; ++i) {
      const float v = lp[i];
      if (!(v > bar) || v == std::numeric_limits<float>::infinity()) continue;
      auto at = std::upper_bound(top.begin(), top.end(), v,
                                 [&](float x, int32_t t) { return x > lp[static_cast<size_t>(t)]; });
      top.insert(at, static_cast<int32_t>(i));
      if (static_cast<int>(top.size()) > k) top.pop_back();
      if (static_cast<int>(top.size()) == k) bar = lp[static_cast<size_t>(top.back())];
    }
  }
}

class BeamStepper final : public WindowSearch {
 public:
  BeamStepper(SearchModel& model, const SpecialTokens& st, const WindowRequest& req, int base_slot)
      : model_(model),
        st_(st),
        req_(req),
        base_(base_slot),
        n_beams_(req.beam_size),
        n_ctx_(model.n_text_ctx()),
        max_finished_(static_cast<size_t>(beam_max_candidates(req.beam_size, req.patience))) {}

  void start(std::span<const float> logits, int n_past) override {
    // The first step has one parent, the prefix in the base slot (OpenAI starts with beam_size
    // equal beams, whose equal proposals merge into one set).
    beams_.assign(1, Beam{});
    beams_[0].slot = base_;
    beams_[0].w = window_start_tokens(req_);
    pos_ = n_past;
    first_.assign(logits.begin(), logits.end());
    row_of_.assign(1, 0);
    advance(first_);
  }

  void rows(std::vector<int32_t>& tokens, std::vector<int>& slots) const override {
    if (done_) return;
    for (size_t b : order_) {
      tokens.push_back(beams_[b].w.tokens.back());
      slots.push_back(beams_[b].slot);
    }
  }

  void step(std::span<float> logits) override {
    HARK_CHECK(logits.size() == order_.size() * static_cast<size_t>(st_.n_vocab),
               "beam search: the step returned the wrong number of logits");
    ++pos_;
    row_of_.assign(beams_.size(), 0);
    for (size_t r = 0; r < order_.size(); ++r) row_of_[order_[r]] = r;
    advance(logits);
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
    WindowTokens r = take_best_candidate(finished_, st_.eot, req_);
    r.n_sampled = n_sampled_;
    r.n_steps = 0;
    return r;
  }

 private:
  struct Beam {
    WindowTokens w;
    int slot = 0;
  };
  // A proposed continuation of beam `parent`.
  struct Proposal {
    double score;  // the parent's sum of log-probs + this token's
    int parent;
    int32_t token;
  };

  // One step of the search from the beams' logits (beam b's row at row_of_[b]): rank every
  // beam's proposals, keep the next beams and the finished candidates, decide whether the search
  // goes on, and fork slots for the next step.
  void advance(std::span<float> rows) {
    const size_t nv = static_cast<size_t>(st_.n_vocab);
    // Proposals of every beam, ranked (a stable sort: equal scores keep beam order, then token
    // rank). Each beam's row becomes its log-probs in place: the row is not needed as logits again.
    // The rows are independent: the model may work on them at once (its compute threads idle
    // between graphs); the proposals are then gathered in beam order, so the result is the same.
    lps_.resize(beams_.size());
    tops_.resize(beams_.size());
    for (size_t b = 0; b < beams_.size(); ++b) lps_[b] = rows.subspan(row_of_[b] * nv, nv);
    model_.run_rows(static_cast<int64_t>(beams_.size()), [&](int64_t i) {
      const size_t b = static_cast<size_t>(i);
      apply_rules(st_, req_.rules, beams_[b].w.tokens, lps_[b].data());
      log_softmax(lps_[b]);
      top_tokens(lps_[b], n_beams_ + 1, tops_[b]);
    });
    props_.clear();
    for (size_t b = 0; b < beams_.size(); ++b)
      for (int32_t t : tops_[b])
        props_.push_back({beams_[b].w.sum_logprob + lps_[b][static_cast<size_t>(t)], static_cast<int>(b), t});
    HARK_CHECK(!props_.empty() || !finished_.empty(),
               "decode: every token was ruled out (the logits hold no finite value)");
    std::stable_sort(props_.begin(), props_.end(),
                     [](const Proposal& a, const Proposal& b) { return a.score > b.score; });

    // Walk down the ranking: end-of-text finishes a candidate, anything else is a next beam. The
    // walk stops at the n_beams-th non-eot proposal; a parent's history is copied for each of
    // its children there but the last, which takes it (the parents are dropped after the walk).
    size_t walked = 0;
    for (int live = 0; walked < props_.size() && live < n_beams_; ++walked) live += props_[walked].token != st_.eot;
    uses_.assign(beams_.size(), 0);
    for (size_t i = 0; i < walked; ++i) ++uses_[static_cast<size_t>(props_[i].parent)];
    next_.clear();
    for (size_t i = 0; i < walked; ++i) {
      const Proposal& p = props_[i];
      Beam& parent = beams_[static_cast<size_t>(p.parent)];
      const bool last_use = --uses_[static_cast<size_t>(p.parent)] == 0;
      ++n_sampled_;
      if (p.token == st_.eot && finished_.size() >= max_finished_) continue;  // not kept
      WindowTokens w = last_use ? std::move(parent.w) : parent.w;
      record_token(st_, w, p.token, lps_[static_cast<size_t>(p.parent)]);
      if (p.token == st_.eot) {
        finished_.push_back(std::move(w));  // best first
      } else {
        next_.push_back({std::move(w), parent.slot});
      }
    }
    beams_.swap(next_);
    order_.clear();
    // The beams all have the same length: the cap and the context stop them together.
    if (finished_.size() >= max_finished_ || beams_.empty() ||
        static_cast<int>(beams_[0].w.tokens.size()) >= req_.max_tokens || pos_ + 1 > n_ctx_) {
      done_ = true;
      return;
    }

    // Slots: a parent's first child keeps the parent's slot (no copy); the other children take
    // slots no child kept and get a copy of their parent's positions [0, pos). A slot written to
    // is never a slot a child reads from, so the copies need no order.
    kept_.assign(static_cast<size_t>(n_beams_), 0);
    forked_.clear();
    for (size_t b = 0; b < beams_.size(); ++b) {
      char& k = kept_[static_cast<size_t>(beams_[b].slot - base_)];
      if (k) forked_.push_back(b);
      k = 1;
    }
    int free_slot = 0;
    for (size_t b : forked_) {
      while (kept_[static_cast<size_t>(free_slot)]) ++free_slot;
      kept_[static_cast<size_t>(free_slot)] = 1;
      model_.copy_sequence(beams_[b].slot, base_ + free_slot, pos_);
      beams_[b].slot = base_ + free_slot;
    }
    // The next step's rows in slot order (base, base + 1, ... when every slot is in use).
    for (size_t b = 0; b < beams_.size(); ++b) order_.push_back(b);
    std::sort(order_.begin(), order_.end(), [&](size_t a, size_t b) { return beams_[a].slot < beams_[b].slot; });
  }

  SearchModel& model_;
  const SpecialTokens& st_;
  const WindowRequest& req_;
  const int base_;
  const int n_beams_;
  const int n_ctx_;
  const size_t max_finished_;
  std::vector<Beam> beams_, next_;
  std::vector<WindowTokens> finished_;      // in the order gathered
  std::vector<float> first_;                // the prefix's logits, made log-probs in place
  std::vector<std::span<float>> lps_;       // each beam's log-probs this step (its row, in place)
  std::vector<std::vector<int32_t>> tops_;  // each beam's most likely tokens this step
  std::vector<Proposal> props_;
  std::vector<int> uses_;       // per beam: proposals of this step's walk that extend it
  std::vector<size_t> row_of_;  // beam -> its row in this step's logits
  std::vector<size_t> order_;   // the beams in slot order: the rows of the next step
  std::vector<char> kept_;
  std::vector<size_t> forked_;
  int pos_ = 0;  // where the beams' last tokens go (every slot holds [0, pos))
  int n_sampled_ = 0;
  bool done_ = false;
};

}  // namespace

int beam_max_candidates(int beam_size, float patience) {
  // Capped far above any window's candidates (a window has at most n_text_ctx steps), so a huge
  // patience cannot overflow the int.
  const double x = std::min(static_cast<double>(beam_size) * static_cast<double>(patience), 1e6);
  return std::max(1, static_cast<int>(std::nearbyint(x)));  // the default rounding mode: half to even
}

std::unique_ptr<WindowSearch> make_beam_search(SearchModel& model, const SpecialTokens& st, const WindowRequest& req,
                                               int base_slot) {
  return std::make_unique<BeamStepper>(model, st, req, base_slot);
}

}  // namespace hark::decode
