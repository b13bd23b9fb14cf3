// STUB
#include "backend/cpu/cpu_ops.h"
#include "runtime/error.h"
namespace hark::cpu {
void op_copy(const ComputeContext&, Tensor& node) { throw Error("not implemented: " + node.describe()); }
void op_get_rows(const ComputeContext&, Tensor& node) { throw Error("not implemented: " + node.describe()); }
void op_concat(const ComputeContext&, Tensor& node) { throw Error("not implemented: " + node.describe()); }
void op_im2col(const ComputeContext&, Tensor& node) { throw Error("not implemented: " + node.describe()); }
}  // namespace hark::cpu
