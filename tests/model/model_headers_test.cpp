// The real tiny and tiny.en headers (hyper-parameters, mel filters, vocabulary; no tensors) from
// ../shared/model-headers.
#include <gtest/gtest.h>

#include <cmath>

#include "model/model_file.h"
#include "model/model_writer.h"
#include "model_test_util.h"

namespace hark {
namespace {

using testing::error_of;
using testing::mentions;
using testing::model_header_path;

#define REQUIRE_HEADER(var, name)                  \
  const std::string var = model_header_path(name); \
  if (var.empty()) GTEST_SKIP() << "../shared/model-headers/" name " not found (set HARK_SHARED_DIR)"

TEST(ModelHeaders, TinyMultilingual) {
  REQUIRE_HEADER(path, "for-tests-ggml-tiny.bin");
  const ModelHeader h = ModelFile::read_header(path);
  const HParams& hp = h.hparams;
  EXPECT_EQ(hp.n_vocab, 51865);
  EXPECT_EQ(hp.n_audio_ctx, 1500);
  EXPECT_EQ(hp.n_audio_state, 384);
  EXPECT_EQ(hp.n_audio_head, 6);
  EXPECT_EQ(hp.n_audio_layer, 4);
  EXPECT_EQ(hp.n_text_ctx, 448);
  EXPECT_EQ(hp.n_text_state, 384);
  EXPECT_EQ(hp.n_text_head, 6);
  EXPECT_EQ(hp.n_text_layer, 4);
  EXPECT_EQ(hp.n_mels, 80);
  EXPECT_EQ(hp.ftype, 1);
  EXPECT_EQ(hp.size_name(), "tiny");
  EXPECT_EQ(h.mel.n_mels, 80);
  EXPECT_EQ(h.mel.weights.size(), 80u * 201u);

  const Vocab& v = h.vocab;
  EXPECT_EQ(v.n_file_tokens(), 50257);
  EXPECT_EQ(v.size(), 51865);
  EXPECT_EQ(v.text(0), "!");
  EXPECT_EQ(v.text(50256), "");  // multilingual files store an empty token before eot
  EXPECT_EQ(v.text(50257), "[_EOT_]");
  EXPECT_EQ(v.text(50258), "[_SOT_]");
  EXPECT_EQ(v.text(50259), "[_LANG_en]");
  EXPECT_EQ(v.text(50364), "[_BEG_]");
  EXPECT_EQ(v.special().eot, 50257);
  EXPECT_EQ(h.tensors_offset, 575451u);  // the whole fixture: no tensors follow
}

TEST(ModelHeaders, TinyEnglish) {
  REQUIRE_HEADER(path, "for-tests-ggml-tiny.en.bin");
  const ModelHeader h = ModelFile::read_header(path);
  EXPECT_EQ(h.hparams.n_vocab, 51864);
  EXPECT_EQ(h.hparams.size_name(), "tiny.en");
  EXPECT_FALSE(h.hparams.multilingual());
  const Vocab& v = h.vocab;
  EXPECT_EQ(v.n_file_tokens(), 50257);
  EXPECT_EQ(v.text(50255), " gazed");
  EXPECT_EQ(v.text(50256), "<|endoftext|>");  // English files store eot's text themselves
  EXPECT_EQ(v.special().eot, 50256);
  EXPECT_EQ(v.text(50257), "[_SOT_]");
  EXPECT_EQ(v.text(50258), "[_extra_token_50258]");  // unused language slots
  EXPECT_EQ(v.text(50357), "[_TRANSLATE_]");
  EXPECT_EQ(v.text(50363), "[_BEG_]");
  EXPECT_EQ(v.text(51863), "[_TT_1500]");
}

TEST(ModelHeaders, OpeningAHeaderSaysNoTensorData) {
  for (const char* name : {"for-tests-ggml-tiny.bin", "for-tests-ggml-tiny.en.bin"}) {
    const std::string path = model_header_path(name);
    if (path.empty()) GTEST_SKIP() << "../shared/model-headers not found";
    const std::string msg = error_of([&] { ModelFile::open(path); });
    EXPECT_TRUE(mentions(msg, {path, "no tensor data", "header"})) << msg;
  }
}

// The synthesized filterbank is the same Slaney-normalized construction the real files carry.
TEST(ModelHeaders, SynthesizedMelFiltersMatchTheRealOnes) {
  REQUIRE_HEADER(path, "for-tests-ggml-tiny.bin");
  const ModelHeader h = ModelFile::read_header(path);
  const frontend::MelFilters ours = frontend::slaney_mel_filters(80);
  ASSERT_EQ(ours.weights.size(), h.mel.weights.size());
  double max_diff = 0.0, max_val = 0.0;
  for (size_t i = 0; i < ours.weights.size(); ++i) {
    max_diff = std::max(max_diff, static_cast<double>(std::fabs(ours.weights[i] - h.mel.weights[i])));
    max_val = std::max(max_val, static_cast<double>(h.mel.weights[i]));
  }
  // The real values are float32 roundings of the same double-precision construction.
  EXPECT_LT(max_diff, 1e-8) << "max |ours - real| = " << max_diff << " (peak " << max_val << ")";
}

TEST(ModelHeaders, RealVocabularyGoesIntoTestModels) {
  REQUIRE_HEADER(path, "for-tests-ggml-tiny.en.bin");
  TestModelOptions o;
  ASSERT_TRUE(test_model_preset("micro.en", &o.hparams));
  o.vocab_from = path;
  const std::vector<uint8_t> bytes = make_test_model_bytes(o);
  const ModelHeader h = parse_model_header(bytes.data(), bytes.size(), "micro.en");
  const ModelHeader real = ModelFile::read_header(path);
  ASSERT_EQ(h.vocab.n_file_tokens(), real.vocab.n_file_tokens());
  for (int32_t i = 0; i < real.vocab.n_file_tokens(); ++i) ASSERT_EQ(h.vocab.text(i), real.vocab.text(i)) << i;
  EXPECT_EQ(h.mel.weights, real.mel.weights);
  EXPECT_NO_THROW(parse_model_tensors(bytes.data(), bytes.size(), h, "micro.en"));

  // A multilingual vocabulary for an English-only model is refused, not silently mixed.
  const std::string multi = model_header_path("for-tests-ggml-tiny.bin");
  if (!multi.empty()) {
    o.vocab_from = multi;
    EXPECT_TRUE(mentions(error_of([&] { make_test_model_bytes(o); }), {"multilingual", "English-only"}));
  }
}

}  // namespace
}  // namespace hark
