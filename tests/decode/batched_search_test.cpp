// The batched search of several windows (decode/batched_search) on a ScriptedModel whose logits are
// a function of each window and each row's own context: every window gives exactly what
// decode_window gives for that window alone (tokens, log-probs, timestamp probabilities,
// no-speech probability), greedy, sampled, best-of and beam search, with the timestamp rules on
// (each row its own); rows stop on their own and drop out of the next step; bad input is refused.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <cstdio>
#include <vector>

#include "decode/batched_search.h"
#include "decode/greedy.h"
#include "decode/scripted_model.h"
#include "decode/window_search.h"

namespace hark::testing {
namespace {

// Text tokens 0..3, eot 4, the special tokens, then timestamps 0.00 .. 2.00 s.
SpecialTokens small_tokens() { return compact_tokens(4, 101); }

decode::WindowRequest small_request(const SpecialTokens& st, float temperature) {
  decode::WindowRequest req;
  req.start = {st.sot, st.transcribe};
  req.rules.timestamps = true;
  req.rules.max_initial_timestamp_index = 20;
  req.rules.suppress_blank = false;
  req.rules.suppress = decode::default_suppressed(st);
  req.max_tokens = 24;
  req.temperature = temperature;
  return req;
}

// Seeded pseudo-random logits per (window, sampled tokens): text, timestamps and end-of-text in
// [-2, 2], end-of-text growing likelier with length at a rate of the window's own, so rows finish
// at different depths. At <|startoftranscript|> the no-speech logit depends on the window.
ScriptedModel::Script window_script(const SpecialTokens& st) {
  return [st](const ScriptedModel::Call& c) {
    std::vector<float> l(static_cast<size_t>(st.n_vocab), 0.0f);
    const uint64_t w = static_cast<uint64_t>(c.window + 3);
    if (c.context.back() == st.sot) {
      l[static_cast<size_t>(st.no_speech)] = 0.3f * static_cast<float>(w);
      return l;
    }
    const std::vector<int32_t> sampled = sampled_of(st, c.context);
    uint64_t h = w * 0x9E3779B97F4A7C15ull + 17;
    for (int32_t t : sampled) h = (h ^ static_cast<uint64_t>(t + 1)) * 0xBF58476D1CE4E5B9ull;
    for (int32_t t = 0; t < st.n_vocab; ++t) {
      if (t > st.eot && t < st.timestamp_begin) continue;
      h ^= h >> 29;
      h *= 0x94D049BB133111EBull;
      l[static_cast<size_t>(t)] = static_cast<float>(static_cast<double>(h >> 11) * 0x1.0p-53 * 4.0 - 2.0);
    }
    l[static_cast<size_t>(st.eot)] +=
        (0.2f + 0.15f * static_cast<float>(w % 5)) * static_cast<float>(sampled.size()) - 2.0f;
    return l;
  };
}

void expect_same(const decode::WindowTokens& got, const decode::WindowTokens& want, const std::string& what) {
  EXPECT_EQ(got.tokens, want.tokens) << what;
  EXPECT_EQ(got.logprobs, want.logprobs) << what;
  EXPECT_EQ(got.probs, want.probs) << what;
  ASSERT_EQ(got.ts_probs.size(), want.ts_probs.size()) << what;
  for (size_t k = 0; k < got.ts_probs.size(); ++k) {
    EXPECT_EQ(got.ts_probs[k].tid, want.ts_probs[k].tid) << what << ", token " << k;
    EXPECT_EQ(got.ts_probs[k].pt, want.ts_probs[k].pt) << what << ", token " << k;
  }
  EXPECT_EQ(got.sum_logprob, want.sum_logprob) << what;
  EXPECT_EQ(got.avg_logprob, want.avg_logprob) << what;
  EXPECT_FLOAT_EQ(got.no_speech_prob, want.no_speech_prob) << what;
  EXPECT_EQ(got.n_sampled, want.n_sampled) << what;
  EXPECT_FALSE(got.aborted) << what;
}

// Greedy, sampled, best-of and beams of several windows in one step each: every window's result
// is the one decode_window gives alone, each step is one decode_rows call, each window's rows
// read its own window in its own slots.
TEST(BatchedSearch, EveryWindowEqualsTheWindowDecodedAlone) {
  const SpecialTokens st = small_tokens();
  struct Case {
    float temperature;
    int best_of, beam_size;
  };
  for (const Case& cs : {Case{0.0f, 1, 1}, Case{0.7f, 1, 1}, Case{0.7f, 3, 1}, Case{0.0f, 1, 3}, Case{0.0f, 1, 5}}) {
    for (int B = 1; B <= 5; ++B) {
      const std::string what = "T " + std::to_string(cs.temperature) + ", best_of " + std::to_string(cs.best_of) +
                               ", beam " + std::to_string(cs.beam_size) + ", B " + std::to_string(B);
      decode::WindowRequest req = small_request(st, cs.temperature);
      req.best_of = cs.best_of;
      req.beam_size = cs.beam_size;
      std::vector<uint64_t> seeds;
      for (int b = 0; b < B; ++b) seeds.push_back(500 + 11 * static_cast<uint64_t>(b));

      ScriptedModel batched(448, window_script(st));
      batched.reserve_windows(B);
      std::vector<int> windows;
      for (int b = 0; b < B; ++b) {
        batched.select_window(b);
        ASSERT_EQ(batched.encode(std::vector<float>(4, static_cast<float>(b))), ComputeStatus::Ok);
        windows.push_back(b);
      }
      const decode::BatchedWindows got = decode::decode_windows_batched(batched, st, req, windows, seeds);
      ASSERT_EQ(got.rows.size(), static_cast<size_t>(B));
      EXPECT_FALSE(got.aborted);
      EXPECT_EQ(got.n_steps, batched.n_row_steps) << what << ": every step is one decode_rows call";
      const int k = cs.temperature > 0.0f ? cs.best_of : cs.beam_size;
      for (const ScriptedModel::Call& c : batched.calls) {
        EXPECT_EQ(c.seq / k, c.window) << what << ": window b's rows use slots [b k, (b + 1) k)";
      }

      ScriptedModel alone(448, window_script(st));
      size_t longest = 0;
      for (int b = 0; b < B; ++b) {
        ASSERT_EQ(alone.encode(std::vector<float>(4, static_cast<float>(b))), ComputeStatus::Ok);
        req.seed = seeds[static_cast<size_t>(b)];
        const decode::WindowTokens want = decode::decode_window(alone, st, req);
        expect_same(got.rows[static_cast<size_t>(b)], want, what + ", window " + std::to_string(b));
        longest = std::max(longest, want.tokens.size());
      }
      // One row per window: the prefix steps (sot, transcribe), then one per token of the longest
      // row but its last.
      if (k == 1) {
        EXPECT_EQ(got.n_steps, static_cast<int>(req.start.size() + longest - 1)) << what;
      }
    }
  }
}

// Continuous batching: two lanes over six windows, each lane starting the next window as soon as
// its search ends, so rows stand at different positions in one step. Every window still gets
// exactly what decode_window gives it alone (greedy, sampled, best-of, beams), and the six take
// fewer steps than three batches of two run to their ends.
TEST(BatchedSearch, LanesTakeTheNextWindowWhenTheirSearchEnds) {
  const SpecialTokens st = small_tokens();
  struct Case {
    float temperature;
    int best_of, beam_size;
  };
  constexpr int kWindows = 6, kLanes = 2;
  for (const Case& cs : {Case{0.0f, 1, 1}, Case{0.7f, 3, 1}, Case{0.0f, 1, 3}}) {
    const std::string what = "T " + std::to_string(cs.temperature) + ", best_of " + std::to_string(cs.best_of) +
                             ", beam " + std::to_string(cs.beam_size);
    decode::WindowRequest req = small_request(st, cs.temperature);
    req.best_of = cs.best_of;
    req.beam_size = cs.beam_size;
    auto seed_of = [](int w) { return 900 + 7 * static_cast<uint64_t>(w); };

    ScriptedModel m(448, window_script(st));
    m.reserve_windows(kWindows);
    for (int w = 0; w < kWindows; ++w) {
      m.select_window(w);
      ASSERT_EQ(m.encode(std::vector<float>(4, static_cast<float>(w))), ComputeStatus::Ok);
    }
    decode::BatchDecoder dec(m, st, kLanes, decode::search_slots(req));
    std::vector<int> lane_window(kLanes);
    int next = 0;
    for (int l = 0; l < kLanes; ++l, ++next) {
      dec.start(l, next, req, seed_of(next));
      lane_window[static_cast<size_t>(l)] = next;
      EXPECT_TRUE(dec.running(l));
    }
    EXPECT_THROW(dec.start(0, 5, req, 1), Error) << "lane 0 is running";
    std::vector<decode::WindowTokens> got(kWindows);
    std::vector<bool> done(kWindows, false);
    while (dec.any_running()) {
      ASSERT_EQ(dec.step(), ComputeStatus::Ok) << what;
      for (const auto& [lane, w] : dec.finished()) {
        const int win = lane_window[static_cast<size_t>(lane)];
        EXPECT_FALSE(done[static_cast<size_t>(win)]) << what << ": window " << win << " finished twice";
        got[static_cast<size_t>(win)] = w;
        done[static_cast<size_t>(win)] = true;
        EXPECT_FALSE(dec.running(lane));
        if (next < kWindows) {
          dec.start(lane, next, req, seed_of(next));
          lane_window[static_cast<size_t>(lane)] = next++;
        }
      }
    }
    EXPECT_EQ(dec.n_steps(), m.n_row_steps) << what;

    ScriptedModel alone(448, window_script(st));
    std::vector<int> steps_alone;  // one row per search: its prefix, then a step per token but the last
    for (int w = 0; w < kWindows; ++w) {
      ASSERT_TRUE(done[static_cast<size_t>(w)]) << what << ", window " << w;
      ASSERT_EQ(alone.encode(std::vector<float>(4, static_cast<float>(w))), ComputeStatus::Ok);
      req.seed = seed_of(w);
      const decode::WindowTokens want = decode::decode_window(alone, st, req);
      expect_same(got[static_cast<size_t>(w)], want, what + ", window " + std::to_string(w));
      steps_alone.push_back(static_cast<int>(req.start.size() + want.tokens.size()) - 1);
    }
    if (cs.best_of == 1 && cs.beam_size == 1) {
      int batches = 0;  // three batches of two, each as long as its longer search
      for (int w = 0; w < kWindows; w += kLanes)
        batches += std::max(steps_alone[static_cast<size_t>(w)], steps_alone[static_cast<size_t>(w) + 1]);
      EXPECT_LE(dec.n_steps(), batches) << what;
      std::printf("  %s: %d steps continuous, %d in batches of two\n", what.c_str(), dec.n_steps(), batches);
    }
  }
}

// Rows stop on their own: a row is fed exactly its own tokens (never one after its end), and each
// step holds only the rows still running.
TEST(BatchedSearch, FinishedRowsDropOut) {
  const SpecialTokens st = small_tokens();
  const decode::WindowRequest req = small_request(st, 0.0f);
  constexpr int B = 4;
  ScriptedModel m(448, window_script(st));
  m.reserve_windows(B);
  for (int b = 0; b < B; ++b) {
    m.select_window(b);
    ASSERT_EQ(m.encode(std::vector<float>(4, static_cast<float>(b))), ComputeStatus::Ok);
  }
  const std::vector<int> windows = {0, 1, 2, 3};
  const decode::BatchedWindows got = decode::decode_windows_batched(m, st, req, windows, {});
  std::vector<size_t> lengths;
  for (const auto& r : got.rows) lengths.push_back(r.tokens.size());
  ASSERT_NE(*std::min_element(lengths.begin(), lengths.end()), *std::max_element(lengths.begin(), lengths.end()))
      << "the script should end the rows at different depths";
  std::vector<size_t> fed(B, 0);
  const int n_prefix = static_cast<int>(req.start.size());
  for (const ScriptedModel::Call& c : m.calls) {
    ASSERT_EQ(c.tokens.size(), 1u);
    if (c.n_past < n_prefix) {
      EXPECT_EQ(c.batch, B) << "the prefix is fed to every row";
      continue;
    }
    const size_t k = static_cast<size_t>(c.n_past - n_prefix);  // index of the fed token in its row
    const auto& row = got.rows[static_cast<size_t>(c.seq)];
    ASSERT_LT(k + 1, row.tokens.size()) << "row " << c.seq << " was fed past its last token";
    EXPECT_EQ(c.tokens[0], row.tokens[k]);
    EXPECT_EQ(c.window, c.seq) << "row b reads window b";
    int running = 0;
    for (size_t b = 0; b < static_cast<size_t>(B); ++b) running += k + 1 < got.rows[b].tokens.size() ? 1 : 0;
    EXPECT_EQ(c.batch, running) << "step " << k << ": only running rows";
    ++fed[static_cast<size_t>(c.seq)];
  }
  for (size_t b = 0; b < static_cast<size_t>(B); ++b) EXPECT_EQ(fed[b] + 1, got.rows[b].tokens.size()) << "row " << b;
}

TEST(BatchedSearch, RefusesBadInput) {
  const SpecialTokens st = small_tokens();
  ScriptedModel m(448, window_script(st));
  m.reserve_windows(2);
  const std::vector<int> windows = {0, 1};
  decode::WindowRequest beam = small_request(st, 0.0f);
  beam.beam_size = 0;
  EXPECT_THROW(
      {
        try {
          decode::decode_windows_batched(m, st, beam, windows, {});
        } catch (const Error& e) {
          EXPECT_NE(std::string(e.what()).find("beam_size"), std::string::npos) << e.what();
          throw;
        }
      },
      Error);
  decode::WindowRequest best = small_request(st, 0.5f);
  best.best_of = 0;
  const std::vector<uint64_t> seeds = {1, 2};
  EXPECT_THROW(decode::decode_windows_batched(m, st, best, windows, seeds), Error);
  decode::WindowRequest patient = small_request(st, 0.0f);
  patient.patience = 0.0f;
  EXPECT_THROW(decode::decode_windows_batched(m, st, patient, windows, {}), Error);
  const decode::WindowRequest sampled = small_request(st, 0.5f);
  EXPECT_THROW(decode::decode_windows_batched(m, st, sampled, windows, std::vector<uint64_t>{1}), Error)
      << "one seed per window";
  EXPECT_THROW(decode::decode_windows_batched(m, st, small_request(st, 0.0f), {}, {}), Error) << "no windows";
  EXPECT_TRUE(m.calls.empty()) << "refused before any step";
}

// A model with one window refuses the batched calls by name.
TEST(BatchedSearch, OneWindowModelsRefuseWindows) {
  struct OneWindow final : decode::SearchModel {
    void reserve_sequences(int) override {}
    ComputeStatus decode_batch(std::span<const int32_t>, std::span<const int>, int, std::vector<float>*) override {
      return ComputeStatus::Ok;
    }
    void copy_sequence(int, int, int) override {}
    ComputeStatus encode(std::span<const float>) override { return ComputeStatus::Ok; }
    ComputeStatus decode(std::span<const int32_t>, int, std::vector<float>*) override { return ComputeStatus::Ok; }
    int n_text_ctx() const override { return 448; }
  } m;
  EXPECT_NO_THROW(m.reserve_windows(1));
  EXPECT_THROW(m.reserve_windows(2), Error);
  EXPECT_THROW(m.select_window(1), Error);
}

}  // namespace
}  // namespace hark::testing
