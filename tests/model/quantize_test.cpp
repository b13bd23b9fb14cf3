// hark::quantize_model: every type round-trips through a file the loader accepts, quantizing an
// f32 model gives byte for byte the file make-test-model writes in that type (both quantize the
// same values with the reference quantizer), the result transcribes, and every failure is a clear
// error that leaves no output file behind.
#include "hark/quantize.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <filesystem>
#include <fstream>
#include <iterator>

#include "hark/hark.hpp"
#include "model/model_file.h"
#include "model/model_writer.h"
#include "model_test_util.h"
#include "runtime/quant.h"
#include "runtime/tensor.h"

namespace hark {
namespace {

using testing::error_of;
using testing::mentions;
using testing::TempFile;

TestModelOptions micro(DType type) {
  TestModelOptions o;
  EXPECT_TRUE(test_model_preset("micro", &o.hparams));
  o.weight_type = type;
  o.seed = 11;
  return o;
}

std::vector<uint8_t> file_bytes(const std::string& path) {
  std::ifstream f(path, std::ios::binary);
  return {std::istreambuf_iterator<char>(f), std::istreambuf_iterator<char>()};
}

std::vector<float> values_of(const Tensor& t) {
  std::vector<uint8_t> raw(t.nbytes());
  tensor_get(t, raw.data(), raw.size());
  const int64_t n = t.ne[0];
  const int64_t rows = static_cast<int64_t>(t.nelements()) / n;
  std::vector<float> out(static_cast<size_t>(rows * n));
  const size_t row_bytes = dtype_row_bytes(t.type, n);
  for (int64_t r = 0; r < rows; ++r) dequantize_row(t.type, raw.data() + r * row_bytes, out.data() + r * n, n);
  return out;
}

bool no_file(const std::string& path) {
  return !std::filesystem::exists(path) && !std::filesystem::exists(path + ".tmp");
}

class QuantizeTypes : public ::testing::TestWithParam<const char*> {};

// From f16 to each type: the output loads, says its type, keeps f32 vectors and f16 convolutions,
// and every matrix is within the type's error of the input.
TEST_P(QuantizeTypes, RoundTripsThroughALoadableFile) {
  const std::string name = GetParam();
  DType to{};
  ASSERT_TRUE(dtype_from_name(name, &to));
  TempFile in("quant-in-" + name), out("quant-out-" + name);
  write_test_model(micro(DType::F16), in.path());
  uint64_t last_done = 0, last_total = 0;
  int calls = 0;
  const QuantizeResult r = quantize_model(in.path(), out.path(), name, [&](uint64_t done, uint64_t total) {
    EXPECT_GE(done, last_done);
    last_done = done;
    last_total = total;
    ++calls;
  });
  EXPECT_EQ(r.from_type, "f16");
  EXPECT_EQ(r.to_type, name);
  EXPECT_EQ(r.output_bytes, std::filesystem::file_size(out.path()));
  EXPECT_EQ(r.input_bytes, std::filesystem::file_size(in.path()));
  EXPECT_EQ(calls, r.n_tensors);
  EXPECT_EQ(last_done, last_total);
  EXPECT_EQ(r.n_kept_f16, 0);
  if (to == DType::F16) {
    EXPECT_EQ(r.n_converted, 0);
  }

  const auto src = ModelFile::open(in.path());
  const auto dst = ModelFile::open(out.path());
  EXPECT_EQ(dst->hparams().weight_type(), to);
  ASSERT_EQ(dst->entries().size(), src->entries().size());
  // Mean-square error relative to the values' power: 4-bit types lose the most (~1e-2).
  const double tolerance = name == "q8_0" ? 1e-4 : (name == "f16" || name == "f32") ? 0.0 : 2e-2;
  for (const TensorEntry& e : src->entries()) {
    const Tensor* a = src->tensor(e.name);
    const Tensor* b = dst->tensor(e.name);
    ASSERT_NE(b, nullptr) << e.name;
    EXPECT_EQ(b->ne, a->ne) << e.name;
    EXPECT_EQ(b->type, default_tensor_type(e.kind, to)) << e.name;
    const std::vector<float> x = values_of(*a), y = values_of(*b);
    ASSERT_EQ(x.size(), y.size());
    double err = 0, pow = 0;
    for (size_t i = 0; i < x.size(); ++i) {
      err += (x[i] - y[i]) * static_cast<double>(x[i] - y[i]);
      pow += x[i] * static_cast<double>(x[i]);
    }
    if (pow > 0) {
      EXPECT_LE(err / pow, tolerance) << e.name;
    }
  }
}

INSTANTIATE_TEST_SUITE_P(Model, QuantizeTypes, ::testing::Values("q4_0", "q4_1", "q5_0", "q5_1", "q8_0", "f16", "f32"),
                         [](const auto& info) { return std::string(info.param); });

// Quantizing an f32 model writes exactly the file make-test-model writes in that type: the
// header is copied with the new ftype, and the values go through the same reference quantizer.
TEST(Quantize, FromF32EqualsTheWriterOwnQuantizedFile) {
  TempFile in("quant-f32"), out("quant-f32-q5"), want("quant-want-q5");
  write_test_model(micro(DType::F32), in.path());
  for (DType t : {DType::Q5_0, DType::Q8_0, DType::F16}) {
    quantize_model(in.path(), out.path(), dtype_name(t));
    write_test_model(micro(t), want.path());
    EXPECT_TRUE(file_bytes(out.path()) == file_bytes(want.path())) << dtype_name(t);
  }
}

// Back to f16 and through the whole engine: the quantized model transcribes.
TEST(Quantize, QuantizedModelLoadsAndTranscribes) {
  TempFile in("quant-tx-in"), q("quant-tx-q"), back("quant-tx-back");
  write_test_model(micro(DType::F16), in.path());
  quantize_model(in.path(), q.path(), "q4_1");
  const QuantizeResult r = quantize_model(q.path(), back.path(), "f16");
  EXPECT_EQ(r.from_type, "q4_1");
  EXPECT_EQ(ModelFile::open(back.path())->hparams().weight_type(), DType::F16);
  auto ctx = Context::load(q.path());
  TranscribeParams p;
  p.temperature_inc = 0.0f;
  p.max_tokens_per_window = 8;
  std::vector<float> audio(kSampleRate * 2);
  for (size_t i = 0; i < audio.size(); ++i) audio[i] = 0.1f * std::sin(0.05f * static_cast<float>(i));
  const Transcript t = ctx->transcribe(audio, p);
  EXPECT_FALSE(t.aborted);
}

TEST(Quantize, BadInputsAreClearErrorsAndLeaveNoOutput) {
  TempFile in("quant-bad-in"), out("quant-bad-out"), junk("quant-junk");
  write_test_model(micro(DType::F16), in.path());
  EXPECT_TRUE(
      mentions(error_of([&] { quantize_model(in.path(), out.path(), "q3_k"); }), {"unknown type", "q3_k", "q5_0"}));
  EXPECT_TRUE(no_file(out.path()));
  junk.write({'n', 'o', 't', ' ', 'a', ' ', 'm', 'o', 'd', 'e', 'l', 0, 0, 0, 0, 0});
  EXPECT_TRUE(mentions(error_of([&] { quantize_model(junk.path(), out.path(), "q5_0"); }), {junk.path()}));
  EXPECT_TRUE(no_file(out.path()));
  EXPECT_TRUE(mentions(error_of([&] { quantize_model("/nonexistent/model.bin", out.path(), "q5_0"); }),
                       {"/nonexistent/model.bin"}));
  EXPECT_TRUE(no_file(out.path()));
  EXPECT_TRUE(mentions(error_of([&] { quantize_model(in.path(), in.path(), "q5_0"); }), {"is the input"}));
  EXPECT_EQ(ModelFile::open(in.path())->hparams().weight_type(), DType::F16);  // untouched
  const std::string nodir = "/nonexistent-dir/out.bin";
  EXPECT_TRUE(mentions(error_of([&] { quantize_model(in.path(), nodir, "q5_0"); }), {"nonexistent-dir"}));
  // A truncated input (its last tensor cut short) is refused before anything is written.
  std::vector<uint8_t> bytes = file_bytes(in.path());
  bytes.resize(bytes.size() - 100);
  junk.write(bytes);
  EXPECT_FALSE(error_of([&] { quantize_model(junk.path(), out.path(), "q8_0"); }).empty());
  EXPECT_TRUE(no_file(out.path()));
}

}  // namespace
}  // namespace hark
