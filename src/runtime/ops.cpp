#include "runtime/ops.h"

#include <algorithm>

#include "runtime/error.h"

namespace hark::ops {

namespace {

using Shape = std::array<int64_t, kMaxDims>;

void require_f32(const char* op, const Tensor* t) {
  HARK_CHECK(t->type == DType::F32, std::string(op) + " needs f32 input, got " + t->describe());
}

Tensor* make_view(TensorArena& a, Op op, Tensor* x, const Shape& ne, const std::array<size_t, kMaxDims>& nb,
                  size_t offset) {
  Tensor* t = a.new_node(op, x->type, ne, {x});
  t->nb = nb;
  t->view_src = x->view_src ? x->view_src : x;
  t->view_offset = (x->view_src ? x->view_offset : 0) + offset;
  t->name = x->name;
  return t;
}

bool can_broadcast(const Tensor* x, const Tensor* y) {
  for (int i = 0; i < kMaxDims; ++i)
    if (y->ne[i] == 0 || x->ne[i] % y->ne[i] != 0) return false;
  return true;
}

}  // namespace

Tensor* reshape(TensorArena& a, Tensor* x, std::initializer_list<int64_t> dims) {
  HARK_CHECK(x->is_contiguous(), "reshape needs a contiguous tensor, got " + x->describe() + " (call cont first)");
  HARK_CHECK(dims.size() >= 1 && dims.size() <= kMaxDims, "reshape: 1 to 4 dims");
  Shape ne{1, 1, 1, 1};
  size_t i = 0;
  for (int64_t n : dims) ne[i++] = n;
  HARK_CHECK(ne[0] * ne[1] * ne[2] * ne[3] == x->nelements(),
             "reshape: " + x->describe() + " has " + std::to_string(x->nelements()) + " elements, the new shape has " +
                 std::to_string(ne[0] * ne[1] * ne[2] * ne[3]));
  return make_view(a, Op::Reshape, x, ne, contiguous_strides(x->type, ne), 0);
}

Tensor* view(TensorArena& a, Tensor* x, std::initializer_list<int64_t> dims, std::initializer_list<size_t> nb_upper,
             size_t offset) {
  HARK_CHECK(dims.size() >= 1 && dims.size() <= kMaxDims && nb_upper.size() + 1 == dims.size(),
             "view: give 1 to 4 dims and one stride fewer than dims");
  Shape ne{1, 1, 1, 1};
  size_t i = 0;
  for (int64_t n : dims) ne[i++] = n;
  auto nb = contiguous_strides(x->type, ne);
  i = 1;
  for (size_t s : nb_upper) nb[i++] = s;
  for (; i < kMaxDims; ++i) nb[i] = nb[i - 1] * static_cast<size_t>(ne[i - 1]);
  Tensor probe;
  probe.type = x->type;
  probe.ne = ne;
  probe.nb = nb;
  HARK_CHECK(offset + probe.nbytes() <= x->nbytes(),
             "view: window of " + std::to_string(probe.nbytes()) + " bytes at offset " + std::to_string(offset) +
                 " runs past " + x->describe() + " (" + std::to_string(x->nbytes()) + " bytes)");
  return make_view(a, Op::View, x, ne, nb, offset);
}

Tensor* permute(TensorArena& a, Tensor* x, int ax0, int ax1, int ax2, int ax3) {
  const int axes[kMaxDims] = {ax0, ax1, ax2, ax3};
  bool seen[kMaxDims] = {};
  for (int ax : axes) {
    HARK_CHECK(ax >= 0 && ax < kMaxDims && !seen[ax], "permute: axes must be a permutation of 0..3");
    seen[ax] = true;
  }
  Shape ne{};
  std::array<size_t, kMaxDims> nb{};
  for (int i = 0; i < kMaxDims; ++i) {
    ne[axes[i]] = x->ne[i];
    nb[axes[i]] = x->nb[i];
  }
  return make_view(a, Op::Permute, x, ne, nb, 0);
}

Tensor* transpose(TensorArena& a, Tensor* x) {
  Tensor* t = permute(a, x, 1, 0, 2, 3);
  t->op = Op::Transpose;
  return t;
}

Tensor* slice(TensorArena& a, Tensor* x, int dim, int64_t begin, int64_t end) {
  HARK_CHECK(dim >= 0 && dim < kMaxDims, "slice: dim must be 0..3");
  HARK_CHECK(0 <= begin && begin <= end && end <= x->ne[dim], "slice: range [" + std::to_string(begin) + ", " +
                                                                  std::to_string(end) + ") out of bounds for dim " +
                                                                  std::to_string(dim) + " of " + x->describe());
  HARK_CHECK(dim != 0 || (begin % dtype_block_size(x->type) == 0 && end % dtype_block_size(x->type) == 0),
             "slice: dim 0 of a quantized tensor must be cut at block boundaries");
  Shape ne = x->ne;
  ne[dim] = end - begin;
  const size_t off = dim == 0 ? dtype_row_bytes(x->type, begin) : static_cast<size_t>(begin) * x->nb[dim];
  return make_view(a, Op::View, x, ne, x->nb, off);
}

Tensor* cont(TensorArena& a, Tensor* x) {
  HARK_CHECK(!dtype_quantized(x->type) || x->rows_contiguous(),
             "cont: a quantized tensor can only be made contiguous when its rows are: " + x->describe());
  return a.new_node(Op::Cont, x->type, x->ne, {x});
}

Tensor* copy(TensorArena& a, Tensor* src, Tensor* dst) {
  HARK_CHECK(src->nelements() == dst->nelements(),
             "copy: " + src->describe() + " and " + dst->describe() + " differ in element count");
  HARK_CHECK(src->type == DType::F32 || src->type == DType::F16 || src->type == dst->type,
             "copy: converting from " + std::string(dtype_name(src->type)) + " is not supported");
  HARK_CHECK(dst->type != DType::I32 || src->type == DType::I32, "copy: cannot convert to i32");
  Tensor* t = make_view(a, Op::Copy, dst, dst->ne, dst->nb, 0);
  t->src = {src, dst, nullptr, nullptr};
  return t;
}

Tensor* get_rows(TensorArena& a, Tensor* table, Tensor* ids) {
  HARK_CHECK(ids->type == DType::I32, "get_rows: ids must be i32, got " + ids->describe());
  HARK_CHECK(ids->ne[1] == 1 && ids->ne[2] == 1 && ids->ne[3] == 1,
             "get_rows: ids must be a vector, got " + ids->describe());
  HARK_CHECK(table->ne[2] == 1 && table->ne[3] == 1, "get_rows: table must be 2-D, got " + table->describe());
  return a.new_node(Op::GetRows, DType::F32, {table->ne[0], ids->ne[0], 1, 1}, {table, ids});
}

Tensor* concat(TensorArena& a, Tensor* x, Tensor* y, int dim) {
  HARK_CHECK(dim >= 0 && dim < kMaxDims, "concat: dim must be 0..3");
  HARK_CHECK(x->type == y->type && !dtype_quantized(x->type),
             "concat: operands must share a plain type: " + x->describe() + ", " + y->describe());
  for (int i = 0; i < kMaxDims; ++i)
    HARK_CHECK(i == dim || x->ne[i] == y->ne[i],
               "concat: " + x->describe() + " and " + y->describe() + " differ in dim " + std::to_string(i));
  Shape ne = x->ne;
  ne[dim] += y->ne[dim];
  Tensor* t = a.new_node(Op::Concat, x->type, ne, {x, y});
  t->params[0].i = dim;
  return t;
}

Tensor* pad_reflect(TensorArena& a, Tensor* x, int left, int right) {
  require_f32("pad_reflect", x);
  HARK_CHECK(left >= 0 && right >= 0 && left < x->ne[0] && right < x->ne[0],
             "pad_reflect: padding " + std::to_string(left) + " + " + std::to_string(right) + " must each be in 0.." +
                 std::to_string(x->ne[0] - 1) + " (shorter than the rows of " + x->describe() + ")");
  Shape ne = x->ne;
  ne[0] += left + right;
  Tensor* t = a.new_node(Op::PadReflect, DType::F32, ne, {x});
  t->params[0].i = left;
  t->params[1].i = right;
  return t;
}

static Tensor* binary(TensorArena& a, Op op, const char* name, Tensor* x, Tensor* y) {
  require_f32(name, x);
  require_f32(name, y);
  HARK_CHECK(can_broadcast(x, y), std::string(name) + ": cannot broadcast " + y->describe() + " over " + x->describe());
  return a.new_node(op, DType::F32, x->ne, {x, y});
}

Tensor* add(TensorArena& a, Tensor* x, Tensor* y) { return binary(a, Op::Add, "add", x, y); }
Tensor* mul(TensorArena& a, Tensor* x, Tensor* y) { return binary(a, Op::Mul, "mul", x, y); }

Tensor* scale(TensorArena& a, Tensor* x, float s, float bias) {
  require_f32("scale", x);
  Tensor* t = a.new_node(Op::Scale, DType::F32, x->ne, {x});
  t->params[0].f = s;
  t->params[1].f = bias;
  return t;
}

Tensor* gelu(TensorArena& a, Tensor* x) {
  require_f32("gelu", x);
  return a.new_node(Op::Gelu, DType::F32, x->ne, {x});
}

Tensor* unary(TensorArena& a, Tensor* x, UnaryOp fn) {
  require_f32(unary_op_name(fn), x);
  HARK_CHECK(static_cast<int32_t>(fn) >= 0 && fn < UnaryOp::Count, "unary: unknown function");
  Tensor* t = a.new_node(Op::Unary, DType::F32, x->ne, {x});
  t->params[0].i = static_cast<int32_t>(fn);
  return t;
}

Tensor* layer_norm(TensorArena& a, Tensor* x, Tensor* w, Tensor* b, float eps) {
  require_f32("layer_norm", x);
  for (Tensor* p : {w, b}) {
    if (!p) continue;
    require_f32("layer_norm", p);
    HARK_CHECK(p->nelements() == x->ne[0] && p->ne[0] == x->ne[0],
               "layer_norm: weight/bias " + p->describe() + " must have " + std::to_string(x->ne[0]) + " values");
  }
  Tensor* t = a.new_node(Op::LayerNorm, DType::F32, x->ne, {x, w, b});
  t->params[0].f = eps;
  return t;
}

Tensor* soft_max(TensorArena& a, Tensor* x, Tensor* mask, float scale, bool causal) {
  require_f32("soft_max", x);
  if (mask) {
    require_f32("soft_max mask", mask);
    HARK_CHECK(mask->ne[0] == x->ne[0] && mask->ne[1] >= x->ne[1] && mask->ne[2] == 1 && mask->ne[3] == 1,
               "soft_max: mask " + mask->describe() + " must be [" + std::to_string(x->ne[0]) +
                   ", >=" + std::to_string(x->ne[1]) + "] for " + x->describe());
  }
  Tensor* t = a.new_node(Op::SoftMax, DType::F32, x->ne, {x, mask});
  t->params[0].f = scale;
  t->params[1].i = causal ? 1 : 0;
  return t;
}

Tensor* argmax(TensorArena& a, Tensor* x) {
  require_f32("argmax", x);
  HARK_CHECK(x->ne[0] > 0, "argmax: empty rows in " + x->describe());
  return a.new_node(Op::Argmax, DType::I32, {x->ne[1], x->ne[2], x->ne[3], 1}, {x});
}

Tensor* top_k(TensorArena& a, Tensor* x, int k) {
  require_f32("top_k", x);
  HARK_CHECK(k >= 1 && k <= x->ne[0],
             "top_k: k=" + std::to_string(k) + " must be in 1.." + std::to_string(x->ne[0]) + " for " + x->describe());
  Tensor* t = a.new_node(Op::TopK, DType::I32, {k, x->ne[1], x->ne[2], x->ne[3]}, {x});
  t->params[0].i = k;
  return t;
}

Tensor* mul_mat(TensorArena& a, Tensor* w, Tensor* x) {
  HARK_CHECK(w->type != DType::I32, "mul_mat: weights of type i32 are not supported: " + w->describe());
  require_f32("mul_mat (activations)", x);
  HARK_CHECK(w->ne[0] == x->ne[0],
             "mul_mat: inner dimensions differ: weights " + w->describe() + " vs activations " + x->describe());
  HARK_CHECK(w->ne[2] > 0 && w->ne[3] > 0 && x->ne[2] % w->ne[2] == 0 && x->ne[3] % w->ne[3] == 0,
             "mul_mat: weights batch " + w->describe() + " does not divide activations batch " + x->describe());
  HARK_CHECK(w->rows_contiguous(), "mul_mat: weight rows must be contiguous: " + w->describe());
  return a.new_node(Op::MulMat, DType::F32, {w->ne[1], x->ne[1], x->ne[2], x->ne[3]}, {w, x});
}

Tensor* mul_mat_bias(TensorArena& a, Tensor* w, Tensor* x, Tensor* b, bool gelu, Tensor* residual) {
  Tensor* t = mul_mat(a, w, x);
  HARK_CHECK(b != nullptr, "mul_mat_bias: no bias");
  require_f32("mul_mat_bias (bias)", b);
  HARK_CHECK(b->nelements() == w->ne[1] && b->is_contiguous(),
             "mul_mat_bias: the bias must be " + std::to_string(w->ne[1]) +
                 " contiguous values (one per weight row), got " + b->describe());
  t->src[2] = b;
  t->params[0].i = gelu ? 1 : 0;
  if (residual) {
    require_f32("mul_mat_bias (residual)", residual);
    bool same = residual->nb[0] == sizeof(float);
    for (int d = 0; d < 4; ++d) same = same && residual->ne[d] == t->ne[d];
    HARK_CHECK(same, "mul_mat_bias: the residual must be f32 " + t->describe() + " with contiguous rows, got " +
                         residual->describe());
    t->src[3] = residual;
  }
  return t;
}

Tensor* im2col(TensorArena& a, Tensor* x, int kernel_size, int stride, int padding) {
  require_f32("im2col", x);
  HARK_CHECK(kernel_size >= 1 && stride >= 1 && padding >= 0, "im2col: bad kernel/stride/padding");
  HARK_CHECK(x->ne[3] == 1, "im2col: input must be [Cin, L] or a batch [Cin, L, B], got " + x->describe());
  const int64_t l_in = x->ne[1];
  const int64_t span = l_in + 2 * padding - kernel_size;
  HARK_CHECK(span >= 0, "im2col: input length " + std::to_string(l_in) + " shorter than the kernel");
  const int64_t l_out = span / stride + 1;
  Tensor* t = a.new_node(Op::Im2Col, DType::F32, {kernel_size * x->ne[0], l_out, x->ne[2], 1}, {x});
  t->params[0].i = kernel_size;
  t->params[1].i = stride;
  t->params[2].i = padding;
  return t;
}

Tensor* conv1d(TensorArena& a, Tensor* kernel, Tensor* x, int stride, int padding, Tensor* bias, bool gelu) {
  HARK_CHECK(kernel->ne[1] == x->ne[0] && kernel->ne[3] == 1,
             "conv1d: kernel " + kernel->describe() + " expects " + std::to_string(kernel->ne[1]) +
                 " input channels, input " + x->describe() + " has " + std::to_string(x->ne[0]));
  Tensor* cols = im2col(a, x, static_cast<int>(kernel->ne[0]), stride, padding);
  Tensor* k2 = reshape(a, kernel, {kernel->ne[0] * kernel->ne[1], kernel->ne[2]});
  HARK_CHECK(bias || !gelu, "conv1d: gelu comes with a bias");
  auto product = [&](Tensor* c) { return bias ? mul_mat_bias(a, k2, c, bias, gelu) : mul_mat(a, k2, c); };
  if (cols->ne[2] == 1) return product(cols);
  // A batch: all its columns as the rows of one product, so the kernel is read once for all of
  // them (a batched mul_mat would read it again for every item).
  const int64_t l_out = cols->ne[1], batch = cols->ne[2];
  Tensor* y = product(reshape(a, cols, {cols->ne[0], l_out * batch}));
  return reshape(a, y, {k2->ne[1], l_out, batch});
}

Tensor* flash_attn(TensorArena& a, Tensor* q, Tensor* k, Tensor* v, Tensor* mask, float scale, bool causal) {
  require_f32("flash_attn (q)", q);
  // q8_0 K/V: a quantized cross-attention cache (whole blocks per row: D % 32 == 0).
  for (Tensor* kv : {k, v})
    HARK_CHECK(kv->type == DType::F32 || kv->type == DType::F16 ||
                   (kv->type == DType::Q8_0 && kv->ne[0] % dtype_block_size(DType::Q8_0) == 0),
               "flash_attn: k/v must be f32, f16 or q8_0 (rows of whole 32-value blocks), got " + kv->describe());
  HARK_CHECK(k->ne[0] == q->ne[0] && v->ne[0] == q->ne[0] && k->ne[1] == v->ne[1] && k->ne[2] == v->ne[2] &&
                 k->ne[3] == q->ne[3] && v->ne[3] == q->ne[3] && k->ne[2] > 0 && q->ne[2] % k->ne[2] == 0,
             "flash_attn: shapes do not fit: q " + q->describe() + ", k " + k->describe() + ", v " + v->describe());
  HARK_CHECK(q->rows_contiguous() && k->rows_contiguous() && v->rows_contiguous(),
             "flash_attn: q/k/v rows must be contiguous");
  if (mask) {
    require_f32("flash_attn mask", mask);
    HARK_CHECK(mask->ne[0] == k->ne[1] && mask->ne[1] >= q->ne[1] && mask->ne[2] == 1 &&
                   (mask->ne[3] == 1 || mask->ne[3] == q->ne[3]),
               "flash_attn: mask " + mask->describe() + " must be [Nk=" + std::to_string(k->ne[1]) +
                   ", >=Nq=" + std::to_string(q->ne[1]) + ", 1, 1 or B=" + std::to_string(q->ne[3]) + "]");
  }
  Tensor* t = a.new_node(Op::FlashAttn, DType::F32, {q->ne[0], q->ne[2], q->ne[1], q->ne[3]}, {q, k, v, mask});
  t->params[0].f = scale;
  t->params[1].i = causal ? 1 : 0;
  return t;
}

}  // namespace hark::ops
