// Audio as JavaScript hands it over, turned into what hark transcribes (16 kHz mono float).
//
// whisper.rn's forms: a file path or a "data:audio/wav;base64,..." URI (transcribe, detectSpeech);
// an ArrayBuffer of 16-bit PCM or a base64 string of float32 PCM (transcribeData,
// detectSpeechData). Node adds typed arrays: a Float32Array is float samples, an Int16Array 16-bit
// ones. The bytes are copied on the JS thread (the caller may reuse its buffer at once); decoding
// and resampling happen later, on the worker thread.
#pragma once
#include <napi.h>

#include <string>
#include <vector>

namespace hark_node {

struct AudioInput {
  enum class Kind { kPathOrDataUri, kFloat32, kInt16, kBase64Float32, kBase64Int16 };
  Kind kind = Kind::kPathOrDataUri;
  std::string text;                  // the path, data URI or base64 text
  std::vector<unsigned char> bytes;  // raw PCM bytes (kFloat32, kInt16)
  int sample_rate = 16000;           // of raw PCM
  int channels = 1;
};

// transcribe(pathOrDataUri) / detectSpeech: a non-empty string. Throws Napi::TypeError naming
// `what` otherwise.
AudioInput audio_from_path_arg(const Napi::Value& v, const char* what);

// transcribeData / detectSpeechData. options may hold hark's pcmFormat ('int16' | 'float32': how
// an ArrayBuffer, Buffer or base64 string is read; default whisper.rn's: ArrayBuffer int16,
// string float32), sampleRate and channels. Throws Napi::TypeError naming what is wrong.
AudioInput audio_from_data_arg(const Napi::Value& v, const Napi::Object& options, const char* what);

// On any thread: the samples (16 kHz mono float). Throws hark::Error (or std::runtime_error) with
// a message naming the problem: a missing file, undecodable audio, an odd byte count, bad base64.
std::vector<float> decode_audio_input(const AudioInput& in);

}  // namespace hark_node
