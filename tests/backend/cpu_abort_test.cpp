// The CPU backend's ways out of a running graph: the abort callback and kernel errors. All pool
// threads must leave at the same node (one leaving early strands the others at a barrier), so
// these run long graphs many times, stopping at many node indices, with 1, 2 and 4 threads. A hang
// shows up as the test timing out.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <memory>
#include <random>
#include <vector>

#include "backend/buffer.h"
#include "backend/cpu/cpu_backend.h"
#include "backend/device_registry.h"
#include "backend/graph_allocator.h"
#include "runtime/error.h"
#include "runtime/ops.h"
#include "runtime/quant.h"

namespace hark {
namespace {

using testing::HasSubstr;
using testing::ThrowsMessage;

constexpr int64_t kDim = 64, kCols = 8;
constexpr int kLayers = 120;  // 3 computed nodes each: ~360 nodes
constexpr int64_t kTableRows = 16;

// A long chain: each layer is mul_mat (f32 or q8_0 weights, so both the row path and the
// activation-quantizing path with its barrier inside the op run), gelu, layer_norm; halfway,
// rows looked up by id are added in (get_rows: the op that can fail on bad input).
struct Chain {
  TensorArena arena;
  std::unique_ptr<Buffer> weights;
  Tensor* input = nullptr;
  Tensor* ids = nullptr;
  Tensor* output = nullptr;
  Graph graph;
  int n_computed = 0;  // non-view nodes: how often the abort callback is asked
  std::unique_ptr<GraphAllocator> alloc;
  std::unique_ptr<Buffer> out_buf;
  std::vector<float> in;

  explicit Chain(Device& dev) {
    Tensor* wf = arena.new_tensor(DType::F32, {kDim, kDim}, "wf");
    Tensor* wq = arena.new_tensor(DType::Q8_0, {kDim, kDim}, "wq");
    Tensor* table = arena.new_tensor(DType::F32, {kDim, kTableRows}, "table");
    ids = arena.new_tensor(DType::I32, {kCols}, "ids");
    input = arena.new_tensor(DType::F32, {kDim, kCols}, "input");
    input->flags |= kFlagInput;
    std::vector<Tensor*> leaves{wf, wq, table, ids};
    size_t total = 0;
    for (Tensor* t : leaves) total += (t->nbytes() + 63) / 64 * 64;
    weights = dev.buffer_type()->alloc(total);
    weights->set_usage(BufferUsage::Weights);
    size_t off = 0;
    for (Tensor* t : leaves) {
      weights->place(*t, off);
      off += (t->nbytes() + 63) / 64 * 64;
    }
    std::mt19937 rng(3);
    std::normal_distribution<float> dist(0.0f, 0.2f);
    std::vector<float> w(static_cast<size_t>(kDim * kDim));
    for (float& v : w) v = dist(rng);
    tensor_set(*wf, w.data(), w.size() * sizeof(float));
    std::vector<uint8_t> q(wq->nbytes());
    quantize_rows(DType::Q8_0, w.data(), q.data(), kDim, kDim);
    tensor_set(*wq, q.data(), q.size());
    std::vector<float> tv(static_cast<size_t>(kDim * kTableRows));
    for (float& v : tv) v = dist(rng);
    tensor_set(*table, tv.data(), tv.size() * sizeof(float));
    set_ids(-1);

    Tensor* x = input;
    for (int l = 0; l < kLayers; ++l) {
      x = ops::mul_mat(arena, l % 2 ? wq : wf, x);
      x = ops::gelu(arena, x);
      if (l == kLayers / 2) x = ops::add(arena, x, ops::get_rows(arena, table, ids));
      x = ops::layer_norm(arena, x, nullptr, nullptr, 1e-5f);
    }
    output = x;
    // The output in memory of its own: planned, it could share bytes with earlier nodes, and the
    // tests tell from its bytes whether the last node ran.
    out_buf = dev.buffer_type()->alloc(output->nbytes());
    out_buf->place(*output, 0);
    graph.build(output);
    for (const Tensor* n : graph.nodes())
      if (!op_is_view(n->op)) ++n_computed;
    alloc = std::make_unique<GraphAllocator>(dev.buffer_type());
    alloc->alloc(graph);
    in.resize(static_cast<size_t>(kDim * kCols));
    for (float& v : in) v = dist(rng);
    set_input();
  }

  void set_input() { tensor_set(*input, in.data(), in.size() * sizeof(float)); }

  // Ids 0..kCols-1, with `bad_at` (if in range) pointing past the table.
  void set_ids(int bad_at) {
    std::vector<int32_t> v(kCols);
    for (int i = 0; i < kCols; ++i) v[static_cast<size_t>(i)] = i == bad_at ? 1000 : i;
    tensor_set(*ids, v.data(), v.size() * sizeof(int32_t));
  }

