// The public VAD API (hark/vad.hpp): detect_speech on the shared clip gives whisper.cpp's
// segments, a stream fed in chunks of any size gives the whole-buffer probabilities, and bad
// input is a hark::Error.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <limits>

#include "hark/hark.hpp"
#include "vad/vad_test_util.h"

namespace hark {
namespace {

using hark::testing::error_of;
using hark::testing::mentions;

class VadApi : public ::testing::Test {
 protected:
  void SetUp() override {
    const std::string model = hark::testing::silero_model_path();
    const std::string wav = hark::testing::shared_vad_path("vad-three-clips.wav");
    if (model.empty() || wav.empty()) GTEST_SKIP() << "../shared/vad not found";
    vad_ = VadModel::load(model);
    samples_ = load_audio(wav);
  }
  std::shared_ptr<VadModel> vad_;
  std::vector<float> samples_;
};

TEST_F(VadApi, DetectSpeechGivesTheReferenceSegments) {
  EXPECT_EQ(vad_->model_type(), "silero-16k");
  EXPECT_EQ(vad_->version(), "6.2.0");
  EXPECT_EQ(vad_->frame_samples(), 512);
  const VadResult r = vad_->detect_speech(samples_);
  EXPECT_EQ(r.probs.size(), 547u);
  EXPECT_EQ(r.frame_samples, 512);
  // whisper.cpp: 32.00 691.00, 855.00 1350.00, 1418.00 1725.00 (centiseconds)
  EXPECT_EQ(r.segments, (std::vector<VadSegment>{{32, 691}, {855, 1350}, {1418, 1725}}));
  EXPECT_EQ(vad_segments_from_probs(r.probs), r.segments);
  // options reach the segments: a long minimum silence joins the three
  VadOptions o;
  o.min_silence_duration_ms = 2000;
  const VadResult joined = vad_->detect_speech(samples_, o);
  EXPECT_EQ(joined.probs, r.probs);
  ASSERT_EQ(joined.segments.size(), 1u);
  EXPECT_EQ(joined.segments[0].t0, 32);
}

TEST_F(VadApi, StreamInAnyChunksEqualsTheWholeBuffer) {
  const std::vector<float> whole = vad_->probabilities(samples_);
  auto stream = vad_->stream();
  std::vector<float> got;
  const size_t sizes[] = {1, 7, 511, 512, 513, 1600, 4096, 3};
  size_t at = 0;
  for (size_t k = 0; at < samples_.size(); ++k) {
    const size_t n = std::min(sizes[k % std::size(sizes)], samples_.size() - at);
    for (float p : stream->push(std::span<const float>(samples_).subspan(at, n))) got.push_back(p);
    at += n;
    EXPECT_EQ(stream->pending_samples(), at % 512);
  }
  for (float p : stream->flush()) got.push_back(p);
  EXPECT_EQ(got, whole);
  EXPECT_EQ(stream->frames(), 547);
  EXPECT_TRUE(stream->flush().empty());

  // frame by frame after a reset, the same numbers
  stream->reset();
  for (size_t i = 0; i < 20; ++i)
    EXPECT_EQ(stream->process(std::span<const float>(samples_).subspan(512 * i, 512)), whole[i]) << i;
}

// The upstream Silero front end (the previous frame's tail as context) is another input to the
// same network: other numbers, the same speech on this clip; it carries across stream pushes
// and restarts from zeros.
TEST_F(VadApi, UpstreamContextFrontEnd) {
  VadModelParams p;
  p.upstream_context = true;
  auto up = VadModel::load(hark::testing::silero_model_path(), p);
  const VadResult a = up->detect_speech(samples_);
  const VadResult ref = vad_->detect_speech(samples_);
  ASSERT_EQ(a.probs.size(), ref.probs.size());
  double worst = 0.0;
  for (size_t i = 0; i < a.probs.size(); ++i) worst = std::max(worst, std::fabs(double(a.probs[i]) - ref.probs[i]));
  EXPECT_GT(worst, 1e-2);  // the context changes what the STFT sees
  EXPECT_EQ(a.segments, ref.segments);
  EXPECT_EQ(up->detect_speech(samples_).probs, a.probs);  // a fresh state every call
  auto stream = up->stream();
  std::vector<float> got;
  for (size_t at = 0; at < samples_.size(); at += 700)
    for (float v :
         stream->push(std::span<const float>(samples_).subspan(at, std::min<size_t>(700, samples_.size() - at))))
      got.push_back(v);
  for (float v : stream->flush()) got.push_back(v);
  EXPECT_EQ(got, a.probs);
}

// The scalar reference device runs the same network (slowly): the first seconds agree.
TEST_F(VadApi, ReferenceDeviceAgrees) {
  VadModelParams p;
  p.device = "cpu-ref";
  auto ref = VadModel::load(hark::testing::silero_model_path(), p);
  const auto first = std::span<const float>(samples_).first(3 * 16000);
  const std::vector<float> a = ref->probabilities(first), b = vad_->probabilities(first);
  ASSERT_EQ(a.size(), 94u);
  ASSERT_EQ(a.size(), b.size());
  // f32 vs double sums can move a value across an f16 rounding boundary: within 1e-3 as against whisper.cpp
  for (size_t i = 0; i < a.size(); ++i) EXPECT_NEAR(a[i], b[i], 1e-3) << i;
}

TEST_F(VadApi, BadInputIsAnError) {
  auto stream = vad_->stream();
  EXPECT_TRUE(mentions(error_of([&] { stream->process(std::span<const float>(samples_).first(100)); }),
                       {"frames of 512 samples, got 100"}));
  stream->push(std::span<const float>(samples_).first(10));
  EXPECT_TRUE(mentions(error_of([&] { stream->process(std::span<const float>(samples_).first(512)); }),
                       {"10 pushed samples are pending"}));
  std::vector<float> bad(1000, 0.0f);
  bad[500] = std::numeric_limits<float>::quiet_NaN();
  EXPECT_TRUE(mentions(error_of([&] { vad_->detect_speech(bad); }), {"NaN"}));
  VadOptions o;
  o.threshold = -0.1f;
  EXPECT_TRUE(mentions(error_of([&] { vad_->detect_speech(samples_, o); }), {"threshold must be in [0, 1]"}));
  o = {};
  o.samples_overlap = -1.0f;
  EXPECT_TRUE(mentions(error_of([&] { vad_segments_from_probs(std::vector<float>{0.9f}, o); }), {"samples_overlap"}));
  EXPECT_TRUE(mentions(error_of([&] { VadModel::load("/nonexistent.bin"); }), {"/nonexistent.bin", "cannot open"}));
  VadModelParams zero_threads;
  zero_threads.n_threads = 0;
  EXPECT_TRUE(
      mentions(error_of([&] { VadModel::load(hark::testing::silero_model_path(), zero_threads); }), {"n_threads"}));
  VadModelParams gpu;
  gpu.device = "gpu0";
  EXPECT_TRUE(
      mentions(error_of([&] { VadModel::load(hark::testing::silero_model_path(), gpu); }), {"unknown device 'gpu0'"}));
  // empty audio: no frames, no segments
  const VadResult empty = vad_->detect_speech({});
  EXPECT_TRUE(empty.probs.empty());
  EXPECT_TRUE(empty.segments.empty());
}

}  // namespace
}  // namespace hark
