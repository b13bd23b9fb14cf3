// Graph-building operations: each call checks its inputs and returns a new node in the arena
// (no computation happens here; a Backend computes a Graph of these nodes later).
//
// Shapes use the file-format convention (ne[0] innermost). Shape or type errors throw hark::Error
// naming the op, the operands and what was expected.
#pragma once
#include "runtime/tensor.h"

namespace hark::ops {

// ---- views (no copies) ----
Tensor* reshape(TensorArena& a, Tensor* x, std::initializer_list<int64_t> ne);  // x contiguous
// A strided window onto x: shape ne, byte strides nb[1..], starting at byte `offset`.
Tensor* view(TensorArena& a, Tensor* x, std::initializer_list<int64_t> ne, std::initializer_list<size_t> nb_upper,
             size_t offset);
// x's dim i moves to position ax_i of the result (so permute(x,1,0,2,3) == transpose).
Tensor* permute(TensorArena& a, Tensor* x, int ax0, int ax1, int ax2, int ax3);
Tensor* transpose(TensorArena& a, Tensor* x);  // swaps dims 0 and 1
// Rows [begin, end) of dim `dim` (a view).
Tensor* slice(TensorArena& a, Tensor* x, int dim, int64_t begin, int64_t end);

// ---- data movement ----
Tensor* cont(TensorArena& a, Tensor* x);                       // contiguous copy, same type
Tensor* copy(TensorArena& a, Tensor* src, Tensor* dst);        // src -> dst (type converted); returns a view of dst
Tensor* get_rows(TensorArena& a, Tensor* table, Tensor* ids);  // table [D,V,...], ids i32 [N] -> f32 [D,N]
Tensor* concat(TensorArena& a, Tensor* x, Tensor* y, int dim);
// Rows of f32 x extended along ne[0] by reflection (PyTorch's ReflectionPad1d: the edge value is
// not repeated, so left < ne0 and right < ne0): [ne0 + left + right, ne1, ne2, ne3].
Tensor* pad_reflect(TensorArena& a, Tensor* x, int left, int right);

// ---- element-wise ----
Tensor* add(TensorArena& a, Tensor* x, Tensor* y);  // y broadcast: y.ne[i] == x.ne[i] or divides it
Tensor* mul(TensorArena& a, Tensor* x, Tensor* y);
Tensor* scale(TensorArena& a, Tensor* x, float s, float bias = 0.0f);
Tensor* gelu(TensorArena& a, Tensor* x);
Tensor* unary(TensorArena& a, Tensor* x, UnaryOp fn);  // fn applied to every element of f32 x
inline Tensor* relu(TensorArena& a, Tensor* x) { return unary(a, x, UnaryOp::Relu); }
inline Tensor* sigmoid(TensorArena& a, Tensor* x) { return unary(a, x, UnaryOp::Sigmoid); }

// ---- rows ----
// Layer norm over ne[0]; w and b (f32 [ne0]) are optional (nullptr).
Tensor* layer_norm(TensorArena& a, Tensor* x, Tensor* w, Tensor* b, float eps);
// softmax(x * scale + mask) over ne[0]. mask: optional f32 [ne0, >=ne1] broadcast over dims 2,3.
// causal: column j of row i is masked when j > i + (ne0 - ne1) (the KV-cache offset).
Tensor* soft_max(TensorArena& a, Tensor* x, Tensor* mask, float scale, bool causal = false);
Tensor* argmax(TensorArena& a, Tensor* x);        // f32 [N, rows] -> i32 [rows]
Tensor* top_k(TensorArena& a, Tensor* x, int k);  // f32 [N, rows] -> i32 [k, rows], best first

// ---- linear algebra ----
// w: [K, N, B2, B3] any weight type; x: f32 [K, M, b2, b3] with b2 % B2 == 0, b3 % B3 == 0
// (w broadcast over batch). Result f32 [N, M, b2, b3]: out[n, m] = sum_k w[k, n] * x[k, m].
Tensor* mul_mat(TensorArena& a, Tensor* w, Tensor* x);
// w x + b (b: f32, N values, contiguous), then GELU when gelu: mul_mat, add and gelu as one node,
// with the values of the three in turn. The CPU backend finishes each block of outputs while it
// is still in cache instead of making two more passes over the whole result (the encoder's
// [1536, 1500] activations), and a decoder step has one node a projection instead of two.
// With a residual r (f32, the result's shape, rows contiguous): r + (w x + b), the add that
// follows a block's output projection, in the same node.
Tensor* mul_mat_bias(TensorArena& a, Tensor* w, Tensor* x, Tensor* b, bool gelu = false, Tensor* residual = nullptr);
// conv1d with kernel [K, Cin, Cout] (any weight type) over x, logical shape [Cin, L] (may be a
// strided view, e.g. a transposed mel [L, Cin]) or a batch [Cin, L, B] of independent inputs.
// Result f32 [Cout, Lout] or [Cout, Lout, B], Lout = (L + 2p - K)/s + 1.
// With a bias (f32, Cout values) and gelu: the product as mul_mat_bias.
Tensor* conv1d(TensorArena& a, Tensor* kernel, Tensor* x, int stride, int padding, Tensor* bias = nullptr,
               bool gelu = false);
// -> f32 [K*Cin, Lout] (or [K*Cin, Lout, B]): column t holds what the kernel sees at output t.
Tensor* im2col(TensorArena& a, Tensor* x, int kernel_size, int stride, int padding);

// Fused attention. q: f32 [D, Nq, H, B]; k, v: f32 or f16 [D, Nk, Hkv, B] (H % Hkv == 0);
// mask: optional f32 [Nk, >=Nq], or [Nk, >=Nq, 1, B] with a mask per batch. A key masked with
// -inf gets weight zero; the keys after a query's last visible one are not read at all (so a
// batch's rows can attend over different lengths of a cache whose tails hold anything).
// Result f32 [D, H, Nq, B] (heads adjacent: reshape to [D*H, Nq]).
Tensor* flash_attn(TensorArena& a, Tensor* q, Tensor* k, Tensor* v, Tensor* mask, float scale, bool causal = false);

}  // namespace hark::ops
