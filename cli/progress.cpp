#include "progress.h"

#include <sys/ioctl.h>
#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>

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

namespace {

// The terminal's width (stderr's), else $COLUMNS, else 80.
size_t terminal_columns() {
  winsize ws{};
  if (::ioctl(STDERR_FILENO, TIOCGWINSZ, &ws) == 0 && ws.ws_col > 0) return ws.ws_col;
  if (const char* c = std::getenv("COLUMNS"); c && std::atoi(c) > 0) return static_cast<size_t>(std::atoi(c));
  return 80;
}

// Columns a UTF-8 string takes (a character each; file names are what it measures).
size_t columns_of(const std::string& s) {
  size_t n = 0;
  for (unsigned char c : s) n += (c & 0xC0) != 0x80;
  return n;
}

// The last `cols` columns of s, "..." first: a long path keeps its file name.
std::string tail_of(const std::string& s, size_t cols) {
  if (columns_of(s) <= cols) return s;
  if (cols <= 3) return std::string(cols, '.');
  size_t keep = cols - 3, at = s.size();
  while (at > 0 && keep > 0) {
    --at;
    if ((static_cast<unsigned char>(s[at]) & 0xC0) != 0x80) --keep;
  }
  return "..." + s.substr(at);
}

}  // namespace

void ProgressLine::draw(double fraction, const std::string& detail) {
  // One line that fits the terminal, whatever the label: a line that wraps cannot be rewritten
  // in place, and leaves its first part behind between the transcript's lines. The detail goes
  // first, then the bar narrows, then the label is cut from the front.
  const size_t cols = terminal_columns() - 1;  // the last column would wrap on some terminals
  const int percent = static_cast<int>(fraction * 100.0);
  std::string shown_detail = detail.empty() ? "" : "  " + detail;
  size_t width = 30;
  const size_t fixed = 8;  // " [" + "] " + "100%"
  const size_t min_label = std::min<size_t>(columns_of(label_), 16);
  if (min_label + fixed + width + columns_of(shown_detail) > cols) shown_detail.clear();
  if (min_label + fixed + width > cols) width = cols > min_label + fixed + 10 ? cols - min_label - fixed : 10;
  const size_t room =
      cols > fixed + width + columns_of(shown_detail) ? cols - fixed - width - columns_of(shown_detail) : 1;
  const std::string label = tail_of(label_, room);
  const size_t filled = static_cast<size_t>(fraction * static_cast<double>(width));
  std::string bar(filled, '#');
  bar.append(width - filled, '.');
  // \r and "erase to end of line": the bar is rewritten in place, a shorter one leaves nothing behind.
  std::fprintf(stderr, "\r\x1b[K%s [%s] %3d%%%s", label.c_str(), bar.c_str(), percent, shown_detail.c_str());
  std::fflush(stderr);
  drawn_ = true;
}

void ProgressLine::suspend() {
  if (mode_ != ProgressMode::Bar || !drawn_) return;
  std::fputs("\r\x1b[K", stderr);
  std::fflush(stderr);
  drawn_ = false;
}

void ProgressLine::note(const std::string& text) {
  if (mode_ != ProgressMode::Lines || finished_) return;
  std::fprintf(stderr, "hark: %s: %s\n", label_.c_str(), text.c_str());
  std::fflush(stderr);
}

void ProgressLine::finish() {
  if (finished_) return;
  if (mode_ == ProgressMode::Lines && last_line_percent_ < 100) update(1.0);
  suspend();
  finished_ = true;
}

TranscribeProgress::TranscribeProgress(ProgressMode mode, const std::string& label, double audio_seconds,
                                       double start_seconds)
    : line_(mode, label),
      details_(mode == ProgressMode::Bar),
      audio_seconds_(audio_seconds),
      start_seconds_(start_seconds),
      start_(std::chrono::steady_clock::now()) {}

std::string TranscribeProgress::detail(int percent) const {
  if (!details_) return "";
  if (!retry_.empty()) return retry_;
  if (percent <= 0 || percent >= 100 || audio_seconds_ <= 0) return "";
  const double elapsed = std::chrono::duration<double>(std::chrono::steady_clock::now() - start_).count();
  const double done_audio = audio_seconds_ * percent / 100.0;
  // Speed as people read it: how much faster than the audio plays (the real-time factor, its
  // inverse, reads like a speed and is not one).
  char buf[96];
  if (elapsed > 0 && done_audio >= elapsed)
    std::snprintf(buf, sizeof buf, "%.1fx faster than real time, %s left", done_audio / elapsed,
                  format_duration(elapsed * (100 - percent) / percent).c_str());
  else
    std::snprintf(buf, sizeof buf, "%.1fx slower than real time, %s left", elapsed / std::max(done_audio, 1e-9),
                  format_duration(elapsed * (100 - percent) / percent).c_str());
  return buf;
}

void TranscribeProgress::on_percent(int percent) {
  percent_ = percent;
  if (!retry_.empty() && percent > retry_end_percent_) retry_.clear();
  line_.update(percent / 100.0, detail(percent));
}

void TranscribeProgress::on_fallback(const hark::Fallback& f) {
  char buf[96];
  std::snprintf(buf, sizeof buf, "retrying %s-%s at T=%.1f", format_duration(f.t0 / 100.0).c_str(),
                format_duration(f.t1 / 100.0).c_str(), static_cast<double>(f.temperature));
  retry_ = buf;
  retry_end_percent_ =
      audio_seconds_ > 0 ? static_cast<int>(std::floor((f.t1 / 100.0 - start_seconds_) / audio_seconds_ * 100.0)) : 100;
  line_.note(retry_);
  line_.suspend();  // drawn at once, not held back by the redraw limit: the wait starts now
  line_.update(percent_ / 100.0, detail(percent_));
}

void TranscribeProgress::on_segments() {
  line_.suspend();
  retry_.clear();
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
