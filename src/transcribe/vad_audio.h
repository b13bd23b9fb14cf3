// VAD-assisted transcription (whisper.cpp's whisper_full_params::vad): the speech the VAD found
// is cut out of the audio and laid end to end, so Whisper only encodes and decodes speech, and
// every time the long-form loop reports on that shorter "processed" timeline is mapped back to
// the caller's audio.
//
// Layout, as whisper.cpp does it: each speech segment's samples, every segment but the last
// extended by samples_overlap seconds of the audio after it (context for the model's last word),
// then 100 ms of silence (zeros) before the next segment, so Whisper hears a pause at each join.
//
// The map (processed 10 ms units -> original 10 ms units) is hark's own, stricter than
// whisper.cpp's interpolation table: inside a copied stretch it is the identity plus that
// stretch's shift (exact, slope 1, the overlap included since it is real audio); the inserted
// silence maps to the end of the stretch before it for its first half and to the start of the
// next stretch for its second half. So a mapped time never lands in removed audio except exactly
// at a join, and the map never decreases. Overlaps are clamped so that a stretch never reaches
// past the start of the next one.
#pragma once
#include <cstdint>
#include <span>
#include <vector>

#include "hark/hark.hpp"
#include "hark/vad.hpp"

namespace hark {

// One copied stretch: original [orig_t0, orig_t1) at processed [proc_t0, proc_t0 + orig_t1 - orig_t0).
struct VadStretch {
  int64_t orig_t0 = 0, orig_t1 = 0;  // 10 ms units on the original timeline
  int64_t proc_t0 = 0;               // 10 ms units on the processed timeline
  bool operator==(const VadStretch&) const = default;
};

class VadTimeMap {
 public:
  VadTimeMap() = default;
  // Stretches in processed order, each one's proc_t0 at or after the previous one's end plus
  // gap_units, original ranges ascending and disjoint. Throws hark::Error otherwise.
  VadTimeMap(std::vector<VadStretch> stretches, int64_t gap_units);

  // A processed time (10 ms units) to the original timeline. Before the first stretch: its start;
  // after the last: its end.
  int64_t to_original(int64_t t) const;
  // Every time a transcript holds (segments, tokens with times, words, windows), in place.
  void map(Segment& s) const;
  void map(Transcript& t) const;

  const std::vector<VadStretch>& stretches() const { return stretches_; }
  bool empty() const { return stretches_.empty(); }

 private:
  std::vector<VadStretch> stretches_;
  int64_t gap_ = 0;
};

struct VadAudio {
  std::vector<float> samples;  // the processed audio
  VadTimeMap map;              // its times -> the caller's timeline
};

// The silence between two stretches: whisper.cpp's 0.1 s.
constexpr int64_t kVadGapUnits = 10;

// Cuts `segments` (10 ms units relative to samples[0], ascending) out of `samples` as described
// above; origin_units is where samples[0] lies on the caller's timeline (offset_ms / 10), so the
// map returns caller times. samples_overlap is rounded to 10 ms. No segments: empty audio and map.
VadAudio cut_speech(std::span<const float> samples, std::span<const VadSegment> segments, float samples_overlap,
                    int64_t origin_units);

}  // namespace hark
