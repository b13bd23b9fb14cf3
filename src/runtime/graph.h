// Graph: the nodes needed to compute some output tensors, in an order where every node comes
// after its sources. Leaves (op None: weights, inputs) are listed apart from computed nodes.
// A graph only points at tensors; their TensorArena must outlive it.
#pragma once
#include <vector>

#include "runtime/pointer_map.h"
#include "runtime/tensor.h"

namespace hark {

class Graph {
 public:
  Graph() = default;
  // Adds `out` and everything it depends on (depth-first, sources first); marks it an output.
  void build(Tensor* out);
  void clear();

  const std::vector<Tensor*>& nodes() const { return nodes_; }    // computed + view nodes, in order
  const std::vector<Tensor*>& leaves() const { return leaves_; }  // op None
  const std::vector<Tensor*>& outputs() const { return outputs_; }
  size_t size() const { return nodes_.size(); }
  Tensor* node(size_t i) const { return nodes_[i]; }

  // Replaces the nodes list (the scheduler uses this to run one split).
  void set_nodes(std::vector<Tensor*>&& nodes) { nodes_ = std::move(nodes); }
  void set_nodes(const std::vector<Tensor*>& nodes) { nodes_ = nodes; }  // keeps this graph's capacity

 private:
  void visit(Tensor* t);
  std::vector<Tensor*> nodes_;
  std::vector<Tensor*> leaves_;
  std::vector<Tensor*> outputs_;
  PointerMap visited_;  // tensors reached so far (values unused)
  struct Frame {        // visit()'s walk: a tensor and its next source to look at
    Tensor* t;
    int next_src;
  };
  std::vector<Frame> stack_;
};

}  // namespace hark
