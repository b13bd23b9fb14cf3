#include "backend/scheduler.h"

#include <unordered_map>

#include "backend/buffer.h"
#include "runtime/error.h"

namespace hark {

namespace {

bool is_weight(const Tensor& t) {
  return (t.flags & kFlagWeight) || (t.buffer && t.buffer->usage() == BufferUsage::Weights);
}

// Memory a GraphAllocator gives (and may move on the next plan), as opposed to memory the caller
// placed (weights, a KV cache, inputs set up by hand). Same test as the allocator's.
bool planned_memory(const Tensor& t) {
  return t.view_src == nullptr && (t.data == nullptr || (t.flags & kFlagAllocated));
}

}  // namespace

struct Scheduler::Split {
  int backend = 0;
  std::vector<Tensor*> nodes;  // graph order; views ride along (backends skip them)
  Graph graph;                 // `nodes`, in the form Backend::compute takes
  struct Copy {
    Tensor* from;  // a storage tensor in memory the split's device cannot use
    Tensor* to;    // its copy in the split's backend memory
  };
  std::vector<Copy> copies;
  // Copy tensors and views laid over them, in the order the allocators must see them: before the
  // split's first node, since the copies are made before the split runs.
  std::vector<Tensor*> prelude;
  struct Rewire {
    Tensor* node;
    int slot;
    Tensor* original;
    Tensor* replacement;
  };
  std::vector<Rewire> rewires;  // node->src[slot] reads `replacement` while the split runs
};

struct Scheduler::Impl {
  std::vector<Split> splits;
  std::unordered_map<const Tensor*, int> node_backend;  // computed nodes -> backend index
  // Storage tensors whose memory one of our allocators plans -> that allocator's index.
  std::unordered_map<const Tensor*, int> owner;
  TensorArena arena;                           // copy tensors and views over them; rebuilt by every plan
  Graph plan_graph;                            // the graph with the copies inserted: what the allocators plan
  std::vector<std::unique_ptr<Event>> events;  // one per backend: end of its latest split
  std::vector<char> ran;                       // backend has work recorded in its event
  const Graph* fresh = nullptr;                // allocated by alloc_graph and not computed since
  AbortCallback abort;
  // The plan is the one-backend shortcut (plan_single): one split of the whole graph, nothing
  // copied, every planned tensor the only allocator's; node_backend and owner are left empty.
  bool single = false;
};

namespace {

// Points the nodes' sources at the copies (on) or back at the originals (off).
template <class Rewires>
void rewire(const Rewires& rewires, bool on) {
  for (const auto& r : rewires) r.node->src[r.slot] = on ? r.replacement : r.original;
}

}  // namespace

Scheduler::Scheduler(std::vector<Backend*> backends) : backends_(std::move(backends)), impl_(std::make_unique<Impl>()) {
  HARK_CHECK(!backends_.empty(), "Scheduler needs at least one backend");
  for (size_t i = 0; i < backends_.size(); ++i) {
    HARK_CHECK(backends_[i] != nullptr, "Scheduler: backend " + std::to_string(i) + " is null");
    allocators_.push_back(std::make_unique<GraphAllocator>(backends_[i]->device().buffer_type()));
    impl_->events.push_back(backends_[i]->new_event());
  }
  impl_->ran.assign(backends_.size(), 0);
}

Scheduler::~Scheduler() = default;

int Scheduler::n_splits() const { return static_cast<int>(impl_->splits.size()); }

int Scheduler::n_copies() const {
  int n = 0;
  for (const Split& s : impl_->splits) n += static_cast<int>(s.copies.size());
  return n;
}

const GraphAllocator& Scheduler::allocator(int backend_index) const {
  HARK_CHECK(backend_index >= 0 && backend_index < n_backends(),
             "Scheduler::allocator: no backend " + std::to_string(backend_index));
  return *allocators_[backend_index];
}

void Scheduler::set_abort_callback(AbortCallback cb) {
  impl_->abort = cb;
  for (Backend* b : backends_) b->set_abort_callback(cb);
}

Backend* Scheduler::backend_of(const Tensor* t) const {
  if (!t) return nullptr;
  if (impl_->single) {
    // Every tensor the graph touches is usable by the one backend (plan_single checked).
    const Tensor* st = t->storage();
    if (planned_memory(*st) || !st->buffer || backends_[0]->device().supports_buffer_type(st->buffer->type()))
      return backends_[0];
    return nullptr;
  }
  if (auto it = impl_->node_backend.find(t); it != impl_->node_backend.end()) return backends_[it->second];
  // Views (and leaves): where the bytes live.
  const Tensor* st = t->storage();
  if (auto it = impl_->owner.find(st); it != impl_->owner.end()) return backends_[it->second];
  if (auto it = impl_->node_backend.find(st); it != impl_->node_backend.end()) return backends_[it->second];
  if (st->buffer)
    for (Backend* b : backends_)
      if (b->device().supports_buffer_type(st->buffer->type())) return b;
  return nullptr;
}

// ---- assignment -------------------------------------------------------------------------------

void Scheduler::assign(const Graph& g) {
  Impl& m = *impl_;
  m.node_backend.clear();
  m.owner.clear();
  const int nb = n_backends();
  auto supports = [&](int k, const Tensor& n) { return backends_[k]->device().supports_op(n); };
  // Can backend k's device use st's memory? Planned memory belongs to its owner's buffer type;
  // caller-placed memory to its buffer's type; bare host pointers suit host devices only.
  auto usable = [&](int k, const Tensor* st) {
    Device& dev = backends_[k]->device();
    if (planned_memory(*st)) {
      auto it = m.owner.find(st);
      return it == m.owner.end() || dev.supports_buffer_type(backends_[it->second]->device().buffer_type());
    }
    if (st->buffer) return dev.supports_buffer_type(st->buffer->type());
    return dev.buffer_type()->is_host();
  };
  auto names = [&] {
    std::string s;
    for (Backend* b : backends_) s += (s.empty() ? "" : ", ") + std::string(b->name());
    return s;
  };

  int prev = -1;
  for (Tensor* n : g.nodes()) {
    if (op_is_view(n->op)) continue;  // never computed: they follow their storage (backend_of)
    int b = -1;
    if (n->view_src) {
      // The node writes into its destination's bytes, so it must run where those bytes are
      // usable; a copy would receive the write and lose it.
      const Tensor* dst = n->view_src->storage();
      auto fits = [&](int k) { return supports(k, *n) && usable(k, dst); };
      if (prev >= 0 && fits(prev)) b = prev;
      for (int k = 0; k < nb && b < 0; ++k)
        if (fits(k)) b = k;
      HARK_CHECK(b >= 0, "no backend can compute " + n->describe() + " writing into " + dst->describe() +
                             " (a backend must support the op and the destination's memory; tried " + names() + ")");
    } else {
      // (a) next to its weights: moving activations is cheaper than moving weights.
      for (const Tensor* s : n->src) {
        if (!s || b >= 0) continue;
        const Tensor* st = s->storage();
        if (!is_weight(*st) || planned_memory(*st) || !st->buffer) continue;
        for (int k = 0; k < nb && b < 0; ++k)
          if (backends_[k]->device().supports_buffer_type(st->buffer->type()) && supports(k, *n)) b = k;
      }
      // (b) stay where the previous node ran, (c) else the first backend that can.
      if (b < 0 && prev >= 0 && supports(prev, *n)) b = prev;
      for (int k = 0; k < nb && b < 0; ++k)
        if (supports(k, *n)) b = k;
      HARK_CHECK(b >= 0, "no backend can compute node " + n->describe() + " (tried " + names() + ")");
    }
    m.node_backend[n] = b;
    prev = b;
    if (planned_memory(*n)) m.owner[n] = b;
    // Inputs the allocators place live with their first reader, so it reads them without a copy.
    for (const Tensor* s : n->src) {
      if (!s) continue;
      const Tensor* st = s->storage();
      if (planned_memory(*st) && !m.owner.count(st)) m.owner[st] = b;
    }
    if (n->view_src) {
      const Tensor* dst = n->view_src->storage();
      if (planned_memory(*dst) && !m.owner.count(dst)) m.owner[dst] = b;
    }
  }
  // Inputs nothing computes from (read by views only, or outputs themselves): first backend.
  for (const Tensor* leaf : g.leaves())
    if (planned_memory(*leaf) && !m.owner.count(leaf)) m.owner[leaf] = 0;
}

void Scheduler::build_splits(const Graph& g) {
  Impl& m = *impl_;
  m.splits.clear();
  m.arena.reset();

  std::vector<Tensor*> leading_views;  // views before the first computed node
  for (Tensor* n : g.nodes()) {
    if (op_is_view(n->op)) {
      (m.splits.empty() ? leading_views : m.splits.back().nodes).push_back(n);
      continue;
    }
    const int b = m.node_backend.at(n);
    if (m.splits.empty() || m.splits.back().backend != b) {
      m.splits.emplace_back();
      m.splits.back().backend = b;
      if (m.splits.size() == 1) m.splits.back().nodes = std::move(leading_views);
    }
    m.splits.back().nodes.push_back(n);
  }

  // Which storage a device can use, now that every storage tensor has an owner.
  auto usable = [&](int k, const Tensor* st) {
    Device& dev = backends_[k]->device();
    if (planned_memory(*st)) return dev.supports_buffer_type(backends_[m.owner.at(st)]->device().buffer_type());
    if (st->buffer) return dev.supports_buffer_type(st->buffer->type());
    return dev.buffer_type()->is_host();
  };

  for (Split& sp : m.splits) {
    Backend& be = *backends_[sp.backend];
    std::unordered_map<const Tensor*, Tensor*> copy_of;  // storage -> its copy for this split
    std::unordered_map<const Tensor*, Tensor*> view_of;  // a view read -> the same view over the copy
    for (Tensor* n : sp.nodes) {
      if (op_is_view(n->op)) continue;
      const Tensor* written = n->view_src ? n->view_src->storage() : nullptr;
      for (int i = 0; i < kMaxSrc; ++i) {
        Tensor* s = n->src[i];
        if (!s) continue;
        Tensor* st = s->storage();
        if (st == written || usable(sp.backend, st)) continue;
        HARK_CHECK(st->buffer || planned_memory(*st),
                   "backend " + std::string(be.name()) + " cannot read " + st->describe() + " (input of " +
                       n->describe() + "): its bytes are outside any buffer, so they cannot be copied");
        HARK_CHECK(st->is_contiguous(), "backend " + std::string(be.name()) + " needs a copy of " + st->describe() +
                                            " (input of " + n->describe() + "), which is not contiguous");
        Tensor*& c = copy_of[st];
        if (!c) {
          c = m.arena.new_tensor(st->type, st->ne, st->name + " (copy for " + be.name() + ")");
          c->nb = st->nb;
          // For the allocator a copy is a node that reads the original: the original stays alive
          // until the copy is made, the copy until its last reader in this split.
          c->op = Op::Cont;
          c->src[0] = st;
          m.owner[c] = sp.backend;
          sp.copies.push_back({st, c});
          sp.prelude.push_back(c);
        }
        Tensor* r = c;
        if (s != st) {
          Tensor*& v = view_of[s];
          if (!v) {
            v = m.arena.new_tensor(s->type, s->ne, s->name);
            v->nb = s->nb;
            v->op = s->op;
            v->params = s->params;
            v->view_src = c;
            v->view_offset = s->view_offset;
            v->src[0] = c;
            sp.prelude.push_back(v);
          }
          r = v;
        }
        sp.rewires.push_back({n, i, s, r});
      }
    }
    sp.graph.set_nodes(sp.nodes);
  }

  // The plan graph: g's leaves, and its nodes with each split's copies just before the split.
  std::vector<Tensor*> order;
  if (m.splits.empty()) {
    order = g.nodes();
  } else {
    order.reserve(g.nodes().size());
    for (const Split& sp : m.splits) {
      order.insert(order.end(), sp.prelude.begin(), sp.prelude.end());
      order.insert(order.end(), sp.nodes.begin(), sp.nodes.end());
    }
  }
  m.plan_graph = g;
  m.plan_graph.set_nodes(std::move(order));
}

// One backend that supports every node and can use every byte the graph reads or writes needs
// no assignment and no copies. Checked without the maps the general plan fills: a decoder step
// plans its graph every token, and that bookkeeping would be a visible share of a small step
// (see DESIGN.md). Anything else (an unsupported node, memory the device cannot use) takes the
// general path, which copies what it can and names what it cannot.
bool Scheduler::plan_single(const Graph& g) {
  if (backends_.size() != 1) return false;
  Device& dev = backends_[0]->device();
  BufferType* own = dev.buffer_type();
  auto usable = [&](const Tensor* st) {
    if (planned_memory(*st)) return true;  // our allocator places it
    if (st->buffer) return st->buffer->type() == own || dev.supports_buffer_type(st->buffer->type());
    return own->is_host();
  };
  for (const Tensor* n : g.nodes()) {
    if (op_is_view(n->op)) continue;
    if (!dev.supports_op(*n)) return false;
    for (const Tensor* s : n->src)
      if (s && !usable(s->storage())) return false;
    if (n->view_src && !usable(n->view_src->storage())) return false;
  }
  Impl& m = *impl_;
  m.node_backend.clear();
  m.owner.clear();
  m.arena.reset();
  m.plan_graph.clear();
  m.splits.resize(1);
  Split& sp = m.splits[0];
  sp.backend = 0;
  sp.nodes = g.nodes();
  sp.graph.set_nodes(g.nodes());
  sp.copies.clear();
  sp.prelude.clear();
  sp.rewires.clear();
  return true;
}

void Scheduler::plan(Graph& g) {
  impl_->fresh = nullptr;
  impl_->single = plan_single(g);
  if (impl_->single) return;
  assign(g);
  build_splits(g);
}

void Scheduler::apply_rewires(bool on) {
  for (const Split& sp : impl_->splits) rewire(sp.rewires, on);
}

// ---- memory -----------------------------------------------------------------------------------

namespace {

// Rewires for the lifetime of a scope, so an exception cannot leave the caller's graph pointing
// at the scheduler's copies.
template <class F>
void with_rewires(F&& apply, auto&& body) {
  apply(true);
  try {
    body();
  } catch (...) {
    apply(false);
    throw;
  }
  apply(false);
}

// The allocator filter of backend i: the tensors the plan gave it.
GraphAllocator::Filter owned_by(const std::unordered_map<const Tensor*, int>& owner, int i) {
  return [&owner, i](const Tensor& t) {
    auto it = owner.find(&t);
    return it != owner.end() && it->second == i;
  };
}

}  // namespace

void Scheduler::reserve(Graph& g) {
  plan(g);
  if (impl_->single) {
    allocators_[0]->reserve(g);
    return;
  }
  with_rewires([this](bool on) { apply_rewires(on); },
               [&] {
                 for (int i = 0; i < n_backends(); ++i)
                   allocators_[i]->reserve(impl_->plan_graph, owned_by(impl_->owner, i));
               });
}

void Scheduler::alloc_graph(Graph& g) {
  plan(g);
  if (impl_->single) {
    allocators_[0]->alloc(g);
  } else {
    with_rewires([this](bool on) { apply_rewires(on); },
                 [&] {
                   for (int i = 0; i < n_backends(); ++i)
                     allocators_[i]->alloc(impl_->plan_graph, owned_by(impl_->owner, i));
                 });
  }
  impl_->fresh = &g;
}

// ---- compute ----------------------------------------------------------------------------------

ComputeStatus Scheduler::compute(Graph& g) {
  Impl& m = *impl_;
  if (m.fresh != &g) alloc_graph(g);
  m.fresh = nullptr;
  std::fill(m.ran.begin(), m.ran.end(), 0);

  auto finish = [&] {
    for (size_t j = 0; j < backends_.size(); ++j)
      if (m.ran[j]) backends_[j]->synchronize();
  };
  for (Split& sp : m.splits) {
    if (m.abort && m.abort()) {
      finish();
      return ComputeStatus::Aborted;
    }
    Backend& be = *backends_[sp.backend];
    // Work of other backends must be done before this split reads it: the host waits when it is
    // about to copy those bytes itself, the backend's stream waits otherwise.
    // The copies' bytes may also be ones this backend's previous split still reads (the
    // allocator reuses memory across splits), so an asynchronous backend must be idle too.
    for (size_t j = 0; j < backends_.size(); ++j) {
      if (!m.ran[j]) continue;
      if (!sp.copies.empty()) m.events[j]->synchronize();
      if (static_cast<int>(j) != sp.backend) m.events[j]->wait(be);
    }
    for (const Split::Copy& c : sp.copies) copy_tensor_bytes(*c.from, *c.to);
    ComputeStatus st = ComputeStatus::Ok;
    // A graph that was planned and allocated has no input left to refuse: whatever fails while
    // it runs (a kernel's check, a backend's error) is hark's own failure.
    with_rewires([&sp](bool on) { rewire(sp.rewires, on); },
                 [&] { st = classified(ErrorCode::Internal, "", [&] { return be.compute(sp.graph); }); });
    m.events[sp.backend]->record(be);
    m.ran[sp.backend] = 1;
    if (st == ComputeStatus::Aborted) {
      finish();
      return ComputeStatus::Aborted;
    }
  }
  finish();
  return ComputeStatus::Ok;
}

}  // namespace hark
