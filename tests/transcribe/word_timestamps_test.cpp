// Word timestamps end to end on the micro model (random weights: the words are nonsense, but they
// must be there, in order, inside the audio, making up their segment's text, the same every run),
// and the JSON output carrying them.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "hark/hark.hpp"
#include "transcribe/micro_model.h"

namespace hark {
namespace {

std::string dump(const Transcript& t) {
  std::string s;
  for (const Segment& g : t.segments) {
    s += std::to_string(g.t0) + "-" + std::to_string(g.t1) + ":" + g.text + "\n";
    for (const Word& w : g.words)
      s += "  " + std::to_string(w.t0) + "-" + std::to_string(w.t1) + " " + std::to_string(w.p) + " [" + w.text + "]\n";
  }
  return s;
}

class WordTimestamps : public testing::MicroModelTest {};

TEST_F(WordTimestamps, WordsInOrderMakeUpTheirSegmentsDeterministically) {
  auto ctx = load(2);
  TranscribeParams p = testing::fast_params();
  p.max_tokens_per_window = 24;
  p.word_timestamps = true;
  const double seconds = 8.0;
  const std::vector<float> a = testing::speech_like_tones(seconds);
  const Transcript t = ctx->transcribe(a, p);
  EXPECT_EQ(dump(t), dump(ctx->transcribe(a, p))) << "not deterministic";
  size_t n_words = 0;
  int64_t prev = 0;
  for (const Segment& s : t.segments) {
    if (s.words.empty()) continue;
    std::string joined;
    for (const Word& w : s.words) {
      EXPECT_FALSE(w.text.empty());
      EXPECT_LE(w.t0, w.t1) << dump(t);
      EXPECT_GE(w.t0, prev) << dump(t);
      EXPECT_LE(w.t1, static_cast<int64_t>(seconds * 100));
      EXPECT_GE(w.p, 0.0f);
      EXPECT_LE(w.p, 1.0f);
      prev = w.t0;
      joined += w.text;
    }
    EXPECT_EQ(joined, s.text);
    // The reference's bounds: the segment opens before its first word ends and closes after its
    // last word starts.
    EXPECT_LE(s.t0, s.words.front().t1) << dump(t);
    EXPECT_GE(s.t1, s.words.back().t0) << dump(t);
    n_words += s.words.size();
  }
  EXPECT_GT(n_words, 0u) << dump(t);
  const std::string json = to_json(t);
  EXPECT_NE(json.find("\"words\""), std::string::npos);
  EXPECT_NE(json.find("\"probability\""), std::string::npos);

  // Off: no words and no extra pass.
  p.word_timestamps = false;
  for (const Segment& s : ctx->transcribe(a, p).segments) EXPECT_TRUE(s.words.empty());
}

TEST_F(WordTimestamps, BadPresetIsAnErrorBeforeAnyCompute) {
  auto ctx = load(1);
  TranscribeParams p = testing::fast_params();
  p.word_timestamps = true;
  p.dtw_preset = "tiny";  // 4 x 6 heads; the micro model is 2 x 2
  int progress_calls = 0;
  p.on_progress = [&](int) { ++progress_calls; };
  const std::vector<float> a = testing::speech_like_tones(2.0);
  EXPECT_TRUE(testing::mentions(testing::error_of([&] { ctx->transcribe(a, p); }), {"tiny", "4 layers x 6"}));
  EXPECT_EQ(progress_calls, 0);
}

}  // namespace
}  // namespace hark
