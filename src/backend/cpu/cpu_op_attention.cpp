// FlashAttn on the CPU: softmax(Q K^T * scale + mask) V, one query row at a time, keys in tiles.
//
// For each query row the keys are visited in tiles of kTile. A tile's scores are computed into
// scratch, and the row keeps a running maximum M, a running sum S of exp(score - M) and an
// accumulator acc = sum exp(score - M) * v. When a tile raises M, S and acc are rescaled by
// exp(M_old - M_new), so the result is exactly softmax-weighted without ever holding the Nq x Nk
// score matrix: scratch per thread is kTile + D floats, whatever the sequence lengths.
//
// Threads take query rows ordered query-fastest, so one thread's rows mostly share a K/V head and
// that head stays in cache. K and V may be f32 or f16 (the KV cache); the dot and axpy kernels
// read f16 directly.
#include <algorithm>
#include <cmath>
#include <limits>

#include "backend/cpu/cpu_op_util.h"
#include "backend/cpu/cpu_ops.h"

namespace hark::cpu {

namespace {

constexpr int64_t kTile = 256;  // keys per tile: scores of a tile stay in L1
constexpr float kNegInf = -std::numeric_limits<float>::infinity();

size_t per_thread_floats(const Tensor& node) {
  const int64_t d = node.src[0]->ne[0];
  // round up to a cache line so threads never share one
  return static_cast<size_t>((kTile + d + 15) / 16 * 16);
}

}  // namespace

size_t flash_attn_work_size(const Tensor& node, int nth) {
  return per_thread_floats(node) * sizeof(float) * static_cast<size_t>(nth);
}

void op_flash_attn(const ComputeContext& ctx, Tensor& node) {
  const Tensor& q = *node.src[0];
  const Tensor& k = *node.src[1];
  const Tensor& v = *node.src[2];
  const Tensor* mask = node.src[3];
  const float scale = node.params[0].f;
  const bool causal = node.params[1].i != 0;
  const int64_t D = q.ne[0], nq = q.ne[1], H = q.ne[2];
  const int64_t nk = k.ne[1];
  const int64_t group = H / k.ne[2];  // query heads per K/V head
  const bool k_f16 = k.type == DType::F16, v_f16 = v.type == DType::F16;

  float* scores = static_cast<float*>(ctx.wdata) + per_thread_floats(node) * static_cast<size_t>(ctx.ith);
  float* acc = scores + kTile;

  int64_t r0, r1;
  ctx.range(q.nrows(), &r0, &r1);
  for (int64_t r = r0; r < r1; ++r) {
    const RowIndex ri = row_index(q, r);  // (query, head, batch)
    const int64_t iq = ri.i1, h = ri.i2, b = ri.i3;
    const auto* qr = reinterpret_cast<const float*>(row_ptr(q, ri));
    const uint8_t* kb = static_cast<const uint8_t*>(k.data) + (h / group) * k.nb[2] + b * k.nb[3];
    const uint8_t* vb = static_cast<const uint8_t*>(v.data) + (h / group) * v.nb[2] + b * v.nb[3];
    const uint8_t* mr = mask ? static_cast<const uint8_t*>(mask->data) + iq * mask->nb[1] : nullptr;
    // Keys past the causal limit would get probability zero; they are simply never visited.
    const int64_t live = causal ? std::clamp<int64_t>(iq + (nk - nq) + 1, 0, nk) : nk;

    float m = kNegInf;  // running maximum score
    float sum = 0.0f;   // running sum of exp(score - m)
    std::fill(acc, acc + D, 0.0f);
    for (int64_t j0 = 0; j0 < live; j0 += kTile) {
      const int64_t T = std::min(kTile, live - j0);
      for (int64_t t = 0; t < T; ++t) {
        const uint8_t* kj = kb + (j0 + t) * k.nb[1];
        const float dot = k_f16 ? ctx.k->dot_f16_f32(D, reinterpret_cast<const f16_t*>(kj), qr)
                                : ctx.k->dot_f32(D, reinterpret_cast<const float*>(kj), qr);
        scores[t] = dot * scale + (mr ? load_f32(mr + (j0 + t) * mask->nb[0]) : 0.0f);
      }
      const float tile_max = ctx.k->max(T, scores);
      if (!(tile_max > kNegInf)) continue;  // the whole tile is masked out (or NaN): no weight
      if (tile_max > m) {
        // Rescale what has been summed so far to the new maximum (a no-op on the first live tile,
        // where sum and acc are still zero).
        if (sum > 0.0f) {
          const float c = std::exp(m - tile_max);
          sum *= c;
          ctx.k->scale(D, acc, c, 0.0f, acc);
        }
        m = tile_max;
      }
      sum += ctx.k->exp_sub_sum(T, scores, m, scores);
      for (int64_t t = 0; t < T; ++t) {
        const float p = scores[t];
        if (p == 0.0f) continue;  // masked keys (and negligible ones) add nothing
        const uint8_t* vj = vb + (j0 + t) * v.nb[1];
        if (v_f16)
          ctx.k->axpy_f16(D, p, reinterpret_cast<const f16_t*>(vj), acc);
        else
          ctx.k->axpy(D, p, reinterpret_cast<const float*>(vj), acc);
      }
    }
    // result [D, H, Nq, B]: this row's D values are contiguous at (h, iq, b)
    float* out = reinterpret_cast<float*>(static_cast<uint8_t*>(node.data) + h * node.nb[1] + iq * node.nb[2] +
                                          b * node.nb[3]);
    if (sum > 0.0f)
      ctx.k->scale(D, acc, 1.0f / sum, 0.0f, out);
    else
      std::fill(out, out + D, 0.0f);  // no visible key: zeros, not 0/0
  }
}

}  // namespace hark::cpu
