// The C API: audio decoding and conversion (hark_audio_*).
#include "capi/capi_internal.h"

using namespace hark::capi;  // NOLINT(google-build-using-namespace): this layer's own helpers

namespace {

// hark_audio_*: a registered copy of the samples, so hark_audio_free can check what it is given.
template <typename MakeAudio>
hark_status audio_call(const char* fn, float** out, size_t* n_out, MakeAudio&& make_audio) {
  return guarded(fn, HARK_ERR_AUDIO, [&] {
    require_out(out);
    require(n_out != nullptr, "n_out is NULL");
    *n_out = 0;
    const std::vector<float> audio = phase(HARK_ERR_AUDIO, make_audio);
    auto buf = std::make_unique<float[]>(std::max<size_t>(audio.size(), 1));  // never a 0-byte (shared) address
    std::copy(audio.begin(), audio.end(), buf.get());
    handles().add(buf.get(), Kind::Samples);
    *n_out = audio.size();
    *out = buf.release();
  });
}

}  // namespace

extern "C" {

// ---- audio ----

hark_status hark_audio_load_file(const char* path, float** out, size_t* n_out) {
  return audio_call("hark_audio_load_file", out, n_out, [&] {
    check_path(path, "path");
    return hark::load_audio(path);
  });
}

hark_status hark_audio_decode(const void* data, size_t size, float** out, size_t* n_out) {
  return audio_call("hark_audio_decode", out, n_out, [&] {
    require(data != nullptr, "data is NULL");
    require(size > 0, "size is 0: no data");
    return hark::decode_audio(data, size);
  });
}

hark_status hark_audio_decode_data_uri(const char* uri, float** out, size_t* n_out) {
  return audio_call("hark_audio_decode_data_uri", out, n_out, [&] {
    require(uri != nullptr, "uri is NULL");
    return hark::decode_audio_data_uri(uri);
  });
}

hark_status hark_audio_pcm16_to_mono16k(const int16_t* samples, size_t n_values, int sample_rate, int channels,
                                        float** out, size_t* n_out) {
  return audio_call("hark_audio_pcm16_to_mono16k", out, n_out, [&] {
    check_pcm(samples, n_values, sample_rate, channels);
    return hark::pcm16_to_mono16k(samples, n_values, sample_rate, channels);
  });
}

hark_status hark_audio_pcm_f32_to_mono16k(const float* samples, size_t n_values, int sample_rate, int channels,
                                          float** out, size_t* n_out) {
  return audio_call("hark_audio_pcm_f32_to_mono16k", out, n_out, [&] {
    check_pcm(samples, n_values, sample_rate, channels);
    return hark::pcm_f32_to_mono16k(samples, n_values, sample_rate, channels);
  });
}

hark_status hark_audio_free(float* samples) {
  return guarded("hark_audio_free", HARK_ERR_INTERNAL, [&] {
    if (!handles().remove(samples, Kind::Samples)) bad_handle(samples, Kind::Samples, "samples");
    delete[] samples;
  });
}

}  // extern "C"
