// The encoder and decoder graphs on the micro model: the optimised CPU backend against the scalar
// reference backend, node by node (so a wrong layer is named), for every weight type; and the
// runner's encode/decode steps, whose logits must agree the same way.
//
// Tolerances are relative to the scale of each node's values (max |ref|, at least 1). f32 and
// f16 weights differ from the reference only by summation order (~1e-5). Quantized weights
// multiply q8 activations on the CPU (the reference multiplies f32 ones), which costs ~0.5% per
// product; through a 2-layer model that stays under 5%.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdio>
#include <random>

#include "backend/compare.h"
#include "backend/device_registry.h"
#include "model/decoder.h"
#include "model/encoder.h"
#include "model/model_file.h"
#include "model/model_writer.h"
#include "model/whisper_runner.h"
#include "model_test_util.h"
#include "runtime/graph.h"

namespace hark {
namespace {

double tolerance(DType t) { return dtype_quantized(t) ? 5e-2 : 1e-3; }

class WhisperGraph : public ::testing::TestWithParam<DType> {
 protected:
  void SetUp() override {
    TestModelOptions o;
    ASSERT_TRUE(test_model_preset("micro", &o.hparams));
    o.weight_type = GetParam();
    file_ = std::make_unique<testing::TempFile>(std::string("graph-") + dtype_name(GetParam()));
    write_test_model(o, file_->path());
    model_ = ModelFile::open(file_->path());
    cpu_ = Registry::global().find(kCpuDeviceName)->init_backend({2});
    ref_ = Registry::global().find(kReferenceDeviceName)->init_backend();
  }

  // An input leaf with its own host buffer, filled with values.
  template <typename T>
  Tensor* leaf(TensorArena& a, DType type, std::initializer_list<int64_t> ne, const std::vector<T>& v) {
    Tensor* t = a.new_tensor(type, ne, "input");
    buffers_.push_back(host_.alloc(t->nbytes()));
    buffers_.back()->place(*t, 0);
    tensor_set(*t, v.data(), v.size() * sizeof(T));
    return t;
  }

  std::vector<float> smooth_mel(size_t n) const {
    std::vector<float> m(n);
    for (size_t i = 0; i < n; ++i) m[i] = 0.5f * std::sin(0.013f * static_cast<float>(i)) - 0.2f;
    return m;
  }

  void expect_close(const CompareResult& r, const char* what) {
    ASSERT_FALSE(r.nodes.empty());
    const NodeDiff& w = r.worst();
    std::printf("  %s %s: worst node %s, max |diff| %.3g at scale %.3g\n", what, dtype_name(GetParam()),
                w.node->describe().c_str(), w.max_abs, w.max_ref);
    for (const NodeDiff& d : r.nodes) {
      const double err = d.max_abs / std::max(1.0, d.max_ref);
      EXPECT_LE(err, tolerance(GetParam())) << what << ": " << d.node->describe() << "\n" << r.report();
      EXPECT_TRUE(std::isfinite(d.max_ref)) << d.node->describe();
    }
  }

  std::unique_ptr<testing::TempFile> file_;
  std::unique_ptr<ModelFile> model_;
  std::unique_ptr<Backend> cpu_, ref_;
  HostBufferType host_{"test-host"};
  std::vector<std::unique_ptr<Buffer>> buffers_;
};

TEST_P(WhisperGraph, EncoderMatchesReferenceLayerByLayer) {
  const HParams& hp = model_->hparams();
  TensorArena a;
  KvCache cache(hp, &host_);
  Tensor* mel = leaf(a, DType::F32, {2 * hp.n_audio_ctx, hp.n_mels},
                     smooth_mel(static_cast<size_t>(2 * hp.n_audio_ctx * hp.n_mels)));
  Graph g;
  build_cross_kv(a, g, model_->weights(), hp, build_encoder(a, model_->weights(), hp, mel), cache);
  expect_close(compare_backends(g, *cpu_, *ref_), "encoder");
}

TEST_P(WhisperGraph, DecoderStepMatchesReferenceLayerByLayer) {
  const HParams& hp = model_->hparams();
  KvCache cache(hp, &host_);
  // A cache as earlier steps and the encoder would leave it: arbitrary but fixed values.
  std::mt19937 rng(7);
  std::uniform_real_distribution<float> u(-1.0f, 1.0f);
  for (int l = 0; l < hp.n_text_layer; ++l)
    for (Tensor* t : {cache.self_k(l), cache.self_v(l), cache.cross_k(l), cache.cross_v(l)}) {
      std::vector<f16_t> v(static_cast<size_t>(t->nelements()));
      for (f16_t& e : v) e = f32_to_f16(u(rng));
      tensor_set(*t, v.data(), v.size() * sizeof(f16_t));
    }
  for (int n_past : {0, 5}) {
    TensorArena a;
    Tensor* tokens = leaf(a, DType::I32, {3}, std::vector<int32_t>{50258, 11, hp.n_vocab - 1});
    Graph g;
    build_decoder(a, g, model_->weights(), hp, cache, tokens, n_past);
    expect_close(compare_backends(g, *cpu_, *ref_), n_past ? "decoder n_past=5" : "decoder n_past=0");
  }
}

TEST_P(WhisperGraph, RunnerLogitsMatchReferenceAndStepwiseEqualsBatch) {
  const HParams& hp = model_->hparams();
  WhisperRunner cpu(*model_, *cpu_);
  WhisperRunner ref(*model_, *ref_);
  const std::vector<float> mel = smooth_mel(static_cast<size_t>(2 * hp.n_audio_ctx * hp.n_mels));
  ASSERT_EQ(cpu.encode(mel), ComputeStatus::Ok);
  ASSERT_EQ(ref.encode(mel), ComputeStatus::Ok);
  const std::vector<int32_t> prompt = {50258, 50259, 50359, 50364};
  std::vector<float> lc, lr;
  ASSERT_EQ(cpu.decode(prompt, 0, &lc), ComputeStatus::Ok);
  ASSERT_EQ(ref.decode(prompt, 0, &lr), ComputeStatus::Ok);
  ASSERT_EQ(lc.size(), static_cast<size_t>(hp.n_vocab));
  double scale = 1.0, diff = 0.0;
  for (size_t i = 0; i < lc.size(); ++i) {
    ASSERT_TRUE(std::isfinite(lc[i])) << i;
    scale = std::max(scale, static_cast<double>(std::fabs(lr[i])));
    diff = std::max(diff, static_cast<double>(std::fabs(lc[i] - lr[i])));
  }
  EXPECT_LE(diff / scale, tolerance(GetParam()));

  // The KV cache makes one token at a time equal to all at once (same backend).
  std::vector<float> step;
  for (size_t i = 0; i < prompt.size(); ++i)
    ASSERT_EQ(cpu.decode(std::span(prompt).subspan(i, 1), static_cast<int>(i), &step), ComputeStatus::Ok);
  double d2 = 0.0;
  for (size_t i = 0; i < lc.size(); ++i) d2 = std::max(d2, static_cast<double>(std::fabs(step[i] - lc[i])));
  EXPECT_LE(d2 / scale, tolerance(GetParam()));
  EXPECT_EQ(cpu.decoder_reallocs(), 0) << "decode steps must fit the reserved compute memory";
}

INSTANTIATE_TEST_SUITE_P(Model, WhisperGraph,
                         ::testing::Values(DType::F32, DType::F16, DType::Q8_0, DType::Q5_0, DType::Q4_0),
                         [](const ::testing::TestParamInfo<DType>& i) { return std::string(dtype_name(i.param)); });

}  // namespace
}  // namespace hark
