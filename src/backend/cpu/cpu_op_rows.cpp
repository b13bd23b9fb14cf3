// Row ops: LayerNorm, SoftMax, Argmax, TopK. Each row is independent, so threads take rows.
//
// Results are always contiguous, which lets the ops use their own output row as scratch: a
// strided input row is first gathered into it, and from there the dense kernels do the work.
#include <algorithm>
#include <cmath>
#include <functional>
#include <limits>

#include "backend/cpu/cpu_op_util.h"
#include "backend/cpu/cpu_ops.h"

namespace hark::cpu {

namespace {

constexpr float kNegInf = -std::numeric_limits<float>::infinity();

// Returns row ri of x as a dense array: x's own memory when its elements are adjacent, else a
// copy gathered into `scratch` (n floats).
const float* dense_row(const Tensor& x, const RowIndex& ri, float* scratch) {
  const uint8_t* p = row_ptr(x, ri);
  if (dense_f32_rows(x)) return reinterpret_cast<const float*>(p);
  for (int64_t j = 0; j < x.ne[0]; ++j) scratch[j] = load_f32(p + j * x.nb[0]);
  return scratch;
}

// out[j] = op(out[j], v[j]) for a 1-D f32 tensor v of any stride (layer_norm's gain and bias);
// `vec` is the kernel of the same op, used when v is dense.
template <typename Op>
void combine_row(int64_t n, float* out, const Tensor& v, void (*vec)(int64_t, const float*, const float*, float*),
                 Op op) {
  if (dense_f32_rows(v)) {
    vec(n, out, static_cast<const float*>(v.data), out);
  } else {
    const auto* p = static_cast<const uint8_t*>(v.data);
    for (int64_t j = 0; j < n; ++j) out[j] = op(out[j], load_f32(p + j * v.nb[0]));
  }
}

}  // namespace

void op_layer_norm(const ComputeContext& ctx, Tensor& node) {
  const Tensor& x = *node.src[0];
  const Tensor* w = node.src[1];
  const Tensor* b = node.src[2];
  const float eps = node.params[0].f;
  const int64_t n = x.ne[0];
  int64_t r0, r1;
  ctx.range(x.nrows(), &r0, &r1);
  for (int64_t r = r0; r < r1; ++r) {
    const RowIndex ri = row_index(x, r);
    float* out = reinterpret_cast<float*>(row_ptr(node, ri));
    const float* xr = dense_row(x, ri, out);
    float mean, var;
    ctx.k->mean_var(n, xr, &mean, &var);
    const float inv = 1.0f / std::sqrt(var + eps);
    // (x - mean) first, then / sigma: folding both into one x*inv - mean*inv would cancel
    // catastrophically when x is close to the mean and sigma is tiny (e.g. a row of one value).
    ctx.k->scale(n, xr, 1.0f, -mean, out);
    ctx.k->scale(n, out, inv, 0.0f, out);
    if (w) combine_row(n, out, *w, ctx.k->mul, std::multiplies<float>());
    if (b) combine_row(n, out, *b, ctx.k->add, std::plus<float>());
  }
}

void op_soft_max(const ComputeContext& ctx, Tensor& node) {
  const Tensor& x = *node.src[0];
  const Tensor* mask = node.src[1];
  const float scale = node.params[0].f;
  const bool causal = node.params[1].i != 0;
  const int64_t n = x.ne[0];
  int64_t r0, r1;
  ctx.range(x.nrows(), &r0, &r1);
  for (int64_t r = r0; r < r1; ++r) {
    const RowIndex ri = row_index(x, r);
    float* out = reinterpret_cast<float*>(row_ptr(node, ri));
    // Under the causal rule only the first `live` columns can be seen; the rest are exact zeros,
    // so they are never computed (and a row with none live needs no arithmetic at all).
    int64_t live = n;
    if (causal) live = std::clamp<int64_t>(ri.i1 + (n - x.ne[1]) + 1, 0, n);

    ctx.k->scale(live, dense_row(x, ri, out), scale, 0.0f, out);
    if (mask) {
      const uint8_t* mr = static_cast<const uint8_t*>(mask->data) + ri.i1 * mask->nb[1];
      if (dense_f32_rows(*mask)) {
        ctx.k->add(live, out, reinterpret_cast<const float*>(mr), out);
      } else {
        for (int64_t j = 0; j < live; ++j) out[j] += load_f32(mr + j * mask->nb[0]);
      }
    }
    const float m = live > 0 ? ctx.k->max(live, out) : kNegInf;
    if (m == kNegInf || std::isnan(m)) {
      // Everything masked: no key to attend to, so the row is zeros rather than 0/0 = NaN. (A
      // NaN maximum can only come from NaN input; zeros keep it from spreading further.)
      std::fill(out, out + n, 0.0f);
      continue;
    }
    const float sum = ctx.k->exp_sub_sum(live, out, m, out);
    ctx.k->scale(live, out, 1.0f / sum, 0.0f, out);
    std::fill(out + live, out + n, 0.0f);
  }
}

void op_argmax(const ComputeContext& ctx, Tensor& node) {
  const Tensor& x = *node.src[0];
  const int64_t n = x.ne[0];
  auto* out = static_cast<int32_t*>(node.data);  // contiguous i32 [rows]: row r at out[r]
  int64_t r0, r1;
  ctx.range(x.nrows(), &r0, &r1);
  for (int64_t r = r0; r < r1; ++r) {
    const uint8_t* xr = row_ptr(x, row_index(x, r));
    int64_t best = 0;
    if (dense_f32_rows(x)) {
      // The kernel finds the largest value fast; the first index holding it is the answer, which
      // gives ties to the lower index as required.
      const auto* v = reinterpret_cast<const float*>(xr);
      const float m = ctx.k->max(n, v);
      while (best < n - 1 && !(load_f32(v, best) == m)) ++best;
      if (!(load_f32(v, best) == m)) best = 0;  // no match (NaN in the row): fall back to the first column
    } else {
      float bv = load_f32(xr);
      for (int64_t j = 1; j < n; ++j) {
        const float v = load_f32(xr + j * x.nb[0]);
        if (v > bv) {
          bv = v;
          best = j;
        }
      }
    }
    out[r] = static_cast<int32_t>(best);
  }
}

void op_top_k(const ComputeContext& ctx, Tensor& node) {
  const Tensor& x = *node.src[0];
  const int64_t n = x.ne[0];
  const int64_t k = node.params[0].i;
  int64_t r0, r1;
  ctx.range(x.nrows(), &r0, &r1);
  for (int64_t r = r0; r < r1; ++r) {
    const RowIndex ri = row_index(x, r);
    const uint8_t* xr = row_ptr(x, ri);
    const size_t stride = x.nb[0];
    // NaN would break the ordering the heap relies on; it ranks below everything instead.
    auto value = [&](int32_t j) {
      const float v = load_f32(xr + static_cast<size_t>(j) * stride);
      return std::isnan(v) ? kNegInf : v;
    };
    // better(a, b): a ranks ahead of b (larger value, or equal value and lower index).
    auto better = [&](int32_t a, int32_t b) {
      const float va = value(a), vb = value(b);
      return va > vb || (va == vb && a < b);
    };
    // The output row itself holds a heap of the k best seen so far whose top is the worst of
    // them, so each new value needs one comparison, and only a better one costs log k. Sorting
    // the heap at the end orders it best first. O(n log k) time and no memory beyond the row.
    auto* best = reinterpret_cast<int32_t*>(row_ptr(node, ri));
    for (int64_t j = 0; j < k; ++j) best[j] = static_cast<int32_t>(j);
    std::make_heap(best, best + k, better);
    for (int64_t j = k; j < n; ++j) {
      const auto cand = static_cast<int32_t>(j);
      if (!better(cand, best[0])) continue;
      std::pop_heap(best, best + k, better);
      best[k - 1] = cand;
      std::push_heap(best, best + k, better);
    }
    std::sort_heap(best, best + k, better);
  }
}

}  // namespace hark::cpu
