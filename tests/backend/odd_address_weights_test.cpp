// Weights at odd addresses through every CPU kernel level.
//
// Model weights are used in place from the file mapping, which aligns nothing, so every op that
// reads weights must work on f32, f16 and quantized data starting at any byte. Here each weight
// is placed one byte past an aligned address and the results must equal, bit for bit, those of
// the same bytes placed aligned: mul_mat on the row-dot path (one activation row, several rows
// through dot_q_rows) and the GEMM path (own and, where built, OpenBLAS), get_rows, and the
// element-wise and layer-norm ops that read biases and gains. Every SIMD level this machine runs,
// 1 and 2 threads. Under UBSan (HARK_SANITIZE=ON) any typed read of the misaligned bytes fails.
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include "backend/buffer.h"
#include "backend/cpu/cpu_backend.h"
#include "backend/cpu/gemm_config.h"
#include "backend/device_registry.h"
#include "backend/graph_allocator.h"
#include "runtime/graph.h"
#include "runtime/ops.h"
#include "runtime/quant.h"

namespace hark {
namespace {

constexpr int64_t kK = 96;  // three blocks: odd block counts reach the kernels' single-block tails
constexpr int64_t kN = 7;
const DType kWeightTypes[] = {DType::F32, DType::F16, DType::Q4_0, DType::Q4_1, DType::Q5_0, DType::Q5_1, DType::Q8_0};

class OddAddressWeights : public ::testing::TestWithParam<DType> {
 protected:
  OddAddressWeights() {
    dev_ = Registry::global().find(kCpuDeviceName);
    backend_ = dev_->init_backend({1});
    cpu_ = dynamic_cast<cpu::CpuBackend*>(backend_.get());
  }

  // A leaf of `type` holding `values` (quantized), placed `offset` bytes into its own buffer.
  Tensor* leaf(DType type, std::initializer_list<int64_t> ne, const std::vector<float>& values, size_t offset,
               const char* name) {
    Tensor* t = arena_.new_tensor(type, ne, name);
    buffers_.push_back(dev_->buffer_type()->alloc(t->nbytes() + offset));
    buffers_.back()->place(*t, offset);
    std::vector<uint8_t> bytes(t->nbytes());
    quantize_rows(type, values.data(), bytes.data(), t->nrows(), t->ne[0]);
    tensor_set(*t, bytes.data(), bytes.size());
    if (offset % 2 == 1) {
      EXPECT_EQ(reinterpret_cast<uintptr_t>(t->data) % 2, 1u) << name;
    }
    return t;
  }

  std::vector<float> random(int64_t n, uint32_t seed) {
    std::mt19937 rng(seed);
    std::uniform_real_distribution<float> d(-1.0f, 1.0f);
    std::vector<float> v(static_cast<size_t>(n));
    for (float& e : v) e = d(rng);
    return v;
  }

  // A graph of some outputs, with its memory planned once (tensors keep pointing into it).
  struct Planned {
    std::vector<Tensor*> outs;
    Graph g;
    std::unique_ptr<GraphAllocator> ga;
  };
  std::unique_ptr<Planned> plan(std::vector<Tensor*> outs) {
    auto p = std::make_unique<Planned>();
    p->outs = std::move(outs);
    for (Tensor* o : p->outs) p->g.build(o);
    p->ga = std::make_unique<GraphAllocator>(dev_->buffer_type());
    p->ga->alloc(p->g);
    for (auto& [t, v] : inputs_)
      if (t->buffer) tensor_set(*t, v.data(), v.size() * sizeof(float));
    return p;
  }

  // The outputs (all f32), concatenated, computed at one level / thread count.
  std::vector<float> compute(const Planned& p, cpu::SimdLevel level, int threads) {
    cpu_->set_simd_level(level);
    cpu_->set_n_threads(threads);
    EXPECT_EQ(backend_->compute(p.g), ComputeStatus::Ok);
    std::vector<float> r;
    for (Tensor* o : p.outs) {
      std::vector<float> v(static_cast<size_t>(o->nelements()));
      tensor_get(*o, v.data(), v.size() * sizeof(float));
      r.insert(r.end(), v.begin(), v.end());
    }
    return r;
  }

