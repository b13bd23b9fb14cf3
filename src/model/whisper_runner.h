// WhisperRunner: runs one model's encoder and decoder graphs on one backend, for one job at a
// time. It owns what a job needs besides the weights: the KV cache and the compute memory.
//
// Compute memory is planned once: the encoder graph is built and allocated at construction, and
// the decoder's memory is reserved from its worst case (a full text context in one step), so
// decoding token after token allocates nothing. The decoder graph is rebuilt each step (building
// is cheap next to computing; its shape changes with n_past) into an arena that is reset, not
// freed.
#pragma once
#include <memory>
#include <span>
#include <vector>

#include "backend/backend.h"
#include "model/kv_cache.h"
#include "model/model_file.h"
#include "runtime/graph_allocator.h"

namespace hark {

class WhisperRunner {
 public:
  WhisperRunner(const ModelFile& model, Backend& backend);
  ~WhisperRunner();

  // One 30 s window: mel is f32 mel-major [n_mels][2 * n_audio_ctx]. Fills the cross-attention
  // cache for the decode steps that follow. Aborted when the backend's abort callback fired.
  ComputeStatus encode(std::span<const float> mel);

  // Decodes `tokens` at positions n_past.. (their keys/values enter the cache) and writes the
  // logits of the last one (n_vocab floats) to `logits`.
  ComputeStatus decode(std::span<const int32_t> tokens, int n_past, std::vector<float>* logits);

  const HParams& hparams() const { return model_.hparams(); }
  size_t kv_cache_bytes() const { return cache_.bytes(); }
  size_t encoder_compute_bytes() const { return enc_alloc_.buffer_size(); }
  size_t decoder_compute_bytes() const { return dec_alloc_.buffer_size(); }
  int decoder_reallocs() const { return dec_alloc_.n_reallocs(); }

 private:
  Tensor* build_decoder_step(int n_tokens, int n_past);

  const ModelFile& model_;
  Backend& backend_;
  KvCache cache_;

  TensorArena enc_arena_;
  Graph enc_graph_;
  Tensor* enc_mel_ = nullptr;
  GraphAllocator enc_alloc_;

  TensorArena dec_arena_;
  Graph dec_graph_;
  Tensor* dec_tokens_ = nullptr;
  GraphAllocator dec_alloc_;
};

}  // namespace hark
