// STUB
#include "backend/cpu/cpu_ops.h"
#include "runtime/error.h"
namespace hark::cpu {
void op_add(const ComputeContext&, Tensor& node) { throw Error("not implemented: " + node.describe()); }
void op_scale(const ComputeContext&, Tensor& node) { throw Error("not implemented: " + node.describe()); }
void op_gelu(const ComputeContext&, Tensor& node) { throw Error("not implemented: " + node.describe()); }
}  // namespace hark::cpu
