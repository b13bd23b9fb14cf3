#include "progress.h"

#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <cstdio>

ProgressMode progress_mode_for_terminal(bool quiet) {
  return !quiet && ::isatty(STDERR_FILENO) ? ProgressMode::Bar : ProgressMode::Off;
}

std::string format_duration(double seconds) {
  const long s = std::lround(std::max(0.0, seconds));
  char buf[32];
  if (s >= 3600)
    std::snprintf(buf, sizeof buf, "%ld:%02ld:%02ld", s / 3600, s / 60 % 60, s % 60);
  else
    std::snprintf(buf, sizeof buf, "%ld:%02ld", s / 60, s % 60);
  return buf;
}

std::string format_bytes(uint64_t n) {
  char buf[32];
  if (n >= (1ull << 30))
    std::snprintf(buf, sizeof buf, "%.2f GiB", n / double(1ull << 30));
  else if (n >= (1ull << 20))
    std::snprintf(buf, sizeof buf, "%.1f MiB", n / double(1ull << 20));
  else if (n >= 1024)
    std::snprintf(buf, sizeof buf, "%.1f KiB", n / 1024.0);
  else
    std::snprintf(buf, sizeof buf, "%llu B", static_cast<unsigned long long>(n));
  return buf;
}

ProgressLine::ProgressLine(ProgressMode mode, std::string label, int line_step)
    : mode_(mode), label_(std::move(label)), line_step_(std::max(1, line_step)) {}

ProgressLine::~ProgressLine() {
  if (mode_ == ProgressMode::Bar) suspend();  // an error ends the command: leave a clean line for its message
}

void ProgressLine::update(double fraction, const std::string& detail) {
  if (mode_ == ProgressMode::Off || finished_) return;
  fraction = std::clamp(std::isfinite(fraction) ? fraction : 0.0, 0.0, 1.0);
  const int percent = static_cast<int>(fraction * 100.0);
  if (mode_ == ProgressMode::Lines) {
    // whisper.cpp's --print-progress: a line each step of percent (0 and 100 included).
    if (last_line_percent_ >= 0 && percent < last_line_percent_ + line_step_ &&
        !(percent == 100 && last_line_percent_ < 100))
      return;
    last_line_percent_ = percent / line_step_ * line_step_;
    if (percent == 100) last_line_percent_ = 100;
    std::fprintf(stderr, "hark: %s: progress = %3d%%%s%s\n", label_.c_str(), percent, detail.empty() ? "" : ", ",
                 detail.c_str());
    std::fflush(stderr);
    return;
  }
  // A terminal: at most ten redraws a second, but always the first and the last.
  const auto now = std::chrono::steady_clock::now();
  if (drawn_ && percent < 100 && now - last_draw_ < std::chrono::milliseconds(100)) return;
  last_draw_ = now;
  draw(fraction, detail);
}

void ProgressLine::draw(double fraction, const std::string& detail) {
  constexpr int kWidth = 30;
  const int filled = static_cast<int>(fraction * kWidth);
  std::string bar(static_cast<size_t>(filled), '#');
  bar.append(static_cast<size_t>(kWidth - filled), '.');
  // \r and "erase to end of line": the bar is rewritten in place, a shorter one leaves nothing behind.
  std::fprintf(stderr, "\r\x1b[K%s [%s] %3d%%%s%s", label_.c_str(), bar.c_str(), static_cast<int>(fraction * 100.0),
               detail.empty() ? "" : "  ", detail.c_str());
  std::fflush(stderr);
  drawn_ = true;
}

void ProgressLine::suspend() {
  if (mode_ != ProgressMode::Bar || !drawn_) return;
  std::fputs("\r\x1b[K", stderr);
  std::fflush(stderr);
  drawn_ = false;
}

void ProgressLine::finish() {
  if (finished_) return;
  if (mode_ == ProgressMode::Lines && last_line_percent_ < 100) update(1.0);
  suspend();
  finished_ = true;
}

TranscribeProgress::TranscribeProgress(ProgressMode mode, const std::string& label, double audio_seconds)
    : line_(mode, label),
      details_(mode == ProgressMode::Bar),
      audio_seconds_(audio_seconds),
      start_(std::chrono::steady_clock::now()) {}

void TranscribeProgress::on_percent(int percent) {
  const double elapsed = std::chrono::duration<double>(std::chrono::steady_clock::now() - start_).count();
  std::string detail;
  if (details_ && percent > 0 && percent < 100 && audio_seconds_ > 0) {
    const double done_audio = audio_seconds_ * percent / 100.0;
    char buf[96];
    std::snprintf(buf, sizeof buf, "%.2fx real time, %s left", elapsed / done_audio,
                  format_duration(elapsed * (100 - percent) / percent).c_str());
    detail = buf;
  }
  line_.update(percent / 100.0, detail);
}

std::unique_ptr<hark::Context> load_with_progress(const std::string& model, hark::ContextParams params,
                                                  ProgressMode mode) {
  ProgressLine line(mode, "loading " + model);
  if (mode != ProgressMode::Off)
    params.on_load_progress = [&](uint64_t done, uint64_t total) {
      line.update(total ? double(done) / double(total) : 1.0, format_bytes(done) + " of " + format_bytes(total));
    };
  std::unique_ptr<hark::Context> ctx = hark::Context::load(model, params);
  line.finish();
  return ctx;
}
