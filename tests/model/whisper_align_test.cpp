// WhisperRunner::align on the micro model: the heads' cross-attention logits it hands out are the
// ones the attention really uses. The reference is an independent plain-path decoder graph on the
// scalar cpu-ref backend, whose cross-attention scores (k . q) and softmax nodes are read out
// directly: align's QK x sqrt(D) must equal those scores and softmax(QK) those probabilities,
// for the flash and the plain runner alike. Also: align's logits are decode's all-rows logits,
// and an ordinary step builds no extra node.
#include <gtest/gtest.h>

#include <cmath>
#include <random>

#include "backend/device_registry.h"
#include "backend/scheduler.h"
#include "model/decoder.h"
#include "model/encoder.h"
#include "model/model_file.h"
#include "model/model_writer.h"
#include "model/whisper_runner.h"
#include "model_test_util.h"
#include "runtime/graph.h"

namespace hark {
namespace {

class WhisperAlign : public ::testing::Test {
 protected:
  void SetUp() override {
    TestModelOptions o;
    ASSERT_TRUE(test_model_preset("micro", &o.hparams));
    o.weight_type = DType::F16;
    file_ = std::make_unique<testing::TempFile>("align");
    write_test_model(o, file_->path());
    model_ = ModelFile::open(file_->path());
    cpu_ = Registry::global().find(kCpuDeviceName)->init_backend({2});
    ref_ = Registry::global().find(kReferenceDeviceName)->init_backend();
    const HParams& hp = model_->hparams();
    mel_.resize(static_cast<size_t>(2 * hp.n_audio_ctx * hp.n_mels));
    for (size_t i = 0; i < mel_.size(); ++i) mel_[i] = 0.5f * std::sin(0.013f * static_cast<float>(i)) - 0.2f;
  }

  Tensor* leaf(TensorArena& a, DType type, std::initializer_list<int64_t> ne, const void* data) {
    Tensor* t = a.new_tensor(type, ne, "input");
    buffers_.push_back(Registry::global().find(kReferenceDeviceName)->buffer_type()->alloc(t->nbytes()));
    buffers_.back()->place(*t, 0);
    tensor_set(*t, data, t->nbytes());
    return t;
  }

  // The plain-path decoder over all tokens at once on cpu-ref, with its own cache filled by the
  // encoder graph: the cross-attention scores [n_audio_ctx, n, H] (k . q, unscaled) and
  // probabilities of each layer.
  void reference(const std::vector<int32_t>& tokens, std::vector<std::vector<float>>* scores,
                 std::vector<std::vector<float>>* probs) {
    const HParams& hp = model_->hparams();
    KvCache cache(hp, Registry::global().find(kReferenceDeviceName)->buffer_type(), DType::F16,
                  /*v_transposed=*/true);
    Scheduler sched({ref_.get()});
    {
      TensorArena a;
      Tensor* mel = leaf(a, DType::F32, {2 * hp.n_audio_ctx, hp.n_mels}, mel_.data());
      Graph g;
      build_cross_kv(a, g, model_->weights(), hp, build_encoder(a, model_->weights(), hp, mel, false), cache);
      sched.alloc_graph(g);
      ASSERT_EQ(sched.compute(g), ComputeStatus::Ok);
    }
    TensorArena a;
    Tensor* tok = leaf(a, DType::I32, {static_cast<int64_t>(tokens.size())}, tokens.data());
    Graph g;
    DecoderGraphOptions o;
    o.flash_attn = false;
    build_decoder(a, g, model_->weights(), hp, cache, tok, 0, o);
    std::vector<Tensor*> sm;
    for (Tensor* t : g.nodes())
      if (t->op == Op::SoftMax && t->ne[0] == hp.n_audio_ctx) {
        t->flags |= kFlagOutput;
        t->src[0]->flags |= kFlagOutput;
        sm.push_back(t);
      }
    ASSERT_EQ(static_cast<int>(sm.size()), hp.n_text_layer);
    sched.alloc_graph(g);
    ASSERT_EQ(sched.compute(g), ComputeStatus::Ok);
    for (Tensor* t : sm) {
      probs->emplace_back(static_cast<size_t>(t->nelements()));
      tensor_get(*t, probs->back().data(), probs->back().size() * sizeof(float));
      scores->emplace_back(static_cast<size_t>(t->src[0]->nelements()));
      tensor_get(*t->src[0], scores->back().data(), scores->back().size() * sizeof(float));
    }
  }

