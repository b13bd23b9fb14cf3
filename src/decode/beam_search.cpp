#include "decode/beam_search.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <span>

#include "decode/logit_math.h"
#include "runtime/error.h"

namespace hark::decode {

namespace {

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

// The k most likely tokens of a log-prob row, most likely first (ties: the lower id), none that
// is ruled out (-inf). It runs for every beam at every step on the host thread while the compute
// threads wait, so most of the row is passed over in chunks: once k tokens are held, a chunk
// whose maximum (the SIMD row_max) is not above the k-th best cannot change the result.
std::vector<int32_t> top_tokens(std::span<const float> lp, int k) {
  constexpr size_t kChunk = 256;
  std::vector<int32_t> top;
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
  return top;
}

}  // namespace

int beam_max_candidates(int beam_size, float patience) {
  // Capped far above any window's candidates (a window has at most n_text_ctx steps), so a huge
  // patience cannot overflow the int.
  const double x = std::min(static_cast<double>(beam_size) * static_cast<double>(patience), 1e6);
  return std::max(1, static_cast<int>(std::nearbyint(x)));  // the default rounding mode: half to even
}

WindowTokens beam_search(Model& model, const SpecialTokens& st, const WindowRequest& req,
                         const std::vector<float>& logits, int n_past) {
  const int n_beams = req.beam_size;
  const int n_ctx = model.n_text_ctx();
  const size_t n_vocab = logits.size();
  const size_t max_finished = static_cast<size_t>(beam_max_candidates(n_beams, req.patience));
  model.reserve_sequences(n_beams);

  WindowTokens result;
  std::vector<WindowTokens> finished;  // in the order gathered
  // The first step has one parent, the prefix in slot 0 (OpenAI starts with beam_size equal
  // beams, whose equal proposals merge into one set).
  std::vector<Beam> beams(1);
  std::vector<float> rows = logits;
  std::vector<size_t> row_of = {0};  // beam -> its row in `rows`
  int pos = n_past;                  // where the beams' last tokens go (every slot holds [0, pos))
  std::vector<Beam> next;
  std::vector<int32_t> tokens;
  std::vector<int> seqs;
  // Each beam's log-probs this step: its row of `rows`, turned into log-probs in place (the row is
  // not needed as logits again; the next step's logits replace all of `rows`).
  std::vector<std::span<float>> lps;
  std::vector<Proposal> props;
  std::vector<int> uses;  // per beam: proposals of this step's walk that extend it
  while (true) {
    // Proposals of every beam, ranked (a stable sort: equal scores keep beam order, then token rank).
    lps.resize(beams.size());
    props.clear();
    for (size_t b = 0; b < beams.size(); ++b) {
      const std::span<float> lp(rows.data() + row_of[b] * n_vocab, n_vocab);
      lps[b] = lp;
      apply_rules(st, req.rules, beams[b].w.tokens, lp.data());
      log_softmax(lp);
      for (int32_t t : top_tokens(lp, n_beams + 1))
        props.push_back({beams[b].w.sum_logprob + lp[static_cast<size_t>(t)], static_cast<int>(b), t});
    }
    HARK_CHECK(!props.empty() || !finished.empty(), "decode: every token was ruled out (the logits hold no finite value)");
    std::stable_sort(props.begin(), props.end(), [](const Proposal& a, const Proposal& b) { return a.score > b.score; });

    // Walk down the ranking: end-of-text finishes a candidate, anything else is a next beam. The
    // walk stops at the n_beams-th non-eot proposal; a parent's history is copied for each of
    // its children there but the last, which takes it (the parents are dropped after the walk).
    size_t walked = 0;
    for (int live = 0; walked < props.size() && live < n_beams; ++walked) live += props[walked].token != st.eot;
    uses.assign(beams.size(), 0);
    for (size_t i = 0; i < walked; ++i) ++uses[static_cast<size_t>(props[i].parent)];
    next.clear();
    for (size_t i = 0; i < walked; ++i) {
      const Proposal& p = props[i];
      Beam& parent = beams[static_cast<size_t>(p.parent)];
      const bool last_use = --uses[static_cast<size_t>(p.parent)] == 0;
      ++result.n_sampled;
      if (p.token == st.eot && finished.size() >= max_finished) continue;  // not kept
      WindowTokens w = last_use ? std::move(parent.w) : parent.w;
      record_token(st, w, p.token, lps[static_cast<size_t>(p.parent)]);
      if (p.token == st.eot) {
        finished.push_back(std::move(w));  // best first
      } else {
        next.push_back({std::move(w), parent.slot});
      }
    }
    beams.swap(next);
    if (finished.size() >= max_finished || beams.empty()) break;
    // The beams all have the same length: the cap and the context stop them together.
    if (static_cast<int>(beams[0].w.tokens.size()) >= req.max_tokens || pos + 1 > n_ctx) break;

    // Slots: a parent's first child keeps the parent's slot (no copy); the other children take
    // slots no child kept and get a copy of their parent's positions [0, pos). A slot written to
    // is never a slot a child reads from, so the copies need no order.
    std::vector<char> kept(static_cast<size_t>(n_beams), 0);
    std::vector<size_t> forked;
    for (size_t b = 0; b < beams.size(); ++b) {
      char& k = kept[static_cast<size_t>(beams[b].slot)];
      if (k) forked.push_back(b);
      k = 1;
    }
    int free_slot = 0;
    for (size_t b : forked) {
      while (kept[static_cast<size_t>(free_slot)]) ++free_slot;
      kept[static_cast<size_t>(free_slot)] = 1;
      model.copy_sequence(beams[b].slot, free_slot, pos);
      beams[b].slot = free_slot;
    }

    // One batch step, rows in slot order (0, 1, 2, ... when every slot is in use).
    std::vector<size_t> order(beams.size());
    for (size_t b = 0; b < order.size(); ++b) order[b] = b;
    std::sort(order.begin(), order.end(), [&](size_t a, size_t b) { return beams[a].slot < beams[b].slot; });
    tokens.clear();
    seqs.clear();
    row_of.assign(beams.size(), 0);
    for (size_t r = 0; r < order.size(); ++r) {
      tokens.push_back(beams[order[r]].w.tokens.back());
      seqs.push_back(beams[order[r]].slot);
      row_of[order[r]] = r;
    }
    if (model.decode_batch(tokens, seqs, pos, &rows) != ComputeStatus::Ok) {
      result.aborted = true;
      return result;
    }
    ++result.n_steps;
    HARK_CHECK(rows.size() == n_vocab * seqs.size(), "beam search: the batch step returned the wrong number of logits");
    ++pos;
  }

  // Too few finished: the live beams join them, most likely first (when the search was cut short).
  if (finished.size() < static_cast<size_t>(n_beams)) {
    std::stable_sort(beams.begin(), beams.end(),
                     [](const Beam& a, const Beam& b) { return a.w.sum_logprob > b.w.sum_logprob; });
    for (Beam& b : beams) {
      if (finished.size() >= static_cast<size_t>(n_beams) || b.w.tokens.empty()) break;
      finished.push_back(std::move(b.w));
    }
  }

  HARK_CHECK(!finished.empty(), "beam search: no candidate (max_tokens 0?)");
  size_t best = 0;
  double best_score = -std::numeric_limits<double>::infinity();
  for (size_t c = 0; c < finished.size(); ++c) {
    const double score = candidate_score(finished[c], st.eot, req.length_penalty);
    if (c == 0 || score > best_score) {
      best_score = score;
      best = c;
    }
  }
  const int n_steps = result.n_steps, n_sampled = result.n_sampled;
  result = std::move(finished[best]);
  result.avg_logprob = result.tokens.empty() ? 0.0 : result.sum_logprob / static_cast<double>(result.tokens.size());
  result.n_steps = n_steps;
  result.n_sampled = n_sampled;
  return result;
}

}  // namespace hark::decode
