#include "model/layers.h"

#include <cmath>

#include "runtime/ops.h"

namespace hark {

using namespace ops;

Tensor* linear(TensorArena& a, Tensor* x, Tensor* w, Tensor* b) {
  return b ? mul_mat_bias(a, w, x, b) : mul_mat(a, w, x);
}

Tensor* linear_gelu(TensorArena& a, Tensor* x, Tensor* w, Tensor* b) {
  return b ? mul_mat_bias(a, w, x, b, /*gelu=*/true) : gelu(a, mul_mat(a, w, x));
}

Tensor* linear_residual(TensorArena& a, Tensor* x, Tensor* w, Tensor* b, Tensor* residual) {
  return b ? mul_mat_bias(a, w, x, b, /*gelu=*/false, residual) : add(a, residual, mul_mat(a, w, x));
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

Tensor* cache_heads_transposed(TensorArena& a, Tensor* cache, int n_head, int64_t n) {
  const int64_t d = cache->ne[1] / n_head;
  // Row c holds channel c over positions; head h's channels are rows [h*D, (h+1)*D).
  return view(a, cache, {n, d, n_head}, {cache->nb[1], static_cast<size_t>(d) * cache->nb[1]}, 0);
}

Tensor* plain_attention(TensorArena& a, Tensor* q, Tensor* k, Tensor* vt, int n_head, bool causal) {
  const int64_t s = q->ne[0], n = q->ne[1];
  const float d = static_cast<float>(s / n_head);
  // scores[j, i, h] = k_j . q_i: the keys play the weight rows, so the cache's f16 rows are read
  // in place (mul_mat takes strided weights whose rows are contiguous, broadcast per head).
  Tensor* scores = mul_mat(a, k, split_heads(a, q, n_head));  // [Nk, N, H]
  // The scale and the causal rule (with the KV-cache offset Nk - N) are soft_max's own, so no
  // mask tensor has to be built per step.
  Tensor* probs = soft_max(a, scores, nullptr, 1.0f / std::sqrt(d), causal);
  // out[d, i, h] = sum_j vt[j, d, h] p[j, i, h]: mul_mat sums over ne[0] of both operands.
  Tensor* out = mul_mat(a, vt, probs);  // [D, N, H]
  // The output projection wants each position's heads adjacent, as flash_attn gives them.
  out = cont(a, permute(a, out, 0, 2, 1, 3));  // [D, H, N]
  return reshape(a, out, {s, n});
}

Tensor* multi_head_attention(TensorArena& a, Tensor* q, Tensor* k, Tensor* v, int n_head, bool causal, bool flash) {
  const int64_t s = q->ne[0], n = q->ne[1];
  const float d = static_cast<float>(s / n_head);
  // Whisper scales q and k each by D^-1/4 before the product; one D^-1/2 on the scores is equal.
  if (flash) {
    Tensor* out = flash_attn(a, split_heads(a, q, n_head), k, v, nullptr, 1.0f / std::sqrt(d), causal);
    return reshape(a, out, {s, n});  // [D, H, N] with the heads adjacent is [S, N]
  }
  // The weighted sum needs v key-major. A transposed view has strided rows, which mul_mat does not
  // take as weights, hence one contiguous copy (same type: f16 stays f16). Callers reading a
  // cache store it transposed instead (KvCache::v_transposed) and call plain_attention.
  return plain_attention(a, q, k, cont(a, transpose(a, v)), n_head, causal);
}

}  // namespace hark
