// make-test-model's writer and the loader agree: every weight type round-trips, tensors come back
// with the bytes that were written, mapped into a CPU buffer (or copied, when asked).
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>

#include "backend/device_registry.h"
#include "model/model_file.h"
#include "model/model_writer.h"
#include "model_test_util.h"

namespace hark {
namespace {

using testing::TempFile;

const DType kAllTypes[] = {DType::F32, DType::F16, DType::Q4_0, DType::Q4_1, DType::Q5_0, DType::Q5_1, DType::Q8_0};

TestModelOptions options(const char* preset, DType type, uint64_t seed = 7) {
  TestModelOptions o;
  EXPECT_TRUE(test_model_preset(preset, &o.hparams)) << preset;
  o.weight_type = type;
  o.seed = seed;
  return o;
}

// Opens `path` and checks everything against what the writer meant to store.
void check_loaded(const std::string& path, const TestModelOptions& o, const LoadOptions& lo = {}) {
  std::unique_ptr<ModelFile> mf = ModelFile::open(path, lo);
  HParams want = o.hparams;
  want.ftype = ftype_for_weight_type(o.weight_type);
  EXPECT_EQ(mf->hparams(), want);
  EXPECT_EQ(mf->hparams().weight_type(), o.weight_type);
  EXPECT_EQ(mf->mapped(), lo.buffer_type == nullptr);
  EXPECT_GT(mf->load_ms(), 0.0);

  const std::vector<TensorSpec> specs = whisper_tensor_specs(want);
  ASSERT_EQ(mf->entries().size(), specs.size());
  uint64_t total = 0;
  for (const TensorSpec& spec : specs) {
    Tensor* t = mf->tensor(spec.name);
    ASSERT_NE(t, nullptr) << spec.name;
    const DType type = default_tensor_type(spec.kind, o.weight_type);
    EXPECT_EQ(t->type, type) << spec.name;
    EXPECT_EQ(t->ne, spec.ne) << spec.name;
    EXPECT_EQ(t->name, spec.name);
    EXPECT_TRUE(t->flags & kFlagWeight);
    EXPECT_EQ(t->buffer, mf->buffer());
    EXPECT_TRUE(t->is_contiguous());
    const std::vector<uint8_t> want_bytes = test_tensor_bytes(spec, type, o.seed);
    ASSERT_EQ(t->nbytes(), want_bytes.size()) << spec.name;
    std::vector<uint8_t> got(want_bytes.size());
    tensor_get(*t, got.data(), got.size());
    EXPECT_TRUE(got == want_bytes) << spec.name << " bytes differ";
    total += want_bytes.size();
  }
  EXPECT_EQ(mf->tensor_bytes(), total);
  EXPECT_EQ(mf->tensor("encoder.blocks.0.attn.key.bias"), nullptr);  // keys have no bias

  const WhisperWeights& w = mf->weights();
  ASSERT_EQ(static_cast<int>(w.enc.size()), want.n_audio_layer);
  ASSERT_EQ(static_cast<int>(w.dec.size()), want.n_text_layer);
  EXPECT_EQ(w.token_embedding, mf->tensor("decoder.token_embedding.weight"));
  EXPECT_EQ(w.enc.back().mlp_2_b,
            mf->tensor("encoder.blocks." + std::to_string(want.n_audio_layer - 1) + ".mlp.2.bias"));
  EXPECT_EQ(w.dec[0].cross_k_w, mf->tensor("decoder.blocks.0.cross_attn.key.weight"));
  EXPECT_EQ(w.conv1_w->type, o.weight_type == DType::F32 ? DType::F32 : DType::F16);
  EXPECT_EQ(w.conv1_b->type, DType::F32);
  EXPECT_EQ(w.enc_pos->type, DType::F32);
  EXPECT_EQ(w.dec[0].mlp_0_w->type, o.weight_type);
  EXPECT_EQ(mf->vocab().size(), want.n_vocab);
  EXPECT_EQ(mf->mel_filters().n_mels, want.n_mels);
  EXPECT_NE(mf->describe().find("weight type: " + std::string(dtype_name(o.weight_type))), std::string::npos)
      << mf->describe();
}

class ModelRoundTrip : public ::testing::TestWithParam<DType> {};

TEST_P(ModelRoundTrip, MicroEveryType) {
  const TestModelOptions o = options("micro", GetParam());
  TempFile file(std::string("micro-") + dtype_name(GetParam()));
  write_test_model(o, file.path());
  check_loaded(file.path(), o);
  // The streamed file and the in-memory bytes are the same model.
  const std::vector<uint8_t> bytes = make_test_model_bytes(o);
  std::unique_ptr<ModelFile> mf = ModelFile::open(file.path());
  EXPECT_EQ(mf->file_bytes(), bytes.size());
}

INSTANTIATE_TEST_SUITE_P(Model, ModelRoundTrip, ::testing::ValuesIn(kAllTypes),
                         [](const ::testing::TestParamInfo<DType>& i) { return std::string(dtype_name(i.param)); });

TEST(ModelRoundTripMore, MicroEnglishAndLargeV3Layout) {
  // English-only vocabulary and the 128-mel, 100-language layout, at micro size.
  for (const char* preset : {"micro.en", "micro"}) {
    TestModelOptions o = options(preset, DType::Q8_0);
    if (std::string(preset) == "micro") {
      o.hparams.n_mels = 128;
      o.hparams.n_vocab = 51866;
    }
    TempFile file(std::string("layout-") + preset);
    write_test_model(o, file.path());
    check_loaded(file.path(), o);
  }
}

TEST(ModelRoundTripMore, CopiedIntoAlignedBuffer) {
  const TestModelOptions o = options("micro", DType::Q5_1);
  TempFile file("copy");
  write_test_model(o, file.path());
  LoadOptions lo;
  lo.buffer_type = Registry::global().find(kCpuDeviceName)->buffer_type();
  lo.populate = true;
  check_loaded(file.path(), o, lo);
  std::unique_ptr<ModelFile> mf = ModelFile::open(file.path(), lo);
  for (const TensorEntry& e : mf->entries()) {
    const auto addr = reinterpret_cast<uintptr_t>(mf->tensor(e.name)->data);
    EXPECT_EQ(addr % lo.buffer_type->alignment(), 0u) << e.name;
  }
}

TEST(ModelRoundTripMore, TinyF16) {
  // One full-size preset (about 75 MB), written to the temp dir and removed.
  const TestModelOptions o = options("tiny", DType::F16, 3);
  TempFile file("tiny-f16");
  write_test_model(o, file.path());
  check_loaded(file.path(), o);
}

TEST(ModelRoundTripMore, SeedDecidesTheWeights) {
  const std::vector<uint8_t> a = make_test_model_bytes(options("micro", DType::F32, 1));
  const std::vector<uint8_t> b = make_test_model_bytes(options("micro", DType::F32, 1));
  const std::vector<uint8_t> c = make_test_model_bytes(options("micro", DType::F32, 2));
  EXPECT_TRUE(a == b);
  ASSERT_EQ(a.size(), c.size());
  EXPECT_FALSE(a == c);
}

TEST(ModelRoundTripMore, WeightsHaveSaneScales) {
  HParams hp;
  ASSERT_TRUE(test_model_preset("micro", &hp));
  for (const TensorSpec& s : whisper_tensor_specs(hp)) {
    const std::vector<float> v = test_tensor_values(s, 5);
    double sum = 0, sq = 0;
    for (float x : v) {
      ASSERT_TRUE(std::isfinite(x)) << s.name;
      sum += x;
      sq += static_cast<double>(x) * x;
    }
    const double mean = sum / static_cast<double>(v.size());
    const double rms = std::sqrt(sq / static_cast<double>(v.size()));
    if (s.kind == TensorKind::Positional && s.name.starts_with("encoder")) {
      EXPECT_LE(rms, 1.0) << s.name;  // sinusoids: every value in [-1, 1]
    } else if (s.kind == TensorKind::Vector && s.name.ends_with(".weight")) {
      EXPECT_NEAR(mean, 1.0, 0.05) << s.name;  // layer-norm gains start near 1
    } else {
      EXPECT_LT(std::fabs(mean), 0.2) << s.name;
      EXPECT_LT(rms, 1.0) << s.name;
    }
  }
}

TEST(ModelRoundTripMore, QuantizedNeedsBlockWidths) {
  TestModelOptions o = options("micro", DType::Q4_0);
  o.hparams.n_audio_state = 48;  // 48 % 32 != 0
  o.hparams.n_audio_head = 2;
  const std::string msg = testing::error_of([&] { make_test_model_bytes(o); });
  EXPECT_TRUE(testing::mentions(msg, {"q4_0", "multiples of 32"}));
  o.weight_type = DType::F16;  // plain types take any width
  EXPECT_NO_THROW(make_test_model_bytes(o));
}

}  // namespace
}  // namespace hark
