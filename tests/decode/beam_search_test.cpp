// Beam search and batched best-of, on a tiny vocabulary (four text tokens and end-of-text) with a
// ScriptedModel whose logits are a function of each sequence's own context. Beam search is checked
// against an exhaustive search (wide beams) and against a plain restatement of the definition
// that works on whole token sequences (narrow beams, where pruning matters): same tokens, same
// scores. Slots and forks are checked directly (which context each batch row sees), and best-of in
// lockstep against the candidates decoded one by one.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <functional>
#include <limits>
#include <vector>

#include "decode/beam_search.h"
#include "decode/greedy.h"
#include "decode/scripted_model.h"

namespace hark::testing {
namespace {

constexpr float kNegInf = -std::numeric_limits<float>::infinity();

// Text tokens 0..3, then eot = 4, then the special tokens (all suppressed), no timestamps.
SpecialTokens tiny_tokens() { return compact_tokens(4, 0); }

decode::WindowRequest tiny_request(const SpecialTokens& st, int beams, int max_tokens) {
  decode::WindowRequest req;
  req.start = {st.sot};
  req.rules.timestamps = false;
  req.rules.suppress_blank = false;
  req.rules.suppress = decode::default_suppressed(st);
  req.max_tokens = max_tokens;
  req.beam_size = beams;
  return req;
}

// Logits of the tokens after `sampled`: seeded pseudo-random values in [-2, 2] per text token, and
// end-of-text growing likelier with length, so candidates finish at different depths.
std::vector<float> hashed_logits(const SpecialTokens& st, uint64_t seed, const std::vector<int32_t>& sampled) {
  uint64_t h = seed * 0x9E3779B97F4A7C15ull + 17;
  for (int32_t t : sampled) h = (h ^ static_cast<uint64_t>(t + 1)) * 0xBF58476D1CE4E5B9ull;
  std::vector<float> l(static_cast<size_t>(st.n_vocab), 0.0f);
  for (int32_t t = 0; t <= st.eot; ++t) {
    h ^= h >> 29;
    h *= 0x94D049BB133111EBull;
    l[static_cast<size_t>(t)] = static_cast<float>(static_cast<double>(h >> 11) * 0x1.0p-53 * 4.0 - 2.0);
  }
  l[static_cast<size_t>(st.eot)] += 0.9f * static_cast<float>(sampled.size()) - 1.2f;
  return l;
}

// What beam search sees of one sequence: the rule-filtered log-probs after it.
using LogProbs = std::function<std::vector<float>(const std::vector<int32_t>&)>;

LogProbs log_probs_of(const SpecialTokens& st, const decode::WindowRequest& req, uint64_t seed) {
  return [st, req, seed](const std::vector<int32_t>& seq) {
    std::vector<float> l = hashed_logits(st, seed, seq);
    decode::apply_rules(st, req.rules, seq, l.data());
    decode::log_softmax(l);
    return l;
  };
}

struct Found {
  std::vector<int32_t> tokens;
  double sum = 0.0;
};

// Every sequence of up to max_tokens tokens (ending at end-of-text, or cut at the cap), the best
// by candidate_score. With beams at least as many as such sequences, beam search must find it.
Found exhaustive(const SpecialTokens& st, const LogProbs& lp, int max_tokens, float length_penalty) {
  Found best;
  double best_score = -std::numeric_limits<double>::infinity();
  std::function<void(std::vector<int32_t>&, double)> walk = [&](std::vector<int32_t>& seq, double sum) {
    const std::vector<float> l = lp(seq);
    for (int32_t t = 0; t <= st.eot; ++t) {
      if (!std::isfinite(l[static_cast<size_t>(t)])) continue;
      seq.push_back(t);
      const double s = sum + l[static_cast<size_t>(t)];
      if (t == st.eot || static_cast<int>(seq.size()) == max_tokens) {
        const int len = static_cast<int>(seq.size()) - (t == st.eot ? 1 : 0);
        const double score = decode::candidate_score(s, len, length_penalty);
        if (score > best_score) {
          best_score = score;
          best = {seq, s};
        }
      } else {
        walk(seq, s);
      }
      seq.pop_back();
    }
  };
  std::vector<int32_t> seq;
  walk(seq, 0.0);
  return best;
}

// The definition restated on whole sequences (no cache, no slots): each live sequence proposes
// its beams + 1 best tokens, proposals ranked by summed log-prob (equal scores: earlier beam, then
// likelier token, then lower id); eot proposals finish (best first, while fewer than
// round(beams * patience)), others become the next beams until `beams`. At the cap, the live
// beams fill the finished list up to `beams`. The best by candidate_score wins (ties: earlier).
Found reference_beam(const SpecialTokens& st, const LogProbs& lp, int beams, float patience, int max_tokens,
                     float length_penalty) {
  const size_t max_fin = static_cast<size_t>(std::max(1, static_cast<int>(std::nearbyint(beams * patience))));
  std::vector<Found> live = {{}}, finished;
  for (int step = 0; step < max_tokens; ++step) {
    std::vector<Found> props;
    for (const Found& b : live) {
      const std::vector<float> l = lp(b.tokens);
      std::vector<int32_t> ids;
      for (int32_t t = 0; t < st.n_vocab; ++t)
        if (std::isfinite(l[static_cast<size_t>(t)])) ids.push_back(t);
      std::stable_sort(ids.begin(), ids.end(),
                       [&](int32_t a, int32_t c) { return l[static_cast<size_t>(a)] > l[static_cast<size_t>(c)]; });
      ids.resize(std::min(ids.size(), static_cast<size_t>(beams + 1)));
      for (int32_t t : ids) {
        Found p = b;
        p.tokens.push_back(t);
        p.sum += l[static_cast<size_t>(t)];
        props.push_back(p);
      }
    }
    std::stable_sort(props.begin(), props.end(), [](const Found& a, const Found& c) { return a.sum > c.sum; });
    std::vector<Found> next;
    for (const Found& p : props) {
      if (p.tokens.back() == st.eot) {
        if (finished.size() < max_fin) finished.push_back(p);
      } else {
        next.push_back(p);
      }
      if (static_cast<int>(next.size()) == beams) break;
    }
    live = next;
    if (finished.size() >= max_fin || live.empty()) break;
  }
  std::stable_sort(live.begin(), live.end(), [](const Found& a, const Found& c) { return a.sum > c.sum; });
  for (const Found& b : live)
    if (finished.size() < static_cast<size_t>(beams)) finished.push_back(b);
  size_t best = 0;
  double best_score = 0.0;
  for (size_t i = 0; i < finished.size(); ++i) {
    const int len = static_cast<int>(finished[i].tokens.size()) - (finished[i].tokens.back() == st.eot ? 1 : 0);
    const double score = decode::candidate_score(finished[i].sum, len, length_penalty);
    if (i == 0 || score > best_score) {
      best_score = score;
      best = i;
    }
  }
  return finished[best];
}

ScriptedModel::Script hashed_script(const SpecialTokens& st, uint64_t seed) {
  return [st, seed](const ScriptedModel::Call& c) { return hashed_logits(st, seed, sampled_of(st, c.context)); };
}

TEST(BeamSearch, WideBeamsFindTheBestSequenceOfAll) {
  const SpecialTokens st = tiny_tokens();
  // 4 text tokens, 3 deep: 64 live sequences at most, so 64 beams prune nothing.
  for (float penalty : {-1.0f, 0.0f, 1.0f, 0.6f}) {
    for (uint64_t seed = 0; seed < 12; ++seed) {
      decode::WindowRequest req = tiny_request(st, 64, 3);
      req.length_penalty = penalty;
      ScriptedModel sm(448, hashed_script(st, seed));
      const decode::WindowTokens w = decode::decode_window(sm, st, req);
      const Found best = exhaustive(st, log_probs_of(st, req, seed), 3, penalty);
      EXPECT_EQ(w.tokens, best.tokens) << "seed " << seed << " length_penalty " << penalty;
      EXPECT_NEAR(w.sum_logprob, best.sum, 1e-4);
    }
  }
}

TEST(BeamSearch, NarrowBeamsPruneAsTheDefinitionSays) {
  const SpecialTokens st = tiny_tokens();
  int differs_from_exhaustive = 0, differs_from_greedy = 0;
  for (int beams : {2, 3, 5}) {
    for (float patience : {0.5f, 1.0f, 2.0f}) {
      for (float penalty : {-1.0f, 1.0f}) {
        for (uint64_t seed = 0; seed < 16; ++seed) {
          decode::WindowRequest req = tiny_request(st, beams, 5);
          req.patience = patience;
          req.length_penalty = penalty;
          ScriptedModel sm(448, hashed_script(st, seed));
          const decode::WindowTokens w = decode::decode_window(sm, st, req);
          const LogProbs lp = log_probs_of(st, req, seed);
          const Found ref = reference_beam(st, lp, beams, patience, 5, penalty);
          ASSERT_EQ(w.tokens, ref.tokens) << "beams " << beams << " patience " << patience << " seed " << seed;
          EXPECT_NEAR(w.sum_logprob, ref.sum, 1e-4);
          // Per-token outputs belong to the kept sequence.
          ASSERT_EQ(w.logprobs.size(), w.tokens.size());
          std::vector<int32_t> prefix;
          for (size_t k = 0; k < w.tokens.size(); ++k) {
            EXPECT_FLOAT_EQ(w.logprobs[k], lp(prefix)[static_cast<size_t>(w.tokens[k])]);
            EXPECT_NEAR(w.probs[k], std::exp(w.logprobs[k]), 1e-6);
            prefix.push_back(w.tokens[k]);
          }
          differs_from_exhaustive += ref.tokens != exhaustive(st, lp, 5, penalty).tokens;
          ScriptedModel sg(448, hashed_script(st, seed));
          decode::WindowRequest greedy = req;
          greedy.beam_size = 1;
          differs_from_greedy += decode::decode_window(sg, st, greedy).tokens != w.tokens;
          // One batch step per position, every live beam a row of it.
          EXPECT_EQ(w.n_steps, 1 + sm.n_batch_steps);
          for (const ScriptedModel::Call& c : sm.calls) {
            EXPECT_LE(c.batch, beams);
          }
        }
      }
    }
  }
  // The family of scripts is one where pruning and beams both matter.
  EXPECT_GT(differs_from_exhaustive, 0);
  EXPECT_GT(differs_from_greedy, 0);
}

// A vocabulary of 1000 text tokens: the search's scan of a row passes over chunks (256 values)
// that cannot hold a better token than those it has, so the best tokens must be found wherever
// they are, ties (logits on a coarse grid) must go to the lower id across chunk borders, and
// runs of ruled-out tokens (whole chunks of -inf) must be passed over.
TEST(BeamSearch, WideVocabularyRanksAsTheDefinitionSays) {
  const SpecialTokens st = compact_tokens(1000, 0);
  for (uint64_t seed = 0; seed < 6; ++seed) {
    auto logits = [st, seed](const std::vector<int32_t>& sampled) {
      std::vector<float> l = hashed_logits(st, seed, sampled);
      for (int32_t t = 0; t < st.eot; ++t) {
        float& v = l[static_cast<size_t>(t)];
        v = std::round(v * 2.0f) / 2.0f;                                        // many equal values
        if (t >= 256 && t < 768 && (seed % 2 == 0 || t % 3 != 0)) v = kNegInf;  // ruled-out chunks
      }
      return l;
    };
    for (int beams : {2, 5}) {
      decode::WindowRequest req = tiny_request(st, beams, 4);
      ScriptedModel sm(448, [&](const ScriptedModel::Call& c) { return logits(sampled_of(st, c.context)); });
      const decode::WindowTokens w = decode::decode_window(sm, st, req);
      const LogProbs lp = [&](const std::vector<int32_t>& seq) {
        std::vector<float> l = logits(seq);
        decode::apply_rules(st, req.rules, seq, l.data());
        decode::log_softmax(l);
        return l;
      };
      const Found ref = reference_beam(st, lp, beams, 1.0f, 4, req.length_penalty);
      ASSERT_EQ(w.tokens, ref.tokens) << "beams " << beams << " seed " << seed;
      EXPECT_NEAR(w.sum_logprob, ref.sum, 1e-4);
    }
  }
}

// Hand-made logits: A = 0, B = 1. After [] A is likeliest, then eot, then B; after anything else
// eot is near certain. With 2 beams the first step finishes [eot] and keeps A and B.
std::vector<float> patience_logits(const SpecialTokens& st, const std::vector<int32_t>& sampled) {
  std::vector<float> l(static_cast<size_t>(st.n_vocab), kNegInf);
  if (sampled.empty()) {
    l[0] = 0.0f;
    l[1] = -0.5f;
    l[static_cast<size_t>(st.eot)] = -0.2f;
  } else {
    l[0] = l[1] = 0.0f;
    l[static_cast<size_t>(st.eot)] = 5.0f;
  }
  return l;
}

TEST(BeamSearch, PatienceSetsHowManyFinishedCandidatesAreGathered) {
  const SpecialTokens st = tiny_tokens();
  auto script = [&](const ScriptedModel::Call& c) { return patience_logits(st, sampled_of(st, c.context)); };
  decode::WindowRequest req = tiny_request(st, 2, 10);
  // round(2 * 0.5) = 1 candidate: the search ends at the first finished one, [eot] (-1.09); the
  // live beams then fill the list up to beam_size, and the cut [A] (-0.89) scores best.
  req.patience = 0.5f;
  ScriptedModel s1(448, script);
  decode::WindowTokens w = decode::decode_window(s1, st, req);
  EXPECT_EQ(w.tokens, (std::vector<int32_t>{0}));
  EXPECT_EQ(s1.n_batch_steps, 0);
  // 2 candidates: one more step finishes [A, eot] (sum -0.90), which beats [eot].
  req.patience = 1.0f;
  ScriptedModel s2(448, script);
  w = decode::decode_window(s2, st, req);
  EXPECT_EQ(w.tokens, (std::vector<int32_t>{0, st.eot}));
  EXPECT_EQ(s2.n_batch_steps, 1);
  // Python's round: 2 * 0.75 = 1.5 -> 2, 2 * 1.25 = 2.5 -> 2 (half to even), at least 1.
  EXPECT_EQ(decode::beam_max_candidates(2, 0.75f), 2);
  EXPECT_EQ(decode::beam_max_candidates(2, 1.25f), 2);
  EXPECT_EQ(decode::beam_max_candidates(5, 0.01f), 1);
  EXPECT_EQ(decode::beam_max_candidates(5, 2.0f), 10);
  EXPECT_EQ(decode::beam_max_candidates(5, 1e30f), 1000000);  // no int overflow
}

TEST(BeamSearch, ForksCopyTheParentsSlot) {
  const SpecialTokens st = tiny_tokens();
  // After [] A and B lead; after [A] both A and B beat anything after [B]; then eot.
  auto script = [&](const ScriptedModel::Call& c) {
    const std::vector<int32_t> s = sampled_of(st, c.context);
    std::vector<float> l(static_cast<size_t>(st.n_vocab), kNegInf);
    l[0] = l[1] = l[2] = 0.0f;
    if (s.empty()) {
      l[0] = 3.0f;
      l[1] = 2.5f;
    } else if (s.size() == 1) {
      if (s[0] == 0) l[0] = l[1] = 4.0f;
    } else if (s.size() == 2) {
      l[static_cast<size_t>(st.eot)] = 9.0f;
    }
    return l;
  };
  ScriptedModel sm(448, script);
  const decode::WindowTokens w = decode::decode_window(sm, st, tiny_request(st, 2, 10));
  EXPECT_EQ(w.tokens, (std::vector<int32_t>{0, 0, st.eot}));
  // Prefix [sot] at n_past 0 in slot 0. Step 1: A keeps slot 0, B is forked into slot 1 (1
  // position). Step 2: [A A] keeps slot 0, [A B] goes to slot 1, B's slot, with A's 2 positions.
  ASSERT_EQ(sm.forks.size(), 2u);
  EXPECT_EQ(sm.forks[0].src, 0);
  EXPECT_EQ(sm.forks[0].dst, 1);
  EXPECT_EQ(sm.forks[0].n_past, 1);
  EXPECT_EQ(sm.forks[1].src, 0);
  EXPECT_EQ(sm.forks[1].dst, 1);
  EXPECT_EQ(sm.forks[1].n_past, 2);
  std::vector<std::vector<int32_t>> step2;
  for (const ScriptedModel::Call& c : sm.calls) {
    if (c.batch == 0) continue;
    EXPECT_EQ(c.batch, 2);
    if (c.n_past != 2) continue;
    EXPECT_EQ(c.seq, static_cast<int>(step2.size()));  // rows in slot order
    step2.push_back(c.context);
  }
  ASSERT_EQ(step2.size(), 2u);
  EXPECT_EQ(step2[0], (std::vector<int32_t>{st.sot, 0, 0}));
  EXPECT_EQ(step2[1], (std::vector<int32_t>{st.sot, 0, 1}));
}

TEST(BeamSearch, ForksOnlyWhatChangesSlot) {
  const SpecialTokens st = tiny_tokens();
  int rows = 0, forks = 0;
  for (uint64_t seed = 0; seed < 8; ++seed) {
    ScriptedModel sm(448, hashed_script(st, seed));
    decode::decode_window(sm, st, tiny_request(st, 4, 8));
    for (const ScriptedModel::Call& c : sm.calls) rows += c.batch > 0;
    forks += static_cast<int>(sm.forks.size());
    for (const ScriptedModel::Fork& f : sm.forks) EXPECT_NE(f.src, f.dst);
  }
  EXPECT_LT(forks, rows);  // copy on fork, not every beam's history every step
}

// Hand-made logits where the two ways to finish differ in length: after [] A (0.6) or B (0.4);
// [A] can only end; [B] is followed by C twice and then ends. [A, eot] has the higher log-prob sum
// (log 0.6 against log 0.4) but the lower length-normalised score (log 0.6 / 1 against
// log 0.4 / 3): the search must rank by the score (OpenAI's sum_logprobs / length), not the sum.
// Every other token is allowed but e^-30 less likely; such an unlikely sequence goes on with D
// and never ends, so it cannot fill the list of finished candidates (beam search keeps beam_size
// live sequences, however unlikely).
std::vector<float> length_logits(const SpecialTokens& st, const std::vector<int32_t>& sampled) {
  std::vector<float> l(static_cast<size_t>(st.n_vocab), -30.0f);
  constexpr int32_t A = 0, B = 1, C = 2, D = 3;
  if (sampled.empty()) {
    l[A] = std::log(0.6f);
    l[B] = std::log(0.4f);
  } else if (sampled == std::vector<int32_t>{B} || sampled == std::vector<int32_t>{B, C}) {
    l[C] = 0.0f;
  } else if (sampled == std::vector<int32_t>{A} || sampled == std::vector<int32_t>{B, C, C}) {
    l[static_cast<size_t>(st.eot)] = 0.0f;
  } else {
    l[D] = 0.0f;
  }
  return l;
}

TEST(CandidateRanking, TheLongerCandidateWinsByItsLengthNormalisedScore) {
  const SpecialTokens st = tiny_tokens();
  auto script = [&](const ScriptedModel::Call& c) { return length_logits(st, sampled_of(st, c.context)); };
  const std::vector<int32_t> longer = {1, 2, 2, st.eot};
  // Beam search: both finish ([A, eot] first), and the longer is chosen.
  decode::WindowRequest req = tiny_request(st, 2, 8);
  ScriptedModel beams(448, script);
  EXPECT_EQ(decode::decode_window(beams, st, req).tokens, longer);
  // Best-of at T > 0: 16 draws take both ways (all A would be 0.6^16 = 3e-4), and the longer wins.
  for (bool lockstep : {true, false}) {
    decode::WindowRequest bo = tiny_request(st, 1, 8);
    bo.temperature = 1.0f;
    bo.best_of = 16;
    bo.seed = 5;
    bo.batch_candidates = lockstep;
    ScriptedModel sampled(448, script);
    EXPECT_EQ(decode::decode_window(sampled, st, bo).tokens, longer) << "lockstep " << lockstep;
  }
}

// ---- best-of in lockstep ----

TEST(BestOfBatched, SameCandidatesAsOneByOne) {
  const SpecialTokens st = tiny_tokens();
  for (uint64_t seed = 0; seed < 24; ++seed) {
    decode::WindowRequest req = tiny_request(st, 1, 6);
    req.temperature = 1.0f;
    req.best_of = 5;
    req.seed = 1000 + seed;
    req.length_penalty = seed % 2 ? 1.0f : -1.0f;
    ScriptedModel batched(448, hashed_script(st, seed));
    const decode::WindowTokens b = decode::decode_window(batched, st, req);
    ScriptedModel again(448, hashed_script(st, seed));
    EXPECT_EQ(decode::decode_window(again, st, req).tokens, b.tokens) << "same seed, same tokens";
    req.batch_candidates = false;
    ScriptedModel one_by_one(448, hashed_script(st, seed));
    const decode::WindowTokens s = decode::decode_window(one_by_one, st, req);
    EXPECT_EQ(s.tokens, b.tokens) << "seed " << seed;
    EXPECT_EQ(s.logprobs, b.logprobs);
    EXPECT_EQ(s.n_sampled, b.n_sampled);
    EXPECT_EQ(one_by_one.n_batch_steps, 0);
    // Lockstep: one batch step per position, rows dropping out as candidates finish.
    int last_pos = -1, last_rows = 1 << 30;
    for (const ScriptedModel::Call& c : batched.calls) {
      if (c.batch == 0) continue;
      if (c.n_past != last_pos) {
        EXPECT_LE(c.batch, last_rows);
        last_rows = c.batch;
        last_pos = c.n_past;
      }
    }
    EXPECT_EQ(b.n_steps, 1 + batched.n_batch_steps);
  }
}

}  // namespace
}  // namespace hark::testing
