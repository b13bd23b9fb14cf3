// Element-wise ops: Add and Mul (with y broadcast over x), Scale, Gelu, Unary.
//
// Threads take whole rows of the (contiguous) result. A row whose operands are dense goes to the
// kernel table in one call; broadcast and strided operands fall back to a plain loop over the
// row, which only views and unusual broadcasts ever reach.
#include <algorithm>
#include <cmath>

#include "backend/cpu/cpu_op_util.h"
#include "backend/cpu/cpu_ops.h"
#include "runtime/error.h"

namespace hark::cpu {

namespace {

float gelu_scalar(float x) {
  // erf form, like the kernels: x * Phi(x)
  return 0.5f * x * (1.0f + std::erf(x * 0.70710678118654752f));
}

// A unary op (Scale, Gelu) row by row: kernel(n, x, out) on a dense row, out[j] = each(x[j]) on a
// strided one.
template <typename Kernel, typename Each>
void unary_rows(const ComputeContext& ctx, Tensor& node, Kernel kernel, Each each) {
  const Tensor& x = *node.src[0];
  const int64_t n = x.ne[0];
  int64_t r0, r1;
  ctx.range(x.nrows(), &r0, &r1);
  for (int64_t r = r0; r < r1; ++r) {
    const RowIndex ri = row_index(x, r);
    const uint8_t* xr = row_ptr(x, ri);
    float* out = reinterpret_cast<float*>(row_ptr(node, ri));
    if (dense_f32_rows(x)) {
      kernel(n, reinterpret_cast<const float*>(xr), out);
    } else {
      for (int64_t j = 0; j < n; ++j) out[j] = each(load_f32(xr + j * x.nb[0]));
    }
  }
}

}  // namespace

void op_add(const ComputeContext& ctx, Tensor& node) {
  const Tensor& x = *node.src[0];
  const Tensor& y = *node.src[1];
  const bool is_mul = node.op == Op::Mul;
  const auto vec = is_mul ? ctx.k->mul : ctx.k->add;
  const int64_t n = x.ne[0], ny = y.ne[0];
  const bool dense = dense_f32_rows(x) && dense_f32_rows(y);

  int64_t r0, r1;
  ctx.range(x.nrows(), &r0, &r1);
  for (int64_t r = r0; r < r1; ++r) {
    const RowIndex ri = row_index(x, r);
    const RowIndex yi{ri.i1 % y.ne[1], ri.i2 % y.ne[2], ri.i3 % y.ne[3]};
    const uint8_t* xr = row_ptr(x, ri);
    const uint8_t* yr = row_ptr(y, yi);
    float* out = reinterpret_cast<float*>(row_ptr(node, ri));
    if (dense && ny == 1) {
      // one y value for the whole row: an affine map of x, which the scale kernel does
      const float b = load_f32(yr);
      if (is_mul)
        ctx.k->scale(n, reinterpret_cast<const float*>(xr), b, 0.0f, out);
      else
        ctx.k->scale(n, reinterpret_cast<const float*>(xr), 1.0f, b, out);
    } else if (dense) {
      // y repeats every ny values along the row (ny == n in the common case: one call)
      for (int64_t j = 0; j < n; j += ny)
        vec(ny, reinterpret_cast<const float*>(xr) + j, reinterpret_cast<const float*>(yr), out + j);
    } else {
      for (int64_t j = 0; j < n; ++j) {
        const float a = load_f32(xr + j * x.nb[0]);
        const float b = load_f32(yr + (j % ny) * y.nb[0]);
        out[j] = is_mul ? a * b : a + b;
      }
    }
  }
}

void op_scale(const ComputeContext& ctx, Tensor& node) {
  const float s = node.params[0].f, bias = node.params[1].f;
  unary_rows(
      ctx, node, [&](int64_t n, const float* x, float* y) { ctx.k->scale(n, x, s, bias, y); },
      [&](float v) { return v * s + bias; });
}

void op_gelu(const ComputeContext& ctx, Tensor& node) { unary_rows(ctx, node, ctx.k->gelu, gelu_scalar); }

// The Silero VAD's activations and gates. Relu and sqrt run as plain loops the compiler
// vectorises. Sigmoid and tanh take the table's kernels (through libm they were a fifth of a VAD
// frame), strided rows one value at a time through the same kernel. RoundF16 rounds every conv
// input of the VAD, through the table's f32 -> f16 -> f32 row kernels (F16C where there is one).
namespace {
template <typename Each>
void unary_loop(const ComputeContext& ctx, Tensor& node, Each each) {
  unary_rows(
      ctx, node,
      [&](int64_t n, const float* x, float* y) {
        for (int64_t j = 0; j < n; ++j) y[j] = each(x[j]);
      },
      each);
}

void unary_kernel(const ComputeContext& ctx, Tensor& node, void (*kernel)(int64_t, const float*, float*)) {
  unary_rows(ctx, node, kernel, [kernel](float v) {
    float y;
    kernel(1, &v, &y);
    return y;
  });
}
}  // namespace

void op_unary(const ComputeContext& ctx, Tensor& node) {
  switch (static_cast<UnaryOp>(node.params[0].i)) {
    case UnaryOp::Relu: return unary_loop(ctx, node, [](float v) { return v > 0.0f ? v : 0.0f; });
    case UnaryOp::Sigmoid: return unary_kernel(ctx, node, ctx.k->sigmoid);
    case UnaryOp::Tanh: return unary_kernel(ctx, node, ctx.k->tanh);
    case UnaryOp::Sqrt: return unary_loop(ctx, node, [](float v) { return std::sqrt(v); });
    case UnaryOp::RoundF16:
      return unary_rows(
          ctx, node,
          [&](int64_t n, const float* x, float* y) {
            f16_t half[256];
            for (int64_t j = 0; j < n; j += 256) {
              const int64_t m = std::min<int64_t>(256, n - j);
              ctx.k->f32_to_f16_row(x + j, half, m);
              ctx.k->f16_to_f32_row(half, y + j, m);
            }
          },
          [](float v) { return f16_to_f32(f32_to_f16(v)); });
    case UnaryOp::Count: break;
  }
  throw Error("cpu backend: unknown unary function " + std::to_string(node.params[0].i));
}

}  // namespace hark::cpu
