// Tensor: an n-dimensional (up to 4) array description: element type, shape, byte strides, and
// where its bytes live. A tensor is also a graph node: `op` and `src` say how it is computed.
//
// Conventions (those of the ggml file format, so model weights need no transposes):
//   ne[0] is the innermost (fastest-varying) dimension; nb[i] is the byte stride of dim i.
//   For quantized types nb[0] is the block size in bytes and ne[0] is a multiple of 32.
//   A view shares its bytes with `view_src` at `view_offset`; it never owns memory.
// Tensors are owned by a TensorArena (stable addresses); graphs and buffers only point at them.
#pragma once
#include <array>
#include <cstddef>
#include <cstdint>
#include <deque>
#include <ranges>
#include <string>

#include "runtime/dtype.h"

namespace hark {

class Buffer;

inline constexpr int kMaxDims = 4;
inline constexpr int kMaxSrc = 4;
inline constexpr int kMaxOpParams = 8;

enum class Op : int32_t {
  None,  // a leaf: weights or an input, data set from outside
  // views: no computation, bytes shared with view_src
  Reshape,
  View,
  Permute,
  Transpose,
  // computation
  Copy,        // src[0] converted/copied into src[1]'s layout (the result is a view of src[1])
  Cont,        // src[0] made contiguous (same type)
  Add,         // src[0] + src[1], src[1] broadcast over src[0]
  Mul,         // src[0] * src[1], broadcast as Add
  Scale,       // src[0] * params.f[0] + params.f[1]
  LayerNorm,   // (x - mean) / sqrt(var + eps) per row, then * src[1] + src[2] when given
  Gelu,        // x * Phi(x), erf form
  SoftMax,     // softmax(x * scale + mask) per row, optional causal mask
  Im2Col,      // conv1d input unfolded to [K*Cin, Lout] columns (conv1d = Im2Col + MulMat)
  GetRows,     // rows of src[0] picked by i32 ids in src[1], dequantized to f32
  Concat,      // src[0] ++ src[1] along params.i[0]
  MulMat,      // src[0] (any weight type, [K,N]) times src[1] (f32 [K,M]) -> f32 [N,M]; optional
               // src[2] f32 bias [N] added, then GELU when params[0], then src[3] (f32, the
               // result's shape) added: a residual (mul_mat_bias)
  FlashAttn,   // softmax(Q K^T * scale + mask) V in tiles, no full score matrix
  Argmax,      // per row index of the largest value -> i32 [rows]
  TopK,        // per row indices of the k largest values, largest first -> i32 [k, rows]
  Unary,       // an element-wise function picked by params.i[0] (UnaryOp: relu, sigmoid, tanh, ...)
  PadReflect,  // ne[0] extended by params.i[0] values in front and params.i[1] behind, mirrored
  Count
};
const char* op_name(Op op);

// The functions Op::Unary computes (params.i[0]).
// RoundF16: the nearest f16 value (as f32), for matching a computation that rounds activations
// to half precision before a product with f16 weights.
enum class UnaryOp : int32_t { Relu, Sigmoid, Tanh, Sqrt, RoundF16, Count };
const char* unary_op_name(UnaryOp u);
inline bool op_is_view(Op op) {
  return op == Op::Reshape || op == Op::View || op == Op::Permute || op == Op::Transpose;
}

// Flags describing a tensor's role; the allocator and scheduler read them.
enum TensorFlags : uint32_t {
  kFlagInput = 1u << 0,      // data set by the caller before compute (allocated, never reused early)
  kFlagOutput = 1u << 1,     // read by the caller after compute (never reused)
  kFlagWeight = 1u << 2,     // model parameter living in a weights buffer
  kFlagAllocated = 1u << 3,  // memory assigned by a GraphAllocator; the next alloc may move it
};

struct Tensor {
  DType type = DType::F32;
  std::array<int64_t, kMaxDims> ne{1, 1, 1, 1};
  std::array<size_t, kMaxDims> nb{0, 0, 0, 0};

  Op op = Op::None;
  union Param {
    int32_t i;
    float f;
  };
  std::array<Param, kMaxOpParams> params{};
  std::array<Tensor*, kMaxSrc> src{};

  Tensor* view_src = nullptr;  // for views: the tensor whose bytes this one reads
  size_t view_offset = 0;

  void* data = nullptr;      // set when memory is assigned (allocator, buffer, or view)
  Buffer* buffer = nullptr;  // the buffer holding the bytes, when known
  uint32_t flags = 0;
  std::string name;

  int64_t nelements() const { return ne[0] * ne[1] * ne[2] * ne[3]; }
  int64_t nrows() const { return ne[1] * ne[2] * ne[3]; }
  size_t row_bytes() const { return dtype_row_bytes(type, ne[0]); }
  // Bytes spanned from the first to one past the last element (honours strides).
  size_t nbytes() const;
  bool is_contiguous() const;
  // Rows are contiguous inside (nb[0] is the element/block size) even if rows are strided.
  bool rows_contiguous() const;
  bool same_shape(const Tensor& o) const { return ne == o.ne; }
  // The tensor that owns the bytes (follows view chains).
  const Tensor* storage() const { return view_src ? view_src->storage() : this; }
  Tensor* storage() { return view_src ? view_src->storage() : this; }
  std::string shape_str() const;  // "[384, 1500, 1, 1] f32"
  std::string describe() const;   // name, op and shape, for error messages
};

// Contiguous byte strides for a shape of the given type.
std::array<size_t, kMaxDims> contiguous_strides(DType type, const std::array<int64_t, kMaxDims>& ne);

// Owns tensors. Addresses stay valid for the arena's lifetime (deque never moves elements).
// One arena per model (weights) and one per graph build (activations) is the usual pattern;
// `reset` drops all tensors so a per-step graph can be rebuilt without allocating again.
class TensorArena {
 public:
  TensorArena() = default;
  TensorArena(const TensorArena&) = delete;
  TensorArena& operator=(const TensorArena&) = delete;

  Tensor* new_tensor(DType type, std::initializer_list<int64_t> ne, std::string name = {});
  Tensor* new_tensor(DType type, const std::array<int64_t, kMaxDims>& ne, std::string name = {});
  // A node of the graph: a fresh tensor with op and sources set (no data yet).
  Tensor* new_node(Op op, DType type, const std::array<int64_t, kMaxDims>& ne, std::initializer_list<Tensor*> src);
  size_t size() const { return used_; }
  // Drops every tensor. Their storage stays for the next graph: a decoder step builds ~500
  // tensors, and a deque that freed its blocks on clear() paid a malloc and a free every two.
  void reset() { used_ = 0; }
  auto tensors() {
    return std::ranges::subrange(tensors_.begin(), tensors_.begin() + static_cast<std::ptrdiff_t>(used_));
  }
  auto tensors() const {
    return std::ranges::subrange(tensors_.begin(), tensors_.begin() + static_cast<std::ptrdiff_t>(used_));
  }

 private:
  std::deque<Tensor> tensors_;  // [0, used_) are live; a deque never moves its elements
  size_t used_ = 0;
};

}  // namespace hark
