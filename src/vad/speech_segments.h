// Speech segments from per-frame speech probabilities, with the options and semantics of
// whisper.cpp's whisper_vad_segments_from_probs (themselves Silero's get_speech_timestamps with a
// fixed merge of short gaps):
//
//   - speech starts at the first frame with p >= threshold; it ends after p stays below
//     neg_threshold = max(threshold - 0.15, 0.01) for at least min_silence_duration_ms (the end is
//     where that silence began); frames between the two thresholds continue what is going on;
//   - a segment must be longer than min_speech_duration_ms to be kept (also at the end of audio);
//   - a segment reaching max_speech_duration_s (less one frame and both pads) is cut at the last
//     silence longer than 98 ms inside it, or right there when there is none;
//   - segments less than 200 ms apart are merged (unless the result would outgrow the maximum:
//     hark's one difference, as whisper.cpp merged its own cuts back), then those shorter than
//     the minimum dropped;
//   - each segment grows by speech_pad_ms on both sides (the first start at most to 0, the last
//     end to the audio's end); neighbours closer than two pads split the gap between them.
//
// Times are samples internally, frame i starting at i * n_window; the audio is taken to be
// n_probs * n_window samples long (the padded last frame included), as whisper.cpp does.
#pragma once
#include <cstdint>
#include <vector>

#include "hark/vad.hpp"

namespace hark::vad {

// The options are the public VadOptions (samples_overlap is not used here);
// max_speech_duration_s > 100000 means no limit.
using SegmentOptions = VadOptions;

struct SampleRange {
  int64_t start = 0;  // samples
  int64_t end = 0;
  bool operator==(const SampleRange&) const = default;
};

// Throws hark::Error for options out of range (threshold outside [0, 1], negative durations or
// overlap).
void check_segment_options(const SegmentOptions& o);

std::vector<SampleRange> speech_ranges(const std::vector<float>& probs, int n_window, int sample_rate,
                                       const SegmentOptions& o);

// Samples to 10 ms units, rounded to nearest.
int64_t samples_to_cs(int64_t samples, int sample_rate);

}  // namespace hark::vad
