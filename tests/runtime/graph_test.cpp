#include "runtime/graph.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <unordered_map>

#include "runtime/error.h"
#include "runtime/ops.h"

namespace hark {
namespace {

// Position of each node in the graph's node list.
std::unordered_map<const Tensor*, size_t> positions(const Graph& g) {
  std::unordered_map<const Tensor*, size_t> pos;
  for (size_t i = 0; i < g.size(); ++i) pos[g.node(i)] = i;
  return pos;
}

TEST(Graph, SourcesComeBeforeTheirNodes) {
  TensorArena a;
  Tensor* x = a.new_tensor(DType::F32, {8, 4}, "x");
  Tensor* w = a.new_tensor(DType::F32, {8, 6}, "w");
  Tensor* y = ops::mul_mat(a, w, ops::gelu(a, x));
  Tensor* z = ops::add(a, ops::scale(a, y, 2.0f), y);
  Tensor* out = ops::soft_max(a, ops::reshape(a, z, {24}), nullptr, 1.0f);

  Graph g;
  g.build(out);
  const auto pos = positions(g);
  ASSERT_EQ(g.size(), pos.size()) << "a node is listed twice";
  for (const Tensor* n : g.nodes())
    for (const Tensor* s : n->src) {
      if (!s || s->op == Op::None) continue;
      ASSERT_TRUE(pos.count(s)) << s->describe() << " is missing";
      EXPECT_LT(pos.at(s), pos.at(n)) << s->describe() << " must come before " << n->describe();
    }
  EXPECT_EQ(g.nodes().back(), out);
  ASSERT_EQ(g.outputs().size(), 1u);
  EXPECT_EQ(g.outputs()[0], out);
  EXPECT_TRUE(out->flags & kFlagOutput);
}

TEST(Graph, LeavesAreListedApartFromNodes) {
  TensorArena a;
  Tensor* x = a.new_tensor(DType::F32, {8, 4}, "x");
  Tensor* w = a.new_tensor(DType::F32, {8}, "w");
  Tensor* b = a.new_tensor(DType::F32, {8}, "b");
  Tensor* out = ops::layer_norm(a, x, w, b, 1e-5f);
  Graph g;
  g.build(out);
  EXPECT_THAT(g.leaves(), testing::UnorderedElementsAre(x, w, b));
  EXPECT_THAT(g.nodes(), testing::ElementsAre(out));
  for (const Tensor* l : g.leaves()) EXPECT_EQ(l->op, Op::None);
}

TEST(Graph, SharedSubexpressionsAreVisitedOnce) {
  TensorArena a;
  Tensor* x = a.new_tensor(DType::F32, {16}, "x");
  Tensor* shared = ops::gelu(a, x);
  // A diamond and a node reading the same source twice.
  Tensor* l = ops::scale(a, shared, 2.0f);
  Tensor* r = ops::scale(a, shared, 3.0f);
  Tensor* sum = ops::add(a, l, r);
  Tensor* out = ops::mul(a, sum, sum);
  Graph g;
  g.build(out);
  EXPECT_EQ(g.size(), 5u);
  EXPECT_EQ(g.leaves().size(), 1u);
  EXPECT_EQ(std::count(g.nodes().begin(), g.nodes().end(), shared), 1);

  // Building a second output that shares the graph adds only what is new.
  Tensor* out2 = ops::gelu(a, l);
  g.build(out2);
  EXPECT_EQ(g.size(), 6u);
  EXPECT_EQ(g.leaves().size(), 1u);
  EXPECT_THAT(g.outputs(), testing::ElementsAre(out, out2));
  g.build(out);  // again: nothing new, not listed twice
  EXPECT_EQ(g.size(), 6u);
  EXPECT_EQ(g.outputs().size(), 2u);
}

TEST(Graph, DeepChainDoesNotOverflowTheStack) {
  TensorArena a;
  Tensor* t = a.new_tensor(DType::F32, {4}, "x");
  const int depth = 10000;
  for (int i = 0; i < depth; ++i) t = ops::scale(a, t, 1.0f, 1.0f);
  Graph g;
  g.build(t);
  ASSERT_EQ(g.size(), static_cast<size_t>(depth));
  EXPECT_EQ(g.leaves().size(), 1u);
  for (size_t i = 1; i < g.size(); ++i) ASSERT_EQ(g.node(i)->src[0], g.node(i - 1));
}

TEST(Graph, ClearForgetsEverything) {
  TensorArena a;
  Tensor* x = a.new_tensor(DType::F32, {4}, "x");
  Tensor* y = ops::gelu(a, x);
  Graph g;
  g.build(y);
  g.clear();
  EXPECT_EQ(g.size(), 0u);
  EXPECT_TRUE(g.leaves().empty());
  EXPECT_TRUE(g.outputs().empty());
  g.build(y);  // visited set was cleared too, so the same tensors come back
  EXPECT_EQ(g.size(), 1u);
  EXPECT_EQ(g.leaves().size(), 1u);
}

TEST(Graph, NullOutputIsAnError) {
  Graph g;
  EXPECT_THAT([&] { g.build(nullptr); }, testing::ThrowsMessage<Error>(testing::HasSubstr("null")));
}

}  // namespace
}  // namespace hark
