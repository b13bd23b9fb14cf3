// max_len and split_on_word (whisper.cpp's segment wrapping) on hand-built segments.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "transcribe/max_len.h"

namespace hark {
namespace {

// A segment of tokens given as (text, t0): each token ends where the next starts.
Segment segment(int64_t t0, int64_t t1, std::vector<std::pair<std::string, int64_t>> toks, bool turn = false) {
  Segment s;
  s.t0 = t0;
  s.t1 = t1;
  s.speaker_turn_next = turn;
  s.temperature = 0.2f;
  for (size_t k = 0; k < toks.size(); ++k) {
    TokenData td;
    td.id = static_cast<int32_t>(k);
    td.text = toks[k].first;
    td.t0 = toks[k].second;
    td.t1 = k + 1 < toks.size() ? toks[k + 1].second : t1;
    s.text += td.text;
    s.tokens.push_back(td);
  }
  return s;
}

std::string join(std::span<const TokenData> toks) {
  std::string s;
  for (const TokenData& t : toks) s += t.text;
  return s;
}

std::vector<std::string> texts(const std::vector<Segment>& ss) {
  std::vector<std::string> r;
  for (const Segment& s : ss) r.push_back(s.text);
  return r;
}

TEST(MaxLen, CutsBeforeTheTokenThatWouldPassTheLimit) {
  // " Hello" " wor" "ld" " again": 6 + 4 + 2 + 6 bytes
  const Segment s = segment(100, 300, {{" Hello", 100}, {" wor", 150}, {"ld", 180}, {" again", 220}}, true);
  const auto out = wrap_segments({s}, 10, false, join);
  EXPECT_EQ(texts(out), (std::vector<std::string>{" Hello wor", "ld again"}));
  ASSERT_EQ(out.size(), 2u);
  EXPECT_EQ(out[0].t0, 100);
  EXPECT_EQ(out[0].t1, 180);  // where "ld" starts
  EXPECT_EQ(out[1].t0, 180);
  EXPECT_EQ(out[1].t1, 300);
  EXPECT_FALSE(out[0].speaker_turn_next);  // the turn follows the last part only
  EXPECT_TRUE(out[1].speaker_turn_next);
  EXPECT_EQ(out[0].tokens.size(), 2u);
  EXPECT_FLOAT_EQ(out[1].temperature, 0.2f);  // the window's fields stay on every part
}

TEST(MaxLen, SplitOnWordCutsOnlyBeforeAWord) {
  const Segment s = segment(100, 300, {{" Hello", 100}, {" wor", 150}, {"ld", 180}, {" again", 220}});
  const auto out = wrap_segments({s}, 10, true, join);
  EXPECT_EQ(texts(out), (std::vector<std::string>{" Hello world", " again"}));
  EXPECT_EQ(out[0].t1, 220);
  EXPECT_EQ(out[1].t0, 220);
}

TEST(MaxLen, OneTokenPerSegmentAtLengthOne) {
  // whisper.cpp's -ml 1: a segment per token (per word with -sow), none empty.
  const Segment s = segment(0, 90, {{" a", 0}, {" b", 30}, {"c", 60}});
  EXPECT_EQ(texts(wrap_segments({s}, 1, false, join)), (std::vector<std::string>{" a", " b", "c"}));
  EXPECT_EQ(texts(wrap_segments({s}, 1, true, join)), (std::vector<std::string>{" a", " bc"}));
}

TEST(MaxLen, NeverCutsInsideACharacter) {
  // "é" split over two tokens ("\xc3", "\xa9"): the second may not start a segment.
  const Segment s = segment(0, 100, {{" caf", 0}, {"\xc3", 40}, {"\xa9", 50}, {" ok", 70}});
  const auto out = wrap_segments({s}, 5, false, join);
  EXPECT_EQ(texts(out), (std::vector<std::string>{" caf\xc3\xa9", " ok"}));
}

TEST(MaxLen, ShortSegmentsAndZeroStayAsTheyWere) {
  const Segment s = segment(0, 100, {{" Hi", 0}, {" there", 40}});
  const auto same = wrap_segments({s, s}, 20, false, join);
  ASSERT_EQ(same.size(), 2u);
  EXPECT_EQ(same[1].text, s.text);
  EXPECT_EQ(wrap_segments({s}, 0, false, join).size(), 1u);
  // A single token longer than the limit stays whole.
  const Segment big = segment(0, 100, {{" extraordinary", 0}});
  EXPECT_EQ(texts(wrap_segments({big}, 3, false, join)), (std::vector<std::string>{" extraordinary"}));
}

}  // namespace
}  // namespace hark
