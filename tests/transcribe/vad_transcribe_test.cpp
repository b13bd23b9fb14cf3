// VAD-assisted transcription end to end: the micro model (random weights) with the real Silero
// VAD on the shared speech clip between long silences. What is checked is behaviour the caller
// sees: fewer encoder windows than without VAD, every reported time inside the speech the VAD
// found in the original audio (plus the overlap kept after it), the callbacks on the same
// timeline, determinism, an empty transcript for silence, and bad settings refused before any
// Whisper compute.
#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <cstdio>
#include <functional>
#include <utility>
#include <vector>

#include "transcribe/micro_model.h"
#include "transcribe/vad_cache.h"
#include "vad/vad_test_util.h"

namespace hark::testing {
namespace {

std::vector<float> silence(double seconds) {
  return std::vector<float>(static_cast<size_t>(seconds * kSampleRate), 0.0f);
}

void append(std::vector<float>& a, const std::vector<float>& b) { a.insert(a.end(), b.begin(), b.end()); }

class VadTranscribeTest : public MicroModelTest {
 protected:
  void SetUp() override {
    model_ = silero_model_path();
    const std::string wav = shared_vad_path("vad-three-clips.wav");
    if (model_.empty() || wav.empty()) GTEST_SKIP() << "../shared/vad (Silero model and clip) not found";
    const std::vector<float> clip = load_audio(wav);
    // 20 s silence, the clip (~17.5 s, three stretches of speech), 40 s silence, the clip, 10 s.
    append(audio_, silence(20));
    append(audio_, clip);
    append(audio_, silence(40));
    append(audio_, clip);
    append(audio_, silence(10));
  }

  TranscribeParams vad_params() const {
    TranscribeParams p = testing::fast_params();
    p.vad = true;
    p.vad_model_path = model_;
    p.token_timestamps = true;     // token times are mapped too
    p.max_tokens_per_window = 48;  // random weights talk on: keep the suite quick
    return p;
  }

  // The speech regions of audio[offset..], on the caller's timeline, each extended by what the
  // cut keeps after it (samples_overlap) so times inside the kept audio count as inside.
  std::vector<VadSegment> regions(const TranscribeParams& p, int64_t offset_ms = 0) const {
    const auto vad = VadModel::load(model_);
    const std::span<const float> part = std::span<const float>(audio_).subspan(static_cast<size_t>(offset_ms) * 16);
    std::vector<VadSegment> r = vad->detect_speech(part, p.vad_params).segments;
    const int64_t overlap = static_cast<int64_t>(p.vad_params.samples_overlap * 100 + 0.5);
    for (VadSegment& s : r) {
      s.t0 += offset_ms / 10;
      s.t1 += offset_ms / 10 + overlap;
    }
    return r;
  }

  static bool inside(const std::vector<VadSegment>& rs, int64_t t) {
    for (const VadSegment& r : rs)
      if (t >= r.t0 && t <= r.t1) return true;
    return false;
  }

  static void expect_inside(const Transcript& t, const std::vector<VadSegment>& rs) {
    for (const Segment& s : t.segments) {
      EXPECT_TRUE(inside(rs, s.t0)) << "segment start " << s.t0 << " is outside the speech";
      EXPECT_TRUE(inside(rs, s.t1)) << "segment end " << s.t1 << " is outside the speech";
      EXPECT_LE(s.t0, s.t1);
      for (const TokenData& tok : s.tokens) {
        if (tok.t0 < 0) continue;
        EXPECT_TRUE(inside(rs, tok.t0)) << "token start " << tok.t0;
        EXPECT_TRUE(inside(rs, tok.t1)) << "token end " << tok.t1;
      }
      for (const Word& w : s.words) {
        EXPECT_TRUE(inside(rs, w.t0)) << "word start " << w.t0;
        EXPECT_TRUE(inside(rs, w.t1)) << "word end " << w.t1;
      }
    }
    for (size_t i = 1; i < t.segments.size(); ++i) EXPECT_GE(t.segments[i].t0, t.segments[i - 1].t0);
  }

