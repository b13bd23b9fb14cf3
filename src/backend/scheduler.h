// Scheduler: runs one graph over several backends.
//
// Each node is assigned a backend: the backend whose device owns the buffer of the node's weight
// source, else the backend of the previous node when it supports the op, else the first backend
// (in priority order) that supports it. Runs of nodes on the same backend form splits. When a
// node reads a tensor whose memory its backend cannot use, the scheduler makes a copy in the
// backend's own memory before the split runs. Each backend gets its own GraphAllocator for the
// nodes it runs, so compute memory is reserved once and reused.
//
// Design choices (details in scheduler.cpp):
//  - Views are never computed, so they do not start or end splits; backend_of(view) is the backend
//    whose memory holds the view's storage. A copy is always of a whole storage tensor; a node that
//    read a view of it reads the same view laid over the copy.
//  - Copies are made per split (a split reading the same foreign tensor as an earlier split copies
//    it again), so a copy lives only while its split runs and the allocators can reuse it.
//  - The user's graph is not rewritten for good: while planning and while a split runs, the
//    sources of the split's nodes point at the copies; they are restored right after, even when a
//    backend throws.
//  - A node with a view_src that it writes (Copy) runs on a backend that can use the destination's
//    memory; its destination is never replaced by a copy.
//  - One backend that supports every node and can use all the graph's memory gets the plan
//    without the per-node bookkeeping (one split, no copies), so planning a decoder step each
//    token costs about what the graph allocator alone costs.
#pragma once
#include <memory>
#include <vector>

#include "backend/backend.h"
#include "backend/device.h"
#include "backend/graph_allocator.h"

namespace hark {

class Scheduler {
 public:
  explicit Scheduler(std::vector<Backend*> backends);  // priority order, at least one
  ~Scheduler();
  Scheduler(const Scheduler&) = delete;
  Scheduler& operator=(const Scheduler&) = delete;

  void reserve(Graph& g);      // assigns, splits and sizes compute buffers for a worst-case graph
  void alloc_graph(Graph& g);  // assigns, splits and allocates memory for g
  // Runs g. Uses the plan of the last alloc_graph(g) when nothing has been computed since;
  // otherwise plans and allocates again (cheap when the buffers already fit), so a graph object
  // that was cleared and rebuilt never runs on a stale plan.
  ComputeStatus compute(Graph& g);

  // Installs cb on every backend: a split stops after the node where cb returns true, and
  // compute returns Aborted without running the remaining splits.
  void set_abort_callback(AbortCallback cb);

  // After alloc_graph. nullptr for tensors the plan does not place (e.g. a weight no device uses).
  Backend* backend_of(const Tensor* node) const;
  int n_splits() const;
  int n_copies() const;  // cross-backend input copies in the current plan
  int n_backends() const { return static_cast<int>(backends_.size()); }
  const GraphAllocator& allocator(int backend_index) const;

 private:
  struct Split;
  struct Impl;
  void plan(Graph& g);               // plan_single, else assign + build_splits
  bool plan_single(const Graph& g);  // the one-backend shortcut; false when it does not apply
  void assign(const Graph& g);
  void build_splits(const Graph& g);
  void apply_rewires(bool on);

  std::vector<Backend*> backends_;
  std::vector<std::unique_ptr<GraphAllocator>> allocators_;
  std::unique_ptr<Impl> impl_;
};

}  // namespace hark
