// The sources that need no sound server: push, a file at real-time speed, raw PCM from a descriptor.
#include "realtime/audio_source.h"

#include <poll.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstring>
#include <vector>

#include "audio/audio.h"
#include "hark/hark.hpp"
#include "runtime/error.h"

namespace hark::realtime {

void ThreadedSource::start(SampleSink on_samples, EndSink on_end) {
  std::lock_guard<std::mutex> lock(mu_);
  HARK_CHECK(!started_, name() + ": a source starts once");
  started_ = true;
  thread_ = std::thread([this, on_samples = std::move(on_samples), on_end = std::move(on_end)] {
    std::string error;
    try {
      error = run(on_samples);
    } catch (const std::exception& e) {
      error = e.what();
    }
    if (on_end) on_end(stop_.load() ? std::string() : error);
  });
}

void ThreadedSource::stop() {
  stop_.store(true);
  std::lock_guard<std::mutex> lock(mu_);
  if (thread_.joinable() && thread_.get_id() != std::this_thread::get_id()) thread_.join();
}

ToMono16k::ToMono16k(int sample_rate, int channels, const std::string& name) : channels_(channels), name_(name) {
  if (sample_rate != kSampleRate || channels != 1)  // the converter checks both and says what is wrong
    conv_ = std::make_unique<audio::Converter>(sample_rate, channels, name);
}

ToMono16k::~ToMono16k() = default;

std::span<const float> ToMono16k::convert(std::span<const float> values) {
  if (!conv_) return values;
  HARK_CHECK(values.size() % size_t(channels_) == 0, name_ + ": " + std::to_string(values.size()) +
                                                         " values are not a whole number of frames of " +
                                                         std::to_string(channels_) + " channels");
  out_.clear();
  conv_->push(values.data(), values.size() / size_t(channels_), &out_);
  return out_;
}

std::span<const float> ToMono16k::flush() {
  if (!conv_) return {};
  out_.clear();
  conv_->finish(&out_);
  return out_;
}

namespace {

// Push: everything happens on the caller's thread; the mutex makes stop() wait for a push in flight.
class Push final : public PushSource {
 public:
  Push(bool live, int sample_rate, int channels) : live_(live), conv_(sample_rate, channels, "push source") {}
  bool live() const override { return live_; }
  void start(SampleSink on_samples, EndSink on_end) override {
    std::lock_guard<std::mutex> lock(mu_);
    sink_ = std::move(on_samples);
    end_ = std::move(on_end);
  }
  void push(std::span<const float> samples) override {
    std::lock_guard<std::mutex> lock(mu_);
    if (!sink_ || samples.empty()) return;
    const std::span<const float> mono = conv_.convert(samples);
    if (!mono.empty()) sink_(mono);
  }
  void finish() override { end(); }
  void stop() override { end(); }
  std::string name() const override { return "push"; }

 private:
  void end() {
    EndSink end;
    {
      std::lock_guard<std::mutex> lock(mu_);
      if (sink_) {  // the resampler's last samples
        const std::span<const float> tail = conv_.flush();
        if (!tail.empty()) sink_(tail);
      }
      sink_ = nullptr;
      end = std::move(end_);
      end_ = nullptr;
    }
    if (end) end("");
  }
  const bool live_;
  std::mutex mu_;
  ToMono16k conv_;
  SampleSink sink_;
  EndSink end_;
};

class FileSource final : public ThreadedSource {
 public:
  FileSource(const std::string& path, double speed, int chunk_ms)
      : path_(path), audio_(load_audio(path)), speed_(speed), chunk_(size_t(chunk_ms) * kSampleRate / 1000) {
    HARK_CHECK(speed >= 0, path + ": playback speed must be >= 0");
    HARK_CHECK(chunk_ > 0, path + ": chunk_ms must be > 0");
  }
  ~FileSource() override { stop(); }
  bool live() const override { return false; }
  std::string name() const override { return path_; }

