// Alignment-head presets and selection: every official model's count and some known pairs (the
// pairs were checked against OpenAI's decoded masks and whisper.cpp's tables), top-N layers,
// custom lists and their errors.
#include <gtest/gtest.h>

#include <algorithm>
#include <string>

#include "decode/alignment_heads.h"
#include "hark/error.hpp"

namespace hark::decode {
namespace {

bool has(const AlignmentHeadsPreset& p, int layer, int head) {
  return std::find(p.heads.begin(), p.heads.end(), AlignmentHead{layer, head}) != p.heads.end();
}

TEST(AlignmentHeads, EveryOfficialModelHasItsPresetWithThePublishedCount) {
  const std::pair<const char*, size_t> counts[] = {
      {"tiny.en", 8},    {"tiny", 6},   {"base.en", 5},  {"base", 8},      {"small.en", 19}, {"small", 10},
      {"medium.en", 18}, {"medium", 6}, {"large-v1", 9}, {"large-v2", 23}, {"large-v3", 10}, {"large-v3-turbo", 6}};
  EXPECT_EQ(alignment_heads_presets().size(), std::size(counts));
  for (const auto& [name, n] : counts) {
    const auto& p = alignment_heads_preset(name);
    EXPECT_EQ(p.name, name);
    EXPECT_EQ(p.heads.size(), n) << name;
    // inside the model's decoder, sorted, no pair twice
    const auto checked = checked_alignment_heads(p.heads, p.n_text_layer, p.n_text_head);
    EXPECT_TRUE(std::equal(checked.begin(), checked.end(), p.heads.begin(), p.heads.end())) << name;
  }
}

TEST(AlignmentHeads, KnownPairs) {
  const auto& tiny_en = alignment_heads_preset("tiny.en");
  EXPECT_EQ(tiny_en.heads.front(), (AlignmentHead{1, 0}));
  EXPECT_EQ(tiny_en.heads.back(), (AlignmentHead{3, 4}));
  EXPECT_TRUE(has(tiny_en, 2, 5));
  EXPECT_TRUE(has(alignment_heads_preset("tiny"), 2, 2));
  EXPECT_FALSE(has(alignment_heads_preset("tiny"), 3, 1));
  EXPECT_TRUE(has(alignment_heads_preset("base.en"), 4, 7));
  EXPECT_TRUE(has(alignment_heads_preset("base"), 3, 1));
  EXPECT_TRUE(has(alignment_heads_preset("small.en"), 10, 11));
  EXPECT_TRUE(has(alignment_heads_preset("small"), 10, 5));
  EXPECT_TRUE(has(alignment_heads_preset("medium.en"), 21, 12));
  EXPECT_TRUE(has(alignment_heads_preset("medium"), 13, 15));
  EXPECT_TRUE(has(alignment_heads_preset("large-v1"), 9, 19));
  EXPECT_TRUE(has(alignment_heads_preset("large-v2"), 27, 15));
  EXPECT_TRUE(has(alignment_heads_preset("large-v3"), 7, 0));
  EXPECT_TRUE(has(alignment_heads_preset("large-v3"), 25, 6));
  const auto& turbo = alignment_heads_preset("large-v3-turbo");
  EXPECT_EQ(turbo.n_text_layer, 4);
  EXPECT_EQ(turbo.n_text_head, 20);
  EXPECT_TRUE(has(turbo, 2, 4));
  EXPECT_TRUE(has(turbo, 3, 14));
}

TEST(AlignmentHeads, UnknownPresetIsAClearError) {
  try {
    alignment_heads_preset("large-v4");
    FAIL() << "no error";
  } catch (const Error& e) {
    const std::string what = e.what();
    EXPECT_NE(what.find("unknown preset 'large-v4'"), std::string::npos) << what;
    EXPECT_NE(what.find("large-v3-turbo"), std::string::npos) << what;  // lists the known ones
  }
  EXPECT_THROW(alignment_heads_preset(""), Error);
  EXPECT_THROW(alignment_heads_preset("Tiny"), Error);  // names are exact
}

TEST(AlignmentHeads, TopMostLayersTakeEveryHead) {
  const auto h = top_most_alignment_heads(2, 4, 6);
  ASSERT_EQ(h.size(), 12u);
  EXPECT_EQ(h.front(), (AlignmentHead{2, 0}));
  EXPECT_EQ(h[6], (AlignmentHead{3, 0}));
  EXPECT_EQ(h.back(), (AlignmentHead{3, 5}));
  EXPECT_EQ(top_most_alignment_heads(4, 4, 6).size(), 24u);
  EXPECT_THROW(top_most_alignment_heads(0, 4, 6), Error);
  EXPECT_THROW(top_most_alignment_heads(5, 4, 6), Error);
}

TEST(AlignmentHeads, CustomListsAreParsedCheckedAndSorted) {
  const auto parsed = parse_alignment_heads("3,3 2,11;2,4");
  ASSERT_EQ(parsed.size(), 3u);
  EXPECT_EQ(parsed[0], (AlignmentHead{3, 3}));
  const auto checked = checked_alignment_heads(parsed, 4, 20);
  EXPECT_EQ(checked, (std::vector<AlignmentHead>{{2, 4}, {2, 11}, {3, 3}}));
  EXPECT_EQ(alignment_heads_in_layer(checked, 2), (std::vector<int32_t>{4, 11}));
  EXPECT_TRUE(alignment_heads_in_layer(checked, 0).empty());

  EXPECT_THROW(parse_alignment_heads(""), Error);
  EXPECT_THROW(parse_alignment_heads("2"), Error);
  EXPECT_THROW(parse_alignment_heads("2,x"), Error);
  EXPECT_THROW(parse_alignment_heads("2,3,4"), Error);
  EXPECT_THROW(checked_alignment_heads(parse_alignment_heads("4,0"), 4, 6), Error);  // layer
  EXPECT_THROW(checked_alignment_heads(parse_alignment_heads("0,6"), 4, 6), Error);  // head
  EXPECT_THROW(checked_alignment_heads(parse_alignment_heads("-1,0"), 4, 6), Error);
  EXPECT_THROW(checked_alignment_heads(parse_alignment_heads("1,1 1,1"), 4, 6), Error);
  EXPECT_THROW(checked_alignment_heads({}, 4, 6), Error);
}

}  // namespace
}  // namespace hark::decode
