// Slicer: decides where live audio is cut into slices. A slice closes when it reaches its full
// length, or (with a VAD) at a pause once it holds at least the minimum audio. Pauses are looked
// for only at fixed points of the slice (every kCheckSamples), so the cuts depend on the audio
// alone, never on how it was chunked or how fast it arrived: the same audio gives the same slices.
#pragma once
#include <cstdint>
#include <memory>
#include <span>
#include <utility>
#include <vector>

#include "hark/vad.hpp"

namespace hark::realtime {

struct SlicerConfig {
  size_t slice_samples = 0;
  size_t min_samples = 0;
  bool energy_vad = false;
  EnergyVadOptions energy;
  std::shared_ptr<VadModel> silero;  // instead of the energy VAD
  float silero_threshold = 0.5f;
  size_t silero_silence_samples = 8000;
};

// A change of the Silero VAD's verdict, for a listener (the Node binding's onVad): speech began,
// goes on (every kContinueSamples of it), or ended (silero_silence_samples of non-speech).
struct VadChange {
  enum class Type { kSpeechStart, kSpeechContinue, kSpeechEnd };
  Type type;
  float confidence;  // the frame's speech probability (speech_end: 1 - it)
  int64_t sample;    // where in the recording
};

class Slicer {
 public:
  static constexpr size_t kCheckSamples = 1600;  // 100 ms
  explicit Slicer(SlicerConfig config);

  // Takes samples into the open slice, up to where it closes; returns how many it took.
  size_t append(std::span<const float> samples);
  bool closed() const { return closed_; }
  std::span<const float> slice() const { return slice_; }
  int64_t start_sample() const { return start_; }
  // With a Silero model: some frame of this slice was speech. Without one: always true.
  bool had_speech() const { return !cfg_.silero || speech_; }
  // Begins the next slice where this one ended.
  void next();
  // n samples of the recording will never arrive (dropped on overflow): the empty open slice
  // starts that much later, so times stay times of the recording.
  void skip(int64_t n);
  // The VAD changes since the last call (none without a Silero model).
  std::vector<VadChange> take_vad_changes() { return std::exchange(changes_, {}); }
  static constexpr size_t kContinueSamples = 8000;  // 500 ms, whisper.rn's VAD inference interval

 private:
  bool pause_found();
  SlicerConfig cfg_;
  std::unique_ptr<VadStream> stream_;
  std::vector<float> slice_;
  int64_t start_ = 0;
  bool closed_ = false;
  bool speech_ = false;
  size_t silence_run_ = 0;  // samples of non-speech frames since the last speech frame
  // Across slices: the listener's view of speech, which a slice boundary does not interrupt.
  bool speaking_ = false;
  size_t speech_run_ = 0;  // speech samples since the last start/continue change
  std::vector<VadChange> changes_;
};

}  // namespace hark::realtime
