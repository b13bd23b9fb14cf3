#include "runtime/graph.h"

#include <algorithm>

#include "runtime/error.h"

namespace hark {

void Graph::clear() {
  nodes_.clear();
  leaves_.clear();
  outputs_.clear();
  visited_.clear();
}

void Graph::build(Tensor* out) {
  HARK_CHECK(out != nullptr, "Graph::build: the output tensor is null");
  visit(out);
  out->flags |= kFlagOutput;
  // Building the same output twice (or one already reached as a source) must not list it twice.
  if (std::find(outputs_.begin(), outputs_.end(), out) == outputs_.end()) outputs_.push_back(out);
}

void Graph::visit(Tensor* root) {
  // Iterative post-order walk: whisper graphs are deep enough (large-v3: ~32 layers x ~40 nodes)
  // that recursion depth is fine, but an explicit stack keeps pathological graphs safe too.
  auto seen = [this](const Tensor* t) { return visited_.contains(t); };
  auto mark = [this](const Tensor* t) { visited_.at(t); };
  if (seen(root)) return;
  std::vector<Frame>& stack = stack_;  // kept across calls: a step's graph allocates nothing
  stack.clear();
  stack.push_back({root, 0});
  mark(root);
  while (!stack.empty()) {
    Frame& f = stack.back();
    Tensor* t = f.t;
    bool pushed = false;
    while (f.next_src < kMaxSrc) {
      Tensor* s = t->src[f.next_src++];
      if (s && !seen(s)) {
        mark(s);
        stack.push_back({s, 0});
        pushed = true;
        break;
      }
    }
    if (pushed) continue;
    if (t->op == Op::None)
      leaves_.push_back(t);
    else
      nodes_.push_back(t);
    stack.pop_back();
  }
}

}  // namespace hark
