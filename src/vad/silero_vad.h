// SileroVad: runs the Silero VAD network on a backend, holding the LSTM state (h, c) that
// carries from one frame to the next. Two graphs are built and planned once: one frame, and a
// block of kBlockFrames frames whose frame-local layers run as one batch (silero_graph.h). Running
// copies the samples in, computes, and reads the probabilities out, allocating nothing; a frame
// gives the same bits through either graph, so streaming frame by frame and a whole buffer agree.
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
#include "backend/graph_allocator.h"
#include "runtime/graph.h"
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
  // n_frames consecutive frames, n_frames * n_window() samples; P(speech) of each into probs.
  void process(const float* frames, size_t n_frames, float* probs);
  void reset();  // zero h and c, as at the start of a stream
  // Resets, then one probability per n_window() samples (the last frame zero-padded).
  std::vector<float> detect(const float* samples, size_t n);

  std::vector<float> h() const;  // the LSTM state after the last frame (read back on demand)
  std::vector<float> c() const;

 private:
  // Frames in one block: the STFT's 4 windows a frame make 28 rows, under the CPU backend's 32
  // from which a product takes its tiled GEMM, whose sums would differ from the one-frame
  // graph's. Below it each output is one dot product whatever rows share the product, so the
  // two graphs agree bit for bit (a test holds this); 7 frames already read each weight once
  // for 7 where the frame-by-frame graph read it 7 times.
  static constexpr int kBlockFrames = 7;

  // A planned graph over the frames of its own leaf ([n_window, n frames]).
  struct Plan {
    Tensor* frames = nullptr;
    Tensor* probs = nullptr;
    Graph graph;
    std::unique_ptr<GraphAllocator> alloc;
  };
  void plan(Plan& p, BufferType* bt);
  void run(const Plan& p, const float* frames, float* probs);

  std::shared_ptr<const SileroFile> model_;
  std::unique_ptr<Backend> backend_;
  TensorArena arena_;
  std::unique_ptr<Buffer> io_;  // the frames, h, c and context: graph leaves the host writes
  Tensor* h_ = nullptr;
  Tensor* c_ = nullptr;
  Tensor* context_ = nullptr;  // with carry_context only
  Plan one_, block_;
};

}  // namespace hark::vad
