// The Silero network against whisper.cpp's probabilities for ../shared/vad/vad-three-clips.wav
// (one per 512-sample frame, the last frame zero-padded, the state reset at the start), and the
// frame graph on the CPU backend against the reference backend node by node.
#include <gtest/gtest.h>

#include <cmath>
#include <fstream>
#include <sstream>

#include "audio/audio.h"
#include "backend/buffer.h"
#include "backend/compare.h"
#include "backend/device_registry.h"
#include "runtime/ops.h"
#include "vad/silero_graph.h"
#include "vad/silero_vad.h"
#include "vad/vad_test_util.h"

namespace hark::vad {
namespace {

struct Reference {
  std::vector<float> probs;
  std::vector<std::pair<double, double>> segments;  // centiseconds
};

Reference read_reference(const std::string& path) {
  Reference r;
  std::ifstream in(path);
  std::string line;
  while (std::getline(in, line)) {
    if (line.rfind("# segment ", 0) == 0) {
      std::istringstream s(line.substr(10));
      double a, b;
      s >> a >> b;
      r.segments.emplace_back(a, b);
    } else if (!line.empty() && line[0] != '#') {
      r.probs.push_back(std::stof(line));
    }
  }
  return r;
}

class SileroReference : public ::testing::Test {
 protected:
  void SetUp() override {
    const std::string model = hark::testing::silero_model_path();
    wav_ = hark::testing::shared_vad_path("vad-three-clips.wav");
    ref_path_ = hark::testing::shared_vad_path("vad-three-clips.silero-probs.txt");
    if (model.empty() || wav_.empty() || ref_path_.empty()) GTEST_SKIP() << "../shared/vad not found";
    file_ = SileroFile::open(model);
  }
  std::string wav_, ref_path_;
  std::shared_ptr<SileroFile> file_;
};

TEST_F(SileroReference, ProbabilitiesMatchWhisperCpp) {
  const std::vector<float> samples = audio::load_file(wav_);
  const Reference ref = read_reference(ref_path_);
  ASSERT_EQ(samples.size(), 279840u);
  ASSERT_EQ(ref.probs.size(), 547u);  // ceil(279840 / 512): the last frame is partial
  SileroVad vad(file_, 1);
  const std::vector<float> got = vad.detect(samples.data(), samples.size());
  ASSERT_EQ(got.size(), ref.probs.size());
  double worst = 0.0;
  size_t at = 0;
  for (size_t i = 0; i < got.size(); ++i) {
    const double d = std::fabs(got[i] - ref.probs[i]);
    if (d > worst) worst = d, at = i;
  }
  EXPECT_LE(worst, 1e-3) << "frame " << at << ": hark " << got[at] << ", whisper.cpp " << ref.probs[at];
  std::printf("max |hark - whisper.cpp| = %.2e at frame %zu\n", worst, at);
}

// Frame by frame, the state carries: process() over the frames equals detect() over the buffer,
// and reset() starts again from zero state (a second detect gives the same answer).
TEST_F(SileroReference, FrameByFrameEqualsWholeBufferAndResetRestarts) {
  const std::vector<float> samples = audio::load_file(wav_);
  SileroVad vad(file_, 1);
  const std::vector<float> whole = vad.detect(samples.data(), 100 * 512 + 17);
  ASSERT_EQ(whole.size(), 101u);
  const std::vector<float> h_after = vad.h(), c_after = vad.c();
  vad.reset();
  for (size_t i = 0; i < 100; ++i) EXPECT_EQ(vad.process(samples.data() + 512 * i), whole[i]) << i;
  EXPECT_NE(vad.h(), std::vector<float>(vad.h().size(), 0.0f));
  // the state after the blocks detect() ran is the state after the same frames one by one
  std::vector<float> last(512, 0.0f);
  std::copy_n(samples.data() + 100 * 512, 17, last.begin());
  EXPECT_EQ(vad.process(last.data()), whole[100]);
  EXPECT_EQ(vad.h(), h_after);
  EXPECT_EQ(vad.c(), c_after);
  // several frames in one call (blocks, then single frames) continue the same state
  std::vector<float> probs(40);
  vad.reset();
  vad.process(samples.data(), 40, probs.data());
  EXPECT_EQ(probs, std::vector<float>(whole.begin(), whole.begin() + 40));
  vad.process(samples.data() + 40 * 512, 20, probs.data());
  EXPECT_EQ(std::vector<float>(probs.begin(), probs.begin() + 20),
            std::vector<float>(whole.begin() + 40, whole.begin() + 60));
  EXPECT_EQ(vad.detect(samples.data(), 100 * 512 + 17), whole);
  // without the reset the state from before changes the first frames' answers
  const float fresh = whole[40];
  vad.reset();
  for (size_t i = 0; i < 40; ++i) vad.process(samples.data() + 512 * (i + 300));
  EXPECT_NE(vad.process(samples.data() + 512 * 40), fresh);
  // threads do not change the numbers
  SileroVad vad2(file_, 2);
  EXPECT_EQ(vad2.detect(samples.data(), 100 * 512 + 17), whole);
}

// The whole graph over a block of three frames with the real weights (the frame-local layers as
// one batch, the recurrence frame by frame): the CPU backend against the reference, node by node.
TEST_F(SileroReference, FramesGraphCpuAgainstReferenceNodeByNode) {
  const std::vector<float> samples = audio::load_file(wav_);
  const SileroHParams& hp = file_->hparams();
  TensorArena arena;
  HostBufferType host("silero-test");
  auto leaf = [&](int64_t n, const float* v, const char* name) {
    Tensor* t = arena.new_tensor(DType::F32, {n}, name);
    auto buf = host.alloc(t->nbytes());
    buf->place(*t, 0);
    tensor_set(*t, v, t->nbytes());
    return std::make_pair(t, std::move(buf));
  };
  // speech frames, and a state taken from the middle of the clip
  SileroVad vad(file_, 1);
  vad.detect(samples.data(), 512 * 250);
  auto [frame_samples, b0] = leaf(3 * 512, samples.data() + 512 * 250, "frames");
  Tensor* frames = ops::reshape(arena, frame_samples, {512, 3});
  auto [h, b1] = leaf(hp.lstm_hidden_size, vad.h().data(), "h");
  auto [c, b2] = leaf(hp.lstm_hidden_size, vad.c().data(), "c");
  auto [context, b3] = leaf(hp.n_context, samples.data() + 512 * 250 - hp.n_context, "context");
  auto cpu = Registry::global().find(kCpuDeviceName)->init_backend({2});
  auto ref = Registry::global().find(kReferenceDeviceName)->init_backend();
  // whisper.cpp's front end, and the upstream one with the previous samples as context
  for (Tensor* ctx : {static_cast<Tensor*>(nullptr), context}) {
    const SileroFramesGraph fg = build_silero_frames(arena, file_->weights(), hp, frames, h, c, ctx);
    Graph g;
    g.build(fg.probs);
    g.build(fg.c_new);
    const CompareResult r = compare_backends(g, *cpu, *ref);
    for (const NodeDiff& d : r.nodes) {
      // f32 sums in another order; the f16 rounding can flip one ulp of f16 (2^-11 relative)
      const double tol = d.node->op == Op::Unary && d.node->params[0].i == static_cast<int>(UnaryOp::RoundF16)
                             ? 1e-3 * d.max_ref
                             : 1e-4 * std::max(1.0, d.max_ref);
      EXPECT_LE(d.max_abs, tol) << d.node->describe() << "\n" << r.report();
    }
  }
}

}  // namespace
}  // namespace hark::vad
