// Hands a realtime session's PCM to its push source on a thread of its own. A source that is not
// live holds back its caller until the transcriber has room, and the WebSocket's thread must not
// wait on that: it reads the client's messages (to see the client leave) and writes the events.
// When the audio is finished (or the transcriber ends by itself), the feeder waits for the
// transcriber's last event and says so (on_done, on the feeder's thread).
#pragma once
#include <condition_variable>
#include <deque>
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "hark/hark.hpp"

namespace hark::server {

class PcmFeeder {
 public:
  // rt: the transcriber reading `source` (it must outlive the feeder). on_error: a frame the
  // source refused, with why (on the feeder's thread).
  PcmFeeder(std::shared_ptr<PushSource> source, RealtimeTranscriber* rt, std::function<void(std::string)> on_error,
            std::function<void()> on_done)
      : source_(std::move(source)), rt_(rt), on_error_(std::move(on_error)), on_done_(std::move(on_done)) {
    thread_ = std::thread([this] { run(); });
  }
  ~PcmFeeder() {
    quit();
    thread_.join();
  }
  // Interleaved float frames at the source's rate and channels; queued, never blocks.
  void push(std::vector<float> frame) {
    std::lock_guard lock(mu_);
    queued_ += frame.size();
    frames_.push_back(std::move(frame));
    cv_.notify_all();
  }
  void finish() {  // the rest is pushed, then the stream ends (its last slice is finalised)
    std::lock_guard lock(mu_);
    finish_ = true;
    cv_.notify_all();
  }
  void quit() {  // stop pushing (the transcriber was aborted); on_done still follows
    std::lock_guard lock(mu_);
    quit_ = true;
    cv_.notify_all();
  }
  size_t queued_samples() const {  // pushed to the feeder, not yet to the source
    std::lock_guard lock(mu_);
    return queued_;
  }

 private:
  void run();

  std::shared_ptr<PushSource> source_;
  RealtimeTranscriber* rt_;
  std::function<void(std::string)> on_error_;
  std::function<void()> on_done_;
  mutable std::mutex mu_;
  std::condition_variable cv_;
  std::deque<std::vector<float>> frames_;
  size_t queued_ = 0;
  bool finish_ = false, quit_ = false;
  std::thread thread_;
};

}  // namespace hark::server
