// STUB
#include "backend/cpu/cpu_ops.h"
#include "runtime/error.h"
namespace hark::cpu {
void op_flash_attn(const ComputeContext&, Tensor& node) { throw Error("not implemented: " + node.describe()); }
size_t flash_attn_work_size(const Tensor&, int) { return 0; }
}  // namespace hark::cpu
