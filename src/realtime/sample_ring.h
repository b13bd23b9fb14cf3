// SampleRing: the fixed-size buffer between capture and transcription. Capture writes into it
// while a slice is being transcribed, so a slow transcription delays text, never loses audio
// (until the ring is full: then the caller decides to wait or to drop and report). Not
// thread-safe by itself: the transcriber guards it with its mutex.
#pragma once
#include <algorithm>
#include <cstddef>
#include <span>
#include <vector>

namespace hark::realtime {

class SampleRing {
 public:
  explicit SampleRing(size_t capacity) : buf_(std::max<size_t>(capacity, 1)) {}
  size_t size() const { return size_; }
  size_t capacity() const { return buf_.size(); }
  size_t space() const { return buf_.size() - size_; }

  // Appends as many samples as fit; returns how many that was.
  size_t write(std::span<const float> s) {
    const size_t n = std::min(s.size(), space());
    size_t tail = (head_ + size_) % buf_.size();
    for (size_t done = 0; done < n;) {
      const size_t k = std::min(n - done, buf_.size() - tail);
      std::copy_n(s.data() + done, k, buf_.data() + tail);
      done += k;
      tail = (tail + k) % buf_.size();
    }
    size_ += n;
    return n;
  }

  // Moves everything held to the end of *out.
  void drain_into(std::vector<float>* out) {
    while (size_ > 0) {
      const size_t k = std::min(size_, buf_.size() - head_);
      out->insert(out->end(), buf_.data() + head_, buf_.data() + head_ + k);
      head_ = (head_ + k) % buf_.size();
      size_ -= k;
    }
  }

 private:
  std::vector<float> buf_;
  size_t head_ = 0;
  size_t size_ = 0;
};

}  // namespace hark::realtime
