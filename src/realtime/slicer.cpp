// Slicer: fixed-length slices, cut early at pauses found by the energy or the Silero VAD.
#include "realtime/slicer.h"

#include <algorithm>

#include "runtime/error.h"

namespace hark::realtime {

Slicer::Slicer(SlicerConfig config) : cfg_(std::move(config)) {
  if (cfg_.silero) stream_ = cfg_.silero->stream();
  slice_.reserve(cfg_.slice_samples);
}

size_t Slicer::append(std::span<const float> samples) {
  size_t taken = 0;
  while (!closed_ && taken < samples.size()) {
    // Up to the next check point, so pauses are judged at the same places whatever the chunking.
    const size_t to_check = kCheckSamples - slice_.size() % kCheckSamples;
    const size_t k = std::min({samples.size() - taken, cfg_.slice_samples - slice_.size(), to_check});
    const std::span<const float> piece = samples.subspan(taken, k);
    slice_.insert(slice_.end(), piece.begin(), piece.end());
    taken += k;
    if (stream_) {
      // The stream runs whole frames across slice bounds: the network state follows the audio.
      const int frame = stream_->frame_samples();
      const int64_t at = start_ + int64_t(slice_.size());
      for (float p : stream_->push(piece)) {
        if (p >= cfg_.silero_threshold) {
          speech_ = true;
          silence_run_ = 0;
          speech_run_ += size_t(frame);
          if (!speaking_) {
            speaking_ = true;
            speech_run_ = 0;
            changes_.push_back({VadChange::Type::kSpeechStart, p, at});
          } else if (speech_run_ >= kContinueSamples) {
            speech_run_ = 0;
            changes_.push_back({VadChange::Type::kSpeechContinue, p, at});
          }
        } else if (p < cfg_.silero_threshold - 0.15f) {  // the hysteresis whisper.cpp's segments use
          silence_run_ += size_t(frame);
          if (speaking_ && silence_run_ >= cfg_.silero_silence_samples) {
            speaking_ = false;
            changes_.push_back({VadChange::Type::kSpeechEnd, 1 - p, at});
          }
        }
      }
    }
    if (slice_.size() >= cfg_.slice_samples) {
      closed_ = true;
    } else if (slice_.size() % kCheckSamples == 0 && slice_.size() >= cfg_.min_samples && pause_found()) {
      closed_ = true;
    }
  }
  return taken;
}

bool Slicer::pause_found() {
  if (stream_) return speech_ && silence_run_ >= cfg_.silero_silence_samples;
  if (!cfg_.energy_vad) return false;
  const size_t window = size_t(std::max(cfg_.energy.vad_ms, 2000)) * 16;  // energy_vad's minimum window
  if (slice_.size() <= window) return false;                              // energy_vad needs the whole window
  const std::span<const float> last(slice_.data() + slice_.size() - window - 1, window + 1);
  const EnergyVadResult r = energy_vad(last, cfg_.energy);
  // A quiet tail after sound is a pause; a window of (near) silence throughout is not one, or
  // silence would be cut into many slices of nothing.
  return r.detected && r.energy_all > 1e-4f;
}

void Slicer::skip(int64_t n) {
  HARK_CHECK(slice_.empty(), "Slicer::skip: the open slice must be closed first");
  start_ += n;
}

void Slicer::next() {
  start_ += int64_t(slice_.size());
  slice_.clear();
  closed_ = false;
  speech_ = false;
  silence_run_ = 0;
}

}  // namespace hark::realtime
