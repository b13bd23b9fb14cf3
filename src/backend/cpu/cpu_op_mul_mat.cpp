// STUB: to be replaced by the mul_mat implementation.
#include "backend/cpu/cpu_ops.h"
#include "runtime/error.h"
namespace hark::cpu {
void op_mul_mat(const ComputeContext&, Tensor& node) { throw Error("mul_mat not implemented: " + node.describe()); }
size_t mul_mat_work_size(const Tensor&, int) { return 0; }
}  // namespace hark::cpu
