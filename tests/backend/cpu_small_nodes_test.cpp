// The CPU backend's small-node runs: with more than one thread, a run of consecutive tiny
// element-wise / row / copy nodes is computed by thread 0 alone with one barrier after the run,
// or, when every node of the run splits by rows and there is a row for every thread (the layer
// norm, scale, add, gelu runs here: 3 rows), by all threads at once, each its own rows.
// These check a graph that mixes such runs with parallel nodes (mul_mat, big element-wise nodes,
// get_rows of many rows) against the reference backend with 1, 2 and 3 threads, and that an
// abort or a kernel error inside a run stops every thread at the same node (no hang), reports it,
// and leaves the backend reusable.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cmath>
#include <memory>
#include <random>
#include <vector>

#include "backend/buffer.h"
#include "backend/compare.h"
#include "backend/cpu/cpu_backend.h"
#include "backend/device_registry.h"
#include "backend/graph_allocator.h"
#include "runtime/error.h"
#include "runtime/ops.h"

namespace hark {
namespace {

using testing::HasSubstr;
using testing::ThrowsMessage;

constexpr int64_t kD = 384, kT = 3, kTable = 50, kBigRows = 60;
constexpr int kLayers = 6;

struct Mixed {
  TensorArena arena;
  std::unique_ptr<Buffer> leaves_buf;
  Tensor* ids = nullptr;
  std::vector<Tensor*> outputs;
  Graph graph;
  std::unique_ptr<GraphAllocator> alloc;

  explicit Mixed(Device& dev) {
    Tensor* x = arena.new_tensor(DType::F32, {kD, kT}, "x");
    Tensor* g = arena.new_tensor(DType::F32, {kD}, "ln_w");
    Tensor* b = arena.new_tensor(DType::F32, {kD}, "ln_b");
    Tensor* bias = arena.new_tensor(DType::F32, {kD}, "bias");
    Tensor* w = arena.new_tensor(DType::F32, {kD, kD}, "w");
    Tensor* table = arena.new_tensor(DType::F32, {kD, kTable}, "table");
    Tensor* big = arena.new_tensor(DType::F32, {300, 100}, "big");
    Tensor* big_row = arena.new_tensor(DType::F32, {300}, "big_row");
    ids = arena.new_tensor(DType::I32, {kT}, "ids");
    Tensor* ids_big = arena.new_tensor(DType::I32, {kBigRows}, "ids_big");
    std::vector<Tensor*> dsts;
    for (int l = 0; l < kLayers; ++l) dsts.push_back(arena.new_tensor(DType::F32, {kD, kT}, "cache"));
    std::vector<Tensor*> leaves{x, g, b, bias, w, table, big, big_row, ids, ids_big};
    leaves.insert(leaves.end(), dsts.begin(), dsts.end());
    size_t total = 0;
    for (Tensor* t : leaves) total += (t->nbytes() + 63) / 64 * 64;
    leaves_buf = dev.buffer_type()->alloc(total);
    leaves_buf->set_usage(BufferUsage::Weights);
    size_t off = 0;
    std::mt19937 rng(11);
    std::uniform_real_distribution<float> u(-1.0f, 1.0f);
    for (Tensor* t : leaves) {
      leaves_buf->place(*t, off);
      off += (t->nbytes() + 63) / 64 * 64;
      if (t->type == DType::F32) {
        std::vector<float> v(static_cast<size_t>(t->nelements()));
        for (float& e : v) e = t == w ? 0.05f * u(rng) : u(rng);
        tensor_set(*t, v.data(), v.size() * sizeof(float));
      }
    }
    set_ids(-1);
    std::vector<int32_t> vb(static_cast<size_t>(kBigRows));
    for (size_t i = 0; i < vb.size(); ++i) vb[i] = static_cast<int32_t>(i * 7 % kTable);
    tensor_set(*ids_big, vb.data(), vb.size() * sizeof(int32_t));

    Tensor* h = x;
    Tensor* bigx = big;
    for (int l = 0; l < kLayers; ++l) {
      // a run of small nodes
      h = ops::layer_norm(arena, h, g, b, 1e-5f);
      h = ops::scale(arena, h, 0.5f, 0.1f);
      h = ops::add(arena, h, bias);
      h = ops::gelu(arena, h);
      // a parallel node
      h = ops::mul_mat(arena, w, h);
      // small: bias rows looked up by id (the op that can fail), a copy into a cache, softmax
      h = ops::add(arena, h, ops::get_rows(arena, table, ids));
      h = ops::copy(arena, h, dsts[static_cast<size_t>(l)]);
      h = ops::soft_max(arena, h, nullptr, 4.0f);
      h = ops::mul(arena, h, ops::cont(arena, h));
      // big element-wise nodes: parallel
      bigx = ops::gelu(arena, ops::add(arena, bigx, big_row));
      bigx = ops::scale(arena, bigx, 0.9f);
    }
    outputs.push_back(ops::scale(arena, h, 100.0f));
    outputs.push_back(ops::argmax(arena, h));
    outputs.push_back(ops::top_k(arena, h, 5));
    outputs.push_back(bigx);
    outputs.push_back(ops::layer_norm(arena, ops::get_rows(arena, table, ids_big), g, b, 1e-5f));
    for (Tensor* o : outputs) graph.build(o);
    alloc = std::make_unique<GraphAllocator>(dev.buffer_type());
    alloc->alloc(graph);
  }

