// The reference ops: each one written straight from its definition in runtime/ops.h.
//
// Everything here is deliberately plain: elements are addressed through their byte strides one
// at a time (so any view works), sums are kept in double, quantized rows go through
// runtime/quant.h, and there is one thread. This is the oracle the optimised CPU backend (and any
// later backend) is tested against, so clarity wins over speed everywhere; the only concession is
// loading rows into double arrays once, so that attention and matrix products over Whisper-sized
// shapes finish in seconds rather than minutes.
#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>
#include <numeric>
#include <vector>

#include "backend/reference/reference_backend.h"
#include "runtime/error.h"
#include "runtime/quant.h"
#include "runtime/unaligned.h"

namespace hark::ref {

namespace {

using Index = std::array<int64_t, kMaxDims>;
constexpr double kNegInf = -std::numeric_limits<double>::infinity();

// ---- element access ----

// Byte address of element i of a plain-typed tensor (for quantized tensors: of block i[0]).
uint8_t* addr(const Tensor& t, const Index& i) {
  size_t off = 0;
  for (int d = 0; d < kMaxDims; ++d) off += static_cast<size_t>(i[d]) * t.nb[d];
  return static_cast<uint8_t*>(t.data) + off;
}

double get(const Tensor& t, const Index& i) {
  const uint8_t* p = addr(t, i);
  switch (t.type) {
    case DType::F32: {
      float v;
      std::memcpy(&v, p, sizeof v);
      return v;
    }
    case DType::F16: {
      f16_t v;
      std::memcpy(&v, p, sizeof v);
      return f16_to_f32(v);
    }
    case DType::I32: {
      int32_t v;
      std::memcpy(&v, p, sizeof v);
      return v;
    }
    default: break;
  }
  throw Error(std::string("reference: element access to a ") + dtype_name(t.type) + " tensor");
}

void set(Tensor& t, const Index& i, double v) {
  uint8_t* p = addr(t, i);
  switch (t.type) {
    case DType::F32: {
      const float f = static_cast<float>(v);
      std::memcpy(p, &f, sizeof f);
      return;
    }
    case DType::F16: {
      const f16_t h = f32_to_f16(static_cast<float>(v));
      std::memcpy(p, &h, sizeof h);
      return;
    }
    case DType::I32: {
      const int32_t n = static_cast<int32_t>(v);
      std::memcpy(p, &n, sizeof n);
      return;
    }
    default: break;
  }
  throw Error(std::string("reference: element write to a ") + dtype_name(t.type) + " tensor");
}

// Index of flat position f in a shape (dim 0 fastest): the order in which copy and reshape see
// elements.
Index unflatten(const std::array<int64_t, kMaxDims>& ne, int64_t f) {
  Index i{};
  for (int d = 0; d < kMaxDims; ++d) {
    i[d] = f % ne[d];
    f /= ne[d];
  }
  return i;
}

// Calls fn(index) for every element of shape ne, dim 0 fastest.
template <class F>
void for_each_index(const std::array<int64_t, kMaxDims>& ne, F&& fn) {
  for (int64_t i3 = 0; i3 < ne[3]; ++i3)
    for (int64_t i2 = 0; i2 < ne[2]; ++i2)
      for (int64_t i1 = 0; i1 < ne[1]; ++i1)
        for (int64_t i0 = 0; i0 < ne[0]; ++i0) fn(Index{i0, i1, i2, i3});
}

// Row (i1, i2, i3) of any type as doubles; quantized rows are dequantized block by block (a
// block is one nb[0] step).
std::vector<double> load_row(const Tensor& t, int64_t i1, int64_t i2, int64_t i3) {
  std::vector<double> out(static_cast<size_t>(t.ne[0]));
  if (dtype_quantized(t.type)) {
    float block[kQuantBlock];
    for (int64_t b = 0; b < t.ne[0] / kQuantBlock; ++b) {
      dequantize_row(t.type, addr(t, {b, i1, i2, i3}), block, kQuantBlock);
      for (int j = 0; j < kQuantBlock; ++j) out[static_cast<size_t>(b * kQuantBlock + j)] = block[j];
    }
    return out;
  }
  for (int64_t i0 = 0; i0 < t.ne[0]; ++i0) out[static_cast<size_t>(i0)] = get(t, {i0, i1, i2, i3});
  return out;
}

// ---- data movement ----

// Copy and Cont: element f of the source (flat order) goes to element f of the destination (the
// node, whose layout is dst's for Copy). Same-type copies move bytes, so quantized blocks pass
// through untouched; conversions to a quantized type quantize one destination row at a time.
void copy(Tensor& node) {
  const Tensor& src = *node.src[0];
  const int bs = dtype_block_size(node.type);
  if (src.type == node.type) {
    const size_t unit = dtype_block_bytes(node.type);
    std::array<int64_t, kMaxDims> sne = src.ne, dne = node.ne;
    sne[0] /= bs;  // count blocks, not values
    dne[0] /= bs;
    const int64_t n = sne[0] * sne[1] * sne[2] * sne[3];
    for (int64_t f = 0; f < n; ++f) std::memmove(addr(node, unflatten(dne, f)), addr(src, unflatten(sne, f)), unit);
    return;
  }
  if (dtype_quantized(node.type)) {
    const int64_t ncols = node.ne[0];
    std::vector<float> row(static_cast<size_t>(ncols));
    std::vector<uint8_t> packed(dtype_row_bytes(node.type, ncols));
    const size_t block_bytes = dtype_block_bytes(node.type);
    for (int64_t r = 0; r < node.nrows(); ++r) {
      for (int64_t j = 0; j < ncols; ++j)
        row[static_cast<size_t>(j)] = static_cast<float>(get(src, unflatten(src.ne, r * ncols + j)));
      quantize_row(node.type, row.data(), packed.data(), ncols);
      const Index di = unflatten(node.ne, r * ncols);
      for (int64_t b = 0; b < ncols / bs; ++b)
        std::memcpy(addr(node, {b, di[1], di[2], di[3]}), packed.data() + b * block_bytes, block_bytes);
    }
    return;
  }
  const int64_t n = node.nelements();
  for (int64_t f = 0; f < n; ++f) set(node, unflatten(node.ne, f), get(src, unflatten(src.ne, f)));
}

void get_rows(Tensor& node) {
  const Tensor& table = *node.src[0];
  const Tensor& ids = *node.src[1];
  for (int64_t n = 0; n < ids.ne[0]; ++n) {
    const auto id = static_cast<int64_t>(get(ids, {n, 0, 0, 0}));
    HARK_CHECK(id >= 0 && id < table.ne[1], "get_rows: id " + std::to_string(id) + " at position " + std::to_string(n) +
                                                " is outside table " + table.describe());
    const std::vector<double> row = load_row(table, id, 0, 0);
    for (int64_t d = 0; d < table.ne[0]; ++d) set(node, {d, n, 0, 0}, row[static_cast<size_t>(d)]);
  }
}

void concat(Tensor& node) {
  const Tensor& x = *node.src[0];
  const Tensor& y = *node.src[1];
  const int dim = node.params[0].i;
  const size_t elem = dtype_block_bytes(node.type);
  for_each_index(node.ne, [&](Index i) {
    uint8_t* out = addr(node, i);
    if (i[dim] < x.ne[dim]) {
      std::memcpy(out, addr(x, i), elem);
    } else {
      i[dim] -= x.ne[dim];
      std::memcpy(out, addr(y, i), elem);
    }
  });
}

// out[k + K*c, t] = x[c, t*stride + k - padding], zero where that falls outside x.
void im2col(Tensor& node) {
  const Tensor& x = *node.src[0];
  const int64_t K = node.params[0].i, stride = node.params[1].i, pad = node.params[2].i;
  const int64_t cin = x.ne[0], len = x.ne[1];
  for (int64_t b = 0; b < node.ne[2]; ++b)
    for (int64_t t = 0; t < node.ne[1]; ++t)
      for (int64_t c = 0; c < cin; ++c)
        for (int64_t k = 0; k < K; ++k) {
          const int64_t pos = t * stride + k - pad;
          const double v = pos >= 0 && pos < len ? get(x, {c, pos, b, 0}) : 0.0;
          set(node, {k + K * c, t, b, 0}, v);
        }
}

// ---- element-wise ----

void binary(Tensor& node, bool is_mul) {
  const Tensor& x = *node.src[0];
  const Tensor& y = *node.src[1];
  for_each_index(node.ne, [&](const Index& i) {
    const Index yi{i[0] % y.ne[0], i[1] % y.ne[1], i[2] % y.ne[2], i[3] % y.ne[3]};
    const double a = get(x, i), b = get(y, yi);
    set(node, i, is_mul ? a * b : a + b);
  });
}

void scale(Tensor& node) {
  const Tensor& x = *node.src[0];
  const double s = node.params[0].f, bias = node.params[1].f;
  for_each_index(node.ne, [&](const Index& i) { set(node, i, get(x, i) * s + bias); });
}

double gelu_value(double v) { return 0.5 * v * (1.0 + std::erf(v / std::sqrt(2.0))); }

void gelu(Tensor& node) {
  const Tensor& x = *node.src[0];
  for_each_index(node.ne, [&](const Index& i) { set(node, i, gelu_value(get(x, i))); });
}

double unary_value(UnaryOp fn, double v) {
  switch (fn) {
    case UnaryOp::Relu: return v > 0.0 ? v : 0.0;
    case UnaryOp::Sigmoid: return 1.0 / (1.0 + std::exp(-v));
    case UnaryOp::Tanh: return std::tanh(v);
    case UnaryOp::Sqrt: return std::sqrt(v);
    case UnaryOp::RoundF16: return f16_to_f32(f32_to_f16(static_cast<float>(v)));
    case UnaryOp::Count: break;
  }
  throw Error("reference: unknown unary function");
}

void unary(Tensor& node) {
  const Tensor& x = *node.src[0];
  const auto fn = static_cast<UnaryOp>(node.params[0].i);
  for_each_index(node.ne, [&](const Index& i) { set(node, i, unary_value(fn, get(x, i))); });
}

// out[j] = x[j - left], where positions before 0 mirror to -pos and positions past the end
// mirror back from the last element (the edge itself appears once).
void pad_reflect(Tensor& node) {
  const Tensor& x = *node.src[0];
  const int64_t left = node.params[0].i, len = x.ne[0];
  for_each_index(node.ne, [&](const Index& i) {
    int64_t pos = i[0] - left;
    if (pos < 0) pos = -pos;
    if (pos >= len) pos = 2 * (len - 1) - pos;
    set(node, i, get(x, {pos, i[1], i[2], i[3]}));
  });
}

// ---- rows ----

template <class F>
void for_each_row(const Tensor& t, F&& fn) {
  for (int64_t i3 = 0; i3 < t.ne[3]; ++i3)
    for (int64_t i2 = 0; i2 < t.ne[2]; ++i2)
      for (int64_t i1 = 0; i1 < t.ne[1]; ++i1) fn(i1, i2, i3);
}

void layer_norm(Tensor& node) {
  const Tensor& x = *node.src[0];
  const Tensor* w = node.src[1];
  const Tensor* b = node.src[2];
  const double eps = node.params[0].f;
  const int64_t n = x.ne[0];
  for_each_row(x, [&](int64_t i1, int64_t i2, int64_t i3) {
    const std::vector<double> v = load_row(x, i1, i2, i3);
    const double mean = std::accumulate(v.begin(), v.end(), 0.0) / static_cast<double>(n);
    double var = 0.0;
    for (double e : v) var += (e - mean) * (e - mean);
    var /= static_cast<double>(n);
    const double inv = 1.0 / std::sqrt(var + eps);
    for (int64_t j = 0; j < n; ++j) {
      double y = (v[static_cast<size_t>(j)] - mean) * inv;
      if (w) y *= get(*w, {j, 0, 0, 0});
      if (b) y += get(*b, {j, 0, 0, 0});
      set(node, {j, i1, i2, i3}, y);
    }
  });
}

// softmax of scores in place; -inf entries get probability 0, and a row that is all -inf becomes
// all zeros (nothing to attend to) rather than 0/0.
void softmax_in_place(std::vector<double>& s) {
  const double m = *std::max_element(s.begin(), s.end());
  if (m == kNegInf) {
    std::fill(s.begin(), s.end(), 0.0);
    return;
  }
  double sum = 0.0;
  for (double& e : s) {
    e = std::exp(e - m);
    sum += e;
  }
  for (double& e : s) e /= sum;
}

// Is key/column j hidden from query/row i under the causal rule with the KV-cache offset?
bool causal_masked(int64_t j, int64_t i, int64_t ncols, int64_t nrows) { return j > i + (ncols - nrows); }

void soft_max(Tensor& node) {
  const Tensor& x = *node.src[0];
  const Tensor* mask = node.src[1];
  const double scale = node.params[0].f;
  const bool causal = node.params[1].i != 0;
  const int64_t n = x.ne[0];
  for_each_row(x, [&](int64_t i1, int64_t i2, int64_t i3) {
    std::vector<double> s = load_row(x, i1, i2, i3);
    for (int64_t j = 0; j < n; ++j) {
      double& e = s[static_cast<size_t>(j)];
      e *= scale;
      if (mask) e += get(*mask, {j, i1, 0, 0});
      if (causal && causal_masked(j, i1, n, x.ne[1])) e = kNegInf;
    }
    softmax_in_place(s);
    for (int64_t j = 0; j < n; ++j) set(node, {j, i1, i2, i3}, s[static_cast<size_t>(j)]);
  });
}

// Indices of row values, best first: larger value first, lower index first among equals. NaN
// ranks last (as -inf), which also keeps the sort's ordering well defined.
std::vector<int64_t> ranked(std::vector<double> v) {
  for (double& e : v)
    if (std::isnan(e)) e = kNegInf;
  std::vector<int64_t> idx(v.size());
  std::iota(idx.begin(), idx.end(), 0);
  std::stable_sort(idx.begin(), idx.end(),
                   [&](int64_t a, int64_t b) { return v[static_cast<size_t>(a)] > v[static_cast<size_t>(b)]; });
  return idx;
}

void argmax(Tensor& node) {
  const Tensor& x = *node.src[0];
  for_each_row(x, [&](int64_t i1, int64_t i2, int64_t i3) {
    const std::vector<double> v = load_row(x, i1, i2, i3);
    int64_t best = 0;
    for (int64_t j = 1; j < x.ne[0]; ++j)
      if (v[static_cast<size_t>(j)] > v[static_cast<size_t>(best)]) best = j;
    set(node, unflatten(node.ne, i1 + x.ne[1] * (i2 + x.ne[2] * i3)), static_cast<double>(best));
  });
}

void top_k(Tensor& node) {
  const Tensor& x = *node.src[0];
  const int64_t k = node.params[0].i;
  for_each_row(x, [&](int64_t i1, int64_t i2, int64_t i3) {
    const std::vector<int64_t> idx = ranked(load_row(x, i1, i2, i3));
    for (int64_t j = 0; j < k; ++j) set(node, {j, i1, i2, i3}, static_cast<double>(idx[static_cast<size_t>(j)]));
  });
}

// ---- linear algebra ----

// out[n, m, i2, i3] = sum_k w[k, n, i2 / (b2 / B2), i3 / (b3 / B3)] * x[k, m, i2, i3]: each weight
// matrix serves a run of consecutive activation batches (as grouped-query attention shares a K/V
// head among consecutive query heads).
void mul_mat(Tensor& node) {
  const Tensor& w = *node.src[0];
  const Tensor& x = *node.src[1];
  const int64_t K = w.ne[0];
  const int64_t r2 = x.ne[2] / w.ne[2], r3 = x.ne[3] / w.ne[3];
  const Tensor* b = node.src[2];  // mul_mat_bias: the bias, then GELU, then the residual, on each output
  const bool gelu = b && node.params[0].i != 0;
  const Tensor* r = b ? node.src[3] : nullptr;
  for (int64_t i3 = 0; i3 < x.ne[3]; ++i3)
    for (int64_t i2 = 0; i2 < x.ne[2]; ++i2) {
      std::vector<std::vector<double>> xs;
      for (int64_t m = 0; m < x.ne[1]; ++m) xs.push_back(load_row(x, m, i2, i3));
      for (int64_t n = 0; n < w.ne[1]; ++n) {
        const std::vector<double> wr = load_row(w, n, i2 / r2, i3 / r3);
        const double bias = b ? load_f32(b->data, n) : 0.0;  // contiguous f32 (ops.cpp checks)
        for (int64_t m = 0; m < x.ne[1]; ++m) {
          double acc = 0.0;
          for (int64_t k = 0; k < K; ++k)
            acc += wr[static_cast<size_t>(k)] * xs[static_cast<size_t>(m)][static_cast<size_t>(k)];
          acc += bias;
          if (gelu) acc = gelu_value(acc);
          if (r) acc += get(*r, {n, m, i2, i3});
          set(node, {n, m, i2, i3}, acc);
        }
      }
    }
}

// Attention written the textbook way: the full row of scores, its softmax, then the weighted sum
// of values. Query head h reads K/V head h / (H / Hkv).
void flash_attn(Tensor& node) {
  const Tensor& q = *node.src[0];
  const Tensor& k = *node.src[1];
  const Tensor& v = *node.src[2];
  const Tensor* mask = node.src[3];
  const double scale = node.params[0].f;
  const bool causal = node.params[1].i != 0;
  const int64_t D = q.ne[0], nq = q.ne[1], H = q.ne[2], B = q.ne[3];
  const int64_t nk = k.ne[1], group = H / k.ne[2];
  for (int64_t b = 0; b < B; ++b)
    for (int64_t h = 0; h < H; ++h) {
      const int64_t hk = h / group;
      std::vector<std::vector<double>> ks, vs;
      for (int64_t j = 0; j < nk; ++j) {
        ks.push_back(load_row(k, j, hk, b));
        vs.push_back(load_row(v, j, hk, b));
      }
      for (int64_t i = 0; i < nq; ++i) {
        const std::vector<double> qr = load_row(q, i, h, b);
        std::vector<double> s(static_cast<size_t>(nk));
        for (int64_t j = 0; j < nk; ++j) {
          double dot = 0.0;
          for (int64_t d = 0; d < D; ++d)
            dot += qr[static_cast<size_t>(d)] * ks[static_cast<size_t>(j)][static_cast<size_t>(d)];
          double e = dot * scale;
          if (mask) {
            const double m = get(*mask, {j, i, 0, mask->ne[3] > 1 ? b : 0});
            e = m == kNegInf ? kNegInf : e + m;  // a hidden key's values never reach the sum
          }
          if (causal && causal_masked(j, i, nk, nq)) e = kNegInf;
          s[static_cast<size_t>(j)] = e;
        }
        softmax_in_place(s);
        for (int64_t d = 0; d < D; ++d) {
          double acc = 0.0;
          for (int64_t j = 0; j < nk; ++j) {
            const double p = s[static_cast<size_t>(j)];
            if (p != 0.0) acc += p * vs[static_cast<size_t>(j)][static_cast<size_t>(d)];
          }
          set(node, {d, h, i, b}, acc);
        }
      }
    }
}

bool is_float(const Tensor* t) { return t && (t->type == DType::F32 || t->type == DType::F16); }
bool is_f32(const Tensor* t) { return t && t->type == DType::F32; }

}  // namespace

bool supports(const Tensor& node) {
  const auto& s = node.src;
  switch (node.op) {
    case Op::None:
    case Op::Reshape:
    case Op::View:
    case Op::Permute:
    case Op::Transpose: return true;
    case Op::Copy: return s[0]->type == node.type || (is_float(s[0]) && node.type != DType::I32);
    case Op::Cont: return s[0]->type == node.type;
    case Op::Add:
    case Op::Mul: return is_f32(&node) && is_f32(s[0]) && is_f32(s[1]);
    case Op::Scale:
    case Op::Gelu:
    case Op::Im2Col:
    case Op::Unary:
    case Op::PadReflect: return is_f32(&node) && is_f32(s[0]);
    case Op::LayerNorm: return is_f32(&node) && is_f32(s[0]) && (!s[1] || is_f32(s[1])) && (!s[2] || is_f32(s[2]));
    case Op::SoftMax: return is_f32(&node) && is_f32(s[0]) && (!s[1] || is_f32(s[1]));
    case Op::Argmax:
    case Op::TopK: return node.type == DType::I32 && is_f32(s[0]);
    case Op::GetRows: return is_f32(&node) && s[0]->type != DType::I32 && s[1]->type == DType::I32;
    case Op::Concat: return s[0]->type == node.type && s[1]->type == node.type && !dtype_quantized(node.type);
    case Op::MulMat: return is_f32(&node) && s[0]->type != DType::I32 && is_f32(s[1]) && (!s[2] || is_f32(s[2]));
    case Op::FlashAttn:
      return is_f32(&node) && is_f32(s[0]) && (is_float(s[1]) || s[1]->type == DType::Q8_0) &&
             (is_float(s[2]) || s[2]->type == DType::Q8_0) && (!s[3] || is_f32(s[3]));
    case Op::Count: break;
  }
  return false;
}

void compute_node(Tensor& node) {
  switch (node.op) {
    case Op::None:
    case Op::Reshape:
    case Op::View:
    case Op::Permute:
    case Op::Transpose: return;
    case Op::Copy:
    case Op::Cont: return copy(node);
    case Op::GetRows: return get_rows(node);
    case Op::Concat: return concat(node);
    case Op::Im2Col: return im2col(node);
    case Op::Add: return binary(node, false);
    case Op::Mul: return binary(node, true);
    case Op::Scale: return scale(node);
    case Op::Gelu: return gelu(node);
    case Op::LayerNorm: return layer_norm(node);
    case Op::SoftMax: return soft_max(node);
    case Op::Argmax: return argmax(node);
    case Op::TopK: return top_k(node);
    case Op::MulMat: return mul_mat(node);
    case Op::FlashAttn: return flash_attn(node);
    case Op::Unary: return unary(node);
    case Op::PadReflect: return pad_reflect(node);
    case Op::Count: break;
  }
  throw Error(std::string("reference backend: unsupported op ") + op_name(node.op) + " for " + node.describe());
}

}  // namespace hark::ref
