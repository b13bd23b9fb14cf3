// hark voice activity detection, the C++ API: the Silero VAD (a neural network, one speech
// probability per 32 ms frame) and whisper.rn's energy VAD (no model).
//
//   auto vad = hark::VadModel::load("silero-v6.2.0-ggml.bin");
//   hark::VadResult r = vad->detect_speech(hark::load_audio("talk.wav"));
//   for (const auto& s : r.segments) printf("%lld %lld\n", (long long)s.t0, (long long)s.t1);
//
// Audio is 16 kHz mono float in [-1, 1], as everywhere in hark. Times are 10 ms units, like
// Segment's. Probabilities and segments are whisper.cpp's (whisper_vad_detect_speech,
// whisper_vad_segments_from_probs) for the same model and options.
// Thread safety: a VadModel may be used from several threads (calls take turns on its one
// network state); each VadStream is one stream's state, for one thread at a time.
#pragma once
#include <cstdint>
#include <limits>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "hark/error.hpp"
#include "hark/export.h"

namespace hark {

// whisper.cpp's whisper_vad_params, with its defaults.
struct VadOptions {
  float threshold = 0.5f;             // P(speech) at or above which a frame starts speech
  int min_speech_duration_ms = 250;   // shorter segments are dropped
  int min_silence_duration_ms = 100;  // a pause must last this long (below threshold - 0.15) to end speech
  float max_speech_duration_s = std::numeric_limits<float>::max();  // longer speech is cut
  int speech_pad_ms = 30;                                           // added on both sides of each segment
  // Seconds of audio kept on both sides of each segment when the speech is cut out of the audio
  // for transcription (whisper.cpp's samples_overlap); it does not change the segments.
  float samples_overlap = 0.1f;
};

struct VadSegment {
  int64_t t0 = 0;  // start, 10 ms units from the start of the audio
  int64_t t1 = 0;  // end
  bool operator==(const VadSegment&) const = default;
};

struct VadResult {
  std::vector<VadSegment> segments;
  std::vector<float> probs;  // P(speech) per frame of frame_samples; the last frame zero-padded
  int frame_samples = 512;
};

// The segments of a probability sequence (one per frame of frame_samples at 16 kHz).
// Throws hark::Error for options out of range.
HARK_API std::vector<VadSegment> vad_segments_from_probs(std::span<const float> probs, const VadOptions& options = {},
                                                         int frame_samples = 512);

class VadStream;

struct VadModelParams {
  int n_threads = 1;   // the network is small: one thread is the fastest on most machines
  std::string device;  // "cpu" (default when empty) or "cpu-ref"
  // The upstream Silero front end: each frame preceded by the previous frame's last 64 samples
  // (the Python package's and ONNX model's way). Default false: whisper.cpp's, each frame padded
  // by reflecting its own edges, whose probabilities hark matches.
  bool upstream_context = false;
};

class HARK_API VadModel {
 public:
  // Maps and validates a Silero VAD model in whisper.cpp's layout (ggml-silero-*.bin). Throws
  // hark::Error naming the file, the field, its offset, expected vs found.
  static std::shared_ptr<VadModel> load(const std::string& path, const VadModelParams& params = {});
  virtual ~VadModel() = default;

  virtual std::string model_type() const = 0;  // "silero-16k"
  virtual std::string version() const = 0;     // "6.2.0"
  virtual int frame_samples() const = 0;       // 512 (32 ms)

  // The whole buffer from a fresh state: probabilities and segments.
  virtual VadResult detect_speech(std::span<const float> samples, const VadOptions& options = {}) = 0;
  // Only the probabilities, one per frame_samples() (the last frame zero-padded).
  virtual std::vector<float> probabilities(std::span<const float> samples) = 0;
  // A live stream of its own (network state and pending samples), sharing the weights.
  virtual std::unique_ptr<VadStream> stream() = 0;
};

// Frame-by-frame Silero VAD on a live stream. Samples come in chunks of any size; each complete
// frame is run as soon as it is there, its LSTM state carried to the next, so the probabilities
// of a stream equal detect_speech's over the same audio.
class HARK_API VadStream {
 public:
  virtual ~VadStream() = default;
  // The probabilities of the frames this chunk completes (none while a frame is still filling).
  virtual std::vector<float> push(std::span<const float> samples) = 0;
  // One frame of exactly frame_samples() samples, run at once. Throws on another size or when
  // pushed samples are pending.
  virtual float process(std::span<const float> frame) = 0;
  // The pending partial frame zero-padded and run (nothing when none is pending).
  virtual std::vector<float> flush() = 0;
  virtual void reset() = 0;                    // fresh state, pending samples dropped
  virtual int64_t frames() const = 0;          // frames run since the last reset
  virtual size_t pending_samples() const = 0;  // pushed, waiting for a full frame
  virtual int frame_samples() const = 0;
};

// ---- energy VAD (whisper.rn's realtime VAD, whisper.cpp's stream example's vad_simple) ----
struct EnergyVadOptions {
  int vad_ms = 2000;          // the window: the last vad_ms of the audio (at least 2000)
  int last_ms = 1000;         // its last part, compared against the whole window
  float vad_thold = 0.6f;     // the last part's mean |x| must be at most this times the window's
  float freq_thold = 100.0f;  // high-pass cutoff (Hz) applied to the window first; 0: none
};

struct EnergyVadResult {
  // True when the window is full (the audio is longer than vad_ms) and its last part is quiet
  // against the whole: the speaker paused, so the audio so far is ready to transcribe
  // (whisper.rn's "speech detected" for a realtime slice).
  bool detected = false;
  float energy_all = 0.0f;   // mean |x| of the high-passed window
  float energy_last = 0.0f;  // mean |x| of its last last_ms
};

// A pure function of the samples (16 kHz mono). Throws hark::Error for bad options.
HARK_API EnergyVadResult energy_vad(std::span<const float> samples, const EnergyVadOptions& options = {});

}  // namespace hark