  void set_ids(int bad_at) {
    std::vector<int32_t> v(static_cast<size_t>(kT));
    for (int i = 0; i < kT; ++i) v[static_cast<size_t>(i)] = i == bad_at ? 1000 : (i * 13 + 1) % kTable;
    tensor_set(*ids, v.data(), v.size() * sizeof(int32_t));
  }

  std::vector<std::vector<uint8_t>> results() const {
    std::vector<std::vector<uint8_t>> r;
    for (const Tensor* o : outputs) {
      r.emplace_back(o->nbytes());
      tensor_get(*o, r.back().data(), r.back().size());
    }
    return r;
  }

  std::vector<int> computed() const {
    std::vector<int> c;
    for (size_t i = 0; i < graph.size(); ++i)
      if (!op_is_view(graph.node(i)->op)) c.push_back(static_cast<int>(i));
    return c;
  }
};

TEST(CpuSmallNodes, MixedGraphMatchesReference) {
  Device* cpu_dev = Registry::global().find(kCpuDeviceName);
  Device* ref_dev = Registry::global().find(kReferenceDeviceName);
  ASSERT_NE(cpu_dev, nullptr);
  ASSERT_NE(ref_dev, nullptr);
  Mixed m(*cpu_dev);
  // The graph has both kinds, and runs of several small nodes.
  int n_small = 0, n_parallel = 0, longest_run = 0, run = 0;
  for (int i : m.computed()) {
    if (cpu::cpu_is_small_node(*m.graph.node(static_cast<size_t>(i)))) {
      ++n_small;
      longest_run = std::max(longest_run, ++run);
    } else {
      ++n_parallel;
      run = 0;
    }
  }
  EXPECT_GE(n_small, 8 * kLayers);
  EXPECT_GE(n_parallel, 3 * kLayers);
  EXPECT_GE(longest_run, 4);

  auto ref = ref_dev->init_backend();
  for (int n : {1, 2, 3}) {
    BackendParams p;
    p.n_threads = n;
    auto cpu = cpu_dev->init_backend(p);
    const CompareResult r = compare_backends(m.graph, *cpu, *ref);
    for (const NodeDiff& d : r.nodes) {
      const std::string where = std::to_string(n) + " threads, " + d.node->describe() + "\n" + r.report();
      if (d.node->type == DType::I32)
        EXPECT_TRUE(d.exact_int) << where;
      else
        EXPECT_LE(d.max_abs, 1e-4 + 1e-4 * d.max_ref) << where;
    }
  }
}

class CpuSmallNodesAbort : public testing::TestWithParam<int> {};

TEST_P(CpuSmallNodesAbort, AbortOrErrorInsideARunStopsAllThreads) {
  Device* dev = Registry::global().find(kCpuDeviceName);
  ASSERT_NE(dev, nullptr);
  BackendParams p;
  p.n_threads = GetParam();
  auto be = dev->init_backend(p);
  Mixed m(*dev);
  ASSERT_EQ(be->compute(m.graph), ComputeStatus::Ok);
  const auto want = m.results();
  const std::vector<int> computed = m.computed();
  const int n_computed = static_cast<int>(computed.size());
  auto small = [&](int k) {
    return cpu::cpu_is_small_node(*m.graph.node(static_cast<size_t>(computed[static_cast<size_t>(k)])));
  };
  int inside_runs = 0;
  for (int at = 0; at < n_computed; ++at) {
    // every node, but above all those in the middle of a run (small, with small neighbours)
    if (at > 0 && at + 1 < n_computed && small(at - 1) && small(at) && small(at + 1)) ++inside_runs;
    int calls = 0;
    be->set_abort_callback([&] { return ++calls > at; });
    ASSERT_EQ(be->compute(m.graph), ComputeStatus::Aborted) << "abort at node " << at;
    ASSERT_EQ(calls, at + 1) << "the callback is asked once per node, and no node runs after it fired";
    be->set_abort_callback(nullptr);
    ASSERT_EQ(be->compute(m.graph), ComputeStatus::Ok);
    ASSERT_EQ(m.results(), want) << "the backend must compute correctly after an abort at node " << at;
  }
  EXPECT_GE(inside_runs, 2 * kLayers);

  // A kernel error inside a run (get_rows with an id past the table), then a clean run.
  for (int bad = 0; bad < kT; ++bad) {
    m.set_ids(bad);
    EXPECT_THAT([&] { be->compute(m.graph); }, ThrowsMessage<Error>(HasSubstr("is outside table")));
    m.set_ids(-1);
    ASSERT_EQ(be->compute(m.graph), ComputeStatus::Ok);
    ASSERT_EQ(m.results(), want);
  }
}

INSTANTIATE_TEST_SUITE_P(Threads, CpuSmallNodesAbort, testing::Values(2, 4),
                         [](const testing::TestParamInfo<int>& info) {
                           return std::to_string(info.param) + "threads";
                         });

}  // namespace
}  // namespace hark
