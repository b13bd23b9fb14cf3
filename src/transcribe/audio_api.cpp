// The public audio entry points: the audio layer already decodes, downmixes, resamples and
// validates; these only expose it under the public API's names.
#include "audio/audio.h"
#include "hark/hark.hpp"

namespace hark {

static_assert(kSampleRate == audio::kSampleRate, "the public sample rate is the audio layer's");

std::vector<float> load_audio(const std::string& path) { return audio::load_file(path); }

std::vector<float> decode_audio(const void* data, size_t size) { return audio::decode_memory(data, size); }

}  // namespace hark
