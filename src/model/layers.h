// The pieces the encoder and decoder graphs are made of: projections and multi-head attention
// over per-head views. They build graph nodes only; nothing is computed here.
#pragma once
#include "runtime/tensor.h"

namespace hark {

// Whisper's LayerNorm epsilon (PyTorch's default), for every norm of the encoder and decoder.
inline constexpr float kLayerNormEps = 1e-5f;

// x -> w x + b (b may be null): every projection of the model. x: f32 [K, N] -> [rows of w, N].
Tensor* linear(TensorArena& a, Tensor* x, Tensor* w, Tensor* b);

// A projected [S, N] tensor seen per head as [D, N, H] (D = S / n_head): a view, no copy.
Tensor* split_heads(TensorArena& a, Tensor* x, int n_head);

// The first n positions of a [S, n_ctx] cache tensor, seen per head as [D, n, H].
Tensor* cache_heads(TensorArena& a, Tensor* cache, int n_head, int64_t n);

// softmax(q k^T / sqrt(D)) v for every head of q (f32 [S, Nq]); k, v: [D, Nk, H] views.
// Returns f32 [S, Nq] (heads concatenated), ready for the output projection. causal: query i sees
// keys up to i + (Nk - Nq), i.e. everything before it in the KV cache and itself.
Tensor* multi_head_attention(TensorArena& a, Tensor* q, Tensor* k, Tensor* v, int n_head, bool causal);

}  // namespace hark
