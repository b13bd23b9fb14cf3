#include "backend/cpu/cpu_ops.h"

#include "backend/cpu/thread_pool.h"
#include "runtime/error.h"

namespace hark::cpu {

void ComputeContext::barrier() const {
  if (pool) pool->barrier();
}

size_t work_size(const Tensor& node, int nth) {
  switch (node.op) {
    case Op::MulMat: return mul_mat_work_size(node, nth);
    case Op::FlashAttn: return flash_attn_work_size(node, nth);
    default: return 0;
  }
}

bool supports(const Tensor& node) {
  auto is_f = [](const Tensor* t) { return t && (t->type == DType::F32 || t->type == DType::F16); };
  switch (node.op) {
    case Op::None:
    case Op::Reshape:
    case Op::View:
    case Op::Permute:
    case Op::Transpose: return true;
    case Op::Copy:
      return node.src[0]->type == node.type || (is_f(node.src[0]) && (is_f(&node) || dtype_quantized(node.type)));
    case Op::Cont: return !dtype_quantized(node.type) || node.src[0]->rows_contiguous();
    case Op::Add:
    case Op::Mul:
    case Op::Scale:
    case Op::Gelu:
    case Op::LayerNorm:
    case Op::SoftMax:
    case Op::Argmax:
    case Op::TopK:
    case Op::Im2Col:
    case Op::Concat:
    case Op::Unary:
    case Op::PadReflect: return true;
    case Op::GetRows: return node.src[0]->type != DType::I32;
    case Op::MulMat:
      return node.src[0]->type != DType::I32 && node.src[1]->type == DType::F32 &&
             (!node.src[2] || (node.src[2]->type == DType::F32 && node.src[2]->is_contiguous())) &&
             (!node.src[3] || (node.src[3]->type == DType::F32 && node.src[3]->nb[0] == sizeof(float)));
    case Op::FlashAttn: return true;
    case Op::Count: break;
  }
  return false;
}

void compute_node(const ComputeContext& ctx, Tensor& node) {
  switch (node.op) {
    case Op::None:
    case Op::Reshape:
    case Op::View:
    case Op::Permute:
    case Op::Transpose: return;
    case Op::Copy:
    case Op::Cont: return op_copy(ctx, node);
    case Op::GetRows: return op_get_rows(ctx, node);
    case Op::Concat: return op_concat(ctx, node);
    case Op::Im2Col: return op_im2col(ctx, node);
    case Op::Add:
    case Op::Mul: return op_add(ctx, node);
    case Op::Scale: return op_scale(ctx, node);
    case Op::Gelu: return op_gelu(ctx, node);
    case Op::LayerNorm: return op_layer_norm(ctx, node);
    case Op::SoftMax: return op_soft_max(ctx, node);
    case Op::Argmax: return op_argmax(ctx, node);
    case Op::TopK: return op_top_k(ctx, node);
    case Op::MulMat: return op_mul_mat(ctx, node);
    case Op::FlashAttn: return op_flash_attn(ctx, node);
    case Op::Unary: return op_unary(ctx, node);
    case Op::PadReflect: return op_pad_reflect(ctx, node);
    case Op::Count: break;
  }
  throw Error(std::string("cpu backend: unsupported op ") + op_name(node.op) + " for " + node.describe());
}

}  // namespace hark::cpu
