#include <gtest/gtest.h>

#include <cmath>
#include <vector>

#include "decode/split_window.h"
#include "decode/timestamp_rules.h"

namespace hark::decode {
namespace {

class TimestampRules : public ::testing::Test {
 protected:
  SpecialTokens st = special_tokens(HParams{});
  std::vector<float> flat() const { return std::vector<float>(static_cast<size_t>(st.n_vocab), 0.0f); }
  int32_t ts(int i) const { return st.timestamp_begin + i; }
  static bool allowed(const std::vector<float>& l, int32_t id) { return std::isfinite(l[static_cast<size_t>(id)]); }
};

TEST_F(TimestampRules, FirstTokenIsAnEarlyTimestamp) {
  auto l = flat();
  apply_rules(st, RuleOptions{}, {}, l.data());
  EXPECT_FALSE(allowed(l, 100));  // text
  EXPECT_FALSE(allowed(l, st.eot));
  EXPECT_FALSE(allowed(l, st.no_timestamps));
  EXPECT_TRUE(allowed(l, ts(0)));
  EXPECT_TRUE(allowed(l, ts(50)));  // 1.00 s
  EXPECT_FALSE(allowed(l, ts(51)));
}

TEST_F(TimestampRules, OpeningTimestampIsFollowedByText) {
  auto l = flat();
  const std::vector<int32_t> seq = {ts(10)};
  apply_rules(st, RuleOptions{}, seq, l.data());
  EXPECT_TRUE(allowed(l, 100));
  for (int i = 0; i <= 1500; ++i) EXPECT_FALSE(allowed(l, ts(i))) << i;
}

TEST_F(TimestampRules, ClosingTimestampMustBeLaterThanOpening) {
  auto l = flat();
  l[102] = 10.0f;  // text clearly beats all timestamps together, so none is forced
  const std::vector<int32_t> seq = {ts(10), 100, 101};
  apply_rules(st, RuleOptions{}, seq, l.data());
  EXPECT_FALSE(allowed(l, ts(9)));
  EXPECT_FALSE(allowed(l, ts(10)));  // zero-length segment
  EXPECT_TRUE(allowed(l, ts(11)));
  EXPECT_TRUE(allowed(l, 102));
}

TEST_F(TimestampRules, AfterClosingTimestampOnlyTimestampOrEnd) {
  // Text and end-of-text far likelier than all timestamps together (20 against log(1471) = 7.3),
  // so the rule that forces a timestamp when their mass wins cannot be what removes the text here.
  auto l = flat();
  l[100] = 20.0f;
  l[101] = 19.0f;
  l[static_cast<size_t>(st.eot)] = 20.0f;
  const std::vector<int32_t> seq = {ts(10), 100, ts(30)};
  apply_rules(st, RuleOptions{}, seq, l.data());
  EXPECT_FALSE(allowed(l, 100));
  EXPECT_FALSE(allowed(l, 101));
  EXPECT_TRUE(allowed(l, st.eot));
  EXPECT_FALSE(allowed(l, ts(29)));
  EXPECT_TRUE(allowed(l, ts(30)));  // next segment may open where this one closed
}

TEST_F(TimestampRules, TimestampForcedWhenTheirMassBeatsBestText) {
  auto l = flat();
  for (int i = 0; i <= 1500; ++i) l[static_cast<size_t>(ts(i))] = 1.0f;  // each alone < text peak
  l[100] = 3.0f;
  const std::vector<int32_t> seq = {ts(0), 100, 101};
  apply_rules(st, RuleOptions{}, seq, l.data());
  EXPECT_FALSE(allowed(l, 100));
  EXPECT_TRUE(allowed(l, ts(5)));
}

TEST_F(TimestampRules, BlankNeverStartsTheText) {
  RuleOptions opt;
  opt.timestamps = false;
  opt.blank_tokens = {220};
  auto l = flat();
  apply_rules(st, opt, {}, l.data());
  EXPECT_FALSE(allowed(l, 220));
  EXPECT_FALSE(allowed(l, st.eot));
  EXPECT_FALSE(allowed(l, ts(0)));
  EXPECT_TRUE(allowed(l, 221));
}

TEST_F(TimestampRules, SuppressedTokensNeverAppear) {
  RuleOptions opt;
  opt.suppress = default_suppressed(st);
  auto l = flat();
  const std::vector<int32_t> seq = {ts(0)};
  apply_rules(st, opt, seq, l.data());
  EXPECT_FALSE(allowed(l, st.sot));
  EXPECT_FALSE(allowed(l, st.transcribe));
  EXPECT_FALSE(allowed(l, st.lang_first));
  EXPECT_TRUE(allowed(l, 100));
}

// repetition_penalty: each produced token once, positive logits divided, negative multiplied;
// tokens not produced untouched.
TEST_F(TimestampRules, RepetitionPenaltyScalesWhatTheWindowProduced) {
  RuleOptions opt;
  opt.timestamps = false;
  opt.repetition_penalty = 2.0f;
  auto l = flat();
  l[100] = 3.0f;
  l[101] = -3.0f;
  l[102] = 5.0f;
  const std::vector<int32_t> seq = {100, 101, 100, 100};  // 100 three times: penalised once
  apply_rules(st, opt, seq, l.data());
  EXPECT_FLOAT_EQ(l[100], 1.5f);
  EXPECT_FLOAT_EQ(l[101], -6.0f);
  EXPECT_FLOAT_EQ(l[102], 5.0f);
  // 1 changes nothing.
  opt.repetition_penalty = 1.0f;
  auto same = flat();
  same[100] = 3.0f;
  apply_rules(st, opt, seq, same.data());
  EXPECT_FLOAT_EQ(same[100], 3.0f);
}

// no_repeat_ngram_size n: the token that would repeat an n-gram of the window is forbidden, and
// only that one.
TEST_F(TimestampRules, NoRepeatNgramForbidsTheTokenThatWouldRepeatOne) {
  RuleOptions opt;
  opt.timestamps = false;
  opt.no_repeat_ngram_size = 3;
  auto l = flat();
  // "7 8 9 ... 7 8": 9 would repeat the 3-gram (7, 8, 9).
  const std::vector<int32_t> seq = {7, 8, 9, 10, 7, 8};
  apply_rules(st, opt, seq, l.data());
  EXPECT_FALSE(allowed(l, 9));
  EXPECT_TRUE(allowed(l, 10));
  EXPECT_TRUE(allowed(l, 7));
  // Size 1: no token twice.
  opt.no_repeat_ngram_size = 1;
  auto one = flat();
  apply_rules(st, opt, seq, one.data());
  for (int32_t id : {7, 8, 9, 10}) EXPECT_FALSE(allowed(one, id)) << id;
  EXPECT_TRUE(allowed(one, 11));
  // Too few tokens for an earlier n-gram: nothing forbidden.
  opt.no_repeat_ngram_size = 4;
  auto few = flat();
  const std::vector<int32_t> short_seq = {7, 8, 9};
  apply_rules(st, opt, short_seq, few.data());
  for (int32_t id : {7, 8, 9}) EXPECT_TRUE(allowed(few, id)) << id;
}

TEST_F(TimestampRules, SplitsPairsIntoSegmentsAndSeeksToLastCompleteTimestamp) {
  // <0.00> a b <1.00><1.00> c <2.00><2.00> d   (unfinished last segment)
  const std::vector<int32_t> seq = {ts(0), 1, 2, ts(50), ts(50), 3, ts(100), ts(100), 4, st.eot};
  const WindowResult r = split_window(st, seq, 500, 3000);
  ASSERT_EQ(r.segments.size(), 2u);
  EXPECT_EQ(r.segments[0].t0, 500);
  EXPECT_EQ(r.segments[0].t1, 600);
  EXPECT_EQ(r.segments[0].tokens, (std::vector<int32_t>{1, 2}));
  EXPECT_EQ(r.segments[0].positions, (std::vector<size_t>{1, 2}));
  EXPECT_EQ(r.segments[1].positions, (std::vector<size_t>{5}));
  EXPECT_EQ(r.segments[1].t0, 600);
  EXPECT_EQ(r.segments[1].t1, 700);
  EXPECT_EQ(r.consumed_frames, 200);  // re-decode from 2.00 s
}

TEST_F(TimestampRules, SingleTimestampEndingConsumesTheWindow) {
  const std::vector<int32_t> seq = {ts(0), 1, ts(50), ts(50), 3, ts(100), st.eot};
  const WindowResult r = split_window(st, seq, 0, 2500);
  ASSERT_EQ(r.segments.size(), 2u);
  EXPECT_EQ(r.segments[1].t1, 200);
  EXPECT_EQ(r.consumed_frames, 2500);
}

TEST_F(TimestampRules, SegmentsPastTheAudioAreCutOrDropped) {
  // The window holds 2.00 s of audio (200 frames); the model goes on to 3.00 s and 4.00 s.
  const std::vector<int32_t> seq = {ts(0), 1, ts(50), ts(50), 2, ts(150), ts(150), 3, ts(200), st.eot};
  const WindowResult r = split_window(st, seq, 1000, 200);
  ASSERT_EQ(r.segments.size(), 2u);
  EXPECT_EQ(r.segments[0].t1, 1100);
  EXPECT_EQ(r.segments[1].t0, 1100);
  EXPECT_EQ(r.segments[1].t1, 1200);  // 3.00 s cut to the end of the audio
  EXPECT_EQ(r.consumed_frames, 200);
}

TEST_F(TimestampRules, NoPairMakesOneSegment) {
  const std::vector<int32_t> seq = {ts(0), 1, 2, st.eot};
  const WindowResult r = split_window(st, seq, 3000, 3000);
  ASSERT_EQ(r.segments.size(), 1u);
  EXPECT_EQ(r.segments[0].t0, 3000);
  EXPECT_EQ(r.segments[0].t1, 6000);
  EXPECT_EQ(r.consumed_frames, 3000);
}

}  // namespace
}  // namespace hark::decode
