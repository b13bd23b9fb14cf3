// Token timestamps from the timestamp-token probabilities: what one step records (tid, pt, ptsum)
// and how a segment's tokens get their times, on hand-built probabilities.
#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <vector>

#include "decode/token_timestamps.h"

namespace hark::decode {
namespace {

class TokenTimestamps : public ::testing::Test {
 protected:
  SpecialTokens st = special_tokens(HParams{});
  int32_t ts(int i) const { return st.timestamp_begin + i; }
  // log-probabilities: `mass` spread over the listed ids (by weight), the rest on token 100.
  std::vector<float> logprobs(std::vector<std::pair<int32_t, double>> ps) const {
    std::vector<float> l(static_cast<size_t>(st.n_vocab), -std::numeric_limits<float>::infinity());
    double used = 0.0;
    for (const auto& [id, p] : ps) {
      l[static_cast<size_t>(id)] = static_cast<float>(std::log(p));
      used += p;
    }
    l[100] = static_cast<float>(std::log(1.0 - used));
    return l;
  }
  // A confident step pointing at timestamp i; an unsure one.
  TimestampProb sure(int i) const { return {ts(i), 0.9f, 0.5f}; }
  static TimestampProb unsure() { return {}; }
};

TEST_F(TokenTimestamps, RecordsTheBestTimestampItsShareAndTheMass) {
  const auto l = logprobs({{ts(10), 0.06}, {ts(12), 0.02}, {ts(20), 0.02}});
  const TimestampProb r = record_timestamp_prob(st, l, 100);
  EXPECT_EQ(r.tid, ts(10));
  EXPECT_NEAR(r.ptsum, 0.10, 1e-6);
  EXPECT_NEAR(r.pt, 0.6, 1e-6);  // 0.06 of 0.10
}

TEST_F(TokenTimestamps, AChosenTimestampIsItsOwnGuess) {
  const auto l = logprobs({{ts(10), 0.5}, {ts(30), 0.2}});
  const TimestampProb r = record_timestamp_prob(st, l, ts(30));
  EXPECT_EQ(r.tid, ts(30));
  EXPECT_NEAR(r.pt, 0.2, 1e-6);
  EXPECT_NEAR(r.ptsum, 0.7, 1e-6);
}

TEST_F(TokenTimestamps, AllTimestampsRuledOutRecordsNothingSure) {
  const auto l = logprobs({});
  const TimestampProb r = record_timestamp_prob(st, l, 100);
  EXPECT_EQ(r.tid, -1);
  EXPECT_EQ(r.pt, 0.0f);
  EXPECT_EQ(r.ptsum, 0.0f);
}

TEST_F(TokenTimestamps, SureStepsPlaceTokensAndTheRestShareByLength) {
  // Segment [1000, 1200] of a window at 1000: ts(i) stands at 1000 + 2 i.
  const std::vector<TimedTokenInput> in = {
      {" Hi", unsure()}, {" there", sure(30)}, {" my", unsure()}, {" friend", unsure()}};
  const auto t = assign_token_times(st, in, 1000, 1000, 1200, 0.01f, 0.01f);
  ASSERT_EQ(t.size(), 4u);
  EXPECT_EQ(t[0].t0, 1000);
  EXPECT_EQ(t[0].t1, 1060);  // " there" starts at ts(30)
  EXPECT_EQ(t[1].t0, 1060);
  // [1060, 1200] over " there" (5.01), " my" (2.01), " friend" (6.01) by voice length
  const double total = 5.01 + 2.01 + 6.01;
  EXPECT_EQ(t[1].t1, 1060 + std::llround(140 * 5.01 / total));
  EXPECT_EQ(t[2].t1, 1060 + std::llround(140 * (5.01 + 2.01) / total));
  EXPECT_EQ(t[3].t1, 1200);
}

TEST_F(TokenTimestamps, ThresholdsOrderAndSegmentEndDecideWhatIsTrusted) {
  // pt below thold_pt, ptsum below thold_ptsum, a time going back, a time past the end: none used.
  const std::vector<TimedTokenInput> in = {
      {"a", {ts(40), 0.005f, 0.5f}}, {"b", {ts(40), 0.9f, 0.005f}}, {"c", sure(40)}, {"d", sure(20)}, {"e", sure(500)}};
  const auto t = assign_token_times(st, in, 0, 0, 200, 0.01f, 0.01f);
  ASSERT_EQ(t.size(), 5u);
  EXPECT_EQ(t[2].t0, 80);  // only "c" is placed
  EXPECT_EQ(t[0].t0, 0);
  EXPECT_EQ(t[0].t1, 40);  // "a", "b" share [0, 80] equally (same length)
  EXPECT_EQ(t[3].t0, 80 + 40);
  EXPECT_EQ(t[4].t1, 200);
  // Higher thresholds (whisper.rn's wordThold) trust less: nothing placed, all shared evenly.
  const auto strict = assign_token_times(st, in, 0, 0, 200, 0.95f, 0.01f);
  for (size_t j = 0; j < 5; ++j) EXPECT_EQ(strict[j].t0, static_cast<int64_t>(40 * j));
}

TEST_F(TokenTimestamps, TimesAreMonotoneAndInsideTheSegmentWhateverTheInput) {
  // Arbitrary steps: some sure, some not, some pointing anywhere.
  std::vector<TimedTokenInput> in;
  const char* texts[] = {" one", ",", " 2", "", " three.", " four", "?", " five"};
  uint32_t s = 7;
  for (int k = 0; k < 40; ++k) {
    s = s * 1664525u + 1013904223u;
    const int i = static_cast<int>(s >> 20) % 1500;
    in.push_back({texts[k % 8], {ts(i), (s >> 8) % 3 ? 0.9f : 0.001f, 0.5f}});
  }
  const auto t = assign_token_times(st, in, 3000, 3100, 3900, 0.01f, 0.01f);
  ASSERT_EQ(t.size(), in.size());
  int64_t prev = 3100;
  for (const TokenTime& x : t) {
    EXPECT_GE(x.t0, prev);
    EXPECT_LE(x.t0, x.t1);
    EXPECT_LE(x.t1, 3900);
    prev = x.t1;
  }
  EXPECT_EQ(t.front().t0, 3100);
  EXPECT_EQ(t.back().t1, 3900);
}

TEST_F(TokenTimestamps, VoiceLength) {
  EXPECT_DOUBLE_EQ(voice_length("ab"), 2.0);
  EXPECT_DOUBLE_EQ(voice_length(" a"), 1.01);
  EXPECT_DOUBLE_EQ(voice_length("1,."), 3.0 + 2.0 + 3.0);
  EXPECT_DOUBLE_EQ(voice_length(""), 0.0);
}

}  // namespace
}  // namespace hark::decode
