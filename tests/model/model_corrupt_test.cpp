// A corpus of broken model files: each must give a hark::Error that says what is wrong and where,
// and none may crash or read out of bounds (run under -DHARK_SANITIZE=ON to check the latter).
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <set>

#include "model/model_file.h"
#include "model/model_writer.h"
#include "model_test_util.h"

namespace hark {
namespace {

using testing::error_of;
using testing::mentions;
using testing::TempFile;

const char* kLabel = "bad.bin";

// One valid micro f16 model, built once, with its parsed layout for finding offsets.
struct Base {
  TestModelOptions opt;
  std::vector<uint8_t> bytes;
  ModelHeader header;
  std::vector<TensorEntry> tensors;
};

const Base& base() {
  static const Base* b = [] {
    auto* x = new Base;
    EXPECT_TRUE(test_model_preset("micro", &x->opt.hparams));
    x->opt.weight_type = DType::F16;
    x->opt.seed = 11;
    x->bytes = make_test_model_bytes(x->opt);
    x->header = parse_model_header(x->bytes.data(), x->bytes.size(), kLabel);
    x->tensors = parse_model_tensors(x->bytes.data(), x->bytes.size(), x->header, kLabel);
    return x;
  }();
  return *b;
}

void parse_all(const uint8_t* data, size_t size) {
  const ModelHeader h = parse_model_header(data, size, kLabel);
  parse_model_tensors(data, size, h, kLabel);
}
std::string parse_error(const std::vector<uint8_t>& bytes, size_t size = SIZE_MAX) {
  return error_of([&] { parse_all(bytes.data(), std::min(size, bytes.size())); });
}
// For files whose header bytes are the base model's: only the tensor records are parsed again,
// against the base header (re-reading a 50k-token vocabulary per case is what makes a corpus slow).
void parse_tensors_only(const uint8_t* data, size_t size);
std::string tensors_error(const std::vector<uint8_t>& bytes, size_t size = SIZE_MAX) {
  return error_of([&] { parse_tensors_only(bytes.data(), std::min(size, bytes.size())); });
}

void parse_tensors_only(const uint8_t* data, size_t size) { parse_model_tensors(data, size, base().header, kLabel); }

template <typename T>
void put(std::vector<uint8_t>& b, size_t offset, T v) {
  ASSERT_LE(offset + sizeof(T), b.size());
  std::memcpy(b.data() + offset, &v, sizeof(T));
}

const TensorEntry& entry(const std::string& name) {
  for (const TensorEntry& e : base().tensors)
    if (e.name == name) return e;
  throw std::runtime_error("no tensor " + name);
}

TEST(ModelCorrupt, BaseModelIsValid) {
  EXPECT_NO_THROW(parse_all(base().bytes.data(), base().bytes.size()));
  EXPECT_EQ(base().tensors.size(), whisper_tensor_specs(base().header.hparams).size());
}

TEST(ModelCorrupt, TruncatedAtEverySectionBoundary) {
  const Base& b = base();
  const size_t mel = 48, vocab = mel + 8 + 80 * 201 * 4;
  std::vector<std::pair<size_t, std::string>> cuts = {
      {0, "magic at offset 0"},
      {3, "magic at offset 0"},
      {4, "hyper-parameter n_vocab at offset 4"},
      {47, "hyper-parameter ftype at offset 44"},
      {mel, "mel filters n_mel at offset 48"},
      {mel + 4, "mel filters n_fft at offset 52"},
      {mel + 8, "mel filter values at offset 56"},
      {vocab - 1, "mel filter values at offset 56"},
      {vocab, "vocabulary size at offset " + std::to_string(vocab)},
      {vocab + 4, "vocabulary token 0 length at offset " + std::to_string(vocab + 4)},
      {vocab + 8, "vocabulary token 0 bytes at offset " + std::to_string(vocab + 8)},
      {b.header.tensors_offset - 1, "vocabulary token 50256 bytes"},
      {b.header.tensors_offset, "no tensor data"},
  };
  for (const TensorEntry& e : b.tensors) {
    const size_t r = e.record_offset;
    const size_t name_at = r + 12 + 4 * static_cast<size_t>(e.n_dims);
    cuts.push_back({r, r == b.header.tensors_offset ? "no tensor data" : "is missing"});
    cuts.push_back({r + 2, "n_dims at offset " + std::to_string(r)});
    cuts.push_back({r + 4, "name length at offset " + std::to_string(r + 4)});
    cuts.push_back({r + 8, "type at offset " + std::to_string(r + 8)});
    cuts.push_back({r + 12, "ne[0] at offset " + std::to_string(r + 12)});
    cuts.push_back({name_at, "name at offset " + std::to_string(name_at)});
    cuts.push_back({e.data_offset, "tensor '" + e.name + "' data"});
    cuts.push_back({e.data_offset + e.nbytes / 2, "needs " + std::to_string(e.nbytes) + " bytes"});
  }
  cuts.push_back({b.bytes.size() - 1, "truncated"});
  for (const auto& [cut, says] : cuts) {
    const std::string msg = cut >= b.header.tensors_offset ? tensors_error(b.bytes, cut) : parse_error(b.bytes, cut);
    EXPECT_TRUE(mentions(msg, {kLabel, says})) << "cut at " << cut;
    EXPECT_TRUE(mentions(msg, {"offset"})) << "cut at " << cut;
  }
}

TEST(ModelCorrupt, TruncatedAtManyOffsets) {
  const Base& b = base();
  // Every prefix of a model is invalid. Sample densely through the header and tensor records and
  // sparsely through bulk data (a splitmix-style sequence keeps the sample fixed).
  std::set<size_t> cuts;
  for (size_t i = 0; i < 600; ++i) cuts.insert(i);
  uint64_t s = 12345;
  for (int i = 0; i < 600; ++i) {
    s = s * 6364136223846793005ull + 1442695040888963407ull;
    cuts.insert(static_cast<size_t>((s >> 17) % b.bytes.size()));
  }
  for (const TensorEntry& e : b.tensors)
    for (size_t k = 0; k < 8; ++k) cuts.insert(e.record_offset + k * 7);
  for (size_t cut : cuts) {
    const std::string msg = cut >= b.header.tensors_offset ? tensors_error(b.bytes, cut) : parse_error(b.bytes, cut);
    ASSERT_TRUE(mentions(msg, {kLabel, "offset"})) << "cut at " << cut;
  }
}

TEST(ModelCorrupt, TruncatedFileOnDisk) {
  const Base& b = base();
  TempFile f("trunc");
  f.write(std::vector<uint8_t>(b.bytes.begin(), b.bytes.end() - 100));
  EXPECT_TRUE(mentions(error_of([&] { ModelFile::open(f.path()); }), {f.path(), "truncated"}));
  f.write({});
  EXPECT_TRUE(mentions(error_of([&] { ModelFile::open(f.path()); }), {f.path(), "empty"}));
  EXPECT_TRUE(mentions(error_of([&] { ModelFile::open("/nonexistent/model.bin"); }),
                       {"/nonexistent/model.bin", "cannot open"}));
  EXPECT_TRUE(mentions(error_of([&] { ModelFile::open("/tmp"); }), {"not a regular file"}));
}

TEST(ModelCorrupt, FlippedMagic) {
  std::vector<uint8_t> b = base().bytes;
  b[0] ^= 0x01;
  EXPECT_TRUE(mentions(parse_error(b), {"bad.bin: magic at offset 0", "expected 0x67676d6c", "found 0x67676d6d"}));
  put<uint32_t>(b, 0, 0x6c6d6767);  // byte-swapped: a big-endian file
  EXPECT_TRUE(mentions(parse_error(b), {"magic", "not a whisper.cpp ggml model"}));
}

TEST(ModelCorrupt, BadHyperParameters) {
  struct Case {
    int field;
    int32_t value;
    std::string says;
  };
  const Case cases[] = {
      {0, -1, "n_vocab at offset 4"},
      {0, INT32_MAX, "n_vocab at offset 4"},
      {2, 0, "n_audio_state at offset 12"},
      {2, INT32_MIN, "n_audio_state at offset 12"},
      {4, 1 << 30, "n_audio_layer at offset 20: expected 1..128"},
      {5, 100000, "n_text_ctx at offset 24"},
      {9, 81, "n_mels at offset 40"},
      {10, 2, "re-quantize"},
      {10, 42, "ftype at offset 44"},
  };
  for (const Case& c : cases) {
    std::vector<uint8_t> b = base().bytes;
    put<int32_t>(b, 4 + 4 * static_cast<size_t>(c.field), c.value);
    EXPECT_TRUE(mentions(parse_error(b), {kLabel, c.says})) << HParams::field_name(c.field);
  }
  // Valid values that disagree with the rest of the file.
  std::vector<uint8_t> b = base().bytes;
  put<int32_t>(b, 40, 128);  // n_mels 128, but 80 filters stored
  EXPECT_TRUE(mentions(parse_error(b), {"mel filters n_mel at offset 48: expected 128 (n_mels), found 80"}));
  b = base().bytes;
  put<int32_t>(b, 20, 1);  // one encoder layer, but the file holds two
  EXPECT_TRUE(mentions(parse_error(b), {"tensor 'encoder.blocks.1.", "unknown tensor name"}));
  b = base().bytes;
  put<int32_t>(b, 20, 3);  // three encoder layers, the file has two
  EXPECT_TRUE(mentions(parse_error(b), {"tensor 'encoder.blocks.2.", "is missing"}));
  b = base().bytes;
  put<int32_t>(b, 12, 96);  // wider encoder: every encoder shape is off
  put<int32_t>(b, 16, 3);
  EXPECT_TRUE(mentions(parse_error(b), {"shape [64, 1500] does not match the hyper-parameters: expected [96, 1500]"}));
  b = base().bytes;
  put<int32_t>(b, 44, 8 + 2000);  // claims q5_0 but holds f16 weights: allowed (plain types always are)
  EXPECT_NO_THROW(parse_all(b.data(), b.size()));
}

TEST(ModelCorrupt, BadMelFilters) {
  std::vector<uint8_t> b = base().bytes;
  put<int32_t>(b, 52, 200);
  EXPECT_TRUE(mentions(parse_error(b), {"mel filters n_fft at offset 52: expected 201", "found 200"}));
  b = base().bytes;
  put<int32_t>(b, 52, INT32_MAX);
  EXPECT_TRUE(mentions(parse_error(b), {"n_fft", "found 2147483647"}));
  b = base().bytes;
  put<float>(b, 56 + 4 * 205, std::nanf(""));
  EXPECT_TRUE(
      mentions(parse_error(b), {"mel filter value [1][4] at offset " + std::to_string(56 + 4 * 205), "finite"}));
}

TEST(ModelCorrupt, BadVocabulary) {
  const size_t vocab = 48 + 8 + 80 * 201 * 4;
  for (int32_t count : {-1, 51866, INT32_MAX, INT32_MIN}) {
    std::vector<uint8_t> b = base().bytes;
    put<int32_t>(b, vocab, count);
    EXPECT_TRUE(mentions(parse_error(b), {"vocabulary size at offset " + std::to_string(vocab), "expected 0..51865",
                                          "found " + std::to_string(count)}));
  }
  for (uint32_t len : {0xffffffffu, 0x80000000u, 1025u}) {
    std::vector<uint8_t> b = base().bytes;
    put<uint32_t>(b, vocab + 4, len);
    EXPECT_TRUE(mentions(parse_error(b), {"vocabulary token 0 length at offset " + std::to_string(vocab + 4),
                                          "at most 1024 bytes", "found " + std::to_string(len)}));
  }
  // A plausible length that swallows the next tokens: the parse goes astray but fails cleanly.
  std::vector<uint8_t> b = base().bytes;
  put<uint32_t>(b, vocab + 4, 1000);
  EXPECT_TRUE(mentions(parse_error(b), {kLabel, "offset"}));
  // Fewer tokens than the file holds: the rest is misread as tensor records and rejected.
  b = base().bytes;
  put<int32_t>(b, vocab, 100);
  EXPECT_TRUE(mentions(parse_error(b), {kLabel, "offset"}));
}

TEST(ModelCorrupt, BadTensorRecordFields) {
  const TensorEntry& e = entry("encoder.blocks.0.mlp.0.weight");  // f16 [64, 256]
  const size_t r = e.record_offset;
  const std::string where = "offset " + std::to_string(r);
  struct Case {
    size_t at;
    int32_t value;
    std::vector<std::string> says;
  };
  const std::vector<Case> cases = {
      {r, 0, {"n_dims at " + where, "expected 1..4, found 0"}},
      {r, 5, {"n_dims", "found 5"}},
      {r, -1, {"n_dims", "found -1"}},
      {r, INT32_MAX, {"n_dims", "found 2147483647"}},
      {r + 4, 0, {"name length at offset " + std::to_string(r + 4), "found 0"}},
      {r + 4, -7, {"name length", "found -7"}},
      {r + 4, 1 << 30, {"name length", "expected 1..256"}},
      {r + 8, 5, {"tensor 'encoder.blocks.0.mlp.0.weight' at " + where, "unknown type id 5"}},
      {r + 8, 99, {"unknown type id 99"}},
      {r + 8, -1, {"unknown type id -1"}},
      {r + 8, 26, {"unknown type id 26"}},  // i32 is never a weight
      {r + 8, 8, {"type q8_0 not allowed here", "expected f32 or f16 in a file of type f16"}},
      {r + 12, 65, {"shape [65, 256] does not match the hyper-parameters: expected [64, 256]"}},
      {r + 12, INT32_MAX, {"shape [2147483647, 256]", "expected [64, 256]"}},
      {r + 12, INT32_MIN, {"shape [-2147483648, 256]"}},
      {r + 16, 0, {"shape [64, 0]"}},
      {r + 16, -256, {"shape [64, -256]"}},
  };
  for (const Case& c : cases) {
    std::vector<uint8_t> b = base().bytes;
    put<int32_t>(b, c.at, c.value);
    const std::string msg = parse_error(b);
    for (const std::string& s : c.says) EXPECT_TRUE(mentions(msg, {kLabel, s})) << "at " << c.at << " = " << c.value;
  }
  // The example from the issue: the error names the file, the tensor, its offset, and the shapes.
  std::vector<uint8_t> b = base().bytes;
  put<int32_t>(b, r + 16, 255);
  EXPECT_EQ(parse_error(b), "bad.bin: tensor 'encoder.blocks.0.mlp.0.weight' at offset " + std::to_string(r) +
                                ": shape [64, 255] does not match the hyper-parameters: expected [64, 256]");
  // A bias stored as f16, a positional embedding as f16.
  b = base().bytes;
  put<int32_t>(b, entry("encoder.blocks.0.mlp.0.bias").record_offset + 8, 1);
  EXPECT_TRUE(mentions(parse_error(b), {"'encoder.blocks.0.mlp.0.bias'", "type f16 not allowed here; expected f32"}));
  // Positional embeddings are f32 only.
  b = base().bytes;
  put<int32_t>(b, entry("decoder.positional_embedding").record_offset + 8, 1);
  EXPECT_TRUE(mentions(parse_error(b), {"'decoder.positional_embedding'", "not allowed"}));
}

TEST(ModelCorrupt, BadNames) {
  const TensorEntry& e = entry("decoder.blocks.1.cross_attn.query.weight");
  const size_t name_at = e.record_offset + 12 + 4 * static_cast<size_t>(e.n_dims);
  std::vector<uint8_t> b = base().bytes;
  b[name_at + e.name.size() - 1] = 'X';
  EXPECT_TRUE(mentions(
      parse_error(b), {"tensor 'decoder.blocks.1.cross_attn.query.weighX' at offset " + std::to_string(e.record_offset),
                       "unknown tensor name"}));
  b = base().bytes;
  b[name_at] = 0x01;
  b[name_at + 1] = 0xff;
  EXPECT_TRUE(mentions(parse_error(b), {"'\\x01\\xffcoder.blocks.1.", "unknown tensor name"}));
}

// Files assembled record by record, for faults a byte patch cannot make.
struct Record {
  std::string name;
  int32_t type;
  std::vector<int32_t> ne;
  std::vector<uint8_t> data;
};

std::vector<Record> base_records() {
  const Base& b = base();
  std::vector<Record> out;
  for (const TensorEntry& e : b.tensors) {
    Record r{e.name, static_cast<int32_t>(e.type), {}, {}};
    for (int d = 0; d < e.n_dims; ++d) r.ne.push_back(static_cast<int32_t>(e.ne[static_cast<size_t>(d)]));
    r.data.assign(b.bytes.begin() + static_cast<std::ptrdiff_t>(e.data_offset),
                  b.bytes.begin() + static_cast<std::ptrdiff_t>(e.data_offset + e.nbytes));
    out.push_back(std::move(r));
  }
  return out;
}

std::vector<uint8_t> assemble(const std::vector<Record>& records) {
  const Base& b = base();
  std::vector<uint8_t> out(b.bytes.begin(), b.bytes.begin() + static_cast<std::ptrdiff_t>(b.header.tensors_offset));
  ModelWriter w([&](const void* p, size_t n) {
    const auto* q = static_cast<const uint8_t*>(p);
    out.insert(out.end(), q, q + n);
  });
  for (const Record& r : records) w.tensor(r.name, r.type, r.ne, r.data.data(), r.data.size());
  return out;
}

TEST(ModelCorrupt, AssembledFaults) {
  // Reassembling the records unchanged gives a valid file, in any order.
  std::vector<Record> recs = base_records();
  std::vector<uint8_t> file = assemble(recs);
  EXPECT_TRUE(file == base().bytes);
  std::reverse(recs.begin(), recs.end());
  file = assemble(recs);
  EXPECT_NO_THROW(parse_all(file.data(), file.size()));

  // Duplicate.
  recs = base_records();
  recs.push_back(recs[3]);
  EXPECT_TRUE(mentions(parse_error(assemble(recs)),
                       {"tensor '" + recs[3].name + "'", "duplicate tensor", "already appeared at offset"}));
  // Missing.
  recs = base_records();
  const std::string gone = recs[10].name;
  recs.erase(recs.begin() + 10);
  EXPECT_TRUE(mentions(parse_error(assemble(recs)), {"tensor '" + gone + "' is missing"}));
  // Extra unknown tensor, e.g. a key bias (Whisper has none).
  recs = base_records();
  recs.push_back({"encoder.blocks.0.attn.key.bias", 0, {64}, std::vector<uint8_t>(256)});
  EXPECT_TRUE(mentions(parse_error(assemble(recs)), {"'encoder.blocks.0.attn.key.bias'", "unknown tensor name"}));
  // Right element count, wrong arrangement: [256, 64] for [64, 256].
  recs = base_records();
  for (Record& r : recs)
    if (r.name == "decoder.blocks.0.mlp.0.weight") r.ne = {256, 64};
  EXPECT_TRUE(mentions(parse_error(assemble(recs)),
                       {"'decoder.blocks.0.mlp.0.weight'", "shape [256, 64]", "expected [64, 256]"}));
  // Extra dims: a bias stored as [1, 64] where [64] belongs (and vice versa for the conv bias).
  recs = base_records();
  for (Record& r : recs)
    if (r.name == "encoder.ln_post.bias") r.ne = {64, 1};
  EXPECT_TRUE(mentions(parse_error(assemble(recs)), {"'encoder.ln_post.bias'", "shape [64, 1]", "expected [64]"}));
  recs = base_records();
  for (Record& r : recs)
    if (r.name == "encoder.conv1.bias") r.ne = {64};
  EXPECT_TRUE(mentions(parse_error(assemble(recs)), {"'encoder.conv1.bias'", "shape [64]", "expected [1, 64]"}));
  // Quantized matrix in an f16 file.
  recs = base_records();
  for (Record& r : recs)
    if (r.name == "decoder.token_embedding.weight") {
      r.type = static_cast<int32_t>(DType::Q4_0);
      r.data.resize(r.data.size() / 64 * 18 / 1);
    }
  EXPECT_TRUE(mentions(parse_error(assemble(recs)), {"'decoder.token_embedding.weight'", "type q4_0 not allowed"}));
  // Trailing garbage after the last tensor is a record that cannot parse.
  std::vector<uint8_t> trailing = assemble(base_records());
  trailing.insert(trailing.end(), {1, 2, 3});
  EXPECT_TRUE(mentions(parse_error(trailing), {"tensor record", "truncated"}));
}

TEST(ModelCorrupt, RandomByteFlipsNeverCrash) {
  // Flip bytes in the structured parts (header, vocabulary, tensor records). Each file either
  // still parses (a flip in a value) or fails with hark::Error: never a crash or another
  // exception type.
  const Base& b = base();
  std::vector<size_t> targets;
  for (size_t i = 0; i < 64; ++i) targets.push_back(i);
  for (size_t i = 0; i < 256; ++i) targets.push_back(b.header.tensors_offset - 4096 + i * 16);
  for (const TensorEntry& e : b.tensors)
    for (size_t k = 0; k < e.data_offset - e.record_offset; k += 3) targets.push_back(e.record_offset + k);
  uint64_t s = 99;
  int failed = 0, passed = 0;
  std::vector<uint8_t> m = b.bytes;
  for (size_t t : targets) {
    s = s * 6364136223846793005ull + 1442695040888963407ull;
    const uint8_t flip = static_cast<uint8_t>(1u << ((s >> 33) % 8));
    m[t] ^= flip;  // flipped in place and restored: copying the file each time is the slow part
    try {
      if (t >= b.header.tensors_offset)
        parse_tensors_only(m.data(), m.size());
      else
        parse_all(m.data(), m.size());
      ++passed;
    } catch (const Error& e) {
      ++failed;
      EXPECT_TRUE(mentions(e.what(), {kLabel})) << e.what();
    }
    m[t] ^= flip;
  }
  EXPECT_GT(failed, 0);
  EXPECT_GT(passed, 0);
}

}  // namespace
}  // namespace hark
