// Speech segments from probabilities: the shared reference's segments from its own
// probabilities, and each option changing hand-built probability sequences as defined.
// Frames are 512 samples (32 ms at 16 kHz); frame i starts at sample 512 i.
#include <gtest/gtest.h>

#include <fstream>
#include <sstream>

#include "runtime/error.h"
#include "vad/speech_segments.h"
#include "vad/vad_test_util.h"

namespace hark::vad {
namespace {

constexpr int kW = 512;
constexpr int kSr = 16000;

// probs: `n` frames of 0 with [from, to) set to p.
std::vector<float> frames(size_t n, std::initializer_list<std::tuple<size_t, size_t, float>> runs) {
  std::vector<float> v(n, 0.0f);
  for (auto [from, to, p] : runs)
    for (size_t i = from; i < to; ++i) v[i] = p;
  return v;
}

std::vector<SampleRange> ranges(const std::vector<float>& p, SegmentOptions o = {}) {
  return speech_ranges(p, kW, kSr, o);
}

int64_t f(int64_t frame) { return frame * kW; }

TEST(VadSegments, ReferenceSegmentsFromReferenceProbabilities) {
  const std::string path = hark::testing::shared_vad_path("vad-three-clips.silero-probs.txt");
  if (path.empty()) GTEST_SKIP() << "../shared/vad not found";
  std::ifstream in(path);
  std::vector<float> probs;
  std::vector<std::pair<int64_t, int64_t>> want;
  for (std::string line; std::getline(in, line);) {
    if (line.rfind("# segment ", 0) == 0) {
      std::istringstream s(line.substr(10));
      double a, b;
      s >> a >> b;
      want.emplace_back(static_cast<int64_t>(a), static_cast<int64_t>(b));
    } else if (!line.empty() && line[0] != '#') {
      probs.push_back(std::stof(line));
    }
  }
  const std::vector<SampleRange> got = ranges(probs);
  ASSERT_EQ(got.size(), want.size());
  for (size_t i = 0; i < got.size(); ++i) {
    // within one frame (3.2 cs); whisper.cpp's own rounding gives them exactly
    EXPECT_NEAR(samples_to_cs(got[i].start, kSr), want[i].first, 3.2) << i;
    EXPECT_NEAR(samples_to_cs(got[i].end, kSr), want[i].second, 3.2) << i;
    EXPECT_EQ(samples_to_cs(got[i].start, kSr), want[i].first) << i;
    EXPECT_EQ(samples_to_cs(got[i].end, kSr), want[i].second) << i;
  }
}

TEST(VadSegments, ThresholdDecidesWhatIsSpeech) {
  const auto p = frames(60, {{10, 30, 0.45f}});
  EXPECT_TRUE(ranges(p).empty());
  SegmentOptions o;
  o.threshold = 0.4f;
  o.speech_pad_ms = 0;
  // ends where the silence began, once it has lasted 100 ms (frame 34: 4 frames = 128 ms)
  EXPECT_EQ(ranges(p, o), (std::vector<SampleRange>{{f(10), f(30)}}));
}

TEST(VadSegments, BetweenTheThresholdsSpeechContinues) {
  SegmentOptions o;
  o.speech_pad_ms = 0;
  // 0.4 is under the threshold 0.5 but above neg_threshold 0.35: it neither starts nor ends speech
  EXPECT_EQ(ranges(frames(80, {{10, 20, 0.9f}, {20, 30, 0.4f}}), o), (std::vector<SampleRange>{{f(10), f(30)}}));
  EXPECT_EQ(ranges(frames(80, {{10, 20, 0.9f}, {20, 30, 0.3f}}), o), (std::vector<SampleRange>{{f(10), f(20)}}));
  EXPECT_TRUE(ranges(frames(80, {{10, 30, 0.4f}}), o).empty());
  // a low threshold keeps neg_threshold at 0.01 at least
  o.threshold = 0.1f;
  EXPECT_EQ(ranges(frames(80, {{10, 20, 0.9f}, {20, 30, 0.02f}}), o), (std::vector<SampleRange>{{f(10), f(30)}}));
}

TEST(VadSegments, MinSpeechDurationDropsShortBursts) {
  SegmentOptions o;
  o.speech_pad_ms = 0;
  const auto p = frames(60, {{10, 16, 0.9f}});  // 6 frames = 192 ms
  EXPECT_TRUE(ranges(p, o).empty());
  o.min_speech_duration_ms = 150;
  EXPECT_EQ(ranges(p, o), (std::vector<SampleRange>{{f(10), f(16)}}));
  // also at the end of the audio
  EXPECT_TRUE(ranges(frames(16, {{10, 16, 0.9f}}), {}).empty());
  EXPECT_EQ(ranges(frames(16, {{10, 16, 0.9f}}), o), (std::vector<SampleRange>{{f(10), f(16)}}));
}

TEST(VadSegments, MinSilenceDurationJoinsAcrossShortPauses) {
  SegmentOptions o;
  o.speech_pad_ms = 0;
  const auto p = frames(100, {{10, 30, 0.9f}, {38, 58, 0.9f}});  // a pause of 8 frames = 256 ms
  EXPECT_EQ(ranges(p, o), (std::vector<SampleRange>{{f(10), f(30)}, {f(38), f(58)}}));
  o.min_silence_duration_ms = 300;
  EXPECT_EQ(ranges(p, o), (std::vector<SampleRange>{{f(10), f(58)}}));
}

TEST(VadSegments, GapsUnder200MsAreMerged) {
  SegmentOptions o;
  o.speech_pad_ms = 0;
  // a pause of 5 frames (160 ms) ends the first segment (min silence 100 ms) but is merged
  EXPECT_EQ(ranges(frames(100, {{10, 30, 0.9f}, {35, 55, 0.9f}}), o), (std::vector<SampleRange>{{f(10), f(55)}}));
  // 7 frames (224 ms) is not
  EXPECT_EQ(ranges(frames(100, {{10, 30, 0.9f}, {37, 57, 0.9f}}), o).size(), 2u);
}

TEST(VadSegments, MaxSpeechDurationCutsLongSpeech) {
  SegmentOptions o;
  o.speech_pad_ms = 0;
  const auto p = frames(300, {{0, 250, 0.9f}});  // 8 s of speech
  EXPECT_EQ(ranges(p, o).size(), 1u);
  o.max_speech_duration_s = 2.0f;  // 32000 samples less one frame (31488): cut at frame 62
  const auto cut = ranges(p, o);
  ASSERT_GE(cut.size(), 3u);
  EXPECT_EQ(cut[0], (SampleRange{f(0), f(62)}));
  for (const SampleRange& r : cut) EXPECT_LE(r.end - r.start, 32000);
  // with a silence over 98 ms inside (5 frames), the cut goes there and speech resumes after it
  const auto q = frames(300, {{0, 30, 0.9f}, {30, 35, 0.2f}, {35, 120, 0.9f}});
  o.min_silence_duration_ms = 2000;  // the pause does not end speech by itself
  const auto at_pause = ranges(q, o);
  ASSERT_GE(at_pause.size(), 2u);
  EXPECT_EQ(at_pause[0], (SampleRange{f(0), f(30)}));
  EXPECT_EQ(at_pause[1].start, f(35));
}

TEST(VadSegments, SpeechPadGrowsSegmentsAndSplitsNarrowGaps) {
  const auto p = frames(100, {{10, 30, 0.9f}, {38, 58, 0.9f}});
  SegmentOptions o;
  o.speech_pad_ms = 0;
  EXPECT_EQ(ranges(p, o), (std::vector<SampleRange>{{f(10), f(30)}, {f(38), f(58)}}));
  o.speech_pad_ms = 30;  // 480 samples each side
  EXPECT_EQ(ranges(p, o), (std::vector<SampleRange>{{f(10) - 480, f(30) + 480}, {f(38) - 480, f(58) + 480}}));
  o.speech_pad_ms = 200;  // 3200 each side, but the gap is 4096 < 2 x 3200: split at its middle
  EXPECT_EQ(ranges(p, o), (std::vector<SampleRange>{{f(10) - 3200, f(34)}, {f(34), f(58) + 3200}}));
  // never before 0 or past the end of the audio
  o.speech_pad_ms = 1000;
  const auto edge = ranges(frames(20, {{1, 20, 0.9f}}), o);
  EXPECT_EQ(edge, (std::vector<SampleRange>{{0, f(20)}}));
}

TEST(VadSegments, BadOptionsAreErrors) {
  SegmentOptions o;
  o.threshold = 1.5f;
  EXPECT_THROW(ranges({0.5f}, o), Error);
  o = {};
  o.min_speech_duration_ms = -1;
  EXPECT_THROW(ranges({0.5f}, o), Error);
  o = {};
  o.max_speech_duration_s = 0.0f;
  EXPECT_THROW(ranges({0.5f}, o), Error);
  EXPECT_TRUE(ranges({}, {}).empty());
}

}  // namespace
}  // namespace hark::vad
