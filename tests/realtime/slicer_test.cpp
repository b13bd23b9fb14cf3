// Where live audio is cut: full-length slices, pauses found by the energy or the Silero VAD, and
// cuts that do not depend on how the audio was chunked.
#include <gtest/gtest.h>

#include <cmath>

#include "hark/hark.hpp"
#include "realtime/slicer.h"
#include "vad/vad_test_util.h"

namespace hark::realtime {
namespace {

// The lengths of the slices the audio is cut into, fed in chunks of the given sizes (cycled).
std::vector<size_t> cut(const SlicerConfig& c, const std::vector<float>& audio, std::vector<size_t> chunks) {
  Slicer s(c);
  std::vector<size_t> lengths;
  size_t pos = 0;
  for (size_t i = 0; pos < audio.size(); ++i) {
    const size_t n = std::min(chunks[i % chunks.size()], audio.size() - pos);
    for (size_t off = 0; off < n;) {
      off += s.append(std::span<const float>(audio).subspan(pos + off, n - off));
      if (s.closed()) {
        lengths.push_back(s.slice().size());
        s.next();
      }
    }
    pos += n;
  }
  if (!s.slice().empty()) lengths.push_back(s.slice().size());
  return lengths;
}

std::vector<float> tone(double seconds, float amp) {
  std::vector<float> a(size_t(seconds * 16000));
  for (size_t i = 0; i < a.size(); ++i) a[i] = amp * float(std::sin(2 * M_PI * 300.0 * double(i) / 16000));
  return a;
}

TEST(Slicer, FullLengthSlicesWhateverTheChunks) {
  SlicerConfig c;
  c.slice_samples = 16000;
  c.min_samples = 8000;
  const std::vector<float> audio = tone(3.3, 0.3f);
  const std::vector<size_t> want = {16000, 16000, 16000, 4800};
  EXPECT_EQ(cut(c, audio, {1}), want);
  EXPECT_EQ(cut(c, audio, {7, 4099, 333}), want);
  EXPECT_EQ(cut(c, audio, {100000}), want);
}

TEST(Slicer, EnergyVadEndsASliceAtAPause) {
  std::vector<float> audio = tone(3.0, 0.3f);
  const std::vector<float> quiet(24000, 0.0f);
  audio.insert(audio.end(), quiet.begin(), quiet.end());
  const std::vector<float> more = tone(3.0, 0.3f);
  audio.insert(audio.end(), more.begin(), more.end());
  SlicerConfig c;
  c.slice_samples = 160000;
  c.min_samples = 16000;
  c.energy_vad = true;
  const std::vector<size_t> a = cut(c, audio, {512});
  ASSERT_GE(a.size(), 2u);
  EXPECT_GT(a[0], 48000u);  // after the speech
  EXPECT_LE(a[0], 72000u);  // within the pause
  EXPECT_EQ(a[0] % Slicer::kCheckSamples, 0u);
  EXPECT_EQ(cut(c, audio, {3, 5000, 77}), a);  // the same cuts for other chunks
  c.energy_vad = false;
  EXPECT_EQ(cut(c, audio, {512}), std::vector<size_t>{audio.size()});
}

TEST(Slicer, SileroEndsASliceAfterSpeechAndAPause) {
  const std::string model = testing::silero_model_path();
  const std::string clip = testing::shared_vad_path("vad-three-clips.wav");
  if (model.empty() || clip.empty()) GTEST_SKIP() << "../shared/vad/ (Silero model and clip) is not there";
  const std::vector<float> audio = load_audio(clip);
  SlicerConfig c;
  c.slice_samples = audio.size() + 1;
  c.min_samples = 16000;
  c.silero = VadModel::load(model);
  c.silero_silence_samples = 8000;
  const std::vector<size_t> a = cut(c, audio, {1000});
  ASSERT_GE(a.size(), 2u) << "no pause found";
  const VadResult r = c.silero->detect_speech(audio);
  ASSERT_FALSE(r.segments.empty());
  EXPECT_GT(int64_t(a[0]), r.segments[0].t0 * 160);  // the first cut comes after the first speech
  EXPECT_EQ(cut(c, audio, {333, 4096}), a);
}

// The VAD changes a listener (whisper.rn's onVad) sees: start before continue, an end for every
// start, speech over each segment the VAD finds, the same whatever the chunking.
TEST(Slicer, SileroVadChangesFollowTheSpeech) {
  const std::string model = testing::silero_model_path();
  const std::string clip = testing::shared_vad_path("vad-three-clips.wav");
  if (model.empty() || clip.empty()) GTEST_SKIP() << "../shared/vad/ (Silero model and clip) is not there";
  const std::vector<float> audio = load_audio(clip);
  auto changes = [&](size_t chunk) {
    SlicerConfig c;
    c.slice_samples = 16000 * 10;
    c.min_samples = 16000;
    c.silero = VadModel::load(model);
    c.silero_silence_samples = 8000;
    Slicer s(c);
    std::vector<VadChange> out;
    for (size_t pos = 0; pos < audio.size();) {
      pos += s.append(std::span<const float>(audio).subspan(pos, std::min(chunk, audio.size() - pos)));
      for (const VadChange& v : s.take_vad_changes()) out.push_back(v);
      if (s.closed()) s.next();
    }
    return out;
  };
  const std::vector<VadChange> a = changes(1000);
  ASSERT_FALSE(a.empty());
  bool speaking = false;
  int starts = 0;
  for (const VadChange& v : a) {
    if (v.type == VadChange::Type::kSpeechStart) {
      EXPECT_FALSE(speaking) << "a start while speaking at " << v.sample;
      speaking = true;
      ++starts;
    } else {
      EXPECT_TRUE(speaking) << "a continue or end outside speech at " << v.sample;
      if (v.type == VadChange::Type::kSpeechEnd) speaking = false;
    }
    EXPECT_GE(v.confidence, 0.0f);
    EXPECT_LE(v.confidence, 1.0f);
  }
  EXPECT_EQ(starts, 3) << "the clip holds three utterances";
  const std::vector<VadChange> b = changes(4099);
  ASSERT_EQ(a.size(), b.size());
  for (size_t i = 0; i < a.size(); ++i) {
    EXPECT_EQ(a[i].type, b[i].type) << i;
    // Where: a frame's verdict is placed at the piece of audio that completed it (pieces end at
    // the 100 ms check points or a chunk's end), so within a piece and a frame of each other.
    EXPECT_NEAR(double(a[i].sample), double(b[i].sample), double(Slicer::kCheckSamples + 512)) << i;
  }
}

// Dropped audio moves the next slice's start by as much; only an empty slice may be moved.
TEST(Slicer, SkipMovesTheNextSliceStart) {
  SlicerConfig c;
  c.slice_samples = 1600;
  Slicer s(c);
  const std::vector<float> a = tone(0.05, 0.3f);
  s.append(a);
  try {
    s.skip(100);
    ADD_FAILURE() << "skipped with audio in the open slice";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("open slice"), std::string::npos) << e.what();
  }
  s.next();
  s.skip(16000);
  EXPECT_EQ(s.start_sample(), int64_t(a.size()) + 16000);
}

}  // namespace
}  // namespace hark::realtime
