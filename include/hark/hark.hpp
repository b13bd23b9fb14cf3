// hark: offline speech-to-text with Whisper models, the C++ API.
//
// A Context is one loaded model (its weights memory-mapped, a compute backend with its thread
// pool). `transcribe` runs one job on 16 kHz mono float audio and returns timed segments. Errors
// throw hark::Error with a message naming what was wrong (file, field, offset, expected/found).
//
//   auto ctx = hark::Context::load("ggml-tiny.bin");
//   hark::Transcript t = ctx->transcribe(hark::load_audio("talk.mp3"));
//   for (const auto& s : t.segments) printf("%s\n", s.text.c_str());
//
// Everything the front ends (CLI, server, bindings) need is in this header; nothing internal is.
#pragma once
#include <cstdint>
#include <functional>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "hark/error.hpp"

namespace hark {

inline constexpr int kSampleRate = 16000;  // what transcribe() expects

// ---- audio ----
// Decodes WAV, FLAC, OGG Vorbis/Opus or MP3 (any rate, any channel count) to 16 kHz mono float.
std::vector<float> load_audio(const std::string& path);
// The same from bytes in memory.
std::vector<float> decode_audio(const void* data, size_t size);

// ---- the model ----
struct ContextParams {
  int n_threads = 0;           // compute threads; 0: the machine's cores (at most 8)
  std::string device = "cpu";  // "cpu" (optimised) or "cpu-ref" (scalar reference, for checks)
};

struct ModelInfo {
  std::string path;
  std::string size_name;    // "tiny", "base.en", "large-v3", ... or "custom"
  std::string weight_type;  // "f16", "q5_0", ...
  bool multilingual = false;
  int n_vocab = 0, n_audio_ctx = 0, n_audio_state = 0, n_audio_head = 0, n_audio_layer = 0;
  int n_text_ctx = 0, n_text_state = 0, n_text_head = 0, n_text_layer = 0, n_mels = 0;
  int ftype = 0;
  uint64_t file_bytes = 0;    // size of the model file
  uint64_t tensor_bytes = 0;  // bytes of weights
  bool mapped = false;        // weights are read from the file's memory mapping, not copied
  double load_ms = 0.0;
  std::string describe() const;  // several lines, for `hark info`
};

// ---- results ----
struct TokenData {
  int32_t id = 0;
  std::string text;  // the token's bytes (may be part of a UTF-8 character) or a special name
  float p = 0.0f;    // probability the model gave it
  int64_t t0 = -1, t1 = -1;  // 10 ms units, when token timestamps are on
};

struct Segment {
  int64_t t0 = 0;  // start, 10 ms units from the start of the audio
  int64_t t1 = 0;  // end
  std::string text;  // valid UTF-8
  std::vector<TokenData> tokens;
};

struct Timings {
  // load_ms: the model's load (once per Context); total_ms: this transcribe call, load excluded.
  double load_ms = 0, mel_ms = 0, encode_ms = 0, decode_ms = 0, total_ms = 0;
  int n_windows = 0;        // encoder runs
  int n_decode_tokens = 0;  // decoder steps (one token each)
  double audio_seconds = 0;
  double decode_ms_per_token() const { return n_decode_tokens ? decode_ms / n_decode_tokens : 0.0; }
  // Seconds of work per second of audio (< 1: faster than real time), load excluded.
  // Seconds of work per second of audio (< 1: faster than real time), load excluded.
  double real_time_factor() const { return audio_seconds > 0 ? total_ms / 1000.0 / audio_seconds : 0.0; }
};

// The stretch of audio one encoder window decoded, 10 ms units. Windows follow each other from
// the start of the audio to its end; one starts where the last complete segment of the one before
// ended, so they may overlap.
struct Window {
  int64_t t0 = 0, t1 = 0;
  bool skipped_as_silence = false;
};

struct Transcript {
  std::vector<Segment> segments;
  std::string language;  // code of the language transcribed ("en", ...)
  Timings timings;
  std::vector<Window> windows;
  bool aborted = false;  // should_abort stopped the job; segments hold what was finished
  std::string text() const;  // all segments' text joined
};

// ---- one transcription job ----
struct TranscribeParams {
  std::string language = "en";  // a language code, or "auto" to detect (multilingual models)
  bool translate = false;       // into English (multilingual models)
  int n_threads = 0;            // 0: the context's
  int64_t offset_ms = 0;        // start here in the audio
  int64_t duration_ms = 0;      // 0: to the end
  bool timestamps = true;       // false: one segment per window, no timestamp tokens
  int max_tokens_per_window = 0;  // 0: the model's limit (n_text_ctx / 2)
  std::string initial_prompt;     // text the model sees as previous context
  // Called with each segment as soon as it is final, in order; index counts from 0.
  std::function<void(const Segment&, int index)> on_segment;
  // Called with the percentage of audio done (0..100), after each window.
  std::function<void(int percent)> on_progress;
  // Returns true to stop; checked between graph nodes and tokens. The result holds what was done.
  std::function<bool()> should_abort;
};

class Context {
 public:
  // Maps and validates a ggml .bin model. Throws hark::Error.
  static std::unique_ptr<Context> load(const std::string& model_path, const ContextParams& params = {});
  virtual ~Context() = default;

  virtual const ModelInfo& info() const = 0;
  // samples: 16 kHz mono float in [-1, 1]. Throws hark::Error for bad input (NaN, empty...).
  virtual Transcript transcribe(std::span<const float> samples, const TranscribeParams& params = {}) = 0;
};

// ---- output formats (each ends with a newline when not empty) ----
// "hh:mm:ss.mmm" (or with a comma for SRT), from 10 ms units.
std::string format_timestamp(int64_t t_10ms, bool comma = false);
std::string to_txt(const Transcript& t);   // segment texts, one per line
std::string to_srt(const Transcript& t);
std::string to_vtt(const Transcript& t);
std::string to_json(const Transcript& t);  // {"language", "segments":[{t0,t1,text,tokens}], "timings"}
// The CLI's console line: "[00:00:00.000 --> 00:00:02.500]  text".
std::string format_segment_line(const Segment& s);

}  // namespace hark
