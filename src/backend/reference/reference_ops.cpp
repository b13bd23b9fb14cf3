// STUB
#include "backend/reference/reference_backend.h"
#include "runtime/error.h"
namespace hark::ref {
bool supports(const Tensor&) { return true; }
void compute_node(Tensor& node) { throw Error("not implemented: " + node.describe()); }
}  // namespace hark::ref
