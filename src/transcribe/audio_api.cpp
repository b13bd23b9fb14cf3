// The public audio entry points: the audio layer already decodes, downmixes, resamples and
// validates; these expose it under the public API's names, and unwrap whisper.rn's data URIs.
#include "audio/audio.h"
#include "audio/base64.h"
#include "hark/hark.hpp"
#include "runtime/error.h"

namespace hark {

static_assert(kSampleRate == audio::kSampleRate, "the public sample rate is the audio layer's");

std::vector<float> load_audio(const std::string& path) { return audio::load_file(path); }

std::vector<float> decode_audio(const void* data, size_t size) { return audio::decode_memory(data, size); }

std::vector<float> decode_audio(const void* data, size_t size, double max_seconds) {
  return audio::decode_memory(data, size, "<memory>", -1, max_seconds);
}

std::vector<float> load_audio_channel(const std::string& path, int channel) {
  HARK_CHECK_AS(InvalidArgument, "channel", channel >= 0,
                path + ": channel must be >= 0, got " + std::to_string(channel));
  return audio::load_file(path, channel);
}

std::vector<float> decode_audio_channel(const void* data, size_t size, int channel) {
  HARK_CHECK_AS(InvalidArgument, "channel", channel >= 0,
                "<memory>: channel must be >= 0, got " + std::to_string(channel));
  return audio::decode_memory(data, size, "<memory>", channel);
}

std::vector<float> decode_audio_data_uri(std::string_view uri) {
  // data:[<media type>][;base64],<data> (RFC 2397); audio is binary, so only base64 makes sense.
  // A URI that is not one, or base64 that does not decode, is data that is not what it claims.
  const std::string name = "<data URI>";
  const std::vector<uint8_t> bytes = classified(ErrorCode::CorruptData, name, [&] {
    HARK_CHECK(uri.substr(0, 5) == "data:", name + ": does not start with 'data:'");
    const size_t comma = uri.find(',');
    HARK_CHECK(comma != std::string_view::npos, name + ": no ',' between the header and the data");
    const std::string_view header = uri.substr(5, comma - 5);
    HARK_CHECK(
        header.size() >= 7 && header.substr(header.size() - 7) == ";base64",
        name + ": header '" + std::string(header) + "' does not end with ';base64' (only base64 data is supported)");
    std::vector<uint8_t> b = audio::base64_decode(uri.substr(comma + 1), name);
    HARK_CHECK(!b.empty(), name + ": no data after the header");
    return b;
  });
  return audio::decode_memory(bytes.data(), bytes.size(), name);
}

std::vector<float> pcm16_to_mono16k(const int16_t* samples, size_t n_values, int sample_rate, int channels) {
  HARK_CHECK(samples != nullptr || n_values == 0, "pcm16_to_mono16k: samples is null");
  return audio::from_pcm16(samples, n_values, sample_rate, channels);
}

std::vector<float> pcm_f32_to_mono16k(const float* samples, size_t n_values, int sample_rate, int channels) {
  HARK_CHECK(samples != nullptr || n_values == 0, "pcm_f32_to_mono16k: samples is null");
  return audio::from_f32(samples, n_values, sample_rate, channels);
}

}  // namespace hark