  std::string model_;
  std::vector<float> audio_;
};

TEST_F(VadTranscribeTest, FewerWindowsAndTimesInsideTheSpeech) {
  auto ctx = load();
  TranscribeParams plain = testing::fast_params();
  plain.max_tokens_per_window = 48;
  const Transcript full = ctx->transcribe(audio_, plain);

  TranscribeParams p = vad_params();
  std::vector<Segment> reported;
  int last_progress = -1;
  p.on_new_segments = [&](const NewSegments& ns) {
    reported.insert(reported.end(), ns.segments.begin(), ns.segments.end());
  };
  p.on_progress = [&](int pct) { last_progress = pct; };
  const Transcript t = ctx->transcribe(audio_, p);

  std::printf("windows: %d without VAD, %d with (%zu segments, vad %.1f ms)\n", full.timings.n_windows,
              t.timings.n_windows, t.segments.size(), t.timings.vad_ms);
  EXPECT_LT(t.timings.n_windows, full.timings.n_windows);
  EXPECT_GT(t.timings.n_windows, 0);
  EXPECT_EQ(last_progress, 100);
  EXPECT_DOUBLE_EQ(t.timings.audio_seconds, full.timings.audio_seconds);  // the caller's audio
  EXPECT_GT(t.timings.vad_ms, 0.0);
  ASSERT_FALSE(t.segments.empty()) << "the micro model wrote nothing: nothing to check";
  expect_inside(t, regions(p));
  for (const Window& w : t.windows) EXPECT_TRUE(inside(regions(p), w.t0)) << "window start " << w.t0;

  // The callback saw the same segments on the same timeline.
  ASSERT_EQ(reported.size(), t.segments.size());
  for (size_t i = 0; i < reported.size(); ++i) {
    EXPECT_EQ(reported[i].t0, t.segments[i].t0);
    EXPECT_EQ(reported[i].t1, t.segments[i].t1);
    EXPECT_EQ(reported[i].text, t.segments[i].text);
  }

  // Deterministic.
  const Transcript again = ctx->transcribe(audio_, vad_params());
  ASSERT_EQ(again.segments.size(), t.segments.size());
  for (size_t i = 0; i < t.segments.size(); ++i) {
    EXPECT_EQ(again.segments[i].t0, t.segments[i].t0);
    EXPECT_EQ(again.segments[i].t1, t.segments[i].t1);
    EXPECT_EQ(again.segments[i].text, t.segments[i].text);
  }

  // The speech given (vad_speech, as the VAD found it): the same transcript without a second VAD
  // run; each segment's seek is its window's start.
  TranscribeParams given = vad_params();
  given.vad_speech = VadModel::load(model_)->detect_speech(audio_, given.vad_params).segments;
  ASSERT_FALSE(given.vad_speech.empty());
  const Transcript g = ctx->transcribe(audio_, given);
  ASSERT_EQ(g.segments.size(), t.segments.size());
  for (size_t i = 0; i < t.segments.size(); ++i) {
    EXPECT_EQ(g.segments[i].t0, t.segments[i].t0);
    EXPECT_EQ(g.segments[i].text, t.segments[i].text);
    EXPECT_EQ(g.segments[i].seek, t.segments[i].seek);
  }
  for (const Segment& s : t.segments) {
    bool a_window_start = false;
    for (const Window& w : t.windows) a_window_start = a_window_start || w.t0 == s.seek;
    EXPECT_TRUE(a_window_start) << "seek " << s.seek;
    EXPECT_LE(s.seek, s.t0);
  }
}

// A retried window is told on the caller's timeline, as its segments are: the start of one of the
// transcript's windows, inside the speech.
TEST_F(VadTranscribeTest, FallbacksAreToldOnTheCallersTimeline) {
  auto ctx = load();
  TranscribeParams p = vad_params();
  p.temperature_inc = 0.5f;
  p.max_tokens_per_window = 16;
  std::vector<Fallback> told;
  p.on_fallback = [&](const Fallback& f) { told.push_back(f); };
  const Transcript t = ctx->transcribe(audio_, p);
  ASSERT_GT(t.n_fallback_windows, 0) << "the random model should fail the fallback checks";
  ASSERT_GE(told.size(), static_cast<size_t>(t.n_fallback_windows));
  const std::vector<VadSegment> speech = regions(p);
  for (const Fallback& f : told) {
    EXPECT_TRUE(std::any_of(t.windows.begin(), t.windows.end(), [&](const Window& w) { return w.t0 == f.t0; }))
        << "retried window at " << f.t0 << " is none of the transcript's";
    EXPECT_TRUE(inside(speech, f.t0)) << f.t0;
    EXPECT_GT(f.t1, f.t0);
  }
}

TEST_F(VadTranscribeTest, OffsetAndProcessors) {
  auto ctx = load();
  TranscribeParams p = vad_params();
  p.offset_ms = 50000;       // inside the second silence: only the second clip remains
  p.word_timestamps = true;  // words are mapped too
  const Transcript t = ctx->transcribe(audio_, p);
  expect_inside(t, regions(p, p.offset_ms));
  size_t n_words = 0;
  for (const Segment& s : t.segments) n_words += s.words.size();
  EXPECT_GT(n_words, 0u);
  for (const Segment& s : t.segments) EXPECT_GE(s.t0, 5000);

  TranscribeParams q = vad_params();
  q.n_processors = 2;
  std::vector<int64_t> starts;
  q.on_new_segments = [&](const NewSegments& ns) {
    for (const Segment& s : ns.segments) starts.push_back(s.t0);
  };
  const Transcript u = ctx->transcribe(audio_, q);
  expect_inside(u, regions(q));
  ASSERT_EQ(starts.size(), u.segments.size());
  for (size_t i = 0; i < starts.size(); ++i) EXPECT_EQ(starts[i], u.segments[i].t0);
}

TEST_F(VadTranscribeTest, SilenceGivesAnEmptyTranscript) {
  auto ctx = load();
  TranscribeParams p = vad_params();
  int last_progress = -1;
  std::atomic<int> encoder_runs{0};
  p.on_progress = [&](int pct) { last_progress = pct; };
  p.on_encoder_begin = [&] {
    ++encoder_runs;
    return true;
  };
  const std::vector<float> quiet = silence(30);
  const Transcript t = ctx->transcribe(quiet, p);
  EXPECT_TRUE(t.segments.empty());
  EXPECT_FALSE(t.aborted);
  EXPECT_EQ(t.timings.n_windows, 0);
  EXPECT_EQ(encoder_runs.load(), 0);
  EXPECT_EQ(last_progress, 100);
  EXPECT_EQ(t.language, "en");
}

TEST_F(VadTranscribeTest, AbortedJobStops) {
  auto ctx = load();
  TranscribeParams p = vad_params();
  p.should_abort = [] { return true; };
  const Transcript t = ctx->transcribe(audio_, p);
  EXPECT_TRUE(t.aborted);
  EXPECT_TRUE(t.segments.empty());
  EXPECT_EQ(t.timings.n_windows, 0);
}

TEST_F(VadTranscribeTest, BadSettingsFailBeforeAnyCompute) {
  auto ctx = load();
  const std::string whisper_model = file_->path();
  const std::pair<std::function<void(TranscribeParams&)>, std::string> cases[] = {
      {[](TranscribeParams& p) { p.vad_params.threshold = 1.5f; }, "threshold"},
      {[](TranscribeParams& p) { p.vad_params.threshold = -0.1f; }, "threshold"},
      {[](TranscribeParams& p) { p.vad_params.min_speech_duration_ms = -1; }, "min_speech_duration_ms"},
      {[](TranscribeParams& p) { p.vad_params.min_silence_duration_ms = -5; }, "min_silence_duration_ms"},
      {[](TranscribeParams& p) { p.vad_params.speech_pad_ms = -30; }, "speech_pad_ms"},
      {[](TranscribeParams& p) { p.vad_params.max_speech_duration_s = 0.0f; }, "max_speech_duration_s"},
      {[](TranscribeParams& p) { p.vad_params.samples_overlap = -0.1f; }, "samples_overlap"},
      {[](TranscribeParams& p) { p.vad_model_path.clear(); }, "vad_model_path"},
      {[](TranscribeParams& p) { p.vad_model_path = "/nonexistent/silero.bin"; }, "/nonexistent/silero.bin"},
      // A file that is not a VAD model (the Whisper model itself).
      {[&](TranscribeParams& p) { p.vad_model_path = whisper_model; }, whisper_model},
      // Given speech: in order, not overlapping, inside the audio.
      {[](TranscribeParams& p) {
         p.vad_speech = {{50, 40}};
       },
       "vad_speech[0]"},
      {[](TranscribeParams& p) {
         p.vad_speech = {{0, 100}, {90, 200}};
       },
       "vad_speech[1]"},
      {[](TranscribeParams& p) {
         p.vad_speech = {{-5, 10}};
       },
       "vad_speech[0]"},
      {[](TranscribeParams& p) {
         p.vad_speech = {{0, 1000000}};
       },
       "vad_speech[0]"},
  };
  for (const auto& [set, what] : cases) {
    TranscribeParams p = vad_params();
    set(p);
    expect_refused_before_compute(*ctx, audio_, p, what);
  }
  // VAD off: the options are not looked at.
  TranscribeParams off = testing::fast_params();
  off.vad_params.threshold = 7.0f;
  off.duration_ms = 1000;
  EXPECT_NO_THROW(ctx->transcribe(audio_, off));
}

}  // namespace
}  // namespace hark::testing

namespace hark::testing {
namespace {

TEST(VadModelCache, LoadsEachPathOnceAndForgetsFailures) {
  const std::string model = silero_model_path();
  if (model.empty()) GTEST_SKIP() << "../shared/vad/silero-v6.2.0-ggml.bin not found";
  VadModelCache cache;
  const auto a = cache.get(model);
  const auto b = cache.get(model);
  EXPECT_EQ(a.get(), b.get());
  EXPECT_THROW(cache.get("/nonexistent/silero.bin"), Error);
  EXPECT_EQ(cache.size(), 1u);  // the failed path is not kept
}

}  // namespace
}  // namespace hark::testing
