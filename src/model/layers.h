// The pieces the encoder and decoder graphs are made of: projections and multi-head attention
// over per-head views. They build graph nodes only; nothing is computed here.
#pragma once
#include "runtime/tensor.h"

namespace hark {

// Whisper's LayerNorm epsilon (PyTorch's default), for every norm of the encoder and decoder.
inline constexpr float kLayerNormEps = 1e-5f;

// x -> w x + b (b may be null): every projection of the model. x: f32 [K, N] -> [rows of w, N].
// The bias is fused into the product (ops::mul_mat_bias).
Tensor* linear(TensorArena& a, Tensor* x, Tensor* w, Tensor* b);
// gelu(w x + b) as one node: the MLP's first projection.
Tensor* linear_gelu(TensorArena& a, Tensor* x, Tensor* w, Tensor* b);
// residual + (w x + b) as one node: a block's output projection added to the residual stream.
Tensor* linear_residual(TensorArena& a, Tensor* x, Tensor* w, Tensor* b, Tensor* residual);

// A projected [S, N] tensor seen per head as [D, N, H] (D = S / n_head): a view, no copy.
Tensor* split_heads(TensorArena& a, Tensor* x, int n_head);

// The first n positions of a [S, n_ctx] cache tensor, seen per head as [D, n, H].
Tensor* cache_heads(TensorArena& a, Tensor* cache, int n_head, int64_t n);
// The first n positions of a transposed [n_ctx, S] cache tensor (KvCache::v_transposed), seen per
// head key-major as [n, D, H]: what plain_attention takes for v.
Tensor* cache_heads_transposed(TensorArena& a, Tensor* cache, int n_head, int64_t n);

// softmax(q k^T / sqrt(D)) v for every head of q (f32 [S, Nq]); k, v: [D, Nk, H] views.
// Returns f32 [S, Nq] (heads concatenated), ready for the output projection. causal: query i sees
// keys up to i + (Nk - Nq), i.e. everything before it in the KV cache and itself.
// flash: one fused flash_attn node (no score matrix in memory); otherwise the plain path, built
// from mul_mat and soft_max (a backend without flash_attn can still run the model, and the two
// paths check each other).
Tensor* multi_head_attention(TensorArena& a, Tensor* q, Tensor* k, Tensor* v, int n_head, bool causal,
                             bool flash = true);

// The plain path with the values already key-major: vt [Nk, D, H] with contiguous rows (e.g.
// cache_heads_transposed), so nothing is transposed per call.
Tensor* plain_attention(TensorArena& a, Tensor* q, Tensor* k, Tensor* vt, int n_head, bool causal);

}  // namespace hark
