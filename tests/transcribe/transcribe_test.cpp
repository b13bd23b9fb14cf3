// End to end on the micro model (random weights, so the text is nonsense, but every rule about
// its shape must hold): the same text for the same input at any thread count; timestamps that
// obey Whisper's rules on every segment; windows that cover long audio from start to end; abort;
// and clear errors for bad requests.
#include <gtest/gtest.h>

#include <cmath>
#include <limits>

#include "hark/hark.hpp"
#include "transcribe/micro_model.h"

namespace hark {
namespace {

std::vector<float> synth_audio(double seconds, double base_hz = 180.0) {
  return testing::speech_like_tones(seconds, base_hz);
}

class Transcribe : public testing::MicroModelTest {};

// What every transcript must satisfy, whatever the model says.
void expect_well_formed(const Transcript& t, int64_t audio_units) {
  int64_t prev_t0 = 0;
  for (size_t i = 0; i < t.segments.size(); ++i) {
    const Segment& s = t.segments[i];
    EXPECT_LE(s.t0, s.t1) << "segment " << i;
    EXPECT_GE(s.t0, prev_t0) << "segment " << i << " starts before the one before it";
    EXPECT_GE(s.t0, 0);
    EXPECT_LE(s.t1, audio_units) << "segment " << i << " ends after the audio";
    EXPECT_FALSE(s.tokens.empty());
    for (const TokenData& tok : s.tokens) EXPECT_TRUE(tok.p > 0.0f && tok.p <= 1.0f) << "token " << tok.id;
    // Segment text is valid UTF-8 (the tokenizer holds split characters back).
    EXPECT_FALSE(s.text.empty());
    prev_t0 = s.t0;
    // Every segment lies inside a window that decoded it.
    bool inside = false;
    for (const Window& w : t.windows) inside |= w.t0 <= s.t0 && s.t1 <= w.t1;
    EXPECT_TRUE(inside) << "segment " << i << " [" << s.t0 << ", " << s.t1 << "] is in no window";
  }
}

TEST_F(Transcribe, SameTextTwiceAndAtAnyThreadCount) {
  const std::vector<float> audio = synth_audio(12.0);
  std::string first;
  for (int threads : {1, 2, 3}) {
    auto ctx = load(threads);
    for (int run = 0; run < (threads == 2 ? 2 : 1); ++run) {
      const Transcript t = ctx->transcribe(audio, testing::fast_params());
      std::string all;
      for (const Segment& s : t.segments)
        all += std::to_string(s.t0) + "-" + std::to_string(s.t1) + ":" + s.text + "\n";
      ASSERT_FALSE(all.empty()) << "the micro model produced no segment; the test would prove nothing";
      if (first.empty()) first = all;
      EXPECT_EQ(all, first) << "threads=" << threads << " run=" << run;
    }
  }
}

TEST_F(Transcribe, TimestampsObeyTheRulesAndWindowsCoverLongAudio) {
  auto ctx = load();
  const double seconds = 95.0;
  const std::vector<float> audio = synth_audio(seconds);
  int last_progress = -1, segments_seen = 0;
  TranscribeParams p = testing::fast_params();
  p.on_progress = [&](int pct) {
    EXPECT_GE(pct, last_progress);
    last_progress = pct;
  };
  p.on_new_segments = [&](const NewSegments& ns) {
    EXPECT_EQ(ns.n_new, static_cast<int>(ns.segments.size()));
    segments_seen += ns.n_new;
    EXPECT_EQ(ns.total, segments_seen);
  };
  const Transcript t = ctx->transcribe(audio, p);
  const int64_t units = static_cast<int64_t>(seconds * 100);
  expect_well_formed(t, units);
  EXPECT_EQ(segments_seen, static_cast<int>(t.segments.size()));
  EXPECT_EQ(last_progress, 100);

  // Windows: the first starts at 0, each starts inside or right after the one before, and they
  // reach the end of the audio; each covers at most 30 s.
  ASSERT_GE(t.windows.size(), 4u) << "95 s needs at least four 30 s windows";
  EXPECT_EQ(t.windows.front().t0, 0);
  for (size_t i = 0; i < t.windows.size(); ++i) {
    EXPECT_LE(t.windows[i].t1 - t.windows[i].t0, 3000);
    EXPECT_GT(t.windows[i].t1, t.windows[i].t0);
    if (i > 0) {
      EXPECT_GT(t.windows[i].t0, t.windows[i - 1].t0) << "window " << i << " does not move forward";
      EXPECT_LE(t.windows[i].t0, t.windows[i - 1].t1) << "gap before window " << i;
    }
  }
  EXPECT_EQ(t.windows.back().t1, units);
  EXPECT_EQ(t.timings.n_windows, static_cast<int>(t.windows.size()));
  EXPECT_GT(t.timings.encode_ms, 0.0);
  EXPECT_GT(t.timings.n_decode_tokens, 0);
}

TEST_F(Transcribe, OffsetAndDurationShiftTheTimes) {
  auto ctx = load();
  const std::vector<float> audio = synth_audio(20.0);
  TranscribeParams p = testing::fast_params();
  p.offset_ms = 5000;
  p.duration_ms = 8000;
  const Transcript t = ctx->transcribe(audio, p);
  ASSERT_FALSE(t.windows.empty());
  EXPECT_EQ(t.windows.front().t0, 500);
  EXPECT_EQ(t.windows.back().t1, 1300);
  for (const Segment& s : t.segments) {
    EXPECT_GE(s.t0, 500);
    EXPECT_LE(s.t1, 1300);
  }
}

TEST_F(Transcribe, ProgressReachesHundredWhenATooShortTailIsLeftOut) {
  auto ctx = load();
  int last = -1;
  TranscribeParams p = testing::fast_params();
  p.on_progress = [&](int pct) { last = pct; };
  p.timestamps = false;  // each window is consumed whole, so the second one holds 5 frames
  const Transcript t = ctx->transcribe(synth_audio(30.05), p);
  EXPECT_EQ(t.windows.size(), 1u);
  EXPECT_EQ(last, 100);
  EXPECT_FALSE(t.aborted);
}

TEST_F(Transcribe, NoTimestampsGivesOneSegmentPerWindow) {
  auto ctx = load();
  TranscribeParams p = testing::fast_params();
  p.timestamps = false;
  const Transcript t = ctx->transcribe(synth_audio(10.0), p);
  ASSERT_EQ(t.windows.size(), 1u);
  EXPECT_LE(t.segments.size(), 1u);
  for (const Segment& s : t.segments)
    for (const TokenData& tok : s.tokens) EXPECT_LT(tok.id, 50257) << "a special token in the text";
}

TEST_F(Transcribe, AbortStopsTheJobAndTheContextStaysUsable) {
  auto ctx = load();
  const std::vector<float> audio = synth_audio(95.0);
  int calls = 0;
  TranscribeParams p = testing::fast_params();
  p.should_abort = [&] { return ++calls > 50; };
  const Transcript aborted = ctx->transcribe(audio, p);
  EXPECT_TRUE(aborted.aborted);
  EXPECT_LT(aborted.windows.size(), 4u);
  const Transcript again = ctx->transcribe(synth_audio(5.0), testing::fast_params());
  EXPECT_FALSE(again.aborted);
  EXPECT_EQ(again.windows.size(), 1u);
}

TEST_F(Transcribe, BadRequestsGetClearErrors) {
  auto ctx = load();
  auto message = [&](const std::vector<float>& a, const TranscribeParams& p) -> std::string {
    try {
      ctx->transcribe(a, p);
    } catch (const Error& e) {
      return e.what();
    }
    return "(no error)";
  };
  TranscribeParams p = testing::fast_params();
  EXPECT_NE(message({}, p).find("no audio"), std::string::npos);
  std::vector<float> nan_audio = synth_audio(2.0);
  nan_audio[12345] = std::numeric_limits<float>::quiet_NaN();
  EXPECT_NE(message(nan_audio, p).find("12345"), std::string::npos) << message(nan_audio, p);
  p.language = "klingon";
  EXPECT_NE(message(synth_audio(1.0), p).find("unknown language 'klingon'"), std::string::npos);
  p = {};
  p.offset_ms = 60000;
  EXPECT_NE(message(synth_audio(1.0), p).find("past the end"), std::string::npos);
  EXPECT_THROW(Context::load("/nonexistent/model.bin"), Error);
  ContextParams cp;
  cp.device = "tpu";
  try {
    Context::load(file_->path(), cp);
    FAIL() << "no error for an unknown device";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("unknown device 'tpu'"), std::string::npos) << e.what();
  }
}

}  // namespace
}  // namespace hark
