// KvCache: the keys and values the decoder's attention reads, one pair per decoder layer.
//
// Self-attention: the projected keys/values of every token decoded so far in this window, so a
// step computes only its new tokens. Cross-attention: the encoder output projected once per window
// by every layer's key/value weights ([S, n_audio_ctx] each), instead of once per token. Both are
// stored in f16 by default: half the bytes a decode step streams, and f16 keeps ~3 significant
// digits, far inside what attention needs. The cross part may instead be q8_0 (cross_dtype, an
// option): 34 bytes per 32 values, 0.53x f16's, for steps that stream many windows (the batched
// pipeline reads each row's own window every step); the logits move by ~1e-3 relative, so it is
// not the default. q8_0 needs values stored as keys are (not v_transposed: its rows would be
// positions, 1500 of them, not whole blocks).
//
// Sequences: the self-attention cache has n_seq slots (default 1), one per sequence decoded
// against the same window (beam search, best-of): self_k(l) is [S, n_text_ctx, n_seq], slot s at
// s * nb[2]. set_n_seq grows or shrinks the slots on demand (only the self-attention memory is
// reallocated; slots that remain keep their contents) and copy_seq forks a sequence: it copies
// the first n_past positions of one slot into another, every layer.
//
// Windows: the cross-attention K/V have n_windows copies (default 1), one per encoded 30 s window
// held at once: cross_k(l) is [D, n_audio_ctx, n_head, n_windows], window w at w * nb[3]. The
// heads are the outer dim so that each head's keys (and values) are one contiguous run: a
// decoder step reads them front to back, head by head (25% faster cross-attention on tiny than
// rows of all heads side by side, which a head read at a stride of the whole row). Beams and
// best-of candidates all read one window; the batched long-audio pipeline decodes B independent
// chunks in one step, each row against its own window. set_n_windows reallocates only the cross
// part (windows that remain keep their contents).
//
// v_transposed stores the values as [n_ctx, S] per slot (row s: channel s over positions) for the
// plain attention path, whose weighted sum wants V key-major (layers.h): each value is transposed
// once, when it is written, instead of the whole cache at every step.
//
// The tensors live in two buffers of the backend's memory (self, cross). Graphs write them with
// copy nodes and read them through views, so their bytes persist across graphs (the graph
// allocator never owns them).
#pragma once
#include <memory>
#include <optional>
#include <vector>

#include "backend/buffer.h"
#include "model/hparams.h"
#include "runtime/tensor.h"

namespace hark {

// A fork: positions [0, n_past) of every layer's self K and V go from slot src to slot dst.
struct SeqCopy {
  int src = 0, dst = 0, n_past = 0;
};

class KvCache {
 public:
  // dtype: the self part (f16 or f32); cross_dtype: the cross part (f16, f32 or q8_0), the same
  // as dtype when not given.
  KvCache(const HParams& hp, BufferType* type, DType dtype = DType::F16, bool v_transposed = false, int n_seq = 1,
          std::optional<DType> cross_dtype = std::nullopt);

  // Self-attention K/V of a layer, every slot: [S, n_text_ctx, n_seq] ([n_text_ctx, S, n_seq] for
  // transposed values). Tensors change when set_n_seq reallocates them: do not hold them across.
  Tensor* self_k(int layer) const { return self_k_[layer]; }
  Tensor* self_v(int layer) const { return self_v_[layer]; }
  // Cross-attention K/V of a layer, every window: [D, n_audio_ctx, n_head, n_windows]
  // ([n_audio_ctx, S, n_windows] for transposed values). Tensors change when set_n_windows
  // reallocates them.
  Tensor* cross_k(int layer) const { return cross_k_[layer]; }
  Tensor* cross_v(int layer) const { return cross_v_[layer]; }
  // Windows w0, w0 + step, ... (B of them) of layer l's cross keys as the attention reads them:
  // [D, n_audio_ctx, n_head, B], each head's keys contiguous. B = 1 is one window.
  Tensor* cross_k_heads(TensorArena& a, int layer, int w0, int64_t B = 1, int step = 1) const;
  // The values the same way: [D, n_audio_ctx, n_head, B], or key-major [n_audio_ctx, D, n_head, B]
  // when transposed.
  Tensor* cross_v_heads(TensorArena& a, int layer, int w0, int64_t B = 1, int step = 1) const;
  size_t bytes() const { return self_buffer_->size() + cross_buffer_->size(); }
  size_t self_bytes() const { return self_buffer_->size(); }
  bool v_transposed() const { return v_transposed_; }
  int n_seq() const { return n_seq_; }
  int n_windows() const { return n_win_; }
  int n_text_ctx() const { return n_ctx_; }

  // Resizes the self-attention cache to n slots (n >= 1). Slots [0, min(old, n)) keep their
  // contents; new slots are zeroed. No-op when n equals n_seq().
  void set_n_seq(int n);

  // Resizes the cross-attention cache to n windows (n >= 1). Windows [0, min(old, n)) keep their
  // contents; new ones are zeroed. No-op when n equals n_windows().
  void set_n_windows(int n);

  // Copies positions [0, n_past) of every layer's self K and V from slot src to slot dst (a
  // fork: dst then continues from src's history). Cost: 2 x n_text_layer copies of n_past rows
  // (a transposed V cache copies its whole slot: its positions are not contiguous).
  void copy_seq(int src, int dst, int n_past);
  // copy_seq's checks alone (hark::Error naming the bad slot or n_past), for a copy a graph does.
  void check_copy(int src, int dst, int n_past) const;

 private:
  void alloc_self(int n_seq);
  void alloc_cross(int n_win);
  // Bytes from one window of cross_k / cross_v to the next (the outermost dim of each).
  size_t k_window_bytes() const { return cross_k_[0]->nb[3]; }
  size_t v_window_bytes() const { return cross_v_[0]->nb[v_transposed_ ? 2 : 3]; }

  const HParams hp_;
  BufferType* type_;
  DType dtype_;
  DType cross_dtype_;
  bool v_transposed_ = false;
  int n_ctx_ = 0;
  int n_seq_ = 0;
  int n_win_ = 0;
  std::unique_ptr<TensorArena> cross_arena_;
  std::unique_ptr<Buffer> cross_buffer_;
  std::unique_ptr<TensorArena> self_arena_;
  std::unique_ptr<Buffer> self_buffer_;
  std::vector<Tensor*> self_k_, self_v_, cross_k_, cross_v_;
};

}  // namespace hark
