// STUB
#include "backend/cpu/cpu_ops.h"
#include "runtime/error.h"
namespace hark::cpu {
void op_layer_norm(const ComputeContext&, Tensor& node) { throw Error("not implemented: " + node.describe()); }
void op_soft_max(const ComputeContext&, Tensor& node) { throw Error("not implemented: " + node.describe()); }
void op_argmax(const ComputeContext&, Tensor& node) { throw Error("not implemented: " + node.describe()); }
void op_top_k(const ComputeContext&, Tensor& node) { throw Error("not implemented: " + node.describe()); }
}  // namespace hark::cpu
