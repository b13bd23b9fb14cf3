#include "backend/scheduler.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <climits>
#include <cmath>
#include <functional>
#include <random>
#include <unordered_map>
#include <unordered_set>
#include <vector>

#include "backend/buffer.h"
#include "backend/device_registry.h"
#include "runtime/error.h"
#include "runtime/ops.h"
#include "runtime/tiny_transformer.h"

namespace hark {
namespace {

using testing::AllOf;
using testing::HasSubstr;
using testing::ThrowsMessage;

// ---- a small transformer whose layers' weights can live in different devices' memory ----

using namespace tiny_transformer;

struct Model {
  TensorArena arena;
  std::vector<Layer> layers;
  Tensor *ln_w = nullptr, *ln_b = nullptr;
  std::vector<std::unique_ptr<Buffer>> buffers;

  // memory_of(layer) says where a layer's weights live; layer == kLayers is the final norm.
  Model(const std::function<BufferType*(int)>& memory_of, uint32_t seed) {
    std::mt19937 rng(seed);
    std::normal_distribution<float> dist(0.0f, 0.15f);
    for (int l = 0; l <= kLayers; ++l) {
      std::vector<Tensor*> ts;
      auto w = [&](std::initializer_list<int64_t> ne, const char* name) {
        Tensor* t = arena.new_tensor(DType::F32, ne, std::string(name) + "." + std::to_string(l));
        t->flags |= kFlagWeight;
        ts.push_back(t);
        return t;
      };
      if (l < kLayers) {
        layers.push_back(make_layer(w));
      } else {
        ln_w = w({kDim}, "ln_w");
        ln_b = w({kDim}, "ln_b");
      }
      size_t total = 0;
      for (Tensor* t : ts) total += (t->nbytes() + 63) / 64 * 64;
      buffers.push_back(memory_of(l)->alloc(total));
      buffers.back()->set_usage(BufferUsage::Weights);
      size_t off = 0;
      for (Tensor* t : ts) {
        buffers.back()->place(*t, off);
        off += (t->nbytes() + 63) / 64 * 64;
        std::vector<float> v(static_cast<size_t>(t->nelements()));
        const bool gain = t->name.rfind("ln", 0) == 0 && t->name.find("_w") != std::string::npos;
        for (float& x : v) x = gain ? 1.0f + dist(rng) : dist(rng);
        tensor_set(*t, v.data(), v.size() * sizeof(float));
      }
    }
  }
};

// The layers, then a final norm named "final".
Built build_transformer(TensorArena& a, const Model& m, int64_t T) {
  Built b = build_layers(a, m.layers, T);
  b.output = ops::layer_norm(a, b.output, m.ln_w, m.ln_b, 1e-5f);
  b.output->name = "final";
  return b;
}

std::vector<float> random_input(int64_t T, uint32_t seed) {
  std::vector<float> v(static_cast<size_t>(kDim * T));
  std::mt19937 rng(seed);
  std::normal_distribution<float> dist(0.0f, 1.0f);
  for (float& x : v) x = dist(rng);
  return v;
}

// ---- a device that refuses one op and uses memory of its own; computes through the CPU backend ----

class PickyDevice : public Device {
 public:
  PickyDevice(Device& inner, Op refused) : inner_(inner), refused_(refused) {}
  const char* name() const override { return "picky"; }
  std::string description() const override { return "test device without " + std::string(op_name(refused_)); }
  DeviceType type() const override { return DeviceType::CPU; }
  void memory(size_t* f, size_t* t) const override { inner_.memory(f, t); }
  bool supports_op(const Tensor& n) const override { return n.op != refused_ && inner_.supports_op(n); }
  bool supports_buffer_type(const BufferType* bt) const override { return bt == &bt_; }
  BufferType* buffer_type() override { return &bt_; }
  std::unique_ptr<Backend> init_backend(const BackendParams& p = {}) override;
  bool fail = false;  // compute throws, as a backend with a kernel error would

