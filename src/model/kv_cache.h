// KvCache: the keys and values the decoder's attention reads, one pair per decoder layer.
//
// Self-attention: the projected keys/values of every token decoded so far in this window, so a
// step computes only its new tokens ([S, n_text_ctx] each). Cross-attention: the encoder output
// projected once per window by every layer's key/value weights ([S, n_audio_ctx] each), instead
// of once per token. Both are stored in f16: half the bytes a decode step streams, and f16 keeps
// ~3 significant digits, far inside what attention needs.
//
// v_transposed stores the values as [n_ctx, S] (row s: channel s over positions) for the plain
// attention path, whose weighted sum wants V key-major (layers.h): each value is transposed once,
// when it is written, instead of the whole cache at every step.
//
// The tensors live in one buffer of the backend's memory. Graphs write them with copy nodes and
// read them through views, so their bytes persist across graphs (the graph allocator never owns
// them).
#pragma once
#include <memory>
#include <vector>

#include "backend/buffer.h"
#include "model/hparams.h"
#include "runtime/tensor.h"

namespace hark {

class KvCache {
 public:
  KvCache(const HParams& hp, BufferType* type, DType dtype = DType::F16, bool v_transposed = false);

  Tensor* self_k(int layer) const { return self_k_[layer]; }
  Tensor* self_v(int layer) const { return self_v_[layer]; }
  Tensor* cross_k(int layer) const { return cross_k_[layer]; }
  Tensor* cross_v(int layer) const { return cross_v_[layer]; }
  size_t bytes() const { return buffer_->size(); }
  bool v_transposed() const { return v_transposed_; }

 private:
  TensorArena arena_;
  std::unique_ptr<Buffer> buffer_;
  std::vector<Tensor*> self_k_, self_v_, cross_k_, cross_v_;
  bool v_transposed_ = false;
};

}  // namespace hark