  Tensor* input(std::initializer_list<int64_t> ne, uint32_t seed) {
    Tensor* t = arena_.new_tensor(DType::F32, ne, "x");
    t->flags |= kFlagInput;
    inputs_.emplace_back(t, random(t->nelements(), seed));
    return t;
  }

  // The ops under test with every weight at byte `offset` of its buffer.
  std::vector<Tensor*> build(DType type, size_t offset) {
    const auto wv = random(kK * kN, 1), table = random(kK * kN, 2), gain = random(kK, 3), bias = random(kK, 4);
    Tensor* w = leaf(type, {kK, kN}, wv, offset, "w");
    Tensor* emb = leaf(type, {kK, kN}, table, offset, "emb");
    Tensor* g = leaf(DType::F32, {kK}, gain, offset, "gain");
    Tensor* b = leaf(DType::F32, {kK}, bias, offset, "bias");
    Tensor* b16 = leaf(DType::F16, {kK}, bias, offset, "bias16");
    std::vector<Tensor*> outs;
    // mul_mat: one row (row dots), three rows (dot_q_rows for quantized weights), GEMM
    for (int64_t m : {int64_t{1}, int64_t{3}, cpu::kGemmMinRows + 3})
      outs.push_back(ops::mul_mat(arena_, w, input({kK, m}, static_cast<uint32_t>(10 + m))));
    // get_rows of every row, out of order and repeated
    Tensor* ids = arena_.new_tensor(DType::I32, {5}, "ids");
    buffers_.push_back(dev_->buffer_type()->alloc(ids->nbytes()));
    buffers_.back()->place(*ids, 0);
    const int32_t idv[5] = {6, 0, 3, 3, 1};
    tensor_set(*ids, idv, sizeof idv);
    outs.push_back(ops::get_rows(arena_, emb, ids));
    // gains and biases (f32 weights) through add, mul, layer_norm; an f16 bias converted
    Tensor* x = input({kK, 4}, 20);
    outs.push_back(ops::add(arena_, x, b));
    outs.push_back(ops::mul(arena_, x, g));
    outs.push_back(ops::layer_norm(arena_, x, g, b, 1e-5f));
    Tensor* b32 = arena_.new_tensor(DType::F32, {kK}, "b32");
    outs.push_back(ops::add(arena_, x, ops::copy(arena_, b16, b32)));
    return outs;
  }

  Device* dev_;
  std::unique_ptr<Backend> backend_;
  cpu::CpuBackend* cpu_;
  TensorArena arena_;
  std::vector<std::unique_ptr<Buffer>> buffers_;
  std::vector<std::pair<Tensor*, std::vector<float>>> inputs_;
};

TEST_P(OddAddressWeights, EqualToAlignedCopiesAtEveryLevel) {
  const DType type = GetParam();
  const auto odd = plan(build(type, 1));
  const auto aligned = plan(build(type, 0));
  std::vector<cpu::GemmImpl> impls = {cpu::GemmImpl::Own};
  if (cpu::gemm_blas_available()) impls.push_back(cpu::GemmImpl::Blas);
  const cpu::GemmImpl saved = cpu::gemm_impl();
  for (cpu::SimdLevel level : cpu::kSimdLevels) {
    if (!cpu::simd_level_supported(level)) continue;
    for (int threads : {1, 2}) {
      for (cpu::GemmImpl impl : impls) {
        SCOPED_TRACE(std::string(cpu::simd_level_name(level)) + ", " + std::to_string(threads) + " threads, gemm " +
                     cpu::gemm_impl_name(impl));
        cpu::set_gemm_impl(impl);
        const std::vector<float> a = compute(*odd, level, threads);
        const std::vector<float> b = compute(*aligned, level, threads);
        ASSERT_EQ(a.size(), b.size());
        for (size_t i = 0; i < a.size(); ++i) {
          ASSERT_TRUE(std::isfinite(a[i])) << i;
          ASSERT_EQ(a[i], b[i]) << "value " << i;
        }
      }
    }
  }
  cpu::set_gemm_impl(saved);
}

INSTANTIATE_TEST_SUITE_P(Types, OddAddressWeights, ::testing::ValuesIn(kWeightTypes),
                         [](const ::testing::TestParamInfo<DType>& i) { return std::string(dtype_name(i.param)); });

}  // namespace
}  // namespace hark