 private:
  Device& inner_;
  Op refused_;
  HostBufferType bt_{"picky"};
};

class PickyBackend : public Backend {
 public:
  PickyBackend(PickyDevice& dev, std::unique_ptr<Backend> inner) : dev_(dev), inner_(std::move(inner)) {}
  const char* name() const override { return "picky"; }
  Device& device() const override { return dev_; }
  ComputeStatus compute(const Graph& g) override {
    ++n_computes;
    if (dev_.fail) throw Error("picky backend failed on purpose");
    inner_->set_abort_callback(abort_);
    return inner_->compute(g);
  }
  void set_tensor_async(Tensor& t, const void* d, size_t o, size_t s) override { inner_->set_tensor_async(t, d, o, s); }
  void get_tensor_async(const Tensor& t, void* d, size_t o, size_t s) override { inner_->get_tensor_async(t, d, o, s); }
  void synchronize() override { inner_->synchronize(); }
  std::unique_ptr<Event> new_event() override { return std::make_unique<ImmediateEvent>(); }
  void set_n_threads(int n) override { inner_->set_n_threads(n); }
  int n_threads() const override { return inner_->n_threads(); }
  int n_computes = 0;

 private:
  PickyDevice& dev_;
  std::unique_ptr<Backend> inner_;
};

std::unique_ptr<Backend> PickyDevice::init_backend(const BackendParams& p) {
  return std::make_unique<PickyBackend>(*this, inner_.init_backend(p));
}

class SchedulerTest : public testing::Test {
 protected:
  void SetUp() override {
    cpu_dev_ = Registry::global().find(kCpuDeviceName);
    ref_dev_ = Registry::global().find(kReferenceDeviceName);
    ASSERT_TRUE(cpu_dev_ && ref_dev_);
    BackendParams p;
    p.n_threads = 2;
    cpu_ = cpu_dev_->init_backend(p);
    ref_ = ref_dev_->init_backend(p);
  }
  Device* cpu_dev_ = nullptr;
  Device* ref_dev_ = nullptr;
  std::unique_ptr<Backend> cpu_, ref_;
};

// Odd layers' weights in the reference device's memory, the rest in the CPU's.
std::function<BufferType*(int)> alternating(Device* cpu, Device* ref) {
  return [=](int l) { return (l % 2 == 1 ? ref : cpu)->buffer_type(); };
}

// Every node's sources, for checking that the scheduler gives the graph back unchanged.
std::vector<std::array<Tensor*, kMaxSrc>> sources(const Graph& g) {
  std::vector<std::array<Tensor*, kMaxSrc>> s;
  for (const Tensor* n : g.nodes()) s.push_back(n->src);
  return s;
}

// ---- planning (no computation) ----

TEST_F(SchedulerTest, NodesFollowTheirWeightsAndSplitWhereTheBackendChanges) {
  Model model(alternating(cpu_dev_, ref_dev_), 1);
  TensorArena a;
  const Built b = build_transformer(a, model, 16);
  Graph g;
  g.build(b.output);
  const auto before = sources(g);
  Scheduler sched({cpu_.get(), ref_.get()});
  sched.alloc_graph(g);

  // layers 0, 2 and the final norm on cpu, layers 1, 3 on cpu-ref: five runs
  EXPECT_EQ(sched.n_splits(), 5);
  // the residual stream crosses four times; each crossing copies it once
  EXPECT_EQ(sched.n_copies(), 4);
  EXPECT_EQ(sources(g), before) << "the caller's graph must come back unchanged";

  for (const Tensor* n : g.nodes()) {
    Backend* be = sched.backend_of(n);
    ASSERT_NE(be, nullptr) << n->describe();
    if (n->op == Op::MulMat && (n->src[0]->flags & kFlagWeight)) {
      Backend* want = n->src[0]->buffer->type() == ref_dev_->buffer_type() ? ref_.get() : cpu_.get();
      EXPECT_EQ(be, want) << n->describe() << " should run next to its weights";
    }
    if (n->view_src) {
      EXPECT_EQ(be, sched.backend_of(n->storage())) << "view " << n->describe() << " follows its source";
      EXPECT_EQ(n->buffer, n->storage()->buffer) << n->describe();
      EXPECT_EQ(n->data, static_cast<const uint8_t*>(n->storage()->data) + n->view_offset) << n->describe();
    } else {
      // computed nodes live in the memory of the backend that computes them
      const int i = be == cpu_.get() ? 0 : 1;
      EXPECT_EQ(n->buffer, sched.allocator(i).buffer()) << n->describe();
      EXPECT_NE(n->data, nullptr);
    }
  }
  EXPECT_EQ(sched.backend_of(b.output), cpu_.get());
  EXPECT_EQ(sched.backend_of(b.input), cpu_.get()) << "an input lives with its first reader";
  EXPECT_EQ(sched.backend_of(model.layers[1].wq), ref_.get());
  EXPECT_EQ(b.input->buffer, sched.allocator(0).buffer());
  EXPECT_GT(sched.allocator(0).placements().size(), 0u);
  EXPECT_GT(sched.allocator(1).placements().size(), 0u);
}

// Within one allocator, tensors alive at the same time (in graph order) never share bytes, even
// when they are read by a later split on another backend.
TEST_F(SchedulerTest, AllocatorsKeepTensorsAliveAcrossSplits) {
  Model model(alternating(cpu_dev_, ref_dev_), 1);
  TensorArena a;
  const Built b = build_transformer(a, model, 16);
  Graph g;
  g.build(b.output);
  Scheduler sched({cpu_.get(), ref_.get()});
  sched.alloc_graph(g);

  std::unordered_map<const Tensor*, std::pair<long, long>> life;
  for (const Tensor* l : g.leaves()) life[l] = {-1, LONG_MAX};
  for (size_t i = 0; i < g.size(); ++i) {
    const Tensor* n = g.node(i);
    const long pos = static_cast<long>(i);
    if (!n->view_src) life[n] = {pos, (n->flags & kFlagOutput) ? LONG_MAX : pos};
    for (const Tensor* s : n->src)
      if (s && life.count(s->storage())) life[s->storage()].second = std::max(life[s->storage()].second, pos);
  }
  for (int k = 0; k < sched.n_backends(); ++k) {
    const auto& p = sched.allocator(k).placements();
    int copies = 0;
    for (size_t i = 0; i < p.size(); ++i) {
      if (!life.count(p[i].tensor)) {
        ++copies;  // a copy made by the scheduler: not part of the graph
        continue;
      }
      for (size_t j = i + 1; j < p.size(); ++j) {
        if (!life.count(p[j].tensor)) continue;
        const auto x = life[p[i].tensor], y = life[p[j].tensor];
        const bool together = x.first <= y.second && y.first <= x.second;
        const bool share = p[i].offset < p[j].offset + p[j].size && p[j].offset < p[i].offset + p[i].size;
        EXPECT_FALSE(together && share) << p[i].tensor->describe() << " and " << p[j].tensor->describe();
      }
    }
    EXPECT_EQ(copies, 2) << "each backend receives two copies of the residual stream";
  }
}

TEST_F(SchedulerTest, SingleBackendNeedsNoCopies) {
  Model model([&](int) { return cpu_dev_->buffer_type(); }, 1);
  TensorArena a;
  const Built b = build_transformer(a, model, 8);
  Graph g;
  g.build(b.output);
  Scheduler sched({cpu_.get()});
  sched.alloc_graph(g);
  EXPECT_EQ(sched.n_splits(), 1);
  EXPECT_EQ(sched.n_copies(), 0);
  for (const Tensor* n : g.nodes()) EXPECT_EQ(sched.backend_of(n), cpu_.get());
}

TEST_F(SchedulerTest, PriorityOrderDecidesNodesWithoutWeights) {
  TensorArena a;
  Tensor* x = a.new_tensor(DType::F32, {32, 4}, "x");
  Tensor* y = ops::gelu(a, ops::scale(a, x, 2.0f));
  Graph g;
  g.build(y);
  Scheduler sched({ref_.get(), cpu_.get()});
  sched.alloc_graph(g);
  EXPECT_EQ(sched.n_splits(), 1);
  EXPECT_EQ(sched.backend_of(y), ref_.get());
  EXPECT_EQ(sched.backend_of(x), ref_.get());
  EXPECT_EQ(x->buffer, sched.allocator(0).buffer());
}

TEST_F(SchedulerTest, WeightsNoDeviceCanUseAreCopied) {
  HostBufferType elsewhere("elsewhere");
  Model model([&](int) { return &elsewhere; }, 1);
  TensorArena a;
  const Built b = build_transformer(a, model, 8);
  Graph g;
  g.build(b.output);
  Scheduler sched({cpu_.get()});
  sched.alloc_graph(g);
  EXPECT_EQ(sched.n_splits(), 1);
  // 13 weights a layer and the final norm's two, each copied into cpu memory once
  EXPECT_EQ(sched.n_copies(), kLayers * 13 + 2);
  EXPECT_EQ(sched.backend_of(model.layers[0].wq), nullptr) << "no backend can use that memory";
}

TEST_F(SchedulerTest, AWriteRunsWhereItsDestinationLives) {
  // A KV-cache-like leaf in reference memory: the copy into it must run on cpu-ref even though
  // cpu comes first, and the cache itself is never replaced by a copy.
  auto cache_buf = ref_dev_->buffer_type()->alloc(4096);
  TensorArena a;
  Tensor* cache = a.new_tensor(DType::F32, {32, 8}, "kv_cache");
  cache_buf->place(*cache, 0);
  Tensor* x = a.new_tensor(DType::F32, {32, 2}, "x");
  Tensor* k = ops::scale(a, x, 2.0f);
  Tensor* dst = ops::view(a, cache, {32, 2}, {cache->nb[1]}, 2 * cache->nb[1]);
  Tensor* store = ops::copy(a, k, dst);
  Graph g;
  g.build(store);
  Scheduler sched({cpu_.get(), ref_.get()});
  sched.alloc_graph(g);
  EXPECT_EQ(sched.backend_of(k), cpu_.get());
  EXPECT_EQ(sched.backend_of(store), ref_.get());
  EXPECT_EQ(sched.n_splits(), 2);
  EXPECT_EQ(sched.n_copies(), 1) << "k is copied to cpu-ref; the cache is written in place";
  EXPECT_EQ(store->data, static_cast<uint8_t*>(cache->data) + 2 * cache->nb[1]);
}

TEST_F(SchedulerTest, UnsupportedNodeIsAClearError) {
  PickyDevice picky(*cpu_dev_, Op::Gelu);
  auto pb = picky.init_backend();
  TensorArena a;
  Tensor* x = a.new_tensor(DType::F32, {16}, "x");
  Tensor* act = ops::gelu(a, ops::scale(a, x, 2.0f));
  act->name = "act";
  Graph g;
  g.build(ops::scale(a, act, 0.5f));
  Scheduler sched({pb.get()});
  EXPECT_THAT([&] { sched.alloc_graph(g); },
              ThrowsMessage<Error>(AllOf(HasSubstr("no backend can compute"), HasSubstr("'act'"), HasSubstr("gelu"),
                                         HasSubstr("picky"))));
  EXPECT_THAT([&] { sched.reserve(g); }, ThrowsMessage<Error>(HasSubstr("'act'")));
}

TEST_F(SchedulerTest, UnsupportedOpFallsToTheNextBackend) {
  PickyDevice picky(*cpu_dev_, Op::Gelu);
  auto pb = picky.init_backend();
  TensorArena a;
  Tensor* x = a.new_tensor(DType::F32, {16}, "x");
  Tensor* s1 = ops::scale(a, x, 2.0f);
  Tensor* act = ops::gelu(a, s1);
  Tensor* s2 = ops::scale(a, act, 0.5f);
  Tensor* s3 = ops::scale(a, s2, 0.5f);
  Graph g;
  g.build(s3);
  Scheduler sched({pb.get(), cpu_.get()});
  sched.alloc_graph(g);
  EXPECT_EQ(sched.backend_of(s1), pb.get());
  EXPECT_EQ(sched.backend_of(act), cpu_.get());
  // s2 stays with the previous node's backend, which supports it
  EXPECT_EQ(sched.backend_of(s2), cpu_.get());
  EXPECT_EQ(sched.backend_of(s3), cpu_.get());
  EXPECT_EQ(sched.n_splits(), 2);
  EXPECT_EQ(sched.n_copies(), 1);
}

TEST_F(SchedulerTest, ReserveSizesBuffersOnce) {
  Model model(alternating(cpu_dev_, ref_dev_), 1);
  TensorArena big_a, small_a;
  Graph big, small;
  big.build(build_transformer(big_a, model, 32).output);
  small.build(build_transformer(small_a, model, 8).output);
  Scheduler sched({cpu_.get(), ref_.get()});
  sched.reserve(big);
  for (const Tensor* n : big.nodes()) EXPECT_EQ(n->data, nullptr) << "reserve places nothing";
  const size_t s0 = sched.allocator(0).buffer_size(), s1 = sched.allocator(1).buffer_size();
  EXPECT_GT(s0, 0u);
  EXPECT_GT(s1, 0u);
  sched.alloc_graph(small);
  sched.alloc_graph(small);
  sched.alloc_graph(big);
  EXPECT_EQ(sched.allocator(0).n_reallocs(), 0);
  EXPECT_EQ(sched.allocator(1).n_reallocs(), 0);
  EXPECT_EQ(sched.allocator(0).buffer_size(), s0);
  EXPECT_EQ(sched.allocator(1).buffer_size(), s1);
}

TEST_F(SchedulerTest, ABackendErrorLeavesTheGraphUnchanged) {
  PickyDevice picky(*cpu_dev_, Op::Gelu);
  auto pb = picky.init_backend();
  // gelu and scale run on cpu; the mul reads a weight in picky memory, so it runs on picky and
  // its other input is copied there (a rewired source while the picky split runs).
  auto wbuf = picky.buffer_type()->alloc(256);
  wbuf->set_usage(BufferUsage::Weights);
  TensorArena a;
  Tensor* w = a.new_tensor(DType::F32, {16}, "w");
  wbuf->place(*w, 0);
  Tensor* x = a.new_tensor(DType::F32, {16}, "x");
  Tensor* out = ops::mul(a, ops::scale(a, ops::gelu(a, x), 0.5f), w);
  Graph g;
  g.build(out);
  const auto before = sources(g);
  Scheduler sched({cpu_.get(), pb.get()});
  sched.alloc_graph(g);
  ASSERT_EQ(sched.backend_of(out), pb.get());
  ASSERT_EQ(sched.n_copies(), 1);
  picky.fail = true;
  EXPECT_THAT([&] { sched.compute(g); }, ThrowsMessage<Error>(HasSubstr("failed on purpose")));
  EXPECT_EQ(sources(g), before) << "sources must be restored when a backend throws";
}

TEST_F(SchedulerTest, AbortBeforeAnyWorkReturnsAborted) {
  PickyDevice picky(*cpu_dev_, Op::Count);
  auto pb = picky.init_backend();
  TensorArena a;
  Tensor* x = a.new_tensor(DType::F32, {16}, "x");
  Graph g;
  g.build(ops::scale(a, x, 2.0f));
  Scheduler sched({pb.get()});
  sched.set_abort_callback([] { return true; });
  EXPECT_EQ(sched.compute(g), ComputeStatus::Aborted);
  EXPECT_EQ(static_cast<PickyBackend*>(pb.get())->n_computes, 0);
}

// ---- computation (needs the op kernels) ----

TEST_F(SchedulerTest, SplitAcrossCpuAndReferenceMatchesCpuAlone) {
  const int64_t T = 16;
  const auto in = random_input(T, 5);

  Model cpu_model([&](int) { return cpu_dev_->buffer_type(); }, 11);
  TensorArena a1;
  const Built b1 = build_transformer(a1, cpu_model, T);
  Graph g1;
  g1.build(b1.output);
  Scheduler alone({cpu_.get()});
  alone.alloc_graph(g1);
  tensor_set(*b1.input, in.data(), in.size() * sizeof(float));
  ASSERT_EQ(alone.compute(g1), ComputeStatus::Ok);
  EXPECT_EQ(alone.n_splits(), 1);

  Model split_model(alternating(cpu_dev_, ref_dev_), 11);  // same values, other memory
  TensorArena a2;
  const Built b2 = build_transformer(a2, split_model, T);
  Graph g2;
  g2.build(b2.output);
  const auto before = sources(g2);
  Scheduler both({cpu_.get(), ref_.get()});
  both.alloc_graph(g2);
  // NaN everywhere first: a split reading bytes no one wrote (a missed copy) poisons the result
  both.allocator(0).buffer()->clear(0xFF);
  both.allocator(1).buffer()->clear(0xFF);
  tensor_set(*b2.input, in.data(), in.size() * sizeof(float));
  ASSERT_EQ(both.compute(g2), ComputeStatus::Ok);
  EXPECT_GT(both.n_splits(), 1);
  EXPECT_GT(both.n_copies(), 0);
  EXPECT_EQ(sources(g2), before);

  std::vector<float> r1(in.size()), r2(in.size());
  tensor_get(*b1.output, r1.data(), r1.size() * sizeof(float));
  tensor_get(*b2.output, r2.data(), r2.size() * sizeof(float));
  for (size_t i = 0; i < r1.size(); ++i) {
    ASSERT_TRUE(std::isfinite(r2[i])) << "element " << i;
    ASSERT_NEAR(r1[i], r2[i], 2e-3f * (1.0f + std::fabs(r1[i]))) << "element " << i;
  }

  // Computing again (new input, no alloc_graph in between) replans and gives fresh results.
  const auto in2 = random_input(T, 6);
  tensor_set(*b2.input, in2.data(), in2.size() * sizeof(float));
  ASSERT_EQ(both.compute(g2), ComputeStatus::Ok);
  tensor_set(*b1.input, in2.data(), in2.size() * sizeof(float));
  ASSERT_EQ(alone.compute(g1), ComputeStatus::Ok);
  tensor_get(*b1.output, r1.data(), r1.size() * sizeof(float));
  tensor_get(*b2.output, r2.data(), r2.size() * sizeof(float));
  for (size_t i = 0; i < r1.size(); ++i) ASSERT_NEAR(r1[i], r2[i], 2e-3f * (1.0f + std::fabs(r1[i]))) << i;
}

// A split that reads views (an offset slice, a transpose) of a tensor another backend computed
// gets the whole tensor copied and the same views laid over the copy.
TEST_F(SchedulerTest, ViewsOfCopiedTensorsReadTheRightBytes) {
  auto run = [&](Device* weights_dev, std::vector<Backend*> backends, int* splits, int* copies) {
    auto wbuf = weights_dev->buffer_type()->alloc(4096);
    wbuf->set_usage(BufferUsage::Weights);
    TensorArena a;
    Tensor* w = a.new_tensor(DType::F32, {32, 8}, "w");
    Tensor* bias = a.new_tensor(DType::F32, {4}, "bias");
    wbuf->place(*w, 0);
    wbuf->place(*bias, 2048);
    std::vector<float> wv(256), bv(4), xv(128);
    for (size_t i = 0; i < wv.size(); ++i) wv[i] = std::sin(0.37f * static_cast<float>(i));
    for (size_t i = 0; i < bv.size(); ++i) bv[i] = static_cast<float>(i) - 1.5f;
    for (size_t i = 0; i < xv.size(); ++i) xv[i] = std::cos(0.11f * static_cast<float>(i));
    tensor_set(*w, wv.data(), wv.size() * sizeof(float));
    tensor_set(*bias, bv.data(), bv.size() * sizeof(float));

    Tensor* x = a.new_tensor(DType::F32, {32, 4}, "x");
    x->flags |= kFlagInput;
    Tensor* y = ops::gelu(a, ops::scale(a, x, 2.0f));                   // [32, 4], first backend
    Tensor* m = ops::mul_mat(a, w, ops::slice(a, y, 1, 1, 3));          // rows 1..2 of y, next to w
    Tensor* t = ops::add(a, ops::cont(a, ops::transpose(a, y)), bias);  // [4, 32] + bias
    Tensor* tt = ops::add(a, ops::transpose(a, y), bias);               // the view read directly
    Graph g;
    g.build(m);
    g.build(t);
    g.build(tt);
    Scheduler sched(std::move(backends));
    sched.alloc_graph(g);
    tensor_set(*x, xv.data(), xv.size() * sizeof(float));
    EXPECT_EQ(sched.compute(g), ComputeStatus::Ok);
    *splits = sched.n_splits();
    *copies = sched.n_copies();
    std::vector<float> r;
    for (const Tensor* o : {m, t, tt}) {
      std::vector<float> v(static_cast<size_t>(o->nelements()));
      tensor_get(*o, v.data(), v.size() * sizeof(float));
      r.insert(r.end(), v.begin(), v.end());
    }
    return r;
  };
  int splits = 0, copies = 0;
  const auto want = run(cpu_dev_, {cpu_.get()}, &splits, &copies);
  EXPECT_EQ(splits, 1);
  EXPECT_EQ(copies, 0);
  const auto got = run(ref_dev_, {cpu_.get(), ref_.get()}, &splits, &copies);
  // gelu(scale) on cpu; mul_mat with w and both adds with bias on cpu-ref (the cont in between
  // follows the previous node), with y copied over once for that split
  EXPECT_EQ(splits, 2);
  EXPECT_EQ(copies, 1);
  ASSERT_EQ(want.size(), got.size());
  for (size_t i = 0; i < want.size(); ++i) ASSERT_NEAR(want[i], got[i], 1e-4f * (1.0f + std::fabs(want[i]))) << i;
}

TEST_F(SchedulerTest, CopiedWeightsComputeLikeWeightsInPlace) {
  const int64_t T = 8;
  const auto in = random_input(T, 9);
  HostBufferType elsewhere("elsewhere");
  Model here([&](int) { return cpu_dev_->buffer_type(); }, 4);
  Model there([&](int) { return &elsewhere; }, 4);
  std::vector<float> r[2];
  int i = 0;
  for (const Model* m : {&here, &there}) {
    TensorArena a;
    const Built b = build_transformer(a, *m, T);
    Graph g;
    g.build(b.output);
    Scheduler sched({cpu_.get()});
    sched.alloc_graph(g);
    tensor_set(*b.input, in.data(), in.size() * sizeof(float));
    ASSERT_EQ(sched.compute(g), ComputeStatus::Ok);
    r[i].resize(in.size());
    tensor_get(*b.output, r[i].data(), in.size() * sizeof(float));
    ++i;
  }
  EXPECT_EQ(r[0], r[1]);
}

TEST_F(SchedulerTest, BackendAbortStopsTheRemainingSplits) {
  Model model(alternating(cpu_dev_, ref_dev_), 2);
  TensorArena a;
  const Built b = build_transformer(a, model, 8);
  // The output in memory of our own, filled with NaN: it keeps its NaN unless the last split runs.
  // (A planned output could take bytes an earlier split wrote.)
  auto out_buf = cpu_dev_->buffer_type()->alloc(b.output->nbytes());
  out_buf->place(*b.output, 0);
  out_buf->clear(0xFF);
  Graph g;
  g.build(b.output);
  Scheduler sched({cpu_.get(), ref_.get()});
  sched.alloc_graph(g);
  ASSERT_GT(sched.n_splits(), 2);
  EXPECT_EQ(b.output->buffer, out_buf.get()) << "a node the caller placed keeps its memory";
  const auto in = random_input(8, 1);
  tensor_set(*b.input, in.data(), in.size() * sizeof(float));
  // Only the reference backend aborts (at its first node, in the second split), so this checks
  // that the scheduler passes a backend's Aborted on and runs nothing after it (the CPU backend
  // aborting is the next test).
  int calls = 0;
  ref_->set_abort_callback([&] { return ++calls >= 1; });
  EXPECT_EQ(sched.compute(g), ComputeStatus::Aborted);
  EXPECT_EQ(calls, 1) << "the reference backend stops at the first node after the callback fired";
  std::vector<float> out(in.size());
  tensor_get(*b.output, out.data(), out.size() * sizeof(float));
  EXPECT_TRUE(std::isnan(out[0])) << "the last split ran after the abort";

  // Without the abort the same graph computes to the end.
  ref_->set_abort_callback(nullptr);
  EXPECT_EQ(sched.compute(g), ComputeStatus::Ok);
  tensor_get(*b.output, out.data(), out.size() * sizeof(float));
  for (float v : out) ASSERT_TRUE(std::isfinite(v));
}

// The same with the CPU backend aborting (2 threads): in its first split, in the middle, and at
// the last-but-one node of the final split. Its abort path once stranded pool threads at a barrier.
TEST_F(SchedulerTest, CpuBackendAbortStopsTheRemainingSplits) {
  Model model(alternating(cpu_dev_, ref_dev_), 2);
  TensorArena a;
  const Built b = build_transformer(a, model, 8);
  auto out_buf = cpu_dev_->buffer_type()->alloc(b.output->nbytes());
  out_buf->place(*b.output, 0);
  Graph g;
  g.build(b.output);
  Scheduler sched({cpu_.get(), ref_.get()});
  sched.alloc_graph(g);
  ASSERT_GT(sched.n_splits(), 2);
  const auto in = random_input(8, 1);
  tensor_set(*b.input, in.data(), in.size() * sizeof(float));
  int calls = 0;
  cpu_->set_abort_callback([&] { return ++calls < 0; });  // counts the CPU backend's nodes
  ASSERT_EQ(sched.compute(g), ComputeStatus::Ok);
  const int n_cpu_nodes = calls;
  ASSERT_GT(n_cpu_nodes, 10);
  std::vector<float> want(in.size()), out(in.size());
  tensor_get(*b.output, want.data(), want.size() * sizeof(float));

  for (int at : {1, 3, n_cpu_nodes / 2, n_cpu_nodes - 1}) {
    out_buf->clear(0xFF);
    calls = 0;
    cpu_->set_abort_callback([&] { return ++calls >= at; });
    EXPECT_EQ(sched.compute(g), ComputeStatus::Aborted) << "abort at cpu node " << at;
    EXPECT_EQ(calls, at) << "no CPU node runs after the callback fired";
    tensor_get(*b.output, out.data(), out.size() * sizeof(float));
    EXPECT_TRUE(std::isnan(out[0])) << "the output was computed after an abort at cpu node " << at;
  }

  cpu_->set_abort_callback(nullptr);
  EXPECT_EQ(sched.compute(g), ComputeStatus::Ok);
  tensor_get(*b.output, out.data(), out.size() * sizeof(float));
  EXPECT_EQ(out, want);
}

}  // namespace
}  // namespace hark

