// STUB
#include "backend/compare.h"
#include "runtime/error.h"
namespace hark {
const NodeDiff& CompareResult::worst() const { throw Error("not implemented"); }
std::string CompareResult::report() const { return {}; }
CompareResult compare_backends(const Graph&, Backend&, Backend&) { throw Error("not implemented"); }
}  // namespace hark
