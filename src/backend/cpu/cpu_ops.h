// CPU op implementations. Each op function is called on every thread of the pool with the same
// node; it computes its share (thread ith of nth) and may call ctx.barrier() when it works in
// phases (mul_mat quantizes its activations once, then all threads take output rows).
#pragma once
#include <atomic>
#include <cstddef>

#include "runtime/tensor.h"
#include "simd/kernels.h"

namespace hark::cpu {

class ThreadPool;

struct ComputeContext {
  int ith = 0;
  int nth = 1;
  void* wdata = nullptr;  // scratch shared by all threads of this node, work_size() bytes
  size_t wsize = 0;
  const Kernels* k = nullptr;
  ThreadPool* pool = nullptr;
  // A counter every thread of this node shares, 0 when the node starts (nullptr: none; the
  // node is then split evenly). Only WorkClaims touches it.
  std::atomic<int64_t>* claim = nullptr;
  void barrier() const;
  // [begin, end) of n items for this thread, split evenly.
  void range(int64_t n, int64_t* begin, int64_t* end) const {
    const int64_t per = (n + nth - 1) / nth;
    *begin = per * ith < n ? per * ith : n;
    *end = *begin + per < n ? *begin + per : n;
  }
};

// Pieces of n items for the threads of a node, first come first served: each next() takes the
// next `chunk` items from the node's shared counter, so a thread that starts late or runs slow
// (woken late, preempted, a core shared with another job) ends up with fewer pieces instead of
// keeping the others waiting at the barrier after the node. Without a counter (ctx.claim null)
// next() gives this thread's even share once. Only for work whose results do not depend on which
// thread computes which item.
class WorkClaims {
 public:
  WorkClaims(const ComputeContext& ctx, int64_t n, int64_t chunk) : ctx_(ctx), n_(n), chunk_(chunk < 1 ? 1 : chunk) {}
  bool next(int64_t* begin, int64_t* end) {
    if (!ctx_.claim) {
      if (done_) return false;
      done_ = true;
      ctx_.range(n_, begin, end);
      return *begin < *end;
    }
    const int64_t b = ctx_.claim->fetch_add(chunk_, std::memory_order_relaxed);
    if (b >= n_) return false;
    *begin = b;
    *end = b + chunk_ < n_ ? b + chunk_ : n_;
    return true;
  }

 private:
  const ComputeContext& ctx_;
  const int64_t n_, chunk_;
  bool done_ = false;
};

// Scratch bytes a node needs with nth threads (0 for most ops).
size_t work_size(const Tensor& node, int nth);
// True when the CPU backend implements this node with these operand types.
bool supports(const Tensor& node);
// Computes the node (views and leaves are no-ops). Throws hark::Error for unsupported nodes.
void compute_node(const ComputeContext& ctx, Tensor& node);

// The op functions, grouped by file.
void op_mul_mat(const ComputeContext& ctx, Tensor& node);  // cpu_op_mul_mat.cpp
size_t mul_mat_work_size(const Tensor& node, int nth);
void op_copy(const ComputeContext& ctx, Tensor& node);  // cpu_op_data.cpp (Copy and Cont)
void op_get_rows(const ComputeContext& ctx, Tensor& node);
void op_concat(const ComputeContext& ctx, Tensor& node);
void op_im2col(const ComputeContext& ctx, Tensor& node);
void op_pad_reflect(const ComputeContext& ctx, Tensor& node);
void op_add(const ComputeContext& ctx, Tensor& node);  // cpu_op_elementwise.cpp (Add, Mul)
void op_scale(const ComputeContext& ctx, Tensor& node);
void op_gelu(const ComputeContext& ctx, Tensor& node);
void op_unary(const ComputeContext& ctx, Tensor& node);
void op_layer_norm(const ComputeContext& ctx, Tensor& node);  // cpu_op_rows.cpp
void op_soft_max(const ComputeContext& ctx, Tensor& node);
void op_argmax(const ComputeContext& ctx, Tensor& node);
void op_top_k(const ComputeContext& ctx, Tensor& node);
void op_flash_attn(const ComputeContext& ctx, Tensor& node);  // cpu_op_attention.cpp
size_t flash_attn_work_size(const Tensor& node, int nth);

}  // namespace hark::cpu
