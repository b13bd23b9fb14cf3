// One decoded window to the job's segments: the one piece both drivers call (the long-form loop,
// which seeks window by window, and the batched pipeline, which runs lanes of independent chunks),
// so an option that changes what a window yields is written once, here. In order: the silence
// check, the tokens cut into segments (split_window), single_segment, the segments' texts,
// decoding figures and token times, word timestamps (words, refined bounds, the next seek,
// dropped hallucinations), and max_len last (it cuts at token times).
#pragma once
#include <cstdint>
#include <functional>
#include <vector>

#include "decode/fallback.h"
#include "decode/search_model.h"
#include "decode/window_search.h"
#include "hark/hark.hpp"
#include "transcribe/job_request.h"
#include "transcribe/loaded_model.h"
#include "transcribe/word_timing.h"

namespace hark {

// A decoded window as its driver knows it. Frames are 10 ms mel frames from the start of the
// request's audio (req.samples[0]).
struct DecodedWindow {
  const decode::WindowTokens* tokens = nullptr;  // the kept search result
  double compression_ratio = 0.0;                // of its text (the fallback's figure)
  int64_t seek = 0;                              // where the window starts
  int64_t frames = 0;                            // frames of audio in it (at most a window)
  int lang = 0;                                  // its language (word timestamps split by it)
  // An independent chunk (the batched pipeline): text after the last timestamp is closed at the
  // chunk's end instead of left to a next window, and the whole text is kept (no seek to move).
  bool whole = false;
  int64_t end = 0;  // whole chunks: where the chunk ends, the seek after it
};

struct WindowSegments {
  Window window;                    // the window's record for Transcript::windows
  bool aborted = false;             // stopped inside the word alignment: nothing else is valid
  bool dropped = false;             // a leading hallucination (word timestamps): nothing kept
  bool speaker_turn_first = false;  // a speaker turn before the first text ends the previous segment
  int64_t next_seek = 0;            // where the next window starts (the long-form loop's seek)
  std::vector<Segment> segments;    // the window's segments, final
};

class WindowPipeline {
 public:
  // content_frames: the mel frames of the whole request (the seek and word rules' bound).
  WindowPipeline(const LoadedModel& m, decode::SearchModel& model, const JobRequest& req, const TranscribeParams& p,
                 const decode::Thresholds& thresholds, int64_t content_frames);

  // The window's segments. Word timestamps read the window the model has selected (the batched
  // pipeline selects the chunk's own); their time goes to `decode_ms`.
  WindowSegments segments(const DecodedWindow& win, double* decode_ms);

 private:
  const LoadedModel& m_;
  const JobRequest& req_;
  const TranscribeParams& p_;
  decode::Thresholds thresholds_;
  int64_t content_frames_;
  bool token_timestamps_;  // token times are needed: asked for, or max_len cuts at them
  WordTimer words_;
};

// Progress of a job in percent, passed on only when it rises (a fallback or a re-seek can make a
// driver's figure step back).
class JobProgress {
 public:
  explicit JobProgress(std::function<void(int)> report) : report_(std::move(report)) {}
  // done of total, at most `cap` percent (99 while a job still has work it will report).
  void update(int64_t done, int64_t total, int cap = 100);
  void finish() { set(100); }
  int percent() const { return percent_; }

 private:
  void set(int pct);
  std::function<void(int)> report_;
  int percent_ = 0;
};

}  // namespace hark
