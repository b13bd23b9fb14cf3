#include "runtime/tensor.h"

#include <sstream>

#include "runtime/error.h"

namespace hark {

const char* op_name(Op op) {
  static const char* const kNames[] = {"none",     "reshape", "view",     "permute",    "transpose",  "copy",
                                       "cont",     "add",     "mul",      "scale",      "layer_norm", "gelu",
                                       "soft_max", "im2col",  "get_rows", "concat",     "mul_mat",    "flash_attn",
                                       "argmax",   "top_k",   "unary",    "pad_reflect"};
  static_assert(sizeof(kNames) / sizeof(kNames[0]) == static_cast<size_t>(Op::Count));
  const auto i = static_cast<size_t>(op);
  return i < static_cast<size_t>(Op::Count) ? kNames[i] : "?";
}

const char* unary_op_name(UnaryOp u) {
  static const char* const kNames[] = {"relu", "sigmoid", "tanh", "sqrt", "round_f16"};
  static_assert(sizeof(kNames) / sizeof(kNames[0]) == static_cast<size_t>(UnaryOp::Count));
  const auto i = static_cast<size_t>(u);
  return i < static_cast<size_t>(UnaryOp::Count) ? kNames[i] : "?";
}

std::array<size_t, kMaxDims> contiguous_strides(DType type, const std::array<int64_t, kMaxDims>& ne) {
  std::array<size_t, kMaxDims> nb{};
  nb[0] = dtype_block_bytes(type);
  nb[1] = dtype_row_bytes(type, ne[0]);
  for (int i = 2; i < kMaxDims; ++i) nb[i] = nb[i - 1] * static_cast<size_t>(ne[i - 1]);
  return nb;
}

size_t Tensor::nbytes() const {
  for (int i = 0; i < kMaxDims; ++i)
    if (ne[i] <= 0) return 0;
  size_t bytes = row_bytes();
  for (int i = 1; i < kMaxDims; ++i) bytes += static_cast<size_t>(ne[i] - 1) * nb[i];
  return bytes;
}

bool Tensor::rows_contiguous() const { return nb[0] == dtype_block_bytes(type); }

bool Tensor::is_contiguous() const {
  const auto want = contiguous_strides(type, ne);
  for (int i = 0; i < kMaxDims; ++i)
    if (ne[i] > 1 && nb[i] != want[i]) return false;
  return true;
}

std::string Tensor::shape_str() const {
  std::ostringstream s;
  s << '[' << ne[0] << ", " << ne[1] << ", " << ne[2] << ", " << ne[3] << "] " << dtype_name(type);
  return s.str();
}

std::string Tensor::describe() const {
  std::string s = name.empty() ? std::string("(unnamed)") : "'" + name + "'";
  s += " (";
  s += op_name(op);
  s += ' ';
  s += shape_str();
  s += ')';
  return s;
}

Tensor* TensorArena::new_tensor(DType type, std::initializer_list<int64_t> ne, std::string name) {
  HARK_CHECK(ne.size() >= 1 && ne.size() <= kMaxDims,
             "a tensor has 1 to 4 dimensions, got " + std::to_string(ne.size()));
  std::array<int64_t, kMaxDims> dims{1, 1, 1, 1};
  size_t i = 0;
  for (int64_t n : ne) dims[i++] = n;
  return new_tensor(type, dims, std::move(name));
}

Tensor* TensorArena::new_tensor(DType type, const std::array<int64_t, kMaxDims>& ne, std::string name) {
  for (int i = 0; i < kMaxDims; ++i)
    HARK_CHECK(ne[i] >= 0, "tensor '" + name + "' has a negative dimension " + std::to_string(ne[i]));
  HARK_CHECK(ne[0] % dtype_block_size(type) == 0, "tensor '" + name + "': " + std::to_string(ne[0]) +
                                                      " columns is not a multiple of the " + dtype_name(type) +
                                                      " block size " + std::to_string(dtype_block_size(type)));
  if (used_ == tensors_.size()) {
    tensors_.emplace_back();
  } else {
    tensors_[used_] = Tensor{};  // a tensor of an earlier graph: every field back to its default
  }
  Tensor& t = tensors_[used_++];
  t.type = type;
  t.ne = ne;
  t.nb = contiguous_strides(type, ne);
  t.name = std::move(name);
  return &t;
}

Tensor* TensorArena::new_node(Op op, DType type, const std::array<int64_t, kMaxDims>& ne,
                              std::initializer_list<Tensor*> src) {
  Tensor* t = new_tensor(type, ne);
  t->op = op;
  size_t i = 0;
  for (Tensor* s : src) t->src[i++] = s;
  return t;
}

}  // namespace hark
