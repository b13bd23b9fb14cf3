// Speaker turns (tinydiarize): the turn token ends the segment whose text it follows and marks it;
// which token that is, and when a vocabulary has none.
#include <gtest/gtest.h>

#include <vector>

#include "decode/split_window.h"

namespace hark::decode {
namespace {

class SpeakerTurn : public ::testing::Test {
 protected:
  SpecialTokens st = special_tokens(HParams{});
  int32_t ts(int i) const { return st.timestamp_begin + i; }
};

TEST_F(SpeakerTurn, TheTurnTokenMarksTheSegmentItEnds) {
  // <0.00> a b TURN <1.00><1.00> c <2.00>
  const std::vector<int32_t> seq = {ts(0), 1, 2, st.solm, ts(50), ts(50), 3, ts(100), st.eot};
  const WindowResult r = split_window(st, seq, 0, 3000, st.solm);
  ASSERT_EQ(r.segments.size(), 2u);
  EXPECT_TRUE(r.segments[0].speaker_turn_next);
  EXPECT_EQ(r.segments[0].tokens, (std::vector<int32_t>{1, 2}));  // the turn token is not text
  EXPECT_FALSE(r.segments[1].speaker_turn_next);
  // Without tinydiarize the same tokens mark nothing.
  const WindowResult off = split_window(st, seq, 0, 3000);
  ASSERT_EQ(off.segments.size(), 2u);
  EXPECT_FALSE(off.segments[0].speaker_turn_next);
}

TEST_F(SpeakerTurn, TextAfterATurnStartsANewSegment) {
  // <0.00> a b c TURN d <2.00>: the pair's 2 s shared 3:1 by token count
  const std::vector<int32_t> seq = {ts(0), 1, 2, 3, st.solm, 4, ts(100), st.eot};
  const WindowResult r = split_window(st, seq, 500, 3000, st.solm);
  ASSERT_EQ(r.segments.size(), 2u);
  EXPECT_EQ(r.segments[0].tokens, (std::vector<int32_t>{1, 2, 3}));
  EXPECT_TRUE(r.segments[0].speaker_turn_next);
  EXPECT_EQ(r.segments[0].t0, 500);
  EXPECT_EQ(r.segments[0].t1, 650);
  EXPECT_EQ(r.segments[1].tokens, (std::vector<int32_t>{4}));
  EXPECT_EQ(r.segments[1].positions, (std::vector<size_t>{5}));
  EXPECT_EQ(r.segments[1].t0, 650);
  EXPECT_EQ(r.segments[1].t1, 700);
  EXPECT_FALSE(r.segments[1].speaker_turn_next);
}

TEST_F(SpeakerTurn, ATurnBeforeAnyTextMarksTheSegmentBefore) {
  // <0.00> a <1.00><1.00> TURN b <2.00>
  const std::vector<int32_t> seq = {ts(0), 1, ts(50), ts(50), st.solm, 2, ts(100), st.eot};
  const WindowResult r = split_window(st, seq, 0, 3000, st.solm);
  ASSERT_EQ(r.segments.size(), 2u);
  EXPECT_TRUE(r.segments[0].speaker_turn_next);
  EXPECT_FALSE(r.segments[1].speaker_turn_next);
  EXPECT_EQ(r.segments[1].t0, 100);  // the pair keeps its whole time
  // At the start of a window the segment before is the previous window's: the window says so.
  const std::vector<int32_t> first = {ts(0), st.solm, 2, ts(100), st.eot};
  const WindowResult f = split_window(st, first, 0, 3000, st.solm);
  ASSERT_EQ(f.segments.size(), 1u);
  EXPECT_FALSE(f.segments[0].speaker_turn_next);
  EXPECT_TRUE(f.speaker_turn_first);
  EXPECT_FALSE(r.speaker_turn_first);
}

TEST_F(SpeakerTurn, ATurnBetweenClosingAndOpeningTimestampsMarksTheSegmentThatClosed) {
  // <0.00> a <1.00> TURN <1.20> b <2.00> c: the pair holds despite the turn inside it
  const std::vector<int32_t> seq = {ts(0), 1, ts(50), st.solm, ts(60), 2, ts(100), ts(100), 3, st.eot};
  const WindowResult r = split_window(st, seq, 0, 3000, st.solm);
  ASSERT_EQ(r.segments.size(), 2u);
  EXPECT_EQ(r.segments[0].t1, 100);
  EXPECT_TRUE(r.segments[0].speaker_turn_next);
  EXPECT_EQ(r.segments[1].t0, 120);
  EXPECT_EQ(r.segments[1].t1, 200);
  EXPECT_FALSE(r.segments[1].speaker_turn_next);
  EXPECT_EQ(r.consumed_frames, 200);
}

TEST_F(SpeakerTurn, TheTokenIsStartOfLmUnlessTheFileStoresTextThere) {
  EXPECT_EQ(speaker_turn_token(st, st.eot + 1), st.solm);  // an English-only file: text up to eot
  EXPECT_EQ(speaker_turn_token(st, st.solm), st.solm);
  // A vocabulary that stores an ordinary token at that id has no speaker-turn token.
  EXPECT_EQ(speaker_turn_token(st, st.solm + 1), -1);
  SpecialTokens odd = st;
  odd.solm = odd.timestamp_begin;  // not a special slot
  EXPECT_EQ(speaker_turn_token(odd, odd.eot + 1), -1);
}

}  // namespace
}  // namespace hark::decode
