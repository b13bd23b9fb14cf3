// Progress on stderr for the commands a person waits on (download, model load, transcribe): a bar
// redrawn in place when stderr is a terminal, plain lines when asked (--print-progress) or for a
// log, nothing at all otherwise (piped output stays exactly as before).
#pragma once
#include <chrono>
#include <cstdint>
#include <memory>
#include <string>

#include "hark/hark.hpp"

enum class ProgressMode { Off, Bar, Lines };

// Bar when stderr is a terminal and the command is not quiet; else Off.
ProgressMode progress_mode_for_terminal(bool quiet);

// "1:05", "1:02:03"
std::string format_duration(double seconds);
// "74.1 MiB"
std::string format_bytes(uint64_t bytes);

class ProgressLine {
 public:
  // label leads every line ("loading ggml-base.bin", "talk.wav"); lines are printed every
  // line_step percent.
  ProgressLine(ProgressMode mode, std::string label, int line_step = 5);
  ~ProgressLine();
  ProgressLine(const ProgressLine&) = delete;
  ProgressLine& operator=(const ProgressLine&) = delete;

  // fraction in [0, 1]; detail follows the percentage ("0.31x real time, 0:12 left").
  void update(double fraction, const std::string& detail = "");
  // Takes the bar off the screen before something else prints there; the next update redraws it.
  void suspend();
  // A passing remark: a line of its own (lines), else nothing; the bar shows it as its detail.
  void note(const std::string& text);
  // The end: a bar is cleared; lines print 100% unless that was printed.
  void finish();

 private:
  void draw(double fraction, const std::string& detail);

  ProgressMode mode_;
  std::string label_;
  int line_step_;
  int last_line_percent_ = -1;
  bool drawn_ = false;
  bool finished_ = false;
  std::chrono::steady_clock::time_point last_draw_{};
};

// The transcription's progress from the engine's percentage: percent of the audio, the speed so
// far and the time left; while a window is decoded again at a higher temperature (which can take
// several times as long), which window and at what temperature instead.
class TranscribeProgress {
 public:
  // The audio transcribed: audio_seconds from start_seconds of the file (offset and duration).
  TranscribeProgress(ProgressMode mode, const std::string& label, double audio_seconds, double start_seconds = 0);
  void on_percent(int percent);
  void on_fallback(const hark::Fallback& f);
  // Segments were printed: the bar is off the screen until the next update, and the window
  // being retried (if any) is done.
  void on_segments();
  void finish() { line_.finish(); }

 private:
  std::string detail(int percent) const;

  ProgressLine line_;
  bool details_;  // the bar carries speed and time left; --print-progress lines only the percentage
  double audio_seconds_;
  double start_seconds_;
  std::chrono::steady_clock::time_point start_;
  int percent_ = 0;
  std::string retry_;           // "retrying 0:30-1:00 at T=0.4" while that window is decoded again
  int retry_end_percent_ = -1;  // the retried window's end; progress past it ends the retry
};

// Context::load with the file's read-in shown as a bar ("loading MODEL"), cleared once loaded.
std::unique_ptr<hark::Context> load_with_progress(const std::string& model, hark::ContextParams params,
                                                  ProgressMode mode);
