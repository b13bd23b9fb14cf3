// AudioInput from JS values, and its decoding on the worker (see the header).
#include "audio_input.h"

#include <cmath>
#include <cstring>
#include <stdexcept>

#include "hark/hark.hpp"
#include "js_options.h"

namespace hark_node {
namespace {

std::vector<unsigned char> copy_bytes(const void* data, size_t n) {
  const auto* p = static_cast<const unsigned char*>(data);
  return std::vector<unsigned char>(p, p + n);
}

// RFC 4648 base64 (standard or URL alphabet, padding optional, whitespace skipped).
std::vector<unsigned char> base64_decode(const std::string& text) {
  auto value_of = [](char c) -> int {
    if (c >= 'A' && c <= 'Z') return c - 'A';
    if (c >= 'a' && c <= 'z') return c - 'a' + 26;
    if (c >= '0' && c <= '9') return c - '0' + 52;
    if (c == '+' || c == '-') return 62;
    if (c == '/' || c == '_') return 63;
    return -1;
  };
  std::vector<unsigned char> out;
  out.reserve(text.size() / 4 * 3);
  uint32_t acc = 0;
  int bits = 0;
  for (size_t i = 0; i < text.size(); ++i) {
    const char c = text[i];
    if (c == '=') break;
    if (c == ' ' || c == '\n' || c == '\r' || c == '\t') continue;
    const int v = value_of(c);
    if (v < 0)
      throw std::runtime_error("audio data: not base64: character '" + std::string(1, c) + "' at offset " +
                               std::to_string(i));
    acc = (acc << 6) | uint32_t(v);
    bits += 6;
    if (bits >= 8) {
      bits -= 8;
      out.push_back(static_cast<unsigned char>((acc >> bits) & 0xFF));
    }
  }
  return out;
}

std::vector<float> pcm_bytes_to_samples(const std::vector<unsigned char>& bytes, bool is_float, int rate,
                                        int channels) {
  const size_t width = is_float ? sizeof(float) : sizeof(int16_t);
  if (bytes.empty()) throw std::runtime_error("audio data: empty (no samples)");
  if (bytes.size() % width != 0)
    throw std::runtime_error("audio data: " + std::to_string(bytes.size()) + " bytes is not a whole number of " +
                             (is_float ? "float32" : "int16") + " samples (" + std::to_string(width) + " bytes each)");
  const size_t n = bytes.size() / width;
  if (is_float) {
    std::vector<float> f(n);
    std::memcpy(f.data(), bytes.data(), bytes.size());
    // Bytes that were never float32 (int16 read as floats, say) show up as NaN or Inf: refused on
    // every path, the 16 kHz mono one too, naming the first.
    for (size_t i = 0; i < n; ++i)
      if (!std::isfinite(f[i]))
        throw std::runtime_error("audio data: float32 sample " + std::to_string(i) + " is " +
                                 (std::isnan(f[i]) ? "NaN" : "infinite") +
                                 "; audio must be finite (is it 16-bit PCM? that is the default: drop pcmFormat)");
    if (rate == hark::kSampleRate && channels == 1) return f;
    return hark::pcm_f32_to_mono16k(f.data(), n, rate, channels);
  }
  std::vector<int16_t> s(n);
  std::memcpy(s.data(), bytes.data(), bytes.size());
  return hark::pcm16_to_mono16k(s.data(), n, rate, channels);
}

}  // namespace

AudioInput audio_from_path_arg(const Napi::Value& v, const char* what) {
  if (!v.IsString() || v.As<Napi::String>().Utf8Value().empty())
    throw Napi::TypeError::New(v.Env(),
                               std::string(what) +
                                   ": expected a file path or a data:audio/...;base64 URI (a non-empty string), got " +
                                   describe_js_type(v));
  AudioInput in;
  in.text = v.As<Napi::String>().Utf8Value();
  if (in.text.rfind("file://", 0) == 0) in.text.erase(0, 7);  // whisper.rn strips it too
  return in;
}

AudioInput audio_from_data_arg(const Napi::Value& v, const Napi::Object& options, const char* what) {
  const Napi::Env env = v.Env();
  AudioInput in;
  const std::string fmt = get_enum(options, "pcmFormat", {"", "int16", "float32"}, "");
  in.sample_rate = get_int(options, "sampleRate", 16000, 1000, 768000);
  in.channels = get_int(options, "channels", 1, 1, 256);
  const bool as_float_default = fmt == "float32";
  if (v.IsTypedArray()) {
    const auto ta = v.As<Napi::TypedArray>();
    const auto type = ta.TypedArrayType();
    const size_t nbytes = ta.ByteLength();
    const auto* base = static_cast<const unsigned char*>(ta.ArrayBuffer().Data()) + ta.ByteOffset();
    if (type == napi_float32_array)
      in.kind = AudioInput::Kind::kFloat32;
    else if (type == napi_int16_array)
      in.kind = AudioInput::Kind::kInt16;
    else if (type == napi_uint8_array || type == napi_int8_array)  // a Buffer: bytes as pcmFormat says
      in.kind = as_float_default ? AudioInput::Kind::kFloat32 : AudioInput::Kind::kInt16;
    else
      throw Napi::TypeError::New(
          env, std::string(what) + ": a typed array of audio must be a Float32Array, an Int16Array or a Buffer");
    in.bytes = copy_bytes(base, nbytes);
    return in;
  }
  if (v.IsArrayBuffer()) {
    auto ab = v.As<Napi::ArrayBuffer>();
    in.kind = as_float_default ? AudioInput::Kind::kFloat32 : AudioInput::Kind::kInt16;
    in.bytes = copy_bytes(ab.Data(), ab.ByteLength());
    return in;
  }
  if (v.IsString()) {
    in.text = v.As<Napi::String>().Utf8Value();
    // whisper.rn's native code reads a base64 string as 16-bit little-endian PCM (whatever its
    // JSDoc says), so int16 is the default; float32 only when asked for.
    in.kind = as_float_default ? AudioInput::Kind::kBase64Float32 : AudioInput::Kind::kBase64Int16;
    return in;
  }
  throw Napi::TypeError::New(env,
                             std::string(what) +
                                 ": expected an ArrayBuffer or a base64 string of 16-bit PCM (pcmFormat 'float32': "
                                 "of float32), a Float32Array, an Int16Array or a Buffer, got " +
                                 describe_js_type(v));
}

std::vector<float> decode_audio_input(const AudioInput& in) {
  switch (in.kind) {
    case AudioInput::Kind::kPathOrDataUri:
      if (in.text.rfind("data:", 0) == 0) return hark::decode_audio_data_uri(in.text);
      if (in.text.rfind("http://", 0) == 0 || in.text.rfind("https://", 0) == 0)
        throw std::runtime_error("remote files are not supported, download it first: " + in.text);
      return hark::load_audio(in.text);
    case AudioInput::Kind::kFloat32: return pcm_bytes_to_samples(in.bytes, true, in.sample_rate, in.channels);
    case AudioInput::Kind::kInt16: return pcm_bytes_to_samples(in.bytes, false, in.sample_rate, in.channels);
    case AudioInput::Kind::kBase64Float32:
      return pcm_bytes_to_samples(base64_decode(in.text), true, in.sample_rate, in.channels);
    case AudioInput::Kind::kBase64Int16:
      return pcm_bytes_to_samples(base64_decode(in.text), false, in.sample_rate, in.channels);
  }
  throw std::runtime_error("audio data: unknown kind");
}

}  // namespace hark_node
