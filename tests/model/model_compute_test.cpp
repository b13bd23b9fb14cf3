// Weights straight from the file mapping are usable by the CPU backend. Tensor data in a model
// file sits at arbitrary byte offsets (the format has no alignment), so kernels meet f32, f16 and
// quantized rows at odd addresses; results must equal those from an aligned copy of the weights.
#include <gtest/gtest.h>

#include <cmath>

#include "backend/device_registry.h"
#include "backend/graph_allocator.h"
#include "model/model_file.h"
#include "model/model_writer.h"
#include "model_test_util.h"
#include "runtime/graph.h"
#include "runtime/ops.h"

namespace hark {
namespace {

using namespace ops;

// y = w x for one weight of the model, x fixed; and the embedding rows of a few tokens.
std::vector<float> run(const ModelFile& mf, const std::string& weight, int64_t m) {
  Device* dev = Registry::global().find(kCpuDeviceName);
  std::unique_ptr<Backend> backend = dev->init_backend({2});
  TensorArena arena;
  Tensor* w = mf.tensor(weight);
  EXPECT_NE(w, nullptr) << weight;
  Tensor* x = arena.new_tensor(DType::F32, {w->ne[0], m}, "x");
  x->flags |= kFlagInput;
  Tensor* y = mul_mat(arena, w, x);
  Tensor* ids = arena.new_tensor(DType::I32, {3}, "ids");
  ids->flags |= kFlagInput;
  Tensor* rows = get_rows(arena, mf.weights().token_embedding, ids);
  Graph g;
  g.build(y);
  g.build(rows);
  GraphAllocator alloc(dev->buffer_type());
  alloc.alloc(g);
  std::vector<float> xv(static_cast<size_t>(x->nelements()));
  for (size_t i = 0; i < xv.size(); ++i) xv[i] = std::sin(0.37f * static_cast<float>(i));
  tensor_set(*x, xv.data(), xv.size() * sizeof(float));
  const int32_t idv[3] = {0, 50256, 51864};
  tensor_set(*ids, idv, sizeof idv);
  EXPECT_EQ(backend->compute(g), ComputeStatus::Ok);
  std::vector<float> res(static_cast<size_t>(y->nelements() + rows->nelements()));
  tensor_get(*y, res.data(), static_cast<size_t>(y->nelements()) * sizeof(float));
  tensor_get(*rows, res.data() + y->nelements(), static_cast<size_t>(rows->nelements()) * sizeof(float));
  return res;
}

class ModelCompute : public ::testing::TestWithParam<DType> {};

TEST_P(ModelCompute, MappedWeightsMatchAlignedCopies) {
  TestModelOptions o;
  ASSERT_TRUE(test_model_preset("micro", &o.hparams));
  o.weight_type = GetParam();
  testing::TempFile file(std::string("compute-") + dtype_name(GetParam()));
  write_test_model(o, file.path());
  std::unique_ptr<ModelFile> mapped = ModelFile::open(file.path());
  LoadOptions lo;
  lo.buffer_type = Registry::global().find(kCpuDeviceName)->buffer_type();
  std::unique_ptr<ModelFile> copied = ModelFile::open(file.path(), lo);
  ASSERT_TRUE(mapped->mapped());
  ASSERT_FALSE(copied->mapped());
  // The point of the test: some weights really are at addresses no type would align them to.
  int odd = 0;
  for (const TensorEntry& e : mapped->entries()) odd += reinterpret_cast<uintptr_t>(mapped->tensor(e.name)->data) % 2;
  ASSERT_GT(odd, 0) << "no weight at an odd address; the test would prove nothing";

  for (const char* weight : {"encoder.blocks.1.mlp.0.weight", "decoder.blocks.0.mlp.2.weight"}) {
    for (int64_t m : {1, 7, 64}) {  // row-dot and GEMM paths
      const std::vector<float> a = run(*mapped, weight, m);
      const std::vector<float> b = run(*copied, weight, m);
      ASSERT_EQ(a.size(), b.size());
      for (size_t i = 0; i < a.size(); ++i) {
        ASSERT_TRUE(std::isfinite(a[i])) << weight << " m=" << m << " i=" << i;
        ASSERT_EQ(a[i], b[i]) << weight << " m=" << m << " i=" << i;
      }
    }
  }
}

INSTANTIATE_TEST_SUITE_P(Model, ModelCompute,
                         ::testing::Values(DType::F32, DType::F16, DType::Q4_0, DType::Q4_1, DType::Q5_0, DType::Q5_1,
                                           DType::Q8_0),
                         [](const ::testing::TestParamInfo<DType>& i) { return std::string(dtype_name(i.param)); });

}  // namespace
}  // namespace hark
