// Word timestamps by DTW (decode/alignment.h): each step of OpenAI's find_alignment against values
// worked out by hand, DTW against hand-made tables and a brute-force search over every monotone
// path, the word splitting, merge_punctuations and add_word_timestamps' duration rules.
#include <gtest/gtest.h>

#include <cmath>
#include <functional>
#include <limits>
#include <map>
#include <random>
#include <string>
#include <vector>

#include "decode/alignment.h"
#include "hark/error.hpp"

namespace hark::decode {
namespace {

constexpr float kInf = std::numeric_limits<float>::infinity();

Matrix matrix(std::vector<std::vector<float>> rows) {
  Matrix m(static_cast<int>(rows.size()), static_cast<int>(rows[0].size()));
  for (int r = 0; r < m.rows; ++r)
    for (int c = 0; c < m.cols; ++c) m.at(r, c) = rows[static_cast<size_t>(r)][static_cast<size_t>(c)];
  return m;
}

// ---- steps 1-5 ----------------------------------------------------------------------------------

TEST(Alignment, SoftmaxOverTheKeptFramesOnly) {
  HeadWeights qk(1, 2, 3);
  // row 0: logits 0, ln 3, and a padding column that must not count
  qk.at(0, 0, 0) = 0.0f;
  qk.at(0, 0, 1) = std::log(3.0f);
  qk.at(0, 0, 2) = 100.0f;
  qk.at(0, 1, 0) = 5.0f;
  qk.at(0, 1, 1) = 5.0f;
  qk.at(0, 1, 2) = -100.0f;
  HeadWeights w = keep_frames_and_softmax(qk, 2);
  ASSERT_EQ(w.n_frames, 2);
  EXPECT_NEAR(w.at(0, 0, 0), 0.25f, 1e-6);
  EXPECT_NEAR(w.at(0, 0, 1), 0.75f, 1e-6);
  EXPECT_NEAR(w.at(0, 1, 0), 0.5f, 1e-6);
  // qk_scale multiplies the logits first: 0, 2 ln 3 -> 1/10, 9/10
  w = keep_frames_and_softmax(qk, 2, 2.0f);
  EXPECT_NEAR(w.at(0, 0, 0), 0.1f, 1e-6);
  EXPECT_NEAR(w.at(0, 0, 1), 0.9f, 1e-6);
  EXPECT_EQ(keep_frames_and_softmax(qk, 99).n_frames, 3);  // clamped to what there is
}

TEST(Alignment, RenormalizedProbabilitiesEqualTheSoftmaxOfTheKeptFrames) {
  std::mt19937 rng(5);
  std::uniform_real_distribution<float> u(-4.0f, 4.0f);
  HeadWeights qk(2, 3, 9);
  for (auto& v : qk.data) v = u(rng);
  const HeadWeights all = keep_frames_and_softmax(qk, 9);  // what a graph's softmax gives
  const HeadWeights a = keep_frames_and_softmax(qk, 5);
  const HeadWeights b = keep_frames_and_renormalize(all, 5);
  ASSERT_EQ(b.n_frames, 5);
  for (size_t i = 0; i < a.data.size(); ++i) EXPECT_NEAR(a.data[i], b.data[i], 1e-6) << i;

  AlignmentOptions probs;
  probs.input_is_softmax = true;
  HeadWeights seq(2, 6, 9);
  for (auto& v : seq.data) v = u(rng);
  const Matrix from_logits = alignment_matrix(seq, 10, 3);
  const Matrix from_probs = alignment_matrix(keep_frames_and_softmax(seq, 9), 10, 3, probs);
  ASSERT_EQ(from_probs.rows, 2);  // notimestamps + 1 text token
  ASSERT_EQ(from_probs.cols, 5);
  for (size_t i = 0; i < from_logits.data.size(); ++i) EXPECT_NEAR(from_logits.data[i], from_probs.data[i], 1e-4) << i;
  probs.qk_scale = 2.0f;
  EXPECT_THROW(alignment_matrix(seq, 10, 3, probs), Error);
}

TEST(Alignment, StandardizeOverTokensUsesThePopulationStd) {
  HeadWeights w(2, 3, 1);
  // head 0, frame 0: 1, 2, 3 -> mean 2, std sqrt(2/3)
  w.at(0, 0, 0) = 1;
  w.at(0, 1, 0) = 2;
  w.at(0, 2, 0) = 3;
  // head 1 is standardized on its own: 10, 10, 40 -> mean 20, std sqrt(200)
  w.at(1, 0, 0) = 10;
  w.at(1, 1, 0) = 10;
  w.at(1, 2, 0) = 40;
  standardize_tokens(w);
  const float s = std::sqrt(1.5f);
  EXPECT_NEAR(w.at(0, 0, 0), -s, 1e-5);
  EXPECT_NEAR(w.at(0, 1, 0), 0.0f, 1e-6);
  EXPECT_NEAR(w.at(0, 2, 0), s, 1e-5);
  EXPECT_NEAR(w.at(1, 0, 0), -10.0f / std::sqrt(200.0f), 1e-5);
  EXPECT_NEAR(w.at(1, 2, 0), 20.0f / std::sqrt(200.0f), 1e-5);
}

TEST(Alignment, MedianFilterReflectsWithoutRepeatingTheEdge) {
  // width 3 over 5 1 4 2 3, reflected: [1] 5 1 4 2 3 [2]
  //   windows: (1 5 1) (5 1 4) (1 4 2) (4 2 3) (2 3 2) -> 1 4 2 3 2
  const std::vector<float> in = {5, 1, 4, 2, 3};
  std::vector<float> out(5);
  median_filter_row(in, out, 3);
  EXPECT_EQ(out, (std::vector<float>{1, 4, 2, 3, 2}));

  // width 7 over 3 1 4 1 5 9 2 6, padded: [1 4 1] 3 1 4 1 5 9 2 6 [2 9 5]
  //   f0: 1 4 1 3 1 4 1 -> 1;  f3: 3 1 4 1 5 9 2 -> 3;  f7: 5 9 2 6 2 9 5 -> 5
  const std::vector<float> in7 = {3, 1, 4, 1, 5, 9, 2, 6};
  std::vector<float> out7(8);
  median_filter_row(in7, out7, 7);
  EXPECT_EQ(out7[0], 1);
  EXPECT_EQ(out7[3], 3);
  EXPECT_EQ(out7[7], 5);

  // a row no longer than width/2 is left as it is (even before the width is checked)
  const std::vector<float> short_row = {9, 1, 5};
  std::vector<float> same(3);
  median_filter_row(short_row, same, 7);
  EXPECT_EQ(same, short_row);
  median_filter_row(short_row, same, 8);
  EXPECT_EQ(same, short_row);
  EXPECT_THROW(median_filter_row(in, out, 4), Error);
  EXPECT_THROW(median_filter_row(in, out, -3), Error);

  // on every row of every head
  HeadWeights w(2, 1, 5);
  for (int f = 0; f < 5; ++f) w.at(1, 0, f) = in[static_cast<size_t>(f)];
  median_filter_frames(w, 3);
  EXPECT_EQ(w.at(1, 0, 1), 4);
  EXPECT_EQ(w.at(0, 0, 1), 0);
}

TEST(Alignment, MeanOverHeadsAndRowSlice) {
  HeadWeights w(2, 3, 2);
  for (int t = 0; t < 3; ++t)
    for (int f = 0; f < 2; ++f) {
      w.at(0, t, f) = static_cast<float>(t * 10 + f);
      w.at(1, t, f) = static_cast<float>(t * 10 + f + 2);
    }
  const Matrix m = mean_over_heads(w);
  EXPECT_EQ(m.rows, 3);
  EXPECT_EQ(m.at(2, 1), 22.0f);
  const Matrix r = rows_between(m, 1, 2);
  ASSERT_EQ(r.rows, 1);
  EXPECT_EQ(r.at(0, 0), 11.0f);
  EXPECT_THROW(rows_between(m, 2, 4), Error);
}

// ---- step 6: DTW ----------------------------------------------------------------------------------

// x (3 x 4):          cost (4 x 5), trace in brackets (0 diag, 1 token, 2 frame):
//   1 5 5 5            0    inf     inf     inf     inf
//   5 1 1 5           inf   1[0]    6[2]    11[2]   16[2]
//   5 5 5 1           inf   6[1]    2[0]    3[2]    8[2]
//                     inf   11[1]   7[1]    7[0]    4[0]
// e.g. cost[2][2]: c0 = cost[1][1] = 1 < c1 = 6, c2 = 6 -> 1 + x[1][1] = 2 (diagonal).
// Back from (3,4): 0 -> (2,3): 2 -> (2,2): 0 -> (1,1): 0 -> (0,0); noting (i-1, j-1) each time:
// path (0,0) (1,1) (1,2) (2,3).
TEST(Alignment, DtwSmallByHand) {
  const Matrix x = matrix({{1, 5, 5, 5}, {5, 1, 1, 5}, {5, 5, 5, 1}});
  const DtwTables t = dtw_tables(x);
  const std::vector<float> cost = {0,    kInf, kInf, kInf, kInf,  //
                                   kInf, 1,    6,    11,   16,    //
                                   kInf, 6,    2,    3,    8,     //
                                   kInf, 11,   7,    7,    4};
  const std::vector<int8_t> trace = {-1, -1, -1, -1, -1,  //
                                     -1, 0,  2,  2,  2,   //
                                     -1, 1,  0,  2,  2,   //
                                     -1, 1,  1,  0,  0};
  EXPECT_EQ(t.cost, cost);
  EXPECT_EQ(t.trace, trace);
  const AlignmentPath p = dtw(x);
  EXPECT_EQ(p.text_indices, (std::vector<int32_t>{0, 1, 1, 2}));
  EXPECT_EQ(p.time_indices, (std::vector<int32_t>{0, 1, 2, 3}));
}

// x (5 x 7): a path with two tokens on one frame (rows 1, 2 at column 1) and one token over three
// frames (row 3 at columns 2..4).
//   -0.5  0.3  0.9  0.8  0.9  0.7  0.9
//    0.6 -0.8  0.4  0.9  0.8  0.9  0.8
//    0.9 -0.7  0.2  0.6  0.9  0.8  0.9
//    0.8  0.7 -0.9 -0.5 -0.6  0.4  0.9
//    0.9  0.8  0.9  0.7  0.3 -0.4 -0.9
// cost (rows 1..5, columns 1..7), trace in brackets:
//   -0.5[0] -0.2[2]  0.7[2]  1.5[2]  2.4[2]  3.1[2]  4.0[2]
//    0.1[1] -1.3[0] -0.9[2]  0.0[2]  0.8[2]  1.7[2]  2.5[2]
//    1.0[1] -2.0[1] -1.8[2] -1.2[2] -0.3[2]  0.5[2]  1.4[2]
//    1.8[1] -1.3[1] -2.9[0] -3.4[2] -4.0[2] -3.6[2] -2.7[2]
//    2.7[1] -0.5[1] -2.0[1] -2.7[1] -3.7[1] -4.4[0] -5.3[2]
// e.g. cost[3][2] (row 2, column 1): c0 = cost[2][1] = 0.1, c1 = cost[2][2] = -1.3,
// c2 = cost[3][1] = 1.0 -> c1 wins: -0.7 + -1.3 = -2.0 [1], the second token on the same frame.
// Back from (5,7): 2 (5,6): 0 (4,5): 2 (4,4): 2 (4,3): 0 (3,2): 1 (2,2): 0 (1,1): 0 (0,0);
// path (0,0) (1,1) (2,1) (3,2) (3,3) (3,4) (4,5) (4,6), cost -5.3.
TEST(Alignment, DtwLargerByHand) {
  const Matrix x = matrix({{-0.5f, 0.3f, 0.9f, 0.8f, 0.9f, 0.7f, 0.9f},
                           {0.6f, -0.8f, 0.4f, 0.9f, 0.8f, 0.9f, 0.8f},
                           {0.9f, -0.7f, 0.2f, 0.6f, 0.9f, 0.8f, 0.9f},
                           {0.8f, 0.7f, -0.9f, -0.5f, -0.6f, 0.4f, 0.9f},
                           {0.9f, 0.8f, 0.9f, 0.7f, 0.3f, -0.4f, -0.9f}});
  const DtwTables t = dtw_tables(x);
  const float cost[5][7] = {{-0.5f, -0.2f, 0.7f, 1.5f, 2.4f, 3.1f, 4.0f},
                            {0.1f, -1.3f, -0.9f, 0.0f, 0.8f, 1.7f, 2.5f},
                            {1.0f, -2.0f, -1.8f, -1.2f, -0.3f, 0.5f, 1.4f},
                            {1.8f, -1.3f, -2.9f, -3.4f, -4.0f, -3.6f, -2.7f},
                            {2.7f, -0.5f, -2.0f, -2.7f, -3.7f, -4.4f, -5.3f}};
  const int trace[5][7] = {{0, 2, 2, 2, 2, 2, 2},
                           {1, 0, 2, 2, 2, 2, 2},
                           {1, 1, 2, 2, 2, 2, 2},
                           {1, 1, 0, 2, 2, 2, 2},
                           {1, 1, 1, 1, 1, 0, 2}};
  for (int i = 1; i <= 5; ++i)
    for (int j = 1; j <= 7; ++j) {
      EXPECT_NEAR(t.cost[static_cast<size_t>(i * 8 + j)], cost[i - 1][j - 1], 1e-5) << i << "," << j;
      EXPECT_EQ(t.trace[static_cast<size_t>(i * 8 + j)], trace[i - 1][j - 1]) << i << "," << j;
    }
  const AlignmentPath p = dtw(x);
  EXPECT_EQ(p.text_indices, (std::vector<int32_t>{0, 1, 2, 3, 3, 3, 4, 4}));
  EXPECT_EQ(p.time_indices, (std::vector<int32_t>{0, 1, 1, 2, 3, 4, 5, 6}));
}

// The reference's tie rule: only a strict minimum picks the diagonal or the token move; every tie
// goes to the frame move and takes ITS cost, even when that is not the smallest.
//   x = 1 0      cost[1][1] = 1, cost[1][2] = 1 + 0 = 1 [2], cost[2][1] = 1 + 5 = 6 [1]
//       5 7      cost[2][2]: c0 = 1 == c1 = 1 < c2 = 6 -> [2], 7 + 6 = 13 (not 8)
// path (0,0) (1,0) (1,1).
TEST(Alignment, DtwTiesGoToTheFrameMove) {
  const Matrix x = matrix({{1, 0}, {5, 7}});
  const DtwTables t = dtw_tables(x);
  EXPECT_EQ(t.cost[2 * 3 + 2], 13.0f);
  EXPECT_EQ(t.trace[2 * 3 + 2], 2);
  const AlignmentPath p = dtw(x);
  EXPECT_EQ(p.text_indices, (std::vector<int32_t>{0, 1, 1}));
  EXPECT_EQ(p.time_indices, (std::vector<int32_t>{0, 0, 1}));

  // all equal: every tie moves along the frames first, so the path walks the last row back
  const AlignmentPath z = dtw(matrix({{0, 0}, {0, 0}}));
  EXPECT_EQ(z.text_indices, (std::vector<int32_t>{0, 1, 1}));
  EXPECT_EQ(z.time_indices, (std::vector<int32_t>{0, 0, 1}));
}

TEST(Alignment, DtwEdges) {
  const AlignmentPath one = dtw(matrix({{3}}));
  EXPECT_EQ(one.text_indices, (std::vector<int32_t>{0}));
  EXPECT_EQ(one.time_indices, (std::vector<int32_t>{0}));
  // one token over every frame; every token on one frame
  const AlignmentPath row = dtw(matrix({{1, 2, 3}}));
  EXPECT_EQ(row.time_indices, (std::vector<int32_t>{0, 1, 2}));
  EXPECT_EQ(row.text_indices, (std::vector<int32_t>{0, 0, 0}));
  const AlignmentPath col = dtw(matrix({{1}, {2}, {3}}));
  EXPECT_EQ(col.text_indices, (std::vector<int32_t>{0, 1, 2}));
  EXPECT_EQ(col.time_indices, (std::vector<int32_t>{0, 0, 0}));
  EXPECT_THROW(dtw(Matrix(0, 3)), Error);
  EXPECT_THROW(dtw(Matrix(2, 0)), Error);
}

// Every monotone path from (0,0) to (N-1,M-1) with steps (1,1), (1,0), (0,1): the cheapest sum.
double brute_force_min(const Matrix& x, int i, int j) {
  const double here = x.at(i, j);
  if (i == x.rows - 1 && j == x.cols - 1) return here;
  double best = std::numeric_limits<double>::infinity();
  if (i + 1 < x.rows && j + 1 < x.cols) best = std::min(best, brute_force_min(x, i + 1, j + 1));
  if (i + 1 < x.rows) best = std::min(best, brute_force_min(x, i + 1, j));
  if (j + 1 < x.cols) best = std::min(best, brute_force_min(x, i, j + 1));
  return here + best;
}

TEST(Alignment, DtwFindsTheCheapestMonotonePath) {
  // Continuous random values: no ties, so the reference's tie rule never matters and its path
  // must be a cheapest one.
  std::mt19937 rng(1234);
  std::uniform_real_distribution<float> u(-1.0f, 1.0f);
  for (int trial = 0; trial < 60; ++trial) {
    const int n = 1 + trial % 5, m = 1 + (trial / 5) % 7;
    Matrix x(n, m);
    for (auto& v : x.data) v = u(rng);
    const AlignmentPath p = dtw(x);
    ASSERT_EQ(p.text_indices.size(), p.time_indices.size());
    ASSERT_FALSE(p.text_indices.empty());
    EXPECT_EQ(p.text_indices.front(), 0);
    EXPECT_EQ(p.time_indices.front(), 0);
    EXPECT_EQ(p.text_indices.back(), n - 1);
    EXPECT_EQ(p.time_indices.back(), m - 1);
    double sum = 0;
    for (size_t k = 0; k < p.text_indices.size(); ++k) {
      if (k > 0) {
        const int di = p.text_indices[k] - p.text_indices[k - 1];
        const int dj = p.time_indices[k] - p.time_indices[k - 1];
        EXPECT_TRUE((di == 1 && dj == 1) || (di == 1 && dj == 0) || (di == 0 && dj == 1)) << trial;
      }
      sum += x.at(p.text_indices[k], p.time_indices[k]);
    }
    EXPECT_NEAR(sum, brute_force_min(x, 0, 0), 1e-4) << "trial " << trial << " (" << n << "x" << m << ")";
  }
}

// ---- words --------------------------------------------------------------------------------------

constexpr int32_t kEot = 100;

// A toy vocabulary: ids to bytes, the eot's name at kEot.
struct ToyVocab {
  std::map<int32_t, std::string> bytes = {{1, " Hello"},
                                          {2, ","},
                                          {3, " it"},
                                          {4, "'s"},
                                          {5, " caf"},
                                          {6, "\xC3"},
                                          {7, "\xA9"},
                                          {8, " world"},
                                          {9, "\xFF"},
                                          {10, " "},
                                          {11, "\xE4\xBD"},
                                          {12, "\xA0\xE5\xA5\xBD"},
                                          {13, "\xE4\xBD\xA0"},
                                          {14, "\xE5\xA5\xBD"},
                                          {15, "."},
                                          {16, " ("},
                                          {17, ")"},
                                          {18, "ing"},
                                          {19, "\""},
                                          {kEot, "<|endoftext|>"}};
  TokenBytes fn() const {
    return [this](int32_t id) -> std::string_view { return bytes.at(id); };
  }
};

TEST(AlignmentWords, SplitOnUnicodeWaitsForWholeCharacters) {
  ToyVocab v;
  // " caf" + C3 + A9: C3 alone is an incomplete "é", so the cut comes after A9
  const std::vector<int32_t> toks = {5, 6, 7, kEot};
  const WordSplit s = split_tokens_on_unicode(toks, v.fn());
  ASSERT_EQ(s.words.size(), 3u);
  EXPECT_EQ(s.words[0], " caf");
  EXPECT_EQ(s.words[1], "\xC3\xA9");
  EXPECT_EQ(s.tokens[1], (std::vector<int32_t>{6, 7}));
  EXPECT_EQ(s.words[2], "<|endoftext|>");

  // FF is never valid: its U+FFFD is in the whole text too, so it is a piece of its own
  const std::vector<int32_t> bad = {9, 1};
  const WordSplit b = split_tokens_on_unicode(bad, v.fn());
  ASSERT_EQ(b.words.size(), 2u);
  EXPECT_EQ(b.words[0], "\xEF\xBF\xBD");
  EXPECT_EQ(b.tokens[0], (std::vector<int32_t>{9}));

  // 你好 split mid-character over two tokens: one piece; one token a character: two pieces
  const std::vector<int32_t> zh1 = {11, 12, kEot}, zh2 = {13, 14, kEot};
  const WordSplit z1 = split_to_word_tokens(zh1, v.fn(), kEot, "zh");
  ASSERT_EQ(z1.words.size(), 2u);
  EXPECT_EQ(z1.words[0], "\xE4\xBD\xA0\xE5\xA5\xBD");
  const WordSplit z2 = split_to_word_tokens(zh2, v.fn(), kEot, "ja");
  ASSERT_EQ(z2.words.size(), 3u);
  EXPECT_EQ(z2.tokens[1], (std::vector<int32_t>{14}));
  for (const char* lang : {"zh", "ja", "th", "lo", "my", "yue"}) EXPECT_TRUE(splits_on_unicode(lang));
  for (const char* lang : {"en", "de", "ko", "vi", ""}) EXPECT_FALSE(splits_on_unicode(lang));
}

TEST(AlignmentWords, SplitOnSpacesJoinsPiecesWithoutALeadingSpace) {
  ToyVocab v;
  // " Hello" "," " it" "'s" " caf" C3 A9 " world" "ing" " " "." eot
  const std::vector<int32_t> toks = {1, 2, 3, 4, 5, 6, 7, 8, 18, 10, 15, kEot};
  const WordSplit s = split_to_word_tokens(toks, v.fn(), kEot, "en");
  const std::vector<std::string> words = {" Hello",    ",", " it's", " caf\xC3\xA9",
                                          " worlding", " ", ".",     "<|endoftext|>"};
  EXPECT_EQ(s.words, words);
  EXPECT_EQ(s.tokens[2], (std::vector<int32_t>{3, 4}));  // "'s" is not in string.punctuation
  EXPECT_EQ(s.tokens[3], (std::vector<int32_t>{5, 6, 7}));
  EXPECT_EQ(s.tokens[5], (std::vector<int32_t>{10}));    // whitespace strips to "": "in" it
  EXPECT_EQ(s.tokens[7], (std::vector<int32_t>{kEot}));  // special: its own word
}

TEST(AlignmentWords, WordTimesFromThePath) {
  // rows: <|notimestamps|>, then text tokens a b c; words " Hi" = [a], " there" = [b, c], eot.
  WordSplit split;
  split.words = {" Hi", " there", "<|endoftext|>"};
  split.tokens = {{1}, {2, 3}, {kEot}};
  AlignmentPath p;
  p.text_indices = {0, 0, 1, 1, 1, 2, 3, 3};
  p.time_indices = {0, 1, 2, 3, 4, 5, 6, 7};
  // rows are first entered at frames 0, 2, 5, 6 -> 0, 0.04, 0.10, 0.12 s; boundaries 0, 1, 3
  const std::vector<float> probs = {0.9f, 0.5f, 0.7f};
  const auto w = word_timings(split, p, probs);
  ASSERT_EQ(w.size(), 2u);
  EXPECT_EQ(w[0].word, " Hi");
  EXPECT_DOUBLE_EQ(w[0].start, 0.0);
  EXPECT_DOUBLE_EQ(w[0].end, 2 / 50.0);
  EXPECT_NEAR(w[0].probability, 0.9, 1e-7);
  EXPECT_DOUBLE_EQ(w[1].start, 2 / 50.0);
  EXPECT_DOUBLE_EQ(w[1].end, 6 / 50.0);
  EXPECT_NEAR(w[1].probability, 0.6, 1e-7);
  EXPECT_EQ(w[1].tokens, (std::vector<int32_t>{2, 3}));

  WordSplit only_eot;
  only_eot.words = {"<|endoftext|>"};
  only_eot.tokens = {{kEot}};
  EXPECT_TRUE(word_timings(only_eot, p, probs).empty());
}

TEST(AlignmentWords, TextTokenProbabilitiesIgnoreSpecialTokens) {
  // n_vocab 4, eot 2: the softmax runs over ids 0 and 1 only
  const std::vector<float> logits = {0.0f, std::log(3.0f), 50.0f, 50.0f,  // predicts token 1
                                     1.0f, 1.0f,           -5.0f, 9.0f};  // predicts token 0
  const std::vector<int32_t> text = {1, 0};
  const auto p = text_token_probs(logits, 4, 2, text);
  ASSERT_EQ(p.size(), 2u);
  EXPECT_NEAR(p[0], 0.75f, 1e-6);
  EXPECT_NEAR(p[1], 0.5f, 1e-6);
  const std::vector<int32_t> special = {2};
  EXPECT_THROW(text_token_probs(logits, 4, 2, special), Error);
}

std::vector<WordTiming> timings(std::vector<std::string> words) {
  std::vector<WordTiming> out;
  int32_t id = 1;
  for (auto& w : words) {
    WordTiming t;
    t.word = w;
    t.tokens = {id++};
    out.push_back(t);
  }
  return out;
}

TEST(AlignmentWords, MergePunctuations) {
  // From the end, " (" and " \"" (a space, then a prepend mark) join the next word; then from the
  // start "," "\"" ")" "." join the word before. Emptied words ("") stay and merge as nothing.
  auto a = timings({" Hello", ",", " \"", "world", "\"", " (", "ok", ")", "."});
  merge_punctuations(a, kPrependPunctuations, kAppendPunctuations);
  const std::vector<std::string> words = {" Hello,", "", "", " \"world\"", "", "", " (ok).", "", ""};
  std::vector<std::string> got;
  for (auto& w : a) got.push_back(w.word);
  EXPECT_EQ(got, words);
  EXPECT_EQ(a[0].tokens, (std::vector<int32_t>{1, 2}));
  EXPECT_EQ(a[3].tokens, (std::vector<int32_t>{3, 4, 5}));
  EXPECT_EQ(a[6].tokens, (std::vector<int32_t>{6, 7, 8, 9}));
  EXPECT_TRUE(a[1].tokens.empty());

  // a word ending in a space takes nothing after it; a prepend mark without a leading space stays
  auto b = timings({" end ", ".", "(", " x"});
  merge_punctuations(b, kPrependPunctuations, kAppendPunctuations);
  EXPECT_EQ(b[0].word, " end ");
  EXPECT_EQ(b[1].word, ".");
  EXPECT_EQ(b[2].word, "(");
  // full-width marks are in the default strings
  auto c = timings({"\xE4\xBD\xA0", "\xE3\x80\x82", "\xE2\x80\x9C", "\xE5\xA5\xBD"});  // 你 。 “ 好
  merge_punctuations(c, kPrependPunctuations, kAppendPunctuations);
  EXPECT_EQ(c[0].word, "\xE4\xBD\xA0\xE3\x80\x82");
  EXPECT_EQ(c[2].word, "\xE2\x80\x9C");  // no leading space: not prepended
}

WordTiming wt(std::string word, double start, double end, int32_t token, double prob = 0.5) {
  WordTiming t;
  t.word = std::move(word);
  t.start = start;
  t.end = end;
  t.tokens = {token};
  t.probability = prob;
  return t;
}

TEST(AlignmentWords, SentenceEndsAreClippedAndWordsGoToTheirSegments) {
  // durations 0.4 0.4 2.0 2.0 0.4: median 0.4, max 0.8.
  // "." (a sentence mark, 2.0 s) keeps its start: 0.8-1.6; " Next" (after one) keeps its end:
  // 4.0-4.8. Then "." joins " world" (whose times stay 0.4-0.8).
  std::vector<WordTiming> a = {wt(" Hello", 0.0, 0.4, 1), wt(" world", 0.4, 0.8, 2), wt(".", 0.8, 2.8, 3),
                               wt(" Next", 2.8, 4.8, 4), wt(" one", 4.8, 5.2, 5)};
  std::vector<SegmentForWords> segs(2);
  segs[0].start = 10.0;
  segs[0].end = 12.0;
  segs[0].text_tokens = {1, 2, 3};
  segs[1].start = 13.0;
  segs[1].end = 15.5;
  segs[1].text_tokens = {4, 5};
  add_word_timestamps(segs, a, /*time_offset=*/10.0, /*last_speech_timestamp=*/9.0);

  ASSERT_EQ(segs[0].words.size(), 2u);
  EXPECT_EQ(segs[0].words[1].word, " world.");
  EXPECT_NEAR(segs[0].words[0].start, 10.0, 1e-9);
  EXPECT_NEAR(segs[0].words[1].end, 10.8, 1e-9);
  // segment 0: starts with its first word (10.0), ends with its last (10.8, it claimed 12.0)
  EXPECT_NEAR(segs[0].start, 10.0, 1e-9);
  EXPECT_NEAR(segs[0].end, 10.8, 1e-9);
  // segment 1: " Next" 14.0-14.8, " one" 14.8-15.2; after a pause of 4.0 s > 4 x median, but
  // neither the first word (0.8 = max, not more) nor the first two (1.2 <= 1.6) are too long.
  ASSERT_EQ(segs[1].words.size(), 2u);
  EXPECT_NEAR(segs[1].words[0].start, 14.0, 1e-9);
  EXPECT_NEAR(segs[1].words[0].end, 14.8, 1e-9);
  EXPECT_NEAR(segs[1].start, 14.0, 1e-9);
  EXPECT_NEAR(segs[1].end, 15.2, 1e-9);
}

TEST(AlignmentWords, FirstWordAfterAPauseIsPulledIn) {
  // durations 3.0 1.5 0.3 0.3 0.3: median 0.3, max 0.6. The first word ends 3.0 s after the last
  // speech (> 1.2) and lasts 3.0 (> 0.6); the second also lasts more than max, so the two meet at
  // max(4.5 / 2, 4.5 - 0.6) = 3.9 and the first starts at 3.9 - 0.6 = 3.3.
  std::vector<WordTiming> a = {wt(" So", 0.0, 3.0, 1), wt(" long", 3.0, 4.5, 2), wt(" and", 4.5, 4.8, 3),
                               wt(" short", 4.8, 5.1, 4), wt(" words", 5.1, 5.4, 5)};
  std::vector<SegmentForWords> segs(1);
  segs[0].start = 2.0;
  segs[0].end = 6.5;
  segs[0].text_tokens = {1, 2, 3, 4, 5};
  add_word_timestamps(segs, a, 0.0, 0.0);
  const auto& w = segs[0].words;
  ASSERT_EQ(w.size(), 5u);
  EXPECT_NEAR(w[0].start, 3.3, 1e-9);
  EXPECT_NEAR(w[0].end, 3.9, 1e-9);
  EXPECT_NEAR(w[1].start, 3.9, 1e-9);
  EXPECT_NEAR(w[1].end, 4.5, 1e-9);
  EXPECT_NEAR(segs[0].start, 3.3, 1e-9);  // the segment follows its words
  EXPECT_NEAR(segs[0].end, 5.4, 1e-9);
}

TEST(AlignmentWords, SegmentTimestampsWinOverOverhangingWords) {
  // durations 2.0 0.2 1.3: median 1.3 -> capped at 0.7, max 1.4. No pause (2.5 - 2.4 = 0.1).
  // The first word starts 1.5 s before the segment (> 0.5): it starts at
  // max(0, min(2.5 - 0.7, 2.0)) = 1.8; the last ends 1.0 s after it: it ends at
  // max(2.7 + 0.7, 3.0) = 3.4. The segment keeps 2.0-3.0.
  std::vector<WordTiming> a = {wt(" A", 0.5, 2.5, 1), wt(" B", 2.5, 2.7, 2), wt(" C", 2.7, 4.0, 3)};
  std::vector<SegmentForWords> segs(1);
  segs[0].start = 2.0;
  segs[0].end = 3.0;
  segs[0].text_tokens = {1, 2, 3};
  add_word_timestamps(segs, a, 0.0, 2.4);
  const auto& w = segs[0].words;
  ASSERT_EQ(w.size(), 3u);
  EXPECT_NEAR(w[0].start, 1.8, 1e-9);
  EXPECT_NEAR(w[0].end, 2.5, 1e-9);
  EXPECT_NEAR(w[2].end, 3.4, 1e-9);
  EXPECT_NEAR(segs[0].start, 2.0, 1e-9);
  EXPECT_NEAR(segs[0].end, 3.0, 1e-9);
}

TEST(AlignmentWords, RoundsLikePython) {
  EXPECT_EQ(round2(10.4), 10.4);
  EXPECT_EQ(round2(0.125), 0.12);  // exactly representable tie: to even
  EXPECT_EQ(round2(0.375), 0.38);
  EXPECT_EQ(round2(2.675), 2.67);  // 2.675 is 2.67499999... in binary
  EXPECT_EQ(round2(1.005), 1.0);   // 1.00499999...
  EXPECT_EQ(round2(30.0 + 0.1), 30.1);
}

// ---- the whole of find_alignment ------------------------------------------------------------------

// Four words (" one" .. " four", ids 21..24) after a sot sequence of 3 tokens, and attention made
// cell by cell: cell(h, k, f) is head h's logit for audio position f in row k (0: the
// notimestamps row, 1..4: the text rows, -1: the sot rows and eot).
struct FourWords {
  ToyVocab v;
  const std::vector<int32_t> text = {21, 22, 23, 24};
  const std::vector<float> probs = {0.9f, 0.8f, 0.7f, 0.6f};
  static constexpr int n_sot = 3;
  static constexpr int n_tokens = n_sot + 1 + 4 + 1;  // sot sequence, notimestamps, text, eot
  FourWords() {
    v.bytes[21] = " one";
    v.bytes[22] = " two";
    v.bytes[23] = " three";
    v.bytes[24] = " four";
  }
  HeadWeights attention(int n_frames, const std::function<float(int, int, int)>& cell) const {
    HeadWeights qk(2, n_tokens, n_frames);
    for (int h = 0; h < 2; ++h)
      for (int t = 0; t < n_tokens; ++t) {
        const int k = t - n_sot >= 0 && t - n_sot < 5 ? t - n_sot : -1;
        for (int f = 0; f < n_frames; ++f) qk.at(h, t, f) = cell(h, k, f);
      }
    return qk;
  }
};

TEST(AlignmentWords, FindAlignmentFollowsTheAttention) {
  const FourWords w4;
  const std::vector<int32_t>& text = w4.text;
  const std::vector<float>& probs = w4.probs;
  const int n_sot = FourWords::n_sot;
  const int n_mel = 80;  // 40 audio positions hold audio; 60 in the window
  // The row predicting each text token (notimestamps and the text rows before the last) looks at
  // its own block of positions; the padding past position 40 gets the strongest logits of all,
  // which must not matter because it is cut before the softmax.
  const int block_start[5] = {0, 10, 20, 25, 35};
  const int block_end[5] = {10, 20, 25, 35, 40};
  const HeadWeights qk = w4.attention(60, [&](int h, int k, int f) {
    if (k >= 0 && f >= block_start[k] && f < block_end[k]) return 8.0f + 0.1f * static_cast<float>(h);
    return f >= 40 ? 50.0f : 0.0f;
  });
  const auto words = find_alignment(qk, n_mel, n_sot, text, probs, w4.v.fn(), kEot, "en");
  ASSERT_EQ(words.size(), 4u);
  // word k runs from the block of row k to the block of row k + 1 (within a frame or two: the
  // median filter and the standardisation blur the edges)
  const double tol = 2.0 / 50.0;
  EXPECT_NEAR(words[0].start, 0.0, tol);
  for (int k = 0; k < 4; ++k) {
    EXPECT_EQ(words[static_cast<size_t>(k)].word, w4.v.bytes.at(text[static_cast<size_t>(k)]));
    EXPECT_NEAR(words[static_cast<size_t>(k)].end, block_start[k + 1] / 50.0, tol) << k;
    if (k > 0) {
      EXPECT_DOUBLE_EQ(words[static_cast<size_t>(k)].start, words[static_cast<size_t>(k) - 1].end);
    }
    EXPECT_NEAR(words[static_cast<size_t>(k)].probability, probs[static_cast<size_t>(k)], 1e-6);
  }

  EXPECT_TRUE(find_alignment(qk, n_mel, n_sot, {}, {}, w4.v.fn(), kEot, "en").empty());
  EXPECT_TRUE(find_alignment(qk, 1, n_sot, text, probs, w4.v.fn(), kEot, "en").empty());  // no audio
  const std::vector<int32_t> three = {21, 22, 23};
  EXPECT_THROW(find_alignment(qk, n_mel, n_sot, three, probs, w4.v.fn(), kEot, "en"), Error);
}

// A spike of two frames in one row's attention, just past the end of that row's block: the default
// median filter (width 7, OpenAI's medfilt_width) removes it, so the word ends where its block
// does; without the filter (width 1) the path follows the spike and the word ends a frame later.
TEST(AlignmentWords, TheMedianFilterRemovesAShortSpike) {
  const FourWords w4;
  const int n_mel = 80;  // 40 audio positions
  const int block_start[5] = {0, 10, 20, 28, 34};
  const int block_end[5] = {10, 20, 28, 34, 40};
  const int spike = 20;  // in row 1 (the row that predicts " two"), just past its block
  const HeadWeights qk = w4.attention(40, [&](int, int k, int f) {
    if (k == 1 && (f == spike || f == spike + 1)) return 14.0f;
    return k >= 0 && f >= block_start[k] && f < block_end[k] ? 8.0f : 0.0f;
  });
  const double frame = 1.0 / 50.0;  // an audio position, 20 ms

  const auto filtered = find_alignment(qk, n_mel, FourWords::n_sot, w4.text, w4.probs, w4.v.fn(), kEot, "en");
  ASSERT_EQ(filtered.size(), 4u);
  EXPECT_NEAR(filtered[1].end, block_start[2] * frame, frame / 2) << "the default filter kept the spike";

  AlignmentOptions unfiltered;
  unfiltered.medfilt_width = 1;
  const auto raw = find_alignment(qk, n_mel, FourWords::n_sot, w4.text, w4.probs, w4.v.fn(), kEot, "en", unfiltered);
  ASSERT_EQ(raw.size(), 4u);
  EXPECT_GE(raw[1].end, (spike + 1) * frame - 1e-9) << "without the filter the word runs on into the spike";
}

}  // namespace
}  // namespace hark::decode
