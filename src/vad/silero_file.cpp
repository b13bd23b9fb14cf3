#include "vad/silero_file.h"

#include <algorithm>
#include <bit>
#include <cstdio>
#include <unordered_map>

#include "model/file_reader.h"
#include "runtime/error.h"

namespace hark::vad {

static_assert(std::endian::native == std::endian::little, "the VAD model reader assumes a little-endian host");

namespace {

using file_io::at;
using file_io::printable;
using file_io::Reader;
using file_io::shape_str;

constexpr uint32_t kMagic = 0x67676d6c;  // "ggml" read as a little-endian uint32
constexpr const char* kModelType = "silero-16k";
constexpr int32_t kMaxTypeBytes = 64;
constexpr int32_t kMaxNameBytes = 256;
constexpr int32_t kMaxChannels = 4096;  // Silero's are 64..258; bounds every size before use

// One expected tensor: its name, shape, and whether f16 is allowed besides f32 (weights that
// mul_mat reads may be either; biases are added to f32 activations and must be f32).
struct Spec {
  std::string name;
  std::array<int64_t, kMaxDims> ne;
  bool f16_ok;
  Tensor* SileroWeights::*field = nullptr;  // where it binds, for the scalar fields
  int layer = -1;                           // encoder layer for enc_w / enc_b, else -1
  bool is_bias = false;
};

std::vector<Spec> specs_for(const SileroHParams& hp) {
  std::vector<Spec> s;
  for (int i = 0; i < kSileroEncoderLayers; ++i) {
    const auto& l = hp.encoder[static_cast<size_t>(i)];
    const std::string p = "_model.encoder." + std::to_string(i) + ".reparam_conv.";
    s.push_back({p + "weight", {l.kernel_size, l.in_channels, l.out_channels, 1}, true, nullptr, i, false});
    s.push_back({p + "bias", {l.out_channels, 1, 1, 1}, false, nullptr, i, true});
  }
  const int64_t h = hp.lstm_hidden_size;
  s.push_back({"_model.decoder.rnn.weight_ih", {hp.lstm_input_size, 4 * h, 1, 1}, true, &SileroWeights::lstm_w_ih});
  s.push_back({"_model.decoder.rnn.weight_hh", {h, 4 * h, 1, 1}, true, &SileroWeights::lstm_w_hh});
  s.push_back({"_model.decoder.rnn.bias_ih", {4 * h, 1, 1, 1}, false, &SileroWeights::lstm_b_ih});
  s.push_back({"_model.decoder.rnn.bias_hh", {4 * h, 1, 1, 1}, false, &SileroWeights::lstm_b_hh});
  s.push_back({"_model.decoder.decoder.2.weight", {hp.final_conv_in, 1, 1, 1}, true, &SileroWeights::out_w});
  s.push_back({"_model.decoder.decoder.2.bias", {hp.final_conv_out, 1, 1, 1}, false, &SileroWeights::out_b});
  s.push_back({"_model.stft.forward_basis_buffer",
               {kSileroStftWindow, 1, 2 * kSileroStftBins, 1},
               true,
               &SileroWeights::stft_basis});
  return s;
}

// Shapes compare as 4 dims padded with 1s: the file stores the output bias as a scalar (n_dims 0)
// and the 1x1 output kernel squeezed to [final_conv_in]; a [1]-shaped bias reads the same.
int spec_dims(const Spec& s) {
  int n = kMaxDims;
  while (n > 0 && s.ne[static_cast<size_t>(n - 1)] == 1) --n;
  return n;
}

}  // namespace

std::string SileroHParams::version_str() const {
  return std::to_string(version[0]) + "." + std::to_string(version[1]) + "." + std::to_string(version[2]);
}

SileroHParams parse_silero_header(const uint8_t* data, size_t size, const std::string& label) {
  Reader r(data, size, label);
  SileroHParams hp;
  auto expect = [&](const char* field, size_t offset, int32_t found, int32_t want, const std::string& why) {
    if (found != want)
      throw Error(at(label, field, offset) + "expected " + std::to_string(want) + " (" + why + "), found " +
                  std::to_string(found));
  };

  const uint32_t magic = r.u32("magic");
  if (magic != kMagic) {
    char buf[96];
    std::snprintf(buf, sizeof buf, "expected 0x%08x (ggml), found 0x%08x", kMagic, magic);
    throw Error(at(label, "magic", 0) + buf + " — not a whisper.cpp VAD model file");
  }
  const size_t type_at = r.pos();
  const int32_t type_len = r.i32("model type length");
  // A Whisper model file (the same magic, then n_vocab where this one has its type's length):
  // said as what it is.
  if (type_len >= 51864 && type_len <= 51866)
    throw Error(label + ": this is a Whisper model (n_vocab " + std::to_string(type_len) +
                "), not a Silero VAD model: give it as the model (-m) and a Silero VAD model in whisper.cpp's "
                "format (ggml-silero-v6.2.0.bin) as the VAD model (--vad-model, -vm)");
  if (type_len < 1 || type_len > kMaxTypeBytes)
    throw Error(at(label, "model type length", type_at) + "expected 1.." + std::to_string(kMaxTypeBytes) + ", found " +
                std::to_string(type_len));
  const uint8_t* tp = r.bytes(static_cast<uint64_t>(type_len), "model type");
  hp.model_type.assign(reinterpret_cast<const char*>(tp), static_cast<size_t>(type_len));
  if (hp.model_type != kModelType)
    throw Error(at(label, "model type", type_at + 4) + "expected \"" + kModelType +
                "\" (the 16 kHz Silero VAD), found \"" + printable(hp.model_type) + "\"");

  const size_t version_at = r.pos();
  for (int i = 0; i < 3; ++i) hp.version[static_cast<size_t>(i)] = r.i32("version");
  // v5 and v6 share the architecture below (whisper.cpp runs both); others are unknown.
  if (hp.version[0] != 5 && hp.version[0] != 6)
    throw Error(at(label, "version major", version_at) + "expected 5 or 6 (Silero VAD v5/v6), found " +
                std::to_string(hp.version[0]));
  if (hp.version[1] < 0 || hp.version[2] < 0)
    throw Error(at(label, "version", version_at) + "expected non-negative minor and patch, found " + hp.version_str());

  size_t pos = r.pos();
  hp.n_window = r.i32("n_window");
  expect("n_window", pos, hp.n_window, 512, "samples per frame at 16 kHz");
  pos = r.pos();
  hp.n_context = r.i32("n_context");
  expect("n_context", pos, hp.n_context, 64, "context samples at 16 kHz");
  pos = r.pos();
  const int32_t n_layers = r.i32("n_encoder_layers");
  expect("n_encoder_layers", pos, n_layers, kSileroEncoderLayers, "Silero's encoder");

  for (int i = 0; i < kSileroEncoderLayers; ++i) {
    const std::string li = "encoder layer " + std::to_string(i) + " ";
    SileroHParams::EncoderLayer l{};
    const size_t in_at = r.pos();
    l.in_channels = r.i32(li + "in_channels");
    l.out_channels = r.i32(li + "out_channels");
    l.kernel_size = r.i32(li + "kernel_size");
    const int32_t want_in = i == 0 ? kSileroStftBins : hp.encoder.back().out_channels;
    expect((li + "in_channels").c_str(), in_at, l.in_channels, want_in,
           i == 0 ? "STFT bins of a 256-sample window" : "the previous layer's out_channels");
    if (l.out_channels < 1 || l.out_channels > kMaxChannels)
      throw Error(at(label, li + "out_channels", in_at + 4) + "expected 1.." + std::to_string(kMaxChannels) +
                  ", found " + std::to_string(l.out_channels));
    expect((li + "kernel_size").c_str(), in_at + 8, l.kernel_size, 3, "Silero's convolutions, padding 1");
    hp.encoder.push_back(l);
  }
  pos = r.pos();
  hp.lstm_input_size = r.i32("lstm_input_size");
  expect("lstm_input_size", pos, hp.lstm_input_size, hp.encoder.back().out_channels,
         "the last encoder layer's out_channels");
  pos = r.pos();
  hp.lstm_hidden_size = r.i32("lstm_hidden_size");
  if (hp.lstm_hidden_size < 1 || hp.lstm_hidden_size > kMaxChannels)
    throw Error(at(label, "lstm_hidden_size", pos) + "expected 1.." + std::to_string(kMaxChannels) + ", found " +
                std::to_string(hp.lstm_hidden_size));
  pos = r.pos();
  hp.final_conv_in = r.i32("final_conv_in");
  expect("final_conv_in", pos, hp.final_conv_in, hp.lstm_hidden_size, "lstm_hidden_size");
  pos = r.pos();
  hp.final_conv_out = r.i32("final_conv_out");
  expect("final_conv_out", pos, hp.final_conv_out, 1, "one speech probability");
  hp.tensors_offset = r.pos();
  return hp;
}

std::vector<SileroTensorEntry> parse_silero_tensors(const uint8_t* data, size_t size, const SileroHParams& hp,
                                                    const std::string& label) {
  const std::vector<Spec> specs = specs_for(hp);
  std::unordered_map<std::string, size_t> index;
  for (size_t i = 0; i < specs.size(); ++i) index.emplace(specs[i].name, i);

  Reader r(data, size, label, hp.tensors_offset);
  std::vector<SileroTensorEntry> entries;
  std::vector<uint64_t> seen_at(specs.size(), UINT64_MAX);
  while (!r.at_end()) {
    const file_io::TensorRecord t = file_io::read_tensor_record(r, label, entries.size(), 0, kMaxNameBytes);
    const std::string where = at(label, "tensor '" + printable(t.name) + "'", t.offset);
    auto it = index.find(t.name);
    if (it == index.end()) throw Error(where + "unknown tensor name; a Silero VAD model has no such tensor");
    const Spec& spec = specs[it->second];
    uint64_t& seen = seen_at[it->second];
    if (seen != UINT64_MAX)
      throw Error(where + "duplicate tensor; it already appeared at offset " + std::to_string(seen));
    seen = t.offset;

    const bool is_f32 = t.type == static_cast<int32_t>(DType::F32);
    if (!is_f32 && !(t.type == static_cast<int32_t>(DType::F16) && spec.f16_ok))
      throw Error(where + "type id " + std::to_string(t.type) + " not allowed here; expected " +
                  (spec.f16_ok ? "0 (f32) or 1 (f16)" : "0 (f32)"));
    if (t.ne != spec.ne)
      throw Error(where + "shape " + shape_str(t.ne.data(), t.n_dims) +
                  " does not match the hyper-parameters: expected " +
                  shape_str(spec.ne.data(), std::max(1, spec_dims(spec))));
    const DType type = is_f32 ? DType::F32 : DType::F16;
    // The shape is the expected one, bounded by the checked hyper-parameters: no overflow.
    const uint64_t nbytes = static_cast<uint64_t>(t.ne[0] * t.ne[1] * t.ne[2] * t.ne[3]) * dtype_block_bytes(type);
    const size_t data_at = r.pos();
    r.bytes(nbytes, "tensor '" + t.name + "' data (" + shape_str(t.ne.data(), std::max(1, t.n_dims)) + " " +
                        dtype_name(type) + ")");
    entries.push_back({t.name, type, t.n_dims, t.ne, t.offset, data_at, nbytes});
  }
  for (size_t i = 0; i < specs.size(); ++i)
    if (seen_at[i] == UINT64_MAX)
      throw Error(label + ": tensor '" + specs[i].name + "' is missing: the file ends at offset " +
                  std::to_string(size) + " after " + std::to_string(entries.size()) + " of the " +
                  std::to_string(specs.size()) + " tensors a Silero VAD model needs (truncated?)");
  return entries;
}

std::unique_ptr<SileroFile> SileroFile::open(const std::string& path) {
  std::unique_ptr<SileroFile> f(new SileroFile());
  f->path_ = path;
  file_io::Mapping m = file_io::map_file(path, /*populate=*/false, "VAD model file");
  f->file_bytes_ = m.size;
  // Every check of the file's bytes is the file's fault, not the caller's.
  classified(ErrorCode::CorruptData, path, [&] {
    f->hp_ = parse_silero_header(m.data, m.size, path);
    f->entries_ = parse_silero_tensors(m.data, m.size, f->hp_, path);
  });

  // The pages stay read-only: weights are never written, and the CPU backend reads them in place.
  f->buffer_ = cpu_buffer_type().wrap(const_cast<uint8_t*>(m.data), m.size, m.keepalive);
  f->buffer_->set_usage(BufferUsage::Weights);
  std::unordered_map<std::string, Tensor*> by_name;
  for (const SileroTensorEntry& e : f->entries_) {
    Tensor* t = f->arena_.new_tensor(e.type, e.ne, e.name);
    t->flags |= kFlagWeight;
    f->buffer_->place(*t, e.data_offset);
    by_name.emplace(e.name, t);
  }
  for (const Spec& s : specs_for(f->hp_)) {
    Tensor* t = by_name.at(s.name);
    if (s.layer >= 0)
      (s.is_bias ? f->w_.enc_b : f->w_.enc_w)[static_cast<size_t>(s.layer)] = t;
    else
      f->w_.*(s.field) = t;
  }
  return f;
}

SileroFile::~SileroFile() = default;

}  // namespace hark::vad
