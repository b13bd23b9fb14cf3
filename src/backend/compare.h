// compare_backends: computes a graph on two backends and reports, for every node, the largest
// absolute and relative difference between their results. Tests use it to hold the optimised CPU
// backend to the scalar reference backend op by op and layer by layer.
#pragma once
#include <string>
#include <vector>

#include "backend/backend.h"

namespace hark {

struct NodeDiff {
  const Tensor* node;     // node in the graph given to compare_backends
  double max_abs = 0.0;   // max |a - b|
  double max_rel = 0.0;   // max |a - b| / max(|b|, 1e-6) over elements where |b| > threshold
  double max_ref = 0.0;   // max |b| (scale of the values)
  bool exact_int = true;  // for i32 results: all equal
};

struct CompareResult {
  std::vector<NodeDiff> nodes;    // computed nodes, graph order (views skipped)
  const NodeDiff& worst() const;  // by max_abs / max(1, max_ref)
  std::string report() const;     // one line per node
};

// Leaves of g must hold data in host memory. The graph is copied onto each backend's memory, so
// g itself is left untouched.
CompareResult compare_backends(const Graph& g, Backend& a, Backend& b);

}  // namespace hark
