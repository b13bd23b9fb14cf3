#include "backend/graph_allocator.h"

#include <algorithm>

#include "backend/buffer.h"
#include "runtime/error.h"

namespace hark {

void init_view(Tensor& t) {
  if (!t.view_src) return;
  Tensor* s = t.storage();
  HARK_CHECK(s->data != nullptr, "view " + t.describe() + " of " + s->describe() + " that has no memory");
  t.data = static_cast<uint8_t*>(s->data) + t.view_offset;
  t.buffer = s->buffer;
}

namespace {

// Free-list planner over a virtual address range [0, peak).
class Planner {
 public:
  // free_list: the caller's storage for the free blocks, kept across plans (emptied here).
  Planner(size_t alignment, std::vector<GraphAllocator::FreeBlock>& free_list) : align_(alignment), free_(free_list) {
    free_.clear();
  }

  size_t take(size_t size) {
    size = round_up(size);
    // best fit among free blocks
    size_t best = free_.size();
    for (size_t i = 0; i < free_.size(); ++i) {
      if (free_[i].size >= size && (best == free_.size() || free_[i].size < free_[best].size)) best = i;
    }
    if (best != free_.size()) {
      const size_t off = free_[best].offset;
      free_[best].offset += size;
      free_[best].size -= size;
      if (free_[best].size == 0) free_.erase(free_.begin() + static_cast<long>(best));
      return off;
    }
    // a free block at the very end can be extended instead of leaving it as a hole
    if (!free_.empty() && free_.back().offset + free_.back().size == end_) {
      const size_t off = free_.back().offset;
      end_ = off + size;
      free_.pop_back();
      peak_ = std::max(peak_, end_);
      return off;
    }
    const size_t off = end_;
    end_ += size;
    peak_ = std::max(peak_, end_);
    return off;
  }

  void give_back(size_t offset, size_t size) {
    size = round_up(size);
    auto it =
        std::lower_bound(free_.begin(), free_.end(), offset, [](const Block& b, size_t off) { return b.offset < off; });
    it = free_.insert(it, Block{offset, size});
    // merge with the next and previous neighbours
    if (it + 1 != free_.end() && it->offset + it->size == (it + 1)->offset) {
      it->size += (it + 1)->size;
      free_.erase(it + 1);
    }
    if (it != free_.begin() && (it - 1)->offset + (it - 1)->size == it->offset) {
      (it - 1)->size += it->size;
      free_.erase(it);
    }
  }

  size_t peak() const { return peak_; }

 private:
  using Block = GraphAllocator::FreeBlock;
  size_t round_up(size_t n) const { return (std::max<size_t>(n, 1) + align_ - 1) / align_ * align_; }

  size_t align_;
  std::vector<Block>& free_;  // sorted by offset, never adjacent
  size_t end_ = 0;
  size_t peak_ = 0;
};

}  // namespace

GraphAllocator::GraphAllocator(BufferType* type) : type_(type) {
  HARK_CHECK(type_ != nullptr, "GraphAllocator needs a buffer type");
}

GraphAllocator::~GraphAllocator() = default;

size_t GraphAllocator::buffer_size() const { return buffer_ ? buffer_->size() : 0; }

size_t GraphAllocator::plan(const Graph& g, const Filter& owns) {
  placements_.clear();
  auto needs_memory = [&](const Tensor* t) {
    return t->view_src == nullptr && (t->data == nullptr || (t->flags & kFlagAllocated)) && (!owns || owns(*t));
  };

  // Per tensor the graph touches: how many nodes read it, how many views keep its bytes alive,
  // and its placement while it holds memory (kNone before and after).
  constexpr int32_t kNone = -1;
  index_.clear();
  users_.clear();
  auto user = [&](const Tensor* t) -> Users& {
    int32_t& i = index_.at(t, -1);
    if (i < 0) {
      i = static_cast<int32_t>(users_.size());
      users_.push_back({0, 0, kNone});
    }
    return users_[static_cast<size_t>(i)];
  };
  for (const Tensor* n : g.nodes()) {
    for (const Tensor* s : n->src)
      if (s) ++user(s).readers;
    if (n->view_src) ++user(n->view_src).views;
  }

  Planner planner(type_->alignment(), free_blocks_);
  auto allocate = [&](const Tensor* t) {
    const size_t size = type_->alloc_size(*t);
    user(t).placement = static_cast<int32_t>(placements_.size());
    placements_.push_back({t, planner.take(size), size});
  };
  // Frees t's bytes once nothing reads it or views it; a view's release counts against its source.
  // An output or input view keeps its source alive too: the caller reads (or wrote) those bytes.
  auto release = [&](const Tensor* t, auto&& self) -> void {
    Users& u = user(t);
    if (u.readers != 0 || u.views != 0) return;
    if (t->flags & (kFlagOutput | kFlagInput)) return;
    if (t->view_src) {
      const Tensor* s = t->view_src;
      if (--user(s).views == 0) self(s, self);
      return;
    }
    if (u.placement == kNone || t->op == Op::None) return;  // not ours, or a leaf (kept to the end)
    const Placement& p = placements_[static_cast<size_t>(u.placement)];
    planner.give_back(p.offset, p.size);
    u.placement = kNone;
  };

  // Inputs first: the caller writes them before compute, so they live for the whole graph.
  for (const Tensor* leaf : g.leaves())
    if (needs_memory(leaf)) allocate(leaf);

  for (const Tensor* n : g.nodes()) {
    if (needs_memory(n)) allocate(n);
    for (const Tensor* s : n->src) {
      if (!s) continue;
      --user(s).readers;
      release(s, release);
    }
    // a node nobody reads (not an output) can go right away
    release(n, release);
  }
  return planner.peak();
}

void GraphAllocator::ensure_buffer(size_t size) {
  if (buffer_ && buffer_->size() >= size) return;
  if (buffer_) ++n_reallocs_;
  buffer_.reset();  // release before allocating: peak memory is one buffer, not two
  buffer_ = type_->alloc(size);
  buffer_->set_usage(BufferUsage::Compute);
  ++n_allocs_;
}

void GraphAllocator::reserve(const Graph& g, const Filter& owns) {
  last_peak_ = plan(g, owns);
  ensure_buffer(last_peak_);
}

void GraphAllocator::alloc(Graph& g, const Filter& owns) {
  last_peak_ = plan(g, owns);
  ensure_buffer(last_peak_);
  for (const Placement& p : placements_) {
    Tensor* t = const_cast<Tensor*>(p.tensor);
    buffer_->place(*t, p.offset);
    t->flags |= kFlagAllocated;
  }
  // Views of tensors another allocator places (the scheduler gives each backend its own) are left
  // to that allocator: their storage may not have its memory yet, or still hold last plan's.
  for (Tensor* n : g.nodes()) {
    if (!n->view_src) continue;
    const Tensor* s = n->storage();
    const bool elsewhere = owns && !owns(*s) && (s->data == nullptr || (s->flags & kFlagAllocated));
    if (!elsewhere) init_view(*n);
  }
}

}  // namespace hark
