// The word-timestamp step of the long-form loop (OpenAI transcribe.py with word_timestamps): after
// a window's segments are decided, one teacher-forced decoder pass over their text gives the
// alignment heads' cross-attention, decode/alignment turns it into words, and from the words
// the segments' bounds, where the next window starts, and (hallucination_silence_threshold) which
// suspected hallucinations and the silences around them are skipped.
#pragma once
#include <cstdint>
#include <optional>
#include <span>
#include <vector>

#include "decode/alignment.h"
#include "decode/alignment_heads.h"
#include "decode/search_model.h"
#include "hark/hark.hpp"
#include "transcribe/loaded_model.h"

namespace hark {

// The heads the params ask for on this model: dtw_preset "" = the model's own preset (by its
// size; a model of no official size uses every head of its last half of text layers, as OpenAI's
// default), a preset name (OpenAI's "large-v3" or whisper.cpp's "large.v3" spelling), "top-n"
// (dtw_n_top layers), "custom" (dtw_heads). Throws hark::Error for an unknown preset, heads that do
// not fit the model, or a NaN hallucination_silence_threshold. Empty when word_timestamps is off.
std::vector<decode::AlignmentHead> resolve_alignment_heads(const LoadedModel& m, const TranscribeParams& p);

// OpenAI's anomaly score of one word: improbable (p < 0.15), very short (< 0.133 s) or very long
// (> 2 s) words score; a segment is an anomaly when the score of its first 8 non-punctuation words
// reaches 3, or their count (within 0.01).
double word_anomaly_score(const decode::SegmentWord& w);
bool is_segment_anomaly(const decode::SegmentForWords* s);

// One window, as the loop sees it. Frames are 10 ms mel frames from the start of the request's
// audio (the loop's `seek`); times in the decode:: structs are seconds on that same clock.
struct WordWindow {
  int64_t seek = 0;            // where the window starts
  int64_t frames = 0;          // mel frames of real audio in it (segment_size)
  int64_t content_frames = 0;  // of the whole request
  int64_t next_seek = 0;       // where the loop would go next without word timestamps
  bool single_timestamp_ending = false;
  int lang = 0;
  bool translate = false;
};

struct WordOutcome {
  bool aborted = false;
  bool drop_window = false;  // keep none of the window's segments (a leading hallucination)
  int64_t next_seek = 0;
};

// Holds what word timing carries from window to window (the end of the last word).
class WordTimer {
 public:
  WordTimer(const LoadedModel& m, decode::SearchModel& model, const TranscribeParams& p,
            std::vector<decode::AlignmentHead> heads, int64_t offset_units);

  // Times the words of `segments` (t0/t1 absolute, 10 ms), refines their bounds, may drop
  // trailing ones (hallucinations), and says where the next window starts.
  WordOutcome run(const WordWindow& w, std::vector<Segment>& segments);

  // The seek and skip rules alone, on timed segments (seconds on the request's clock): what
  // run() applies after the alignment. Public for tests.
  WordOutcome place(const WordWindow& w, std::vector<decode::SegmentForWords>& segs);

 private:
  const LoadedModel& m_;
  decode::SearchModel& model_;
  const TranscribeParams& p_;
  std::vector<decode::AlignmentHead> heads_;
  int64_t offset_units_;
  double last_speech_ = 0.0;  // seconds: the end of the last word kept
};

}  // namespace hark
