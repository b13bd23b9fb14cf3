#include "pcm_feeder.h"

#include <chrono>

namespace hark::server {

void PcmFeeder::run() {
  for (;;) {
    std::vector<float> frame;
    {
      std::unique_lock lock(mu_);
      cv_.wait_for(lock, std::chrono::milliseconds(100), [&] { return quit_ || finish_ || !frames_.empty(); });
      if (quit_) break;
      if (frames_.empty()) {
        if (finish_) {
          lock.unlock();
          source_->finish();
          break;
        }
        if (!rt_->running()) break;  // it ended by itself (its longest session reached)
        continue;
      }
      frame = std::move(frames_.front());
      frames_.pop_front();
      queued_ -= frame.size();
    }
    try {
      source_->push(frame);
    } catch (const std::exception& e) {
      on_error_(e.what());
    }
  }
  rt_->wait();
  on_done_();
}

}  // namespace hark::server
