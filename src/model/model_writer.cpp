#include "model/model_writer.h"

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstdio>
#include <cstring>

#include "runtime/error.h"
#include "runtime/quant.h"

namespace hark {

void ModelWriter::emit(const void* data, size_t size) {
  if (size == 0) return;
  sink_(data, size);
  written_ += size;
}

void ModelWriter::header(const HParams& hp, const frontend::MelFilters& mel, const std::vector<std::string>& tokens) {
  const uint32_t magic = kModelMagic;
  emit(&magic, 4);
  for (int i = 0; i < HParams::kCount; ++i) i32(hp.field(i));
  i32(mel.n_mels);
  // The row length the weights have (201 for a real filterbank); unchecked, like everything here.
  i32(mel.n_mels > 0 ? static_cast<int32_t>(mel.weights.size() / static_cast<size_t>(mel.n_mels)) : 0);
  emit(mel.weights.data(), mel.weights.size() * sizeof(float));
  i32(static_cast<int32_t>(tokens.size()));
  for (const std::string& t : tokens) {
    const uint32_t len = static_cast<uint32_t>(t.size());
    emit(&len, 4);
    emit(t.data(), t.size());
  }
}

void ModelWriter::tensor(std::string_view name, int32_t type, const std::vector<int32_t>& ne, const void* data,
                         size_t nbytes) {
  tensor_head(name, type, ne);
  emit(data, nbytes);
}

void ModelWriter::tensor_head(std::string_view name, int32_t type, const std::vector<int32_t>& ne) {
  i32(static_cast<int32_t>(ne.size()));
  i32(static_cast<int32_t>(name.size()));
  i32(type);
  for (int32_t d : ne) i32(d);
  emit(name.data(), name.size());
}

namespace {

struct Preset {
  const char* name;
  int32_t state, head, layer, text_layer, n_mels, n_vocab;
};
// Dimensions of the released Whisper models (and hark's micro test model).
constexpr Preset kPresets[] = {
    {"micro", 64, 2, 2, 2, 80, 51865},          {"tiny", 384, 6, 4, 4, 80, 51865},
    {"base", 512, 8, 6, 6, 80, 51865},          {"small", 768, 12, 12, 12, 80, 51865},
    {"medium", 1024, 16, 24, 24, 80, 51865},    {"large", 1280, 20, 32, 32, 80, 51865},
    {"large-v3", 1280, 20, 32, 32, 128, 51866}, {"large-v3-turbo", 1280, 20, 32, 4, 128, 51866},
};

// splitmix64: a small, well-mixed generator whose output is the same on every platform, unlike
// the standard library's distributions.
struct Rng {
  uint64_t s;
  uint64_t next() {
    uint64_t z = (s += 0x9e3779b97f4a7c15ull);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
  }
  // Approximately standard normal: the sum of four 16-bit uniforms (Irwin-Hall), rescaled. Cheap
  // enough for billion-weight presets; the tails stop at +-3.46, which random weights don't need.
  float normal() {
    const uint64_t b = next();
    float sum = 0.0f;
    for (int k = 0; k < 4; ++k) sum += (static_cast<float>((b >> (16 * k)) & 0xffffu) + 0.5f) / 65536.0f;
    return (sum - 2.0f) * 1.7320508f;  // variance of the sum is 4/12
  }
};

uint64_t name_hash(std::string_view s) {  // FNV-1a, so each tensor has its own stream
  uint64_t h = 0xcbf29ce484222325ull;
  for (unsigned char c : s) h = (h ^ c) * 0x100000001b3ull;
  return h;
}

bool ends_with(std::string_view s, std::string_view suffix) {
  return s.size() >= suffix.size() && s.substr(s.size() - suffix.size()) == suffix;
}

void check_writable(const TestModelOptions& o, const HParams& hp) {
  validate_hparams(hp, "make-test-model");
  if (!dtype_quantized(o.weight_type)) return;
  for (const TensorSpec& s : whisper_tensor_specs(hp)) {
    if (s.kind == TensorKind::Matrix && s.ne[0] % kQuantBlock != 0) {
      throw Error("make-test-model: " + std::string(dtype_name(o.weight_type)) +
                  " needs widths that are multiples of " + std::to_string(kQuantBlock) + "; tensor '" + s.name +
                  "' has rows of " + std::to_string(s.ne[0]));
    }
  }
}

// A tdrz-style model's weights. Every step's output state ends with the final layer norm, whose
// bias b is in all of them; the speaker-turn token's row is set along b, so its logit is a steady
// part (|row| |b|) plus a random one, so it wins at some steps whatever was fed before. Both
// norms are kTurnNorm: on the micro model, turns then come now and then; from about 2 on they win
// nearly every step, and below about 1.7 never.
constexpr float kTurnNorm = 1.92f;
constexpr std::string_view kFinalNormBias = "decoder.ln.bias";

// The seeded final-norm bias, scaled to kTurnNorm.
std::vector<float> tdrz_bias(const HParams& hp, uint64_t seed) {
  for (const TensorSpec& spec : whisper_tensor_specs(hp)) {
    if (spec.name != kFinalNormBias) continue;
    std::vector<float> b = test_tensor_values(spec, seed);
    double norm = 0.0;
    for (float x : b) norm += static_cast<double>(x) * x;
    for (float& x : b) x = static_cast<float>(x * kTurnNorm / std::sqrt(norm));
    return b;
  }
  throw Error("make-test-model: no " + std::string(kFinalNormBias) + " tensor");
}

// The token a model's weights favour (tdrz: the speaker-turn token), or -1.
int32_t favoured_token(const TestModelOptions& o, const HParams& hp) {
  if (o.tdrz) return special_tokens(hp).solm;
  if (o.favour_token >= hp.n_vocab)
    throw Error("make-test-model: --favour-token " + std::to_string(o.favour_token) + " is not a token of a model of " +
                std::to_string(hp.n_vocab));
  return o.favour_token;
}

std::vector<uint8_t> model_tensor_bytes(const TestModelOptions& o, const HParams& hp, const TensorSpec& spec,
                                        DType type) {
  const int32_t favoured = favoured_token(o, hp);
  if (favoured < 0) return test_tensor_bytes(spec, type, o.seed);
  if (spec.name == kFinalNormBias) return tensor_bytes(spec, type, tdrz_bias(hp, o.seed));
  if (spec.name != "decoder.token_embedding.weight") return test_tensor_bytes(spec, type, o.seed);
  std::vector<float> v = test_tensor_values(spec, o.seed);
  const std::vector<float> row = tdrz_bias(hp, o.seed);  // norm kTurnNorm, along b
  std::copy(row.begin(), row.end(), v.begin() + static_cast<std::ptrdiff_t>(favoured) * spec.ne[0]);
  return tensor_bytes(spec, type, v);
}

void write_model(const TestModelOptions& o, ModelWriter& w) {
  HParams hp = o.hparams;
  hp.ftype = ftype_for_weight_type(o.weight_type);
  check_writable(o, hp);

  frontend::MelFilters mel;
  std::vector<std::string> tokens;
  if (!o.vocab_from.empty()) {
    ModelHeader src = ModelFile::read_header(o.vocab_from);
    if (src.hparams.multilingual() != hp.multilingual()) {
      auto kind = [](const HParams& h) { return h.multilingual() ? "multilingual" : "English-only"; };
      throw Error("make-test-model: the vocabulary in " + o.vocab_from + " is " + kind(src.hparams) + " (n_vocab " +
                  std::to_string(src.hparams.n_vocab) + ") but the model is " + kind(hp) + " (n_vocab " +
                  std::to_string(hp.n_vocab) + ")");
    }
    for (int32_t i = 0; i < src.vocab.n_file_tokens(); ++i) tokens.emplace_back(src.vocab.text(i));
    if (src.mel.n_mels == hp.n_mels) mel = std::move(src.mel);
  } else {
    tokens = synthetic_vocab(hp);
  }
  if (mel.weights.empty()) mel = frontend::slaney_mel_filters(hp.n_mels);
  w.header(hp, mel, tokens);

  for (const TensorSpec& spec : whisper_tensor_specs(hp)) {
    const DType type = default_tensor_type(spec.kind, o.weight_type);
    const std::vector<uint8_t> bytes = model_tensor_bytes(o, hp, spec, type);
    std::vector<int32_t> ne(spec.ne.begin(), spec.ne.begin() + spec.n_dims);
    w.tensor(spec.name, static_cast<int32_t>(type), ne, bytes.data(), bytes.size());
  }
}

}  // namespace

bool test_model_preset(std::string_view name, HParams* out) {
  bool english = false;
  if (ends_with(name, ".en")) {
    english = true;
    name.remove_suffix(3);
  }
  for (const Preset& p : kPresets) {
    if (name != p.name) continue;
    if (english && p.state == 1280) return false;  // large models have no English-only variant
    HParams hp;
    hp.n_vocab = english ? 51864 : p.n_vocab;
    hp.n_audio_ctx = 1500;
    hp.n_audio_state = hp.n_text_state = p.state;
    hp.n_audio_head = hp.n_text_head = p.head;
    hp.n_audio_layer = p.layer;
    hp.n_text_layer = p.text_layer;
    hp.n_text_ctx = 448;
    hp.n_mels = p.n_mels;
    hp.ftype = 1;
    *out = hp;
    return true;
  }
  return false;
}

std::vector<std::string> test_model_preset_names() {
  std::vector<std::string> names;
  for (const Preset& p : kPresets) names.emplace_back(p.name);
  return names;
}

std::vector<float> test_tensor_values(const TensorSpec& spec, uint64_t seed) {
  const size_t n = static_cast<size_t>(spec.ne[0] * spec.ne[1] * spec.ne[2] * spec.ne[3]);
  std::vector<float> v(n);
  Rng rng{seed * 0x9e3779b97f4a7c15ull ^ name_hash(spec.name)};

  if (spec.name == "encoder.positional_embedding") {
    // Whisper's encoder positions are fixed sinusoids, not learned: write the real ones.
    const int64_t channels = spec.ne[0], half = channels / 2;
    const double inc = half > 1 ? std::log(10000.0) / static_cast<double>(half - 1) : 0.0;
    for (int64_t t = 0; t < spec.ne[1]; ++t) {
      float* row = v.data() + t * channels;
      for (int64_t j = 0; j < half; ++j) {
        const double a = static_cast<double>(t) * std::exp(-inc * static_cast<double>(j));
        row[j] = static_cast<float>(std::sin(a));
        row[half + j] = static_cast<float>(std::cos(a));
      }
    }
    return v;
  }

  // Scales that keep activations near unit size through any depth: projections preserve
  // variance (std 1/sqrt(fan-in)), layer norms start near identity, biases stay small.
  float scale = 0.02f, offset = 0.0f;
  switch (spec.kind) {
    case TensorKind::Matrix: scale = 1.0f / std::sqrt(static_cast<float>(spec.ne[0])); break;
    case TensorKind::Conv: scale = 1.0f / std::sqrt(static_cast<float>(spec.ne[0] * spec.ne[1])); break;
    case TensorKind::Vector:
      if (ends_with(spec.name, ".weight")) offset = 1.0f;  // every 1-D ".weight" is a layer-norm gain
      break;
    case TensorKind::Positional: break;
  }
  for (float& x : v) x = offset + scale * rng.normal();
  return v;
}

std::vector<uint8_t> test_tensor_bytes(const TensorSpec& spec, DType type, uint64_t seed) {
  return tensor_bytes(spec, type, test_tensor_values(spec, seed));
}

std::vector<uint8_t> tensor_bytes(const TensorSpec& spec, DType type, const std::vector<float>& v) {
  const int64_t ncols = spec.ne[0];
  const int64_t nrows = spec.ne[1] * spec.ne[2] * spec.ne[3];
  std::vector<uint8_t> bytes(dtype_row_bytes(type, ncols) * static_cast<size_t>(nrows));
  const size_t written = quantize_rows(type, v.data(), bytes.data(), nrows, ncols);
  HARK_CHECK(written == bytes.size(), "tensor_bytes: quantize_rows wrote " + std::to_string(written) +
                                          " bytes, expected " + std::to_string(bytes.size()));
  return bytes;
}

std::vector<std::string> synthetic_vocab(const HParams& hp) {
  // Real files store the ordinary tokens up to eot; English-only files include eot itself.
  const SpecialTokens st = special_tokens(hp);
  const size_t n_ordinary = static_cast<size_t>(st.eot);  // ids 0 .. eot-1
  std::vector<std::string> tokens;
  tokens.reserve(n_ordinary + 1);
  for (int b = 0; b < 256; ++b) tokens.emplace_back(1, static_cast<char>(b));
  // Then every string over " a..z" of length 2, 3, 4... in order: distinct, and text made of
  // letters and spaces has tokens to match greedily.
  static constexpr char kAlphabet[] = " abcdefghijklmnopqrstuvwxyz";
  constexpr size_t kLetters = sizeof(kAlphabet) - 1;
  for (size_t len = 2; tokens.size() < n_ordinary; ++len) {
    std::vector<size_t> digit(len, 0);
    while (tokens.size() < n_ordinary) {
      std::string s(len, ' ');
      for (size_t i = 0; i < len; ++i) s[i] = kAlphabet[digit[i]];
      tokens.push_back(std::move(s));
      size_t i = len;  // increment the last digit, carrying leftwards
      while (i > 0 && ++digit[i - 1] == kLetters) digit[--i] = 0;
      if (i == 0) break;  // all strings of this length used
    }
  }
  tokens.resize(n_ordinary);
  if (!hp.multilingual()) tokens.emplace_back("<|endoftext|>");
  return tokens;
}

void write_model_file(const std::string& path, const std::function<void(ModelWriter&)>& write) {
  const std::string tmp = path + ".tmp";
  std::FILE* f = std::fopen(tmp.c_str(), "wb");
  if (!f) throw Error(ErrorCode::Io, tmp + ": cannot create: " + std::strerror(errno), path);
  bool failed = false;
  int err = 0;
  ModelWriter w([&](const void* data, size_t size) {
    if (!failed && std::fwrite(data, 1, size, f) != size) {
      failed = true;
      err = errno;
    }
  });
  try {
    write(w);
  } catch (...) {
    std::fclose(f);
    std::remove(tmp.c_str());
    throw;
  }
  if (std::fclose(f) != 0 && !failed) {
    failed = true;
    err = errno;
  }
  if (failed) {
    std::remove(tmp.c_str());
    throw Error(ErrorCode::Io, tmp + ": write failed: " + std::strerror(err), path);
  }
  if (std::rename(tmp.c_str(), path.c_str()) != 0) {
    const int e = errno;
    std::remove(tmp.c_str());
    throw Error(ErrorCode::Io, path + ": cannot rename " + tmp + " into place: " + std::strerror(e), path);
  }
}

void write_test_model(const TestModelOptions& options, const std::string& path) {
  write_model_file(path, [&](ModelWriter& w) { write_model(options, w); });
}

std::vector<uint8_t> make_test_model_bytes(const TestModelOptions& options) {
  std::vector<uint8_t> out;
  ModelWriter w([&](const void* data, size_t size) {
    const auto* p = static_cast<const uint8_t*>(data);
    out.insert(out.end(), p, p + size);
  });
  write_model(options, w);
  return out;
}

}  // namespace hark