namespace hark {
namespace {

// A graph that was planned has no input left to refuse: whatever fails while it runs (here a
// kernel's check of a row id) reaches the caller as Internal, hark's own failure, with the
// kernel's message, and the scheduler still runs a good graph afterwards.
TEST(SchedulerErrors, AFailureWhileAGraphRunsIsInternal) {
  Device* dev = Registry::global().find(kCpuDeviceName);
  ASSERT_NE(dev, nullptr);
  std::unique_ptr<Backend> cpu = dev->init_backend({1});
  TensorArena arena;
  Tensor* table = arena.new_tensor(DType::F32, {4, 8}, "table");
  Tensor* ids = arena.new_tensor(DType::I32, {2}, "ids");
  table->flags |= kFlagInput;
  ids->flags |= kFlagInput;
  Tensor* rows = ops::scale(arena, ops::get_rows(arena, table, ids), 2.0f);
  Graph g;
  g.build(rows);
  Scheduler sched({cpu.get()});
  sched.alloc_graph(g);
  std::vector<float> t(32, 1.0f);
  tensor_set(*table, t.data(), t.size() * sizeof(float));
  const int32_t bad[2] = {0, 99};
  tensor_set(*ids, bad, sizeof bad);
  try {
    sched.compute(g);
    ADD_FAILURE() << "no error";
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), ErrorCode::Internal) << e.what();
    EXPECT_NE(std::string(e.what()).find("outside"), std::string::npos) << e.what();
  }
  const int32_t good[2] = {0, 7};
  sched.alloc_graph(g);
  tensor_set(*table, t.data(), t.size() * sizeof(float));
  tensor_set(*ids, good, sizeof good);
  EXPECT_EQ(sched.compute(g), ComputeStatus::Ok);
}

}  // namespace
}  // namespace hark
