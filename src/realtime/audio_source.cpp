// The sources that need no sound server: push, a file at real-time speed, raw PCM from a descriptor.
#include "realtime/audio_source.h"

#include <poll.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstring>
#include <vector>

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

namespace {

// Push: everything happens on the caller's thread; the mutex makes stop() wait for a push in flight.
class Push final : public PushSource {
 public:
  explicit Push(bool live) : live_(live) {}
  bool live() const override { return live_; }
  void start(SampleSink on_samples, EndSink on_end) override {
    std::lock_guard<std::mutex> lock(mu_);
    sink_ = std::move(on_samples);
    end_ = std::move(on_end);
  }
  void push(std::span<const float> samples) override {
    std::lock_guard<std::mutex> lock(mu_);
    if (sink_ && !samples.empty()) sink_(samples);
  }
  void finish() override { end(); }
  void stop() override { end(); }
  std::string name() const override { return "push"; }

 private:
  void end() {
    EndSink end;
    {
      std::lock_guard<std::mutex> lock(mu_);
      sink_ = nullptr;
      end = std::move(end_);
      end_ = nullptr;
    }
    if (end) end("");
  }
  const bool live_;
  std::mutex mu_;
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
  explicit Pcm16FdSource(int fd) : fd_(fd) {}
  ~Pcm16FdSource() override { stop(); }
  bool live() const override { return false; }
  std::string name() const override { return fd_ == 0 ? "stdin" : "fd " + std::to_string(fd_); }

 private:
  std::string run(const SampleSink& sink) override {
    std::vector<unsigned char> bytes(6400 + 1);  // 200 ms, plus an odd byte left from the last read
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
      const size_t n_samples = have / 2;
      samples.resize(n_samples);
      for (size_t i = 0; i < n_samples; ++i) {
        const int16_t v = int16_t(uint16_t(bytes[2 * i]) | uint16_t(bytes[2 * i + 1]) << 8);
        samples[i] = float(v) / 32768.0f;
      }
      if (n_samples) sink(samples);
      if (have % 2) bytes[0] = bytes[have - 1];  // half a sample waits for its other byte
      have %= 2;
    }
    return "";
  }
  int fd_;
};

}  // namespace
}  // namespace hark::realtime

namespace hark {

std::shared_ptr<PushSource> open_push_source(bool live) { return std::make_shared<realtime::Push>(live); }

std::shared_ptr<AudioSource> open_file_source(const std::string& path, double speed, int chunk_ms) {
  return std::make_shared<realtime::FileSource>(path, speed, chunk_ms);
}

std::shared_ptr<AudioSource> open_pcm16_fd_source(int fd) {
  HARK_CHECK(fd >= 0, "open_pcm16_fd_source: bad file descriptor " + std::to_string(fd));
  return std::make_shared<realtime::Pcm16FdSource>(fd);
}

std::shared_ptr<AudioSource> open_capture_source(const std::string& device) {
  return realtime::open_pulse_source(device.empty() ? "default" : device);
}

}  // namespace hark