  std::vector<float> result() const {
    std::vector<float> r(static_cast<size_t>(output->nelements()));
    tensor_get(*output, r.data(), r.size() * sizeof(float));
    return r;
  }
};

class CpuAbort : public testing::TestWithParam<int> {
 protected:
  void SetUp() override {
    dev_ = Registry::global().find(kCpuDeviceName);
    ASSERT_NE(dev_, nullptr);
    BackendParams p;
    p.n_threads = GetParam();
    be_ = dev_->init_backend(p);
    chain_ = std::make_unique<Chain>(*dev_);
    ASSERT_GT(chain_->n_computed, 300);
    ASSERT_EQ(be_->compute(chain_->graph), ComputeStatus::Ok);
    want_ = chain_->result();
    for (float v : want_) ASSERT_TRUE(std::isfinite(v));
  }

  // Aborts after computed node `at` (0-based); checks the status, the number of callback calls
  // and that the output (the last node) was not computed unless `at` is the last node.
  void abort_at(int at) {
    chain_->alloc->buffer()->clear(0xFF);  // NaN: bytes no node wrote
    chain_->out_buf->clear(0xFF);
    chain_->set_input();
    int calls = 0;
    be_->set_abort_callback([&] { return ++calls > at; });
    ASSERT_EQ(be_->compute(chain_->graph), ComputeStatus::Aborted) << "abort at node " << at;
    ASSERT_EQ(calls, at + 1) << "the callback is asked once per node, and no node runs after it fired";
    const float first = chain_->result()[0];
    if (at < chain_->n_computed - 1) {
      ASSERT_TRUE(std::isnan(first)) << "the output was computed though the graph aborted at node " << at;
    } else {
      ASSERT_EQ(chain_->result(), want_) << "an abort after the last node leaves the whole result";
    }
  }

  void expect_clean_run() {
    be_->set_abort_callback(nullptr);
    chain_->set_ids(-1);
    ASSERT_EQ(be_->compute(chain_->graph), ComputeStatus::Ok);
    ASSERT_EQ(chain_->result(), want_) << "the backend must compute correctly after an abort or error";
  }

  Device* dev_ = nullptr;
  std::unique_ptr<Backend> be_;
  std::unique_ptr<Chain> chain_;
  std::vector<float> want_;
};

TEST_P(CpuAbort, StopsAtEveryKindOfNodeIndexWithoutHanging) {
  const int n = chain_->n_computed;
  for (int at : {0, 1, 2, 3, n / 2, n - 2, n - 1}) {
    abort_at(at);
    if (HasFatalFailure()) return;
  }
  std::mt19937 rng(static_cast<uint32_t>(GetParam()));
  std::uniform_int_distribution<int> pick(0, n - 1);
  for (int loop = 0; loop < 200; ++loop) {
    abort_at(pick(rng));
    if (HasFatalFailure()) return;
  }
  expect_clean_run();
}

TEST_P(CpuAbort, CallbackFiringAfterTheLastNodeStillReportsAborted) {
  abort_at(chain_->n_computed - 1);
  if (HasFatalFailure()) return;
  expect_clean_run();
}

TEST_P(CpuAbort, ReusableAfterAbort) {
  for (int loop = 0; loop < 20; ++loop) {
    abort_at(loop * 7 % chain_->n_computed);
    if (HasFatalFailure()) return;
    expect_clean_run();
    if (HasFatalFailure()) return;
  }
}

// A kernel error on one thread (a bad id, seen only by the thread whose share holds it) reaches
// the caller as that error, with no hang, and the backend computes correctly afterwards.
TEST_P(CpuAbort, KernelErrorOnAnyThreadIsRethrown) {
  for (int loop = 0; loop < 50; ++loop) {
    const int bad_at = loop % 2 ? kCols - 1 : 0;  // last thread's share, first thread's share
    chain_->set_ids(bad_at);
    EXPECT_THAT([&] { be_->compute(chain_->graph); }, ThrowsMessage<Error>(HasSubstr("is outside table")));
    if (loop % 10 == 0) {
      expect_clean_run();
      if (HasFatalFailure()) return;
    }
  }
  expect_clean_run();
}

// The abort callback itself failing is an error of the compute, not a crash of a pool thread.
TEST_P(CpuAbort, ThrowingAbortCallbackIsReported) {
  int calls = 0;
  be_->set_abort_callback([&]() -> bool {
    if (++calls == 5) throw Error("callback broke");
    return false;
  });
  EXPECT_THAT([&] { be_->compute(chain_->graph); }, ThrowsMessage<Error>(HasSubstr("callback broke")));
  EXPECT_EQ(calls, 5);
  expect_clean_run();
}

INSTANTIATE_TEST_SUITE_P(Threads, CpuAbort, testing::Values(1, 2, 4),
                         [](const testing::TestParamInfo<int>& i) { return std::to_string(i.param) + "threads"; });

}  // namespace
}  // namespace hark
