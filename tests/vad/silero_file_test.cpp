// The Silero VAD file loader on the real v6.2.0 model and on corrupted copies of it (written to a
// temp dir): every field it states is checked, and every fault is a hark::Error naming the file,
// the field, its offset and what was expected vs found.
#include <gtest/gtest.h>

#include <cstring>
#include <fstream>
#include <iterator>

#include "vad/silero_file.h"
#include "vad/vad_test_util.h"

namespace hark::vad {
namespace {

using hark::testing::error_of;
using hark::testing::mentions;
using hark::testing::TempFile;

const std::string kLabel = "silero.bin";

class SileroFileTest : public ::testing::Test {
 protected:
  void SetUp() override {
    path_ = hark::testing::silero_model_path();
    if (path_.empty()) GTEST_SKIP() << "../shared/vad/silero-v6.2.0-ggml.bin not found (set HARK_SHARED_DIR)";
    std::ifstream in(path_, std::ios::binary);
    bytes_.assign(std::istreambuf_iterator<char>(in), {});
  }
  std::string header_error(const std::vector<uint8_t>& b) {
    return error_of([&] { parse_silero_header(b.data(), b.size(), kLabel); });
  }
  // Header and tensors of b, as open() parses them.
  std::string parse_error(const std::vector<uint8_t>& b, size_t size = SIZE_MAX) {
    return error_of([&] {
      const size_t n = std::min(size, b.size());
      const SileroHParams hp = parse_silero_header(b.data(), n, kLabel);
      parse_silero_tensors(b.data(), n, hp, kLabel);
    });
  }
  std::vector<uint8_t> with_i32(size_t offset, int32_t v) const {
    std::vector<uint8_t> b = bytes_;
    std::memcpy(b.data() + offset, &v, 4);
    return b;
  }
  std::string path_;
  std::vector<uint8_t> bytes_;
};

// Offsets in the real file: magic 0, type length 4, type 8..17, version 18..29, n_window 30,
// n_context 34, n_encoder_layers 38, layers 42..89 (in, out, kernel), lstm_input 90,
// lstm_hidden 94, final_conv_in 98, final_conv_out 102, first tensor record 106.
TEST_F(SileroFileTest, RealModelHeaderAndTensors) {
  const auto f = SileroFile::open(path_);
  const SileroHParams& hp = f->hparams();
  EXPECT_EQ(hp.model_type, "silero-16k");
  EXPECT_EQ(hp.version_str(), "6.2.0");
  EXPECT_EQ(hp.n_window, 512);
  EXPECT_EQ(hp.n_context, 64);
  ASSERT_EQ(hp.encoder.size(), 4u);
  const int32_t want[4][3] = {{129, 128, 3}, {128, 64, 3}, {64, 64, 3}, {64, 128, 3}};
  for (size_t i = 0; i < 4; ++i) {
    EXPECT_EQ(hp.encoder[i].in_channels, want[i][0]);
    EXPECT_EQ(hp.encoder[i].out_channels, want[i][1]);
    EXPECT_EQ(hp.encoder[i].kernel_size, want[i][2]);
  }
  EXPECT_EQ(hp.lstm_input_size, 128);
  EXPECT_EQ(hp.lstm_hidden_size, 128);
  EXPECT_EQ(hp.final_conv_in, 128);
  EXPECT_EQ(hp.final_conv_out, 1);
  EXPECT_EQ(hp.tensors_offset, 106u);
  EXPECT_EQ(f->entries().size(), 15u);
  EXPECT_EQ(f->file_bytes(), 885098u);

  const SileroWeights& w = f->weights();
  EXPECT_EQ(w.enc_w[0]->type, DType::F16);
  EXPECT_EQ(w.enc_w[0]->ne, (std::array<int64_t, 4>{3, 129, 128, 1}));
  EXPECT_EQ(w.enc_b[3]->ne[0], 128);
  EXPECT_EQ(w.lstm_w_ih->type, DType::F32);
  EXPECT_EQ(w.lstm_w_hh->ne, (std::array<int64_t, 4>{128, 512, 1, 1}));
  EXPECT_EQ(w.out_b->nelements(), 1);  // a scalar (n_dims 0) in the file
  EXPECT_EQ(w.stft_basis->ne, (std::array<int64_t, 4>{256, 1, 258, 1}));
  // weights point into the mapped file at their record's data
  for (Tensor* t : {w.enc_w[0], w.lstm_b_hh, w.stft_basis}) {
    ASSERT_NE(t->data, nullptr);
    bool found = false;
    for (const auto& e : f->entries())
      if (e.name == t->name) {
        found = true;
        EXPECT_EQ(std::memcmp(t->data, bytes_.data() + e.data_offset, e.nbytes), 0) << e.name;
      }
    EXPECT_TRUE(found);
  }
}

TEST_F(SileroFileTest, BadHeaderFieldsNameFieldOffsetExpectedAndFound) {
  EXPECT_TRUE(
      mentions(header_error(with_i32(0, 0x12345678)), {kLabel, "magic at offset 0", "0x67676d6c", "0x12345678"}));
  EXPECT_TRUE(mentions(header_error(with_i32(4, 0)), {"model type length at offset 4", "expected 1..64, found 0"}));
  EXPECT_TRUE(mentions(header_error(with_i32(4, 1 << 30)), {"model type length", "found 1073741824"}));
  std::vector<uint8_t> b = bytes_;
  std::memcpy(b.data() + 8, "silero-08k", 10);
  EXPECT_TRUE(mentions(header_error(b), {"model type at offset 8", "expected \"silero-16k\"", "found \"silero-08k\""}));
  EXPECT_TRUE(mentions(header_error(with_i32(18, 4)), {"version major at offset 18", "expected 5 or 6", "found 4"}));
  EXPECT_TRUE(mentions(header_error(with_i32(30, 256)), {"n_window at offset 30", "expected 512", "found 256"}));
  EXPECT_TRUE(mentions(header_error(with_i32(34, 0)), {"n_context at offset 34", "expected 64", "found 0"}));
  EXPECT_TRUE(mentions(header_error(with_i32(38, 3)), {"n_encoder_layers at offset 38", "expected 4", "found 3"}));
  EXPECT_TRUE(mentions(header_error(with_i32(42, 128)),
                       {"encoder layer 0 in_channels at offset 42", "expected 129", "found 128"}));
  EXPECT_TRUE(mentions(
      header_error(with_i32(54, 63)),
      {"encoder layer 1 in_channels at offset 54", "expected 128 (the previous layer's out_channels)", "found 63"}));
  EXPECT_TRUE(
      mentions(header_error(with_i32(50, 5)), {"encoder layer 0 kernel_size at offset 50", "expected 3", "found 5"}));
  EXPECT_TRUE(mentions(header_error(with_i32(82, -1)), {"encoder layer 3 out_channels at offset 82", "found -1"}));
  EXPECT_TRUE(mentions(header_error(with_i32(90, 64)), {"lstm_input_size at offset 90", "expected 128", "found 64"}));
  EXPECT_TRUE(mentions(header_error(with_i32(94, 0)), {"lstm_hidden_size at offset 94", "found 0"}));
  EXPECT_TRUE(mentions(header_error(with_i32(98, 127)), {"final_conv_in at offset 98", "expected 128", "found 127"}));
  EXPECT_TRUE(mentions(header_error(with_i32(102, 2)), {"final_conv_out at offset 102", "expected 1", "found 2"}));
}

TEST_F(SileroFileTest, BadTensorRecords) {
  // the first record (offset 106): encoder.0 weight, n_dims 3, name length 36, type 1 (f16)
  EXPECT_TRUE(
      mentions(parse_error(with_i32(106, 5)), {"tensor record 0 n_dims at offset 106", "expected 0..4, found 5"}));
  EXPECT_TRUE(mentions(parse_error(with_i32(110, 0)), {"tensor record 0 name length at offset 110", "found 0"}));
  EXPECT_TRUE(mentions(parse_error(with_i32(114, 8)), {"tensor '_model.encoder.0.reparam_conv.weight' at offset 106",
                                                       "type id 8 not allowed", "0 (f32) or 1 (f16)"}));
  EXPECT_TRUE(mentions(parse_error(with_i32(122, 130)),
                       {"encoder.0.reparam_conv.weight", "shape [3, 130, 128]", "expected [3, 129, 128]"}));
  std::vector<uint8_t> b = bytes_;
  b[130 + 15] = 'X';  // inside the name: _model.encoder.X...
  EXPECT_TRUE(mentions(parse_error(b), {"unknown tensor name", "at offset 106"}));
  // a bias stored as f16 (the bias of encoder layer 0 is the second record, at 99238)
  EXPECT_TRUE(
      mentions(parse_error(with_i32(99238 + 8, 1)), {"encoder.0.reparam_conv.bias", "type id 1", "expected 0 (f32)"}));
  // the same record twice: the second record renamed to the first's name is both wrong-shaped
  // and a duplicate; a copy of record 0 appended is reported as a duplicate
  std::vector<uint8_t> dup = bytes_;
  dup.insert(dup.end(), bytes_.begin() + 106, bytes_.begin() + 99238);
  EXPECT_TRUE(mentions(parse_error(dup), {"duplicate tensor", "already appeared at offset 106"}));
}

TEST_F(SileroFileTest, TruncatedAnywhereIsAClearError) {
  // every header field, then record boundaries, data and the last byte
  for (size_t n : {0, 2, 4, 9, 20, 31, 40, 60, 100, 105, 106, 110, 150, 99237, 99240, 752946, 885097}) {
    const std::string msg = parse_error(bytes_, n);
    EXPECT_TRUE(mentions(msg, {kLabel, "offset"})) << n;
    EXPECT_TRUE(msg.find("truncated") != std::string::npos) << n << ": " << msg;
  }
  // ending exactly between records: the missing tensors are named
  EXPECT_TRUE(mentions(parse_error(bytes_, 752946), {"'_model.stft.forward_basis_buffer' is missing", "14 of the 15"}));
}

TEST_F(SileroFileTest, OpenNamesTheFile) {
  TempFile tmp("silero-truncated");
  tmp.write(std::vector<uint8_t>(bytes_.begin(), bytes_.begin() + 5000));
  EXPECT_TRUE(mentions(error_of([&] { SileroFile::open(tmp.path()); }),
                       {tmp.path(), "tensor '_model.encoder.0.reparam_conv.weight' data", "truncated"}));
  TempFile empty("silero-empty");
  empty.write({});
  EXPECT_TRUE(mentions(error_of([&] { SileroFile::open(empty.path()); }), {"VAD model file is empty"}));
  EXPECT_TRUE(mentions(error_of([&] { SileroFile::open("/nonexistent/silero.bin"); }),
                       {"/nonexistent/silero.bin", "cannot open VAD model file"}));
  // a Whisper model is not a VAD model: its magic matches, its next field does not
  TempFile wrong("silero-whisper");
  std::vector<uint8_t> w(16);
  const int32_t whisper_start[4] = {0x67676d6c, 51865, 1500, 384};  // magic, n_vocab, n_audio_ctx, n_audio_state
  std::memcpy(w.data(), whisper_start, sizeof whisper_start);
  wrong.write(w);
  EXPECT_TRUE(
      mentions(error_of([&] { SileroFile::open(wrong.path()); }), {"this is a Whisper model (n_vocab 51865)", "-m"}));
}

}  // namespace
}  // namespace hark::vad
