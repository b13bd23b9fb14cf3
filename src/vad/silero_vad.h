// SileroVad: runs the Silero VAD network frame by frame on a backend, holding the LSTM state
// (h, c) that carries from one frame to the next. The frame graph is built and planned once;
// each frame copies 512 samples in, computes, and reads one probability out, allocating nothing.
//
// Whole buffers follow whisper.cpp's whisper_vad_detect_speech: the state is reset, the samples
// are cut into consecutive 512-sample frames and a last partial frame is zero-padded, so N
// samples give ceil(N / 512) probabilities.
#pragma once
#include <cstddef>
#include <memory>
#include <vector>

#include "backend/backend.h"
#include "backend/buffer.h"
#include "runtime/graph.h"
#include "runtime/graph_allocator.h"
#include "vad/silero_file.h"

namespace hark {
class Device;
}

namespace hark::vad {

class SileroVad {
 public:
  // device: nullptr for the CPU device. n_threads: the backend's threads (0: its default).
  // carry_context: the upstream Silero front end, each frame preceded by the previous frame's
  // last n_context samples (zeros after a reset); false: whisper.cpp's reflection padding.
  SileroVad(std::shared_ptr<const SileroFile> model, int n_threads, Device* device = nullptr,
            bool carry_context = false);
  ~SileroVad();
  SileroVad(const SileroVad&) = delete;
  SileroVad& operator=(const SileroVad&) = delete;

  int n_window() const { return model_->hparams().n_window; }
  // One frame of exactly n_window() samples (16 kHz); the state advances. Returns P(speech).
  float process(const float* frame);
  void reset();  // zero h and c, as at the start of a stream
  // Resets, then one probability per n_window() samples (the last frame zero-padded).
  std::vector<float> detect(const float* samples, size_t n);

  std::vector<float> h() const;  // the LSTM state after the last frame (read back on demand)
  std::vector<float> c() const;

 private:
  std::shared_ptr<const SileroFile> model_;
  std::unique_ptr<Backend> backend_;
  TensorArena arena_;
  std::unique_ptr<Buffer> io_;  // frame, h and c: graph leaves the host writes
  Tensor* frame_ = nullptr;
  Tensor* h_ = nullptr;
  Tensor* c_ = nullptr;
  Tensor* context_ = nullptr;  // with carry_context only
  Tensor* prob_ = nullptr;
  Graph graph_;
  std::unique_ptr<GraphAllocator> alloc_;
};

}  // namespace hark::vad
