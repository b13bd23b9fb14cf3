#include "model/layers.h"

#include <cmath>

#include "runtime/ops.h"

namespace hark {

using namespace ops;

Tensor* linear(TensorArena& a, Tensor* x, Tensor* w, Tensor* b) {
  Tensor* y = mul_mat(a, w, x);
  return b ? add(a, y, b) : y;
}

Tensor* split_heads(TensorArena& a, Tensor* x, int n_head) {
  const int64_t s = x->ne[0], n = x->ne[1];
  // [S, N] -> [D, H, N] -> [D, N, H]: dim 1 (heads) moves to 2, dim 2 (positions) to 1.
  return permute(a, reshape(a, x, {s / n_head, n_head, n}), 0, 2, 1, 3);
}

Tensor* cache_heads(TensorArena& a, Tensor* cache, int n_head, int64_t n) {
  const int64_t d = cache->ne[0] / n_head;
  // Rows of D values; the next position is a cache row (nb[1]) away, the next head D values away.
  return view(a, cache, {d, n, n_head}, {cache->nb[1], dtype_row_bytes(cache->type, d)}, 0);
}

Tensor* multi_head_attention(TensorArena& a, Tensor* q, Tensor* k, Tensor* v, int n_head, bool causal) {
  const int64_t s = q->ne[0], n = q->ne[1];
  const float d = static_cast<float>(s / n_head);
  // Whisper scales q and k each by D^-1/4 before the product; one D^-1/2 on the scores is equal.
  Tensor* out = flash_attn(a, split_heads(a, q, n_head), k, v, nullptr, 1.0f / std::sqrt(d), causal);
  return reshape(a, out, {s, n});  // [D, H, N] with the heads adjacent is [S, N]
}

}  // namespace hark
