// Scheduler: runs one graph over several backends.
//
// Each node is assigned a backend: the backend whose device owns the buffer of the node's weight
// source, else the backend of the previous node when it supports the op, else the first backend
// (in priority order) that supports it. Runs of nodes on the same backend form splits. When a
// node reads a tensor whose memory its backend cannot use, the scheduler makes a copy in the
// backend's own memory before the split runs. Each backend gets its own GraphAllocator for the
// nodes it runs, so compute memory is reserved once and reused.
#pragma once
#include <memory>
#include <vector>

#include "backend/backend.h"
#include "backend/device.h"
#include "runtime/graph_allocator.h"

namespace hark {

class Scheduler {
 public:
  explicit Scheduler(std::vector<Backend*> backends);  // priority order, at least one
  ~Scheduler();

  void reserve(Graph& g);    // assigns, splits and sizes compute buffers for a worst-case graph
  void alloc_graph(Graph& g);  // assigns, splits and allocates memory for g
  // Runs g (alloc_graph first if it was not called for this graph).
  ComputeStatus compute(Graph& g);

  Backend* backend_of(const Tensor* node) const;  // after alloc_graph
  int n_splits() const { return static_cast<int>(splits_.size()); }
  int n_copies() const;  // cross-backend input copies in the current plan
  const GraphAllocator& allocator(int backend_index) const { return *allocators_[backend_index]; }

 private:
  struct Split;
  void assign(const Graph& g);
  void build_splits(Graph& g);

  std::vector<Backend*> backends_;
  std::vector<std::unique_ptr<GraphAllocator>> allocators_;
  std::vector<Split> splits_;
  const Graph* planned_ = nullptr;
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace hark
