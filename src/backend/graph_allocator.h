// GraphAllocator: gives every tensor a graph computes a place in one compute buffer, reusing a
// tensor's bytes once its last reader has run.
//
// Planning walks the nodes in execution order with a free list of (offset, size) blocks: a node
// takes the best-fitting free block (or grows the end), and when a node runs, each source whose
// last consumer it was returns its block. Leaves without data (graph inputs) and nodes flagged
// kFlagOutput are allocated and never reused within the graph. Views never allocate: they point
// into their view_src. The peak end offset is the buffer size needed.
//
// `reserve(worst_case_graph)` sizes the buffer once; later `alloc` calls on graphs whose plan fits
// reuse it and allocate nothing (n_reallocs() stays put), which keeps decode steps allocation-free.
#pragma once
#include <functional>
#include <memory>

#include "runtime/graph.h"
#include "runtime/pointer_map.h"

namespace hark {

class Buffer;
class BufferType;

// Sets data/buffer of a view (or chain of views) from its storage tensor.
void init_view(Tensor& t);

class GraphAllocator {
 public:
  // Which tensors this allocator owns (the scheduler gives each backend its own); default: all.
  using Filter = std::function<bool(const Tensor&)>;

  explicit GraphAllocator(BufferType* type);
  ~GraphAllocator();

  // Plans g and makes the buffer at least as large as the plan needs. Allocates no tensor.
  void reserve(const Graph& g, const Filter& owns = {});
  // Plans g and assigns memory to every owned tensor that has none; grows the buffer if needed
  // (counted in n_reallocs). Views are initialised from their sources.
  void alloc(Graph& g, const Filter& owns = {});

  size_t peak_bytes() const { return last_peak_; }  // bytes the last planned graph needed
  size_t buffer_size() const;
  int n_reallocs() const { return n_reallocs_; }  // buffer (re)allocations after the first
  Buffer* buffer() const { return buffer_.get(); }

  // The plan of the last graph: offset of each allocated tensor (for tests and diagnostics).
  struct Placement {
    const Tensor* tensor;
    size_t offset;
    size_t size;
  };
  const std::vector<Placement>& placements() const { return placements_; }

  // A free range of the planned buffer (the planner's free list, kept here between plans).
  struct FreeBlock {
    size_t offset;
    size_t size;
  };

 private:
  size_t plan(const Graph& g, const Filter& owns);
  void ensure_buffer(size_t size);

  BufferType* type_;
  std::unique_ptr<Buffer> buffer_;
  std::vector<Placement> placements_;
  // plan()'s bookkeeping, kept so that planning a step's graph allocates nothing.
  struct Users {
    int32_t readers, views, placement;
  };
  PointerMap index_;  // tensor -> its entry in users_
  std::vector<Users> users_;
  std::vector<FreeBlock> free_blocks_;
  size_t last_peak_ = 0;
  int n_allocs_ = 0;
  int n_reallocs_ = 0;
};

}  // namespace hark
