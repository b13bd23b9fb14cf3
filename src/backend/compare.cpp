#include "backend/compare.h"

#include <cmath>
#include <cstdio>
#include <memory>
#include <unordered_map>
#include <vector>

#include "backend/buffer.h"
#include "backend/device.h"
#include "backend/graph_allocator.h"
#include "runtime/error.h"
#include "runtime/quant.h"

namespace hark {

namespace {

// A copy of a graph living on one backend: leaves copied into the backend's memory, every
// computed node kept alive (flagged output) so each can be read back after compute.
struct Clone {
  TensorArena arena;
  Graph graph;
  std::unordered_map<const Tensor*, Tensor*> map;  // original -> clone
  std::unique_ptr<Buffer> leaves;
  std::unique_ptr<GraphAllocator> alloc;
};

Tensor* clone_tensor(Clone& c, const Tensor* t) {
  auto it = c.map.find(t);
  if (it != c.map.end()) return it->second;
  Tensor* n = c.arena.new_tensor(t->type, t->ne, t->name);
  n->nb = t->nb;
  n->op = t->op;
  n->params = t->params;
  n->flags = t->flags & ~kFlagAllocated;
  n->view_offset = t->view_offset;
  c.map[t] = n;
  // sources and view sources are cloned after registering n (graphs are acyclic, so this ends)
  for (int i = 0; i < kMaxSrc; ++i)
    if (t->src[i]) n->src[i] = clone_tensor(c, t->src[i]);
  if (t->view_src) n->view_src = clone_tensor(c, t->view_src);
  return n;
}

std::unique_ptr<Clone> clone_onto(const Graph& g, Backend& backend) {
  auto c = std::make_unique<Clone>();
  for (const Tensor* out : g.outputs()) clone_tensor(*c, out);
  for (const Tensor* n : g.nodes()) clone_tensor(*c, n);

  BufferType* bt = backend.device().buffer_type();
  // leaves: one buffer, each placed at an aligned offset, bytes copied from the original
  size_t total = 0;
  const size_t align = bt->alignment();
  std::vector<std::pair<Tensor*, size_t>> placed;
  for (const Tensor* leaf : g.leaves()) {
    HARK_CHECK(leaf->data != nullptr, "compare_backends: leaf " + leaf->describe() + " has no data");
    HARK_CHECK(leaf->is_contiguous(), "compare_backends: leaf " + leaf->describe() + " is not contiguous");
    placed.emplace_back(c->map.at(leaf), total);
    total += (bt->alloc_size(*leaf) + align - 1) / align * align;
  }
  c->leaves = bt->alloc(total);
  c->leaves->set_usage(BufferUsage::Weights);
  for (auto& [t, off] : placed) {
    c->leaves->place(*t, off);
    t->flags &= ~kFlagInput;
  }
  for (const Tensor* leaf : g.leaves()) copy_tensor_bytes(*leaf, *c->map.at(leaf));

  for (const Tensor* n : g.nodes())
    if (!op_is_view(n->op)) c->map.at(n)->flags |= kFlagOutput;
  for (const Tensor* out : g.outputs()) c->graph.build(c->map.at(out));
  c->alloc = std::make_unique<GraphAllocator>(bt);
  c->alloc->alloc(c->graph);
  return c;
}

// A computed node's values as doubles (f32/f16/quantized converted; i32 as integers).
std::vector<double> read_values(const Tensor& t) {
  HARK_CHECK(t.rows_contiguous(), "compare_backends: cannot read " + t.describe());
  std::vector<uint8_t> row(t.row_bytes());
  std::vector<float> f(static_cast<size_t>(t.ne[0]));
  std::vector<double> out;
  out.reserve(static_cast<size_t>(t.nelements()));
  // Read row by row through the buffer so non-contiguous (view) results work too.
  const Tensor* s = t.storage();
  const size_t base = static_cast<size_t>(static_cast<const uint8_t*>(t.data) - static_cast<const uint8_t*>(s->data));
  for (int64_t i3 = 0; i3 < t.ne[3]; ++i3)
    for (int64_t i2 = 0; i2 < t.ne[2]; ++i2)
      for (int64_t i1 = 0; i1 < t.ne[1]; ++i1) {
        const size_t off = base + i1 * t.nb[1] + i2 * t.nb[2] + i3 * t.nb[3];
        tensor_get_range(*s, row.data(), off, row.size());
        if (t.type == DType::I32) {
          const auto* v = reinterpret_cast<const int32_t*>(row.data());
          for (int64_t i = 0; i < t.ne[0]; ++i) out.push_back(v[i]);
        } else {
          dequantize_row(t.type, row.data(), f.data(), t.ne[0]);
          for (float v : f) out.push_back(v);
        }
      }
  return out;
}

}  // namespace

const NodeDiff& CompareResult::worst() const {
  HARK_CHECK(!nodes.empty(), "compare_backends: the graph computed no nodes");
  const NodeDiff* w = &nodes.front();
  auto score = [](const NodeDiff& d) { return d.max_abs / std::max(1.0, d.max_ref); };
  for (const NodeDiff& d : nodes)
    if (score(d) > score(*w) || !d.exact_int) w = &d;
  return *w;
}

std::string CompareResult::report() const {
  std::string s;
  char line[256];
  for (const NodeDiff& d : nodes) {
    std::snprintf(line, sizeof(line), "%-12s %-28s max_abs %.3g max_rel %.3g |ref| %.3g%s\n", op_name(d.node->op),
                  d.node->name.c_str(), d.max_abs, d.max_rel, d.max_ref, d.exact_int ? "" : " INT MISMATCH");
    s += line;
  }
  return s;
}

CompareResult compare_backends(const Graph& g, Backend& a, Backend& b) {
  auto ca = clone_onto(g, a);
  auto cb = clone_onto(g, b);
  HARK_CHECK(a.compute(ca->graph) == ComputeStatus::Ok, std::string("compare_backends: ") + a.name() + " aborted");
  HARK_CHECK(b.compute(cb->graph) == ComputeStatus::Ok, std::string("compare_backends: ") + b.name() + " aborted");
  a.synchronize();
  b.synchronize();

  CompareResult r;
  for (const Tensor* n : g.nodes()) {
    if (op_is_view(n->op)) continue;
    NodeDiff d;
    d.node = n;
    const std::vector<double> va = read_values(*ca->map.at(n));
    const std::vector<double> vb = read_values(*cb->map.at(n));
    for (size_t i = 0; i < va.size(); ++i) {
      const double diff = std::fabs(va[i] - vb[i]);
      const double ref = std::fabs(vb[i]);
      if (n->type == DType::I32 && va[i] != vb[i]) d.exact_int = false;
      if (std::isnan(va[i]) != std::isnan(vb[i])) {
        d.max_abs = INFINITY;
        continue;
      }
      if (std::isnan(diff)) continue;  // both NaN: equal
      d.max_abs = std::max(d.max_abs, diff);
      d.max_ref = std::max(d.max_ref, ref);
      if (ref > 1e-6) d.max_rel = std::max(d.max_rel, diff / ref);
    }
    r.nodes.push_back(d);
  }
  return r;
}

}  // namespace hark
