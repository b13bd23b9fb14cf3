// Audio sources: the shared machinery of those that produce audio on a thread of their own (a
// file played in real time, PCM from a descriptor, a capture device). The public interface is
// hark::AudioSource (include/hark/realtime.hpp); bindings use PushSource instead.
#pragma once
#include <atomic>
#include <memory>
#include <mutex>
#include <span>
#include <string>
#include <thread>
#include <vector>

#include "hark/realtime.hpp"

namespace hark::audio {
class Converter;
}

namespace hark::realtime {

// A source whose run() loop delivers samples on its own thread. stop() asks the loop to end and
// joins it (unless called from that very thread, e.g. from a sample callback: then it only asks).
// A derived class must call stop() in its destructor, before its own members go away.
class ThreadedSource : public AudioSource {
 public:
  void start(SampleSink on_samples, EndSink on_end) override;
  void stop() override;

 protected:
  // Delivers samples until the stream ends ("") or fails (a message); returns soon after
  // stopping() turns true (within ~100 ms: blocking reads must use timeouts).
  virtual std::string run(const SampleSink& sink) = 0;
  bool stopping() const { return stop_.load(); }

 private:
  std::mutex mu_;
  std::thread thread_;
  std::atomic<bool> stop_{false};
  bool started_ = false;
};

// Interleaved audio at a source's rate and channel count in, 16 kHz mono out (passed through
// untouched when it already is). Throws hark::Error naming the source for a rate or channel count
// out of range, a part frame, or a NaN/Inf sample.
class ToMono16k {
 public:
  ToMono16k(int sample_rate, int channels, const std::string& name);
  ~ToMono16k();
  // The 16 kHz mono audio of these values (whole frames); valid until the next call.
  std::span<const float> convert(std::span<const float> values);
  // The resampler's last samples, once at the end.
  std::span<const float> flush();

 private:
  int channels_;
  std::string name_;
  std::unique_ptr<audio::Converter> conv_;  // null: nothing to convert
  std::vector<float> out_;
};

// The capture device source (capture_pulse.cpp, or the stub when built without PulseAudio).
std::shared_ptr<AudioSource> open_pulse_source(const std::string& device);

}  // namespace hark::realtime
