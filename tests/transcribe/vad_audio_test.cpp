// The cut-and-map of VAD-assisted transcription as pure functions: which samples go where, and
// how processed times map back to the original audio (exact inside stretches, never into removed
// silence except at a join, never decreasing).
#include <gtest/gtest.h>

#include <numeric>
#include <vector>

#include "hark/error.hpp"
#include "transcribe/vad_audio.h"

namespace hark {
namespace {

constexpr size_t kUnit = kSampleRate / 100;

// Audio whose every sample is its own index, so a copied sample tells where it came from.
std::vector<float> ramp(size_t n) {
  std::vector<float> a(n);
  std::iota(a.begin(), a.end(), 0.0f);
  return a;
}

TEST(VadTimeMap, ExactInsideStretchesAndStepsAtTheJoin) {
  // Original [100, 300) at processed [0, 200); original [1000, 1050) at processed [210, 260).
  const VadTimeMap map({{100, 300, 0}, {1000, 1050, 210}}, 10);
  EXPECT_EQ(map.to_original(0), 100);
  EXPECT_EQ(map.to_original(57), 157);
  EXPECT_EQ(map.to_original(200), 300);   // the end of the first stretch
  EXPECT_EQ(map.to_original(204), 300);   // first half of the gap: the speech before
  EXPECT_EQ(map.to_original(205), 1000);  // second half: the speech after
  EXPECT_EQ(map.to_original(209), 1000);
  EXPECT_EQ(map.to_original(210), 1000);
  EXPECT_EQ(map.to_original(233), 1023);
  EXPECT_EQ(map.to_original(260), 1050);
  EXPECT_EQ(map.to_original(5000), 1050);  // past the end: the end
  EXPECT_EQ(map.to_original(-3), 100);     // before the start: the start
}

TEST(VadTimeMap, MonotoneAndNeverInsideRemovedSilence) {
  const VadTimeMap map({{30, 90, 0}, {200, 260, 70}, {261, 400, 140}, {900, 905, 289}}, 10);
  int64_t prev = map.to_original(-5);
  for (int64_t t = -5; t < 400; ++t) {
    const int64_t o = map.to_original(t);
    EXPECT_GE(o, prev) << t;
    prev = o;
    bool inside = false;
    for (const VadStretch& s : map.stretches()) inside |= o >= s.orig_t0 && o <= s.orig_t1;
    EXPECT_TRUE(inside) << "processed " << t << " maps to " << o << ", in removed audio";
  }
}

TEST(VadTimeMap, RejectsStretchesOutOfOrder) {
  EXPECT_THROW(VadTimeMap({{100, 300, 0}, {250, 400, 210}}, 10), Error);  // originals overlap
  EXPECT_THROW(VadTimeMap({{100, 300, 0}, {400, 500, 205}}, 10), Error);  // inside the gap
  EXPECT_THROW(VadTimeMap({{100, 100, 0}}, 10), Error);                   // empty
}

TEST(VadTimeMap, MapsSegmentsTokensWordsAndWindows) {
  const VadTimeMap map({{100, 300, 0}, {1000, 1050, 210}}, 10);
  Transcript t;
  Segment s;
  s.t0 = 150;
  s.t1 = 240;
  TokenData untimed;  // no token times (-1): left alone
  TokenData timed;
  timed.t0 = 10;
  timed.t1 = 230;
  s.tokens = {untimed, timed};
  s.words.push_back({" hi", 208, 212, 0.5f});
  t.segments.push_back(s);
  t.windows.push_back({0, 260, false, ""});
  map.map(t);
  const Segment& m = t.segments[0];
  EXPECT_EQ(m.t0, 250);
  EXPECT_EQ(m.t1, 1030);
  EXPECT_EQ(m.tokens[0].t0, -1);
  EXPECT_EQ(m.tokens[0].t1, -1);
  EXPECT_EQ(m.tokens[1].t0, 110);
  EXPECT_EQ(m.tokens[1].t1, 1020);
  EXPECT_EQ(m.words[0].t0, 1000);
  EXPECT_EQ(m.words[0].t1, 1002);
  EXPECT_EQ(t.windows[0].t0, 100);
  EXPECT_EQ(t.windows[0].t1, 1050);
}

TEST(VadCut, ConcatenatesSpeechWithOverlapAndGaps) {
  const std::vector<float> audio = ramp(20 * kSampleRate);  // 20 s
  const std::vector<VadSegment> segs = {{100, 300}, {1000, 1050}, {1500, 1600}};
  const VadAudio v = cut_speech(audio, segs, 0.1f, /*origin_units=*/0);
  // Every stretch but the last gains 10 units of overlap; 10 units of silence between them.
  const std::vector<VadStretch> want = {{100, 310, 0}, {1000, 1060, 220}, {1500, 1600, 290}};
  EXPECT_EQ(v.map.stretches(), want);
  ASSERT_EQ(v.samples.size(), (210 + 10 + 60 + 10 + 100) * kUnit);
  // Samples come from where the map says.
  for (const VadStretch& s : want)
    for (int64_t u = 0; u < s.orig_t1 - s.orig_t0; u += 7)
      EXPECT_EQ(v.samples[(s.proc_t0 + u) * kUnit + 3], static_cast<float>((s.orig_t0 + u) * kUnit + 3));
  for (size_t i = 210 * kUnit; i < 220 * kUnit; ++i) ASSERT_EQ(v.samples[i], 0.0f) << i;  // the gap
}

TEST(VadCut, OverlapStopsAtTheNextSegmentAndOriginShifts) {
  const std::vector<float> audio = ramp(10 * kSampleRate);
  const std::vector<VadSegment> segs = {{100, 300}, {305, 400}};
  const VadAudio v = cut_speech(audio, segs, 0.5f, /*origin_units=*/1000);
  const std::vector<VadStretch> want = {{1100, 1305, 0}, {1305, 1400, 215}};
  EXPECT_EQ(v.map.stretches(), want);
  EXPECT_EQ(v.map.to_original(100), 1200);
}

TEST(VadCut, ClampsToTheAudioAndHandlesNoSpeech) {
  const std::vector<float> audio = ramp(kSampleRate + 50);  // 1 s and a partial unit
  const std::vector<VadSegment> segs = {{80, 200}};         // the VAD's padded end
  const VadAudio v = cut_speech(audio, segs, 0.1f, 0);
  ASSERT_EQ(v.map.stretches().size(), 1u);
  EXPECT_EQ(v.map.stretches()[0].orig_t1, 101);  // the partial last unit counts
  EXPECT_EQ(v.samples.size(), audio.size() - 80 * kUnit);
  EXPECT_EQ(v.samples.back(), audio.back());

  const VadAudio none = cut_speech(audio, {}, 0.1f, 0);
  EXPECT_TRUE(none.samples.empty());
  EXPECT_TRUE(none.map.empty());
  EXPECT_THROW(cut_speech(audio, segs, -0.1f, 0), Error);
}

}  // namespace
}  // namespace hark
