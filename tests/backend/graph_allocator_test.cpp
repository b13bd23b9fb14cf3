#include "backend/graph_allocator.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <climits>
#include <cmath>
#include <memory>
#include <random>
#include <unordered_map>
#include <vector>

#include "backend/buffer.h"
#include "backend/device_registry.h"
#include "runtime/error.h"
#include "runtime/ops.h"
#include "runtime/tiny_transformer.h"

namespace hark {
namespace {

// ---- a small transformer: 4 layers of attention + MLP, weights in a weights buffer ----

using namespace tiny_transformer;

struct Model {
  TensorArena arena;
  std::vector<Layer> layers;
  std::unique_ptr<Buffer> weights;

  explicit Model(BufferType* bt, uint32_t seed = 1) {
    auto w = [&](std::initializer_list<int64_t> ne, const char* name) {
      Tensor* t = arena.new_tensor(DType::F32, ne, name);
      t->flags |= kFlagWeight;
      return t;
    };
    for (int l = 0; l < kLayers; ++l) layers.push_back(make_layer(w));
    size_t total = 0;
    for (const Tensor& t : arena.tensors()) total += (t.nbytes() + 63) / 64 * 64;
    weights = bt->alloc(total);
    weights->set_usage(BufferUsage::Weights);
    std::mt19937 rng(seed);
    std::normal_distribution<float> dist(0.0f, 0.15f);
    size_t off = 0;
    for (Tensor& t : arena.tensors()) {
      weights->place(t, off);
      off += (t.nbytes() + 63) / 64 * 64;
      std::vector<float> v(static_cast<size_t>(t.nelements()));
      const bool norm_w = t.name == "ln1_w" || t.name == "ln2_w";
      for (float& x : v) x = norm_w ? 1.0f + dist(rng) : dist(rng);
      tensor_set(t, v.data(), v.size() * sizeof(float));
    }
  }
};

Built build_transformer(TensorArena& a, const Model& m, int64_t T) { return build_layers(a, m.layers, T); }

// ---- checking a plan ----

struct Interval {
  long first, last;  // node positions; -1 / LONG_MAX for whole-graph tensors
};

// When each placed tensor is alive, computed from the graph alone: from the node that makes it to
// the last node that reads it or a view of it. Leaves, inputs and outputs live throughout.
std::unordered_map<const Tensor*, Interval> liveness(const Graph& g) {
  std::unordered_map<const Tensor*, Interval> life;
  for (const Tensor* l : g.leaves()) life[l] = {-1, LONG_MAX};
  for (size_t i = 0; i < g.size(); ++i) {
    const Tensor* n = g.node(i);
    const long pos = static_cast<long>(i);
    if (!n->view_src) life[n] = {pos, pos};
    auto touch = [&](const Tensor* t) {
      auto it = life.find(t->storage());
      if (it != life.end()) it->second.last = std::max(it->second.last, pos);
    };
    for (const Tensor* s : n->src)
      if (s) touch(s);
    if (n->view_src) touch(n);
  }
  for (const Tensor* n : g.nodes())
    if (n->flags & (kFlagOutput | kFlagInput)) life[n->storage()].last = LONG_MAX;
  return life;
}

bool overlap(size_t a0, size_t a1, size_t b0, size_t b1) { return a0 < b1 && b0 < a1; }

// No two tensors alive at the same time share a byte of the plan.
void expect_no_live_overlap(const Graph& g, const GraphAllocator& alloc) {
  const auto life = liveness(g);
  const auto& p = alloc.placements();
  for (size_t i = 0; i < p.size(); ++i) {
    ASSERT_TRUE(life.count(p[i].tensor)) << p[i].tensor->describe() << " is placed but not in the graph";
    EXPECT_LE(p[i].offset + p[i].size, alloc.peak_bytes());
    for (size_t j = i + 1; j < p.size(); ++j) {
      const Interval a = life.at(p[i].tensor), b = life.at(p[j].tensor);
      const bool alive_together = a.first <= b.last && b.first <= a.last;
      if (alive_together && overlap(p[i].offset, p[i].offset + p[i].size, p[j].offset, p[j].offset + p[j].size))
        ADD_FAILURE() << p[i].tensor->describe() << " [" << p[i].offset << ", +" << p[i].size << ") and "
                      << p[j].tensor->describe() << " [" << p[j].offset << ", +" << p[j].size
                      << ") overlap while both are alive";
    }
  }
}

class GraphAllocatorTest : public testing::Test {
 protected:
  HostBufferType host_{"test-host"};
  Model model_{&host_};
};

TEST_F(GraphAllocatorTest, TransformerPlanReusesMemoryWithoutLiveOverlap) {
  TensorArena a;
  const Built b = build_transformer(a, model_, 16);
  Graph g;
  g.build(b.output);
  GraphAllocator alloc(&host_);
  alloc.alloc(g);

  size_t activations = 0;
  int computed = 0;
  for (const Tensor* n : g.nodes())
    if (!n->view_src) {
      activations += n->nbytes();
      ++computed;
    }
  // every computed node and the input are placed; weights (already in a buffer) are not
  EXPECT_EQ(alloc.placements().size(), static_cast<size_t>(computed) + 1);
  for (const auto& p : alloc.placements()) EXPECT_FALSE(p.tensor->flags & kFlagWeight) << p.tensor->describe();
  EXPECT_LT(alloc.peak_bytes(), activations / 2) << "the plan should reuse memory";
  EXPECT_GE(alloc.buffer_size(), alloc.peak_bytes());
  expect_no_live_overlap(g, alloc);

  // Placed tensors point into the compute buffer at their planned offset.
  auto* base = static_cast<uint8_t*>(alloc.buffer()->base());
  for (const auto& p : alloc.placements()) {
    EXPECT_EQ(p.tensor->data, base + p.offset) << p.tensor->describe();
    EXPECT_EQ(p.tensor->buffer, alloc.buffer());
    EXPECT_TRUE(p.tensor->flags & kFlagAllocated);
  }
}

TEST_F(GraphAllocatorTest, ViewsPointIntoTheirSource) {
  TensorArena a;
  const Built b = build_transformer(a, model_, 16);
  Graph g;
  g.build(b.output);
  GraphAllocator alloc(&host_);
  alloc.alloc(g);
  int views = 0;
  for (const Tensor* n : g.nodes()) {
    if (!n->view_src) continue;
    ++views;
    const Tensor* s = n->storage();
    ASSERT_NE(s->data, nullptr);
    EXPECT_EQ(n->data, static_cast<const uint8_t*>(s->data) + n->view_offset) << n->describe();
    EXPECT_EQ(n->buffer, s->buffer) << n->describe();
    EXPECT_LE(n->view_offset + n->nbytes(), s->nbytes()) << n->describe();
  }
  EXPECT_GT(views, 10);
}

// Once an input or output has its bytes, nothing placed later shares them (an output may take
// bytes that died before it was made).
TEST_F(GraphAllocatorTest, InputsAndOutputsAreNeverReused) {
  TensorArena a;
  const Built b = build_transformer(a, model_, 16);
  // an intermediate output as well: the caller reads it after compute
  Tensor* mid = nullptr;
  Graph probe;
  probe.build(b.output);
  for (Tensor* n : probe.nodes())
    if (n->op == Op::Gelu && !mid) mid = n;
  ASSERT_NE(mid, nullptr);

  Graph g;
  g.build(mid);
  g.build(b.output);
  GraphAllocator alloc(&host_);
  alloc.alloc(g);
  std::unordered_map<const Tensor*, long> birth;
  for (const Tensor* l : g.leaves()) birth[l] = -1;
  for (size_t i = 0; i < g.size(); ++i) birth[g.node(i)] = static_cast<long>(i);
  const auto& p = alloc.placements();
  int later = 0;
  for (const Tensor* kept : {b.input, mid, b.output}) {
    auto it = std::find_if(p.begin(), p.end(), [&](const auto& q) { return q.tensor == kept; });
    ASSERT_NE(it, p.end()) << kept->describe() << " was not placed";
    for (const auto& q : p) {
      if (q.tensor == kept || birth.at(q.tensor) < birth.at(kept)) continue;
      ++later;
      EXPECT_FALSE(overlap(it->offset, it->offset + it->size, q.offset, q.offset + q.size))
          << kept->describe() << " shares bytes with " << q.tensor->describe() << ", placed after it";
    }
  }
  EXPECT_GT(later, 100);
  expect_no_live_overlap(g, alloc);
}

TEST_F(GraphAllocatorTest, OutputViewKeepsItsSourceAlive) {
  TensorArena a;
  Tensor* x = a.new_tensor(DType::F32, {64}, "x");
  x->flags |= kFlagInput;
  Tensor* y = ops::gelu(a, x);
  Tensor* yv = ops::reshape(a, y, {8, 8});  // the caller reads y through this view
  Tensor* z = ops::scale(a, ops::gelu(a, ops::scale(a, x, 2.0f)), 3.0f);
  Graph g;
  g.build(yv);
  g.build(z);
  GraphAllocator alloc(&host_);
  alloc.alloc(g);
  const auto& p = alloc.placements();
  auto it = std::find_if(p.begin(), p.end(), [&](const auto& q) { return q.tensor == y; });
  ASSERT_NE(it, p.end());
  ASSERT_EQ(p.size(), 5u);
  for (const auto& q : p) {
    if (q.tensor == y || q.tensor == x) continue;  // the only ones placed before y
    EXPECT_FALSE(overlap(it->offset, it->offset + it->size, q.offset, q.offset + q.size))
        << q.tensor->describe() << " reuses the bytes of an output view's source";
  }
}

TEST_F(GraphAllocatorTest, ReserveThenSmallerOrSameGraphDoesNotReallocate) {
  TensorArena big_arena, small_arena, bigger_arena;
  Graph big, small, bigger;
  big.build(build_transformer(big_arena, model_, 32).output);
  small.build(build_transformer(small_arena, model_, 8).output);
  bigger.build(build_transformer(bigger_arena, model_, 64).output);

  GraphAllocator alloc(&host_);
  alloc.reserve(big);
  const size_t reserved = alloc.buffer_size();
  EXPECT_GE(reserved, alloc.peak_bytes());
  EXPECT_EQ(alloc.n_reallocs(), 0);
  // reserve places nothing
  for (const Tensor* n : big.nodes()) EXPECT_EQ(n->data, nullptr) << n->describe();

  alloc.alloc(small);
  EXPECT_EQ(alloc.n_reallocs(), 0);
  EXPECT_LT(alloc.peak_bytes(), reserved);
  expect_no_live_overlap(small, alloc);
  alloc.alloc(small);
  EXPECT_EQ(alloc.n_reallocs(), 0);
  alloc.alloc(big);
  EXPECT_EQ(alloc.n_reallocs(), 0);
  EXPECT_EQ(alloc.buffer_size(), reserved);
  expect_no_live_overlap(big, alloc);

  alloc.alloc(bigger);
  EXPECT_EQ(alloc.n_reallocs(), 1);
  EXPECT_GT(alloc.buffer_size(), reserved);
  expect_no_live_overlap(bigger, alloc);
  // the bigger graph is placed in the new buffer
  for (const auto& p : alloc.placements()) EXPECT_EQ(p.tensor->buffer, alloc.buffer());
}

TEST_F(GraphAllocatorTest, FilterLimitsWhatIsPlaced) {
  TensorArena a;
  const Built b = build_transformer(a, model_, 8);
  Graph g;
  g.build(b.output);
  GraphAllocator alloc(&host_);
  auto owns = [](const Tensor& t) { return t.op == Op::MulMat; };
  alloc.alloc(g, owns);
  ASSERT_FALSE(alloc.placements().empty());
  for (const auto& p : alloc.placements()) EXPECT_EQ(p.tensor->op, Op::MulMat);
  for (const Tensor* n : g.nodes()) {
    if (n->op == Op::MulMat) {
      EXPECT_NE(n->data, nullptr) << n->describe();
    } else if (!n->view_src) {
      EXPECT_EQ(n->data, nullptr) << n->describe();
    }
  }
  expect_no_live_overlap(g, alloc);
}

TEST_F(GraphAllocatorTest, ViewOfUnplacedSourceIsAnError) {
  TensorArena a;
  Tensor* x = a.new_tensor(DType::F32, {16}, "orphan");
  Tensor* v = ops::reshape(a, x, {4, 4});
  EXPECT_THAT([&] { init_view(*v); }, testing::ThrowsMessage<Error>(testing::HasSubstr("'orphan'")));
}

// ---- the plan computes correctly: memory reuse gives the same numbers as no reuse at all ----

// Every storage tensor of g in a buffer of its own (nothing shared), views set from their source.
std::vector<std::unique_ptr<Buffer>> place_separately(Graph& g, BufferType* bt) {
  std::vector<std::unique_ptr<Buffer>> bufs;
  auto own = [&](Tensor* t) {
    if (t->view_src || t->data) return;
    bufs.push_back(bt->alloc(bt->alloc_size(*t)));
    bufs.back()->place(*t, 0);
  };
  for (Tensor* l : g.leaves()) own(l);
  for (Tensor* n : g.nodes()) own(n);
  for (Tensor* n : g.nodes())
    if (n->view_src) init_view(*n);
  return bufs;
}

TEST(GraphAllocatorCompute, ReusedMemoryGivesTheSameResultAsSeparateMemory) {
  Device* dev = Registry::global().find(kCpuDeviceName);
  ASSERT_NE(dev, nullptr);
  BackendParams params;
  params.n_threads = 2;
  auto backend = dev->init_backend(params);
  Model model(dev->buffer_type(), 7);
  const int64_t T = 24;
  std::vector<float> in(static_cast<size_t>(kDim * T));
  std::mt19937 rng(3);
  std::normal_distribution<float> dist(0.0f, 1.0f);
  for (float& v : in) v = dist(rng);

  // reused: one planned buffer, filled with NaN first so a read of a clobbered or never-written
  // byte shows up in the result
  TensorArena a1;
  const Built b1 = build_transformer(a1, model, T);
  Graph g1;
  g1.build(b1.output);
  GraphAllocator alloc(dev->buffer_type());
  alloc.alloc(g1);
  alloc.buffer()->clear(0xFF);
  tensor_set(*b1.input, in.data(), in.size() * sizeof(float));
  ASSERT_EQ(backend->compute(g1), ComputeStatus::Ok);

  TensorArena a2;
  const Built b2 = build_transformer(a2, model, T);
  Graph g2;
  g2.build(b2.output);
  auto bufs = place_separately(g2, dev->buffer_type());
  tensor_set(*b2.input, in.data(), in.size() * sizeof(float));
  ASSERT_EQ(backend->compute(g2), ComputeStatus::Ok);

  std::vector<float> r1(in.size()), r2(in.size());
  tensor_get(*b1.output, r1.data(), r1.size() * sizeof(float));
  tensor_get(*b2.output, r2.data(), r2.size() * sizeof(float));
  for (size_t i = 0; i < r1.size(); ++i) {
    ASSERT_TRUE(std::isfinite(r2[i])) << "element " << i;
    ASSERT_NEAR(r1[i], r2[i], 1e-5f * (1.0f + std::fabs(r2[i]))) << "element " << i;
  }
}

// concat(reshape(scale(x, 2)), reshape(scale(x, 3))): the scale outputs are read only through
// views, by the concat. A report had all three placed at one offset (a view's reader not keeping
// its source alive); the plan must keep them apart and the CPU backend must compute the concat.
// Also with views of views and the concat along dim 1.
TEST(GraphAllocatorCompute, ConcatOfReshapedScalesKeepsItsSourcesAlive) {
  Device* dev = Registry::global().find(kCpuDeviceName);
  ASSERT_NE(dev, nullptr);
  auto backend = dev->init_backend({2});
  for (int variant = 0; variant < 3; ++variant) {
    SCOPED_TRACE("variant " + std::to_string(variant));
    TensorArena a;
    Tensor* x = a.new_tensor(DType::F32, {8, 4}, "x");
    x->flags |= kFlagInput;
    Tensor* s1 = ops::scale(a, x, 2.0f);
    Tensor* s2 = ops::scale(a, x, 3.0f);
    Tensor* c = nullptr;
    if (variant == 0) {
      c = ops::concat(a, ops::reshape(a, s1, {32}), ops::reshape(a, s2, {32}), 0);  // [64]
    } else if (variant == 1) {
      c = ops::concat(a, ops::reshape(a, ops::reshape(a, s1, {32}), {4, 8}),
                      ops::reshape(a, ops::reshape(a, s2, {32}), {4, 8}), 1);  // [4, 16]
    } else {
      // one scale read both directly and through a view, the other only through a view
      c = ops::concat(a, ops::reshape(a, s1, {32}), ops::add(a, ops::reshape(a, s2, {32}), ops::reshape(a, s1, {32})),
                      0);
    }
    Graph g;
    g.build(c);
    GraphAllocator alloc(dev->buffer_type());
    alloc.alloc(g);
    expect_no_live_overlap(g, alloc);
    std::unordered_map<const Tensor*, GraphAllocator::Placement> at;
    for (const auto& p : alloc.placements()) at[p.tensor] = p;
    ASSERT_TRUE(at.count(s1) && at.count(s2) && at.count(c));
    for (const Tensor* t : {s1, s2}) {
      EXPECT_FALSE(overlap(at[t].offset, at[t].offset + at[t].size, at[c].offset, at[c].offset + at[c].size))
          << t->describe() << " shares bytes with the concat that reads it";
    }
    EXPECT_FALSE(overlap(at[s1].offset, at[s1].offset + at[s1].size, at[s2].offset, at[s2].offset + at[s2].size));

    alloc.buffer()->clear(0xFF);  // NaN wherever no node wrote
    std::vector<float> xv(32);
    for (size_t i = 0; i < xv.size(); ++i) xv[i] = static_cast<float>(i) - 10.5f;
    tensor_set(*x, xv.data(), xv.size() * sizeof(float));
    ASSERT_EQ(backend->compute(g), ComputeStatus::Ok);
    std::vector<float> got(static_cast<size_t>(c->nelements()));
    tensor_get(*c, got.data(), got.size() * sizeof(float));
    std::vector<float> want;
    if (variant == 0) {
      for (float v : xv) want.push_back(2 * v);
      for (float v : xv) want.push_back(3 * v);
    } else if (variant == 1) {
      // [4, 16]: concat along dim 1 stacks rows, 0..7 from s1 viewed as [4, 8], 8..15 from s2
      for (float v : xv) want.push_back(2 * v);
      for (float v : xv) want.push_back(3 * v);
    } else {
      for (float v : xv) want.push_back(2 * v);
      for (float v : xv) want.push_back(3 * v + 2 * v);
    }
    EXPECT_EQ(got, want);
  }
}

}  // namespace
}  // namespace hark