  std::unique_ptr<testing::TempFile> file_;
  std::unique_ptr<ModelFile> model_;
  std::unique_ptr<Backend> cpu_, ref_;
  HostBufferType host_{"align-host"};
  std::vector<std::unique_ptr<Buffer>> buffers_;
  std::vector<float> mel_;
};

TEST_F(WhisperAlign, HeadsLogitsAreTheCrossAttentionTheModelUses) {
  const HParams& hp = model_->hparams();
  // sot, en, transcribe, notimestamps, 11 text tokens (more than one 8-row chunk), eot.
  std::vector<int32_t> tokens = {50258, 50259, 50359, 50363};
  for (int32_t t : {464, 2068, 7586, 21831, 18045, 625, 262, 16931, 3290, 13, 314}) tokens.push_back(t);
  tokens.push_back(50257);
  const size_t n = tokens.size(), F = static_cast<size_t>(hp.n_audio_ctx);
  const int64_t D = hp.n_text_state / hp.n_text_head;
  // Every head of the model, out of order: the result follows the order asked for.
  std::vector<CrossQkHead> heads = {{1, 1}, {0, 0}, {1, 0}, {0, 1}};

  std::vector<std::vector<float>> scores, probs;
  reference(tokens, &scores, &probs);
  ASSERT_FALSE(HasFatalFailure());

  for (bool flash : {true, false}) {
    SCOPED_TRACE(flash ? "flash runner" : "plain runner");
    WhisperRunner r(*model_, *cpu_, RunnerOptions{flash});
    ASSERT_EQ(r.encode(mel_), ComputeStatus::Ok);
    std::vector<float> qk, logits;
    ASSERT_EQ(r.align(tokens, heads, &qk, &logits), ComputeStatus::Ok);
    ASSERT_EQ(qk.size(), heads.size() * n * F);
    ASSERT_EQ(logits.size(), n * static_cast<size_t>(hp.n_vocab));
    for (size_t k = 0; k < heads.size(); ++k) {
      const auto& sc = scores[static_cast<size_t>(heads[k].layer)];
      const auto& pr = probs[static_cast<size_t>(heads[k].layer)];
      double max_qk = 0.0, max_p = 0.0, scale = 1.0;
      for (size_t t = 0; t < n; ++t) {
        const float* row = &qk[(k * n + t) * F];
        // reference layout [F, n, H]: (f, t, h) at (h * n + t) * F + f
        const size_t base = (static_cast<size_t>(heads[k].head) * n + t) * F;
        double mx = -INFINITY, sum = 0.0;
        for (size_t f = 0; f < F; ++f) mx = std::max(mx, static_cast<double>(row[f]));
        for (size_t f = 0; f < F; ++f) sum += std::exp(row[f] - mx);
        for (size_t f = 0; f < F; ++f) {
          const double want_qk = sc[base + f] / std::sqrt(static_cast<double>(D));
          scale = std::max(scale, std::fabs(want_qk));
          max_qk = std::max(max_qk, std::fabs(row[f] - want_qk));
          max_p = std::max(max_p, std::fabs(std::exp(row[f] - mx) / sum - pr[base + f]));
        }
      }
      EXPECT_LE(max_qk / scale, 1e-3) << "head (" << heads[k].layer << "," << heads[k].head << ")";
      EXPECT_LE(max_p, 1e-4) << "head (" << heads[k].layer << "," << heads[k].head << ")";
    }
    EXPECT_EQ(r.decoder_reallocs(), 0) << "align's steps must fit the memory it reserved";
    // The same pass's logits: decode's all-rows logits over the same tokens (16 rows: more than
    // the all-rows reserve, so this one grows the buffers).
    std::vector<float> want;
    ASSERT_EQ(r.decode(tokens, 0, &want, /*all_rows=*/true), ComputeStatus::Ok);
    double d = 0.0, s = 1.0;
    for (size_t i = 0; i < want.size(); ++i) {
      s = std::max(s, static_cast<double>(std::fabs(want[i])));
      d = std::max(d, static_cast<double>(std::fabs(logits[i] - want[i])));
    }
    EXPECT_LE(d / s, 1e-3);
    // Bad heads are refused before any compute.
    EXPECT_TRUE(testing::mentions(testing::error_of([&] {
                                    std::vector<CrossQkHead> bad = {{hp.n_text_layer, 0}};
                                    r.align(tokens, bad, &qk, &logits);
                                  }),
                                  {"align", "outside"}));
  }
}

TEST_F(WhisperAlign, OrdinaryStepsBuildNoHeadOutputs) {
  const HParams& hp = model_->hparams();
  KvCache cache(hp, &host_);
  TensorArena a;

  const std::vector<int32_t> toks = {50258, 50259};
  Tensor* tok = leaf(a, DType::I32, {2}, toks.data());
  Graph plain, with;
  build_decoder(a, plain, model_->weights(), hp, cache, tok, 0);
  for (Tensor* t : plain.nodes()) EXPECT_NE(t->name, "cross_qk");
  for (Tensor* t : plain.outputs()) EXPECT_NE(t->name, "cross_qk");
  std::vector<Tensor*> outs;
  DecoderGraphOptions o;
  const std::vector<CrossQkHead> heads = {{0, 1}};
  o.cross_qk = heads;
  o.cross_qk_out = &outs;
  build_decoder(a, with, model_->weights(), hp, cache, tok, 0, o);
  ASSERT_EQ(outs.size(), 1u);
  EXPECT_EQ(outs[0]->ne[0], hp.n_audio_ctx);
  EXPECT_EQ(outs[0]->ne[1], 2);
}

}  // namespace
}  // namespace hark
