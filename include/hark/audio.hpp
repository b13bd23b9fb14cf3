// hark: audio in, the C++ API. Everything a transcription takes is 16 kHz mono float in
// [-1, 1]; these decode files and convert raw PCM to it (libsndfile, libmpg123, libsoxr).
#pragma once
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "hark/export.h"

namespace hark {

inline constexpr int kSampleRate = 16000;  // what transcribe() expects

// ---- audio ----
// All of these return 16 kHz mono float, downmixed by averaging channels and resampled (libsoxr).
// Decodes WAV, FLAC, OGG Vorbis/Opus or MP3 (any rate, any channel count).
HARK_API std::vector<float> load_audio(const std::string& path);
// The same from a whole encoded file in memory.
HARK_API std::vector<float> decode_audio(const void* data, size_t size);
// The same, refusing audio longer than max_seconds (ResourceExhausted) as soon as the decoder
// passes it: a server's bound on what one upload may cost, whatever its header claims or its
// compression hides (a small FLAC can hold hours of silence).
HARK_API std::vector<float> decode_audio(const void* data, size_t size, double max_seconds);
// One channel (from 0) alone instead of the average, e.g. the two sides of a stereo call
// (faster-whisper's split_stereo); throws InvalidArgument when the file has no such channel.
HARK_API std::vector<float> load_audio_channel(const std::string& path, int channel);
HARK_API std::vector<float> decode_audio_channel(const void* data, size_t size, int channel);
// A data URI holding an encoded file, whisper.rn's form: "data:audio/wav;base64,UklGR...".
HARK_API std::vector<float> decode_audio_data_uri(std::string_view uri);
// Raw interleaved PCM at any rate and channel count; n_values counts over all channels.
HARK_API std::vector<float> pcm16_to_mono16k(const int16_t* samples, size_t n_values, int sample_rate, int channels);
HARK_API std::vector<float> pcm_f32_to_mono16k(const float* samples, size_t n_values, int sample_rate, int channels);

}  // namespace hark
