// STUB
#include "backend/scheduler.h"
#include "runtime/error.h"
namespace hark {
struct Scheduler::Split {};
struct Scheduler::Impl {};
Scheduler::Scheduler(std::vector<Backend*> backends) : backends_(std::move(backends)) {}
Scheduler::~Scheduler() = default;
void Scheduler::reserve(Graph&) { throw Error("not implemented"); }
void Scheduler::alloc_graph(Graph&) { throw Error("not implemented"); }
ComputeStatus Scheduler::compute(Graph&) { throw Error("not implemented"); }
Backend* Scheduler::backend_of(const Tensor*) const { return nullptr; }
int Scheduler::n_copies() const { return 0; }
}  // namespace hark