 private:
  std::string run(const SampleSink& sink) override {
    const auto t_start = std::chrono::steady_clock::now();
    for (size_t pos = 0; pos < audio_.size() && !stopping(); pos += chunk_) {
      if (speed_ > 0) {  // a chunk is due once the audio before it has "played"
        const double due_s = double(pos) / kSampleRate / speed_;
        std::this_thread::sleep_until(t_start + std::chrono::duration<double>(due_s));
      }
      sink(std::span<const float>(audio_).subspan(pos, std::min(chunk_, audio_.size() - pos)));
    }
    return "";
  }
  std::string path_;
  std::vector<float> audio_;
  double speed_;
  size_t chunk_;
};

class Pcm16FdSource final : public ThreadedSource {
 public:
  Pcm16FdSource(int fd, int sample_rate, int channels)
      : fd_(fd), channels_(channels), conv_(sample_rate, channels, fd == 0 ? "stdin" : "fd " + std::to_string(fd)) {}
  ~Pcm16FdSource() override { stop(); }
  bool live() const override { return false; }
  std::string name() const override { return fd_ == 0 ? "stdin" : "fd " + std::to_string(fd_); }

 private:
  std::string run(const SampleSink& sink) override {
    const size_t frame_bytes = 2 * size_t(channels_);
    std::vector<unsigned char> bytes(frame_bytes * 3201);  // 200 ms at 16 kHz, plus a part frame left over
    std::vector<float> samples;
    size_t have = 0;
    while (!stopping()) {
      pollfd p{fd_, POLLIN, 0};
      const int r = ::poll(&p, 1, 100);  // wakes up to look at stopping()
      if (r < 0 && errno == EINTR) continue;
      if (r < 0) return name() + ": poll failed: " + std::strerror(errno);
      if (r == 0) continue;
      const ssize_t n = ::read(fd_, bytes.data() + have, bytes.size() - have);
      if (n < 0 && (errno == EINTR || errno == EAGAIN)) continue;
      if (n < 0) return name() + ": read failed: " + std::strerror(errno);
      if (n == 0) break;
      have += size_t(n);
      const size_t n_values = have / frame_bytes * size_t(channels_);
      samples.resize(n_values);
      for (size_t i = 0; i < n_values; ++i) {
        const int16_t v = int16_t(uint16_t(bytes[2 * i]) | uint16_t(bytes[2 * i + 1]) << 8);
        samples[i] = float(v) / 32768.0f;
      }
      const std::span<const float> mono = conv_.convert(samples);
      if (!mono.empty()) sink(mono);
      const size_t used = n_values * 2;  // a part frame waits for the rest of its bytes
      std::copy(bytes.begin() + ptrdiff_t(used), bytes.begin() + ptrdiff_t(have), bytes.begin());
      have -= used;
    }
    if (!stopping()) {
      const std::span<const float> tail = conv_.flush();
      if (!tail.empty()) sink(tail);
    }
    return "";
  }
  int fd_;
  int channels_;
  ToMono16k conv_;
};

}  // namespace
}  // namespace hark::realtime

namespace hark {

std::shared_ptr<PushSource> open_push_source(bool live, int sample_rate, int channels) {
  return std::make_shared<realtime::Push>(live, sample_rate, channels);
}

std::shared_ptr<AudioSource> open_file_source(const std::string& path, double speed, int chunk_ms) {
  return std::make_shared<realtime::FileSource>(path, speed, chunk_ms);
}

std::shared_ptr<AudioSource> open_pcm16_fd_source(int fd, int sample_rate, int channels) {
  HARK_CHECK(fd >= 0, "open_pcm16_fd_source: bad file descriptor " + std::to_string(fd));
  return std::make_shared<realtime::Pcm16FdSource>(fd, sample_rate, channels);
}

std::shared_ptr<AudioSource> open_capture_source(const std::string& device) {
  return realtime::open_pulse_source(device.empty() ? "default" : device);
}

}  // namespace hark
