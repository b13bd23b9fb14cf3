// Op tests in two parts.
//
// OpsRef: the reference backend checked against answers worked out by hand (or by composing
// other reference ops), since every other backend is judged by it.
// OpsCpu: the optimised CPU backend against the reference over random shapes with odd sizes,
// 1/2/3 threads, strided views and Whisper-sized shapes, through compare_backends. Each check
// states its tolerance as max |cpu - ref| <= atol + rtol * max |ref| over the node.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <limits>
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
#include "runtime/quant.h"

namespace hark {
namespace {

using Shape = std::array<int64_t, kMaxDims>;
constexpr float kInf = std::numeric_limits<float>::infinity();

struct Tol {
  double atol;
  double rtol;
};
constexpr Tol kExact{0.0, 0.0};

class OpsFixture : public ::testing::Test {
 protected:
  OpsFixture() {
    cpu_ = Registry::global().find(kCpuDeviceName)->init_backend({1});
    ref_ = Registry::global().find(kReferenceDeviceName)->init_backend();
  }

  // A leaf holding the given f32 values converted to `type`, in its own host buffer.
  Tensor* leaf(DType type, Shape ne, const std::vector<float>& values, const char* name = "x") {
    Tensor* t = arena_.new_tensor(type, ne, name);
    EXPECT_EQ(static_cast<int64_t>(values.size()), t->nelements());
    buffers_.push_back(host_.alloc(t->nbytes()));
    buffers_.back()->place(*t, 0);
    std::vector<uint8_t> bytes(t->nbytes());
    if (type == DType::I32) {
      for (size_t i = 0; i < values.size(); ++i) {
        const auto v = static_cast<int32_t>(values[i]);
        std::memcpy(bytes.data() + 4 * i, &v, 4);
      }
    } else {
      quantize_rows(type, values.data(), bytes.data(), t->nrows(), t->ne[0]);
    }
    tensor_set(*t, bytes.data(), bytes.size());
    return t;
  }

  std::vector<float> uniform(int64_t n, float lo = -1.0f, float hi = 1.0f) {
    std::uniform_real_distribution<float> d(lo, hi);
    std::vector<float> v(static_cast<size_t>(n));
    for (float& e : v) e = d(rng_);
    return v;
  }

  // A destination for copies: compare_backends wants every leaf to hold data.
  Tensor* zeros(DType type, Shape ne) {
    return leaf(type, ne, std::vector<float>(static_cast<size_t>(ne[0] * ne[1] * ne[2] * ne[3]), 0.0f), "dst");
  }

  Tensor* rand_leaf(DType type, Shape ne, float lo = -1.0f, float hi = 1.0f, const char* name = "x") {
    return leaf(type, ne, uniform(ne[0] * ne[1] * ne[2] * ne[3], lo, hi), name);
  }

  // Runs the graph of `out` on one backend and returns out's values (out must be contiguous).
  template <class T>
  std::vector<T> run(Backend& be, Tensor* out) {
    Graph g;
    g.build(out);
    GraphAllocator ga(be.device().buffer_type());
    ga.alloc(g);
    EXPECT_EQ(be.compute(g), ComputeStatus::Ok);
    std::vector<T> v(static_cast<size_t>(out->nelements()));
    tensor_get(*out, v.data(), v.size() * sizeof(T));
    return v;
  }
  std::vector<float> run_ref(Tensor* out) { return run<float>(*ref_, out); }
  std::vector<float> run_cpu(Tensor* out, int n_threads, cpu::SimdLevel level) {
    auto* cpu = dynamic_cast<cpu::CpuBackend*>(cpu_.get());
    cpu->set_simd_level(level);
    cpu->set_n_threads(n_threads);
    std::vector<float> v = run<float>(*cpu_, out);
    cpu->set_simd_level(cpu::best_simd_level());
    cpu->set_n_threads(1);
    return v;
  }
  std::vector<int32_t> run_ref_i32(Tensor* out) { return run<int32_t>(*ref_, out); }

  // The CPU backend against the reference on every computed node of out's graph.
  // Big shapes pass every_level = false: the best level only, to keep the suite fast (the
  // reference recomputes the whole graph for every comparison).
  void check(Tensor* out, Tol tol, std::initializer_list<int> threads = {1, 2, 3}, bool every_level = true) {
    Graph g;
    g.build(out);
    auto* cpu = dynamic_cast<cpu::CpuBackend*>(cpu_.get());
    ASSERT_NE(cpu, nullptr);
    // Every kernel level this machine runs and every thread count, pairing them round-robin
    // (max of the two counts runs in all): the ops lean on the kernels' contracts, in-place use
    // included, so each level must pass through them.
    std::vector<cpu::SimdLevel> levels;
    for (cpu::SimdLevel l : cpu::kSimdLevelsBestFirst)
      if (cpu::simd_level_supported(l) && (every_level || l == cpu::best_simd_level())) levels.push_back(l);
    const std::vector<int> counts(threads);
    for (size_t i = 0; i < std::max(levels.size(), counts.size()); ++i) {
      const cpu::SimdLevel level = levels[i % levels.size()];
      const int n = counts[i % counts.size()];
      cpu->set_simd_level(level);
      cpu->set_n_threads(n);
      const CompareResult r = compare_backends(g, *cpu_, *ref_);
      for (const NodeDiff& d : r.nodes) {
        const std::string where = std::string(cpu::simd_level_name(level)) + ", " + std::to_string(n) + " threads, " +
                                  d.node->describe() + "\n" + r.report();
        if (d.node->type == DType::I32)
          EXPECT_TRUE(d.exact_int) << where;
        else
          EXPECT_LE(d.max_abs, tol.atol + tol.rtol * d.max_ref) << where;
      }
    }
    cpu->set_simd_level(cpu::best_simd_level());
  }

  TensorArena arena_;
  HostBufferType host_{"ops-test"};
  std::vector<std::unique_ptr<Buffer>> buffers_;
  std::mt19937 rng_{20240601};
  std::unique_ptr<Backend> cpu_;
  std::unique_ptr<Backend> ref_;
};

std::vector<float> iota_values(int64_t n, float start = 0.0f) {
  std::vector<float> v(static_cast<size_t>(n));
  for (size_t i = 0; i < v.size(); ++i) v[i] = start + static_cast<float>(i);
  return v;
}

// ============================== reference, by hand ==============================

using OpsRef = OpsFixture;

TEST_F(OpsRef, ContOfTransposeAndF16RoundTrip) {
  // x [3, 2] = rows {0,1,2}, {3,4,5}; its transpose [2, 3] made contiguous is 0,3,1,4,2,5
  Tensor* x = leaf(DType::F32, {3, 2, 1, 1}, iota_values(6));
  EXPECT_THAT(run_ref(ops::cont(arena_, ops::transpose(arena_, x))), ::testing::ElementsAre(0, 3, 1, 4, 2, 5));
  // f32 -> f16 -> f32 keeps values f16 can hold exactly and rounds others to nearest
  Tensor* y = leaf(DType::F32, {4, 1, 1, 1}, {1.0f, -2.5f, 65504.0f, 1.0f + 1.0f / 4096});
  Tensor* h = ops::copy(arena_, y, arena_.new_tensor(DType::F16, {4}));
  Tensor* back = ops::copy(arena_, h, arena_.new_tensor(DType::F32, {2, 2}));
  EXPECT_THAT(run_ref(back), ::testing::ElementsAre(1.0f, -2.5f, 65504.0f, 1.0f));
}

TEST_F(OpsRef, CopyQuantizesLikeQuantRow) {
  const std::vector<float> v = uniform(64);
  Tensor* x = leaf(DType::F32, {64, 1, 1, 1}, v);
  Tensor* q = ops::copy(arena_, x, arena_.new_tensor(DType::Q8_0, {64}));
  Tensor* f = ops::get_rows(arena_, q, leaf(DType::I32, {1, 1, 1, 1}, {0}));
  std::vector<uint8_t> bytes(dtype_row_bytes(DType::Q8_0, 64));
  std::vector<float> want(64);
  quantize_row(DType::Q8_0, v.data(), bytes.data(), 64);
  dequantize_row(DType::Q8_0, bytes.data(), want.data(), 64);
  EXPECT_EQ(run_ref(f), want);
}

TEST_F(OpsRef, GetRowsConcatIm2Col) {
  Tensor* table = leaf(DType::F16, {2, 3, 1, 1}, iota_values(6));
  Tensor* ids = leaf(DType::I32, {4, 1, 1, 1}, {2, 0, 2, 1});
  EXPECT_THAT(run_ref(ops::get_rows(arena_, table, ids)), ::testing::ElementsAre(4, 5, 0, 1, 4, 5, 2, 3));

  Tensor* a = leaf(DType::F32, {2, 2, 1, 1}, {1, 2, 3, 4});
  Tensor* b = leaf(DType::F32, {1, 2, 1, 1}, {9, 8});
  EXPECT_THAT(run_ref(ops::concat(arena_, a, b, 0)), ::testing::ElementsAre(1, 2, 9, 3, 4, 8));
  Tensor* c = leaf(DType::F32, {2, 1, 1, 1}, {7, 6});
  EXPECT_THAT(run_ref(ops::concat(arena_, a, c, 1)), ::testing::ElementsAre(1, 2, 3, 4, 7, 6));

  // x [Cin=2, L=3]: channel 0 = 1,2,3 and channel 1 = 10,20,30 (so x[c, t] is at c + 2t)
  Tensor* x = leaf(DType::F32, {2, 3, 1, 1}, {1, 10, 2, 20, 3, 30});
  // K=3, stride 2, padding 1: Lout = (3 + 2 - 3) / 2 + 1 = 2; column t holds x[c, 2t - 1 + k]
  Tensor* cols = ops::im2col(arena_, x, 3, 2, 1);
  ASSERT_EQ(cols->ne[0], 6);
  ASSERT_EQ(cols->ne[1], 2);
  EXPECT_THAT(run_ref(cols), ::testing::ElementsAre(0, 1, 2, 0, 10, 20,    // t = 0: positions -1, 0, 1
                                                    2, 3, 0, 20, 30, 0));  // t = 1: positions 1, 2, 3
}

// A batch [Cin, L, B]: each item unfolded on its own, its padding its own (no item sees another).
TEST_F(OpsRef, Im2ColBatchUnfoldsEachItemAlone) {
  Tensor* x = leaf(DType::F32, {1, 3, 2, 1}, {1, 2, 3, 4, 5, 6});  // items 1,2,3 and 4,5,6
  Tensor* cols = ops::im2col(arena_, x, 3, 2, 1);
  ASSERT_EQ(cols->ne[2], 2);
  EXPECT_THAT(run_ref(cols), ::testing::ElementsAre(0, 1, 2, 2, 3, 0,    // item 0: t = 0, 1
                                                    0, 4, 5, 5, 6, 0));  // item 1
  EXPECT_THROW(ops::im2col(arena_, leaf(DType::F32, {1, 3, 1, 2}, iota_values(6)), 3, 1, 1), Error);
}

TEST_F(OpsRef, AddMulBroadcastScaleGelu) {
  Tensor* x = leaf(DType::F32, {4, 2, 1, 1}, iota_values(8));
  Tensor* row = leaf(DType::F32, {2, 1, 1, 1}, {100, 200});  // repeats along dim 0 and over rows
  EXPECT_THAT(run_ref(ops::add(arena_, x, row)), ::testing::ElementsAre(100, 201, 102, 203, 104, 205, 106, 207));
  Tensor* col = leaf(DType::F32, {1, 2, 1, 1}, {2, -1});  // one value per row
  EXPECT_THAT(run_ref(ops::mul(arena_, x, col)), ::testing::ElementsAre(0, 2, 4, 6, -4, -5, -6, -7));
  EXPECT_THAT(run_ref(ops::scale(arena_, x, 0.5f, 1.0f)), ::testing::ElementsAre(1, 1.5, 2, 2.5, 3, 3.5, 4, 4.5));
  Tensor* g = leaf(DType::F32, {3, 1, 1, 1}, {-1.0f, 0.0f, 2.0f});
  EXPECT_THAT(run_ref(ops::gelu(arena_, g)),
              ::testing::Pointwise(::testing::FloatNear(1e-6f), std::vector<float>{-0.158655254f, 0.0f, 1.954499736f}));
}

TEST_F(OpsRef, UnaryFunctions) {
  Tensor* x = leaf(DType::F32, {4, 1, 1, 1}, {-2.0f, 0.0f, 0.5f, 4.0f});
  EXPECT_THAT(run_ref(ops::relu(arena_, x)), ::testing::ElementsAre(0.0f, 0.0f, 0.5f, 4.0f));
  EXPECT_THAT(run_ref(ops::sigmoid(arena_, x)),
              ::testing::Pointwise(::testing::FloatNear(1e-7f),
                                   std::vector<float>{0.119202922f, 0.5f, 0.622459331f, 0.982013790f}));
  EXPECT_THAT(run_ref(ops::unary(arena_, x, UnaryOp::Tanh)),
              ::testing::Pointwise(::testing::FloatNear(1e-7f),
                                   std::vector<float>{-0.964027580f, 0.0f, 0.462117157f, 0.999329300f}));
  Tensor* sq = leaf(DType::F32, {3, 1, 1, 1}, {0.0f, 2.25f, 16.0f});
  EXPECT_THAT(run_ref(ops::unary(arena_, sq, UnaryOp::Sqrt)), ::testing::ElementsAre(0.0f, 1.5f, 4.0f));
  // nearest f16: 1 + 2^-11 is halfway between 1 and 1 + 2^-10 (ties to even: 1); 1 + 3 * 2^-12
  // rounds up; 70000 is beyond f16's range (inf)
  Tensor* r = leaf(DType::F32, {4, 1, 1, 1}, {1.0f + 1.0f / 2048, 1.0f + 3.0f / 4096, -0.1f, 70000.0f});
  EXPECT_THAT(run_ref(ops::unary(arena_, r, UnaryOp::RoundF16)),
              ::testing::ElementsAre(1.0f, 1.0f + 1.0f / 1024, -0.0999755859375f, kInf));
}

TEST_F(OpsRef, PadReflectMirrorsWithoutRepeatingTheEdge) {
  // rows {1,2,3,4} and {5,6,7,8}: 2 in front mirror positions 2, 1; 3 behind mirror 2, 1, 0
  Tensor* x = leaf(DType::F32, {4, 2, 1, 1}, {1, 2, 3, 4, 5, 6, 7, 8});
  EXPECT_THAT(run_ref(ops::pad_reflect(arena_, x, 2, 3)),
              ::testing::ElementsAre(3, 2, 1, 2, 3, 4, 3, 2, 1, 7, 6, 5, 6, 7, 8, 7, 6, 5));
  EXPECT_THAT(run_ref(ops::pad_reflect(arena_, x, 0, 0)), ::testing::ElementsAre(1, 2, 3, 4, 5, 6, 7, 8));
}

TEST_F(OpsRef, LayerNorm) {
  Tensor* x = leaf(DType::F32, {4, 1, 1, 1}, {1, 2, 3, 4});  // mean 2.5, variance 1.25
  Tensor* w = leaf(DType::F32, {4, 1, 1, 1}, {1, 1, 2, 2});
  Tensor* b = leaf(DType::F32, {4, 1, 1, 1}, {0, 0, 0, 1});
  const float s = 1.0f / std::sqrt(1.25f);
  EXPECT_THAT(run_ref(ops::layer_norm(arena_, x, w, b, 0.0f)),
              ::testing::Pointwise(::testing::FloatNear(1e-6f),
                                   std::vector<float>{-1.5f * s, -0.5f * s, 1.0f * s, 3.0f * s + 1.0f}));
}

TEST_F(OpsRef, SoftMaxScaleMaskCausal) {
  // 3 columns, 2 rows; causal offset ne0 - ne1 = 1: row 0 sees columns 0..1, row 1 sees all
  Tensor* x = leaf(DType::F32, {3, 2, 1, 1}, {0, 2, 4, 0, 0, 0});
  Tensor* mask = leaf(DType::F32, {3, 3, 1, 1}, {0, 0, 0, 0, -kInf, 0, 9, 9, 9});  // extra row unused
  const std::vector<float> got = run_ref(ops::soft_max(arena_, x, mask, 0.5f, true));
  const float e = std::exp(1.0f);
  EXPECT_THAT(got, ::testing::Pointwise(::testing::FloatNear(1e-6f),
                                        std::vector<float>{1 / (1 + e), e / (1 + e), 0, 0.5f, 0, 0.5f}));
  // more rows than columns: rows whose causal window is empty are zeros, not NaN
  Tensor* tall = leaf(DType::F32, {2, 4, 1, 1}, iota_values(8));
  EXPECT_THAT(run_ref(ops::soft_max(arena_, tall, nullptr, 1.0f, true)),
              ::testing::Pointwise(::testing::FloatNear(1e-6f),
                                   std::vector<float>{0, 0, 0, 0, 1, 0, 1 / (1 + e), e / (1 + e)}));
}

TEST_F(OpsRef, ArgmaxAndTopKBreakTiesByLowerIndex) {
  Tensor* x = leaf(DType::F32, {5, 2, 1, 1}, {1, 3, 3, 0, 3, /**/ -1, -2, -1, -5, -1});
  EXPECT_THAT(run_ref_i32(ops::argmax(arena_, x)), ::testing::ElementsAre(1, 0));
  EXPECT_THAT(run_ref_i32(ops::top_k(arena_, x, 4)), ::testing::ElementsAre(1, 2, 4, 0, /**/ 0, 2, 4, 1));
}

TEST_F(OpsRef, MulMatBroadcastsWeightsOverRunsOfBatches) {
  // w: 2 matrices [K=2, N=1]; x: 4 batches [K=2, M=1]; batches 0,1 use w0 and 2,3 use w1
  Tensor* w = leaf(DType::F16, {2, 1, 2, 1}, {1, 2, /**/ 10, 20});
  Tensor* x = leaf(DType::F32, {2, 1, 4, 1}, {1, 1, 2, 0, 0, 3, 1, -1});
  EXPECT_THAT(run_ref(ops::mul_mat(arena_, w, x)), ::testing::ElementsAre(3, 2, 60, -10));
}

// Flash attention must equal the unfused composition softmax(K^T Q * scale + mask) V (computed
// with the other reference ops), here with 2 query heads per K/V head and the causal offset.
TEST_F(OpsRef, FlashAttnEqualsUnfusedAttention) {
  const int64_t D = 8, nq = 3, nk = 5, H = 4, hkv = 2;
  Tensor* q = rand_leaf(DType::F32, {D, nq, H, 1}, -2, 2, "q");
  Tensor* k = rand_leaf(DType::F32, {D, nk, hkv, 1}, -2, 2, "k");
  Tensor* v = rand_leaf(DType::F32, {D, nk, hkv, 1}, -2, 2, "v");
  std::vector<float> mv = uniform(nk * nq, -1, 0);
  mv[1] = -kInf;
  Tensor* mask = leaf(DType::F32, {nk, nq, 1, 1}, mv, "mask");
  const float scale = 0.35f;
  const std::vector<float> fused = run_ref(ops::flash_attn(arena_, q, k, v, mask, scale, true));

  for (int64_t h = 0; h < H; ++h) {
    Tensor* qh = ops::slice(arena_, q, 2, h, h + 1);
    Tensor* kh = ops::slice(arena_, k, 2, h / 2, h / 2 + 1);
    Tensor* vh = ops::slice(arena_, v, 2, h / 2, h / 2 + 1);
    Tensor* kq = ops::mul_mat(arena_, kh, qh);                          // [nk, nq]
    Tensor* p = ops::soft_max(arena_, kq, mask, scale, true);           // [nk, nq]
    Tensor* vt = ops::cont(arena_, ops::transpose(arena_, vh));         // [nk, D]
    const std::vector<float> o = run_ref(ops::mul_mat(arena_, vt, p));  // [D, nq]
    for (int64_t i = 0; i < nq; ++i)
      for (int64_t d = 0; d < D; ++d)
        EXPECT_NEAR(fused[static_cast<size_t>(d + D * (h + H * i))], o[static_cast<size_t>(d + D * i)], 1e-5)
            << "head " << h << " query " << i << " dim " << d;
  }
}

// No op computes in place: every op may read any source element after writing any result
// element (mul_mat, transposes, softmax over strided rows, ...). So the memory plan must never
// give a node bytes that overlap a source it reads, even one whose last reader it is.
TEST_F(OpsRef, NodesNeverShareBytesWithTheirSources) {
  Tensor* x = rand_leaf(DType::F32, {24, 16, 1, 1});
  Tensor* y = rand_leaf(DType::F32, {24, 5, 1, 1});
  Tensor* t = ops::cont(arena_, ops::transpose(arena_, x));  // [16, 24]
  Tensor* s = ops::scale(arena_, t, 2.0f);                   // last reader of t
  Tensor* w = ops::cont(arena_, ops::transpose(arena_, s));  // [24, 16]
  Tensor* out = ops::soft_max(arena_, ops::mul_mat(arena_, w, y), nullptr, 1.0f);
  Graph g;
  g.build(out);
  GraphAllocator ga(ref_->device().buffer_type());
  ga.alloc(g);
  for (const Tensor* n : g.nodes()) {
    if (op_is_view(n->op)) continue;
    const auto* nb = static_cast<const uint8_t*>(n->data);
    for (const Tensor* src : n->src) {
      if (!src) continue;
      const auto* sb = static_cast<const uint8_t*>(src->data);
      EXPECT_TRUE(nb + n->nbytes() <= sb || sb + src->nbytes() <= nb)
          << n->describe() << " was given bytes of its source " << src->describe();
    }
  }
}

// ============================== CPU against the reference ==============================

using OpsCpu = OpsFixture;

TEST_F(OpsCpu, CopyAndContConvertAndFollowStrides) {
  const Tol tol = kExact;  // moves and f16 rounding are exact, and quantizing uses quant.h itself
  for (int64_t cols : {1, 3, 17, 96}) {
    Tensor* x = rand_leaf(DType::F32, {cols, 5, 3, 2}, -4, 4);
    check(ops::cont(arena_, ops::permute(arena_, x, 2, 0, 3, 1)), tol);
    Tensor* h = ops::copy(arena_, x, zeros(DType::F16, x->ne));
    check(ops::copy(arena_, ops::permute(arena_, h, 1, 0, 2, 3), zeros(DType::F32, {5 * cols, 6, 1, 1})), tol);
    Tensor* xi = rand_leaf(DType::I32, {cols, 4, 1, 1}, -1000, 1000);
    check(ops::cont(arena_, ops::transpose(arena_, xi)), tol);
  }
  // f32 -> each quantized type, from a strided source into a different shape
  for (DType qt : {DType::Q4_0, DType::Q4_1, DType::Q5_0, DType::Q5_1, DType::Q8_0}) {
    Tensor* x = rand_leaf(DType::F32, {3, 64, 2, 1});
    Tensor* q = ops::copy(arena_, ops::transpose(arena_, x), zeros(qt, {96, 4, 1, 1}));
    check(ops::cont(arena_, q), tol);  // same-type (block) copy of the quantized result
  }
  // one long row: the split must be by elements, not rows (3 threads, 1 row)
  Tensor* lr = rand_leaf(DType::F32, {1, 5000, 1, 1});
  check(ops::copy(arena_, lr, zeros(DType::F16, {5000, 1, 1, 1})), tol);
}

TEST_F(OpsCpu, CopyIntoKvCacheViews) {
  // K cache rows written at an offset; V written transposed (a strided destination, which
  // compare_backends cannot read back, so each backend's caches are read whole and checked).
  const int64_t D = 6, n = 5, ctx = 9, off = 2;
  const std::vector<float> cv = uniform(D * n);
  Tensor* cur = leaf(DType::F32, {D, n, 1, 1}, cv, "cur");
  const std::vector<float> zero(static_cast<size_t>(D * ctx), 0.0f);
  std::vector<f16_t> want_k(zero.size(), 0), want_v(zero.size(), 0);
  for (int64_t i = 0; i < n; ++i)
    for (int64_t d = 0; d < D; ++d) {
      const f16_t h = f32_to_f16(cv[static_cast<size_t>(d + D * i)]);
      want_k[static_cast<size_t>(d + D * (off + i))] = h;  // kc [D, ctx]: row off+i
      want_v[static_cast<size_t>(off + i + ctx * d)] = h;  // vc [ctx, D]: column off+i
    }
  for (int threads : {1, 3}) {
    cpu_->set_n_threads(threads);
    for (Backend* be : {cpu_.get(), ref_.get()}) {
      Tensor* kc = leaf(DType::F16, {D, ctx, 1, 1}, zero, "kcache");
      Tensor* vc = leaf(DType::F16, {ctx, D, 1, 1}, zero, "vcache");
      Tensor* kdst = ops::view(arena_, kc, {D, n}, {kc->nb[1]}, off * kc->nb[1]);
      Tensor* vdst = ops::view(arena_, vc, {n, D}, {vc->nb[1]}, off * vc->nb[0]);
      Tensor* kw = ops::copy(arena_, cur, kdst);
      Tensor* vw = ops::copy(arena_, cur, ops::transpose(arena_, vdst));
      run<f16_t>(*be, ops::concat(arena_, ops::cont(arena_, kw), ops::cont(arena_, vw), 1));
      std::vector<f16_t> got_k(zero.size()), got_v(zero.size());
      tensor_get(*kc, got_k.data(), got_k.size() * sizeof(f16_t));
      tensor_get(*vc, got_v.data(), got_v.size() * sizeof(f16_t));
      EXPECT_EQ(got_k, want_k) << be->name() << ", " << threads << " threads";
      EXPECT_EQ(got_v, want_v) << be->name() << ", " << threads << " threads";
    }
  }
}

TEST_F(OpsCpu, GetRowsEveryTableType) {
  const Tol tol{1e-7, 1e-6};  // kernel dequantization vs quant.h: same arithmetic
  for (DType t : {DType::F32, DType::F16, DType::Q4_0, DType::Q4_1, DType::Q5_0, DType::Q5_1, DType::Q8_0}) {
    Tensor* table = rand_leaf(t, {96, 37, 1, 1}, -3, 3, "table");
    Tensor* ids = leaf(DType::I32, {7, 1, 1, 1}, {36, 0, 5, 5, 17, 1, 36}, "ids");
    check(ops::get_rows(arena_, table, ids), tol);
  }
  // a strided (transposed) f32 table
  Tensor* tt = rand_leaf(DType::F32, {11, 17, 1, 1});
  Tensor* ids = leaf(DType::I32, {3, 1, 1, 1}, {10, 0, 3});
  check(ops::get_rows(arena_, ops::transpose(arena_, tt), ids), kExact);
  // Whisper's token embedding: 51865 x 384 f16
  Tensor* emb = rand_leaf(DType::F16, {384, 51865, 1, 1}, -1, 1, "token_embedding");
  Tensor* tok = leaf(DType::I32, {4, 1, 1, 1}, {50258, 50259, 50359, 51864});
  check(ops::get_rows(arena_, emb, tok), kExact, {2}, false);
}

TEST_F(OpsCpu, ConcatEveryDimAndType) {
  for (DType t : {DType::F32, DType::F16, DType::I32}) {
    for (int dim = 0; dim < 4; ++dim) {
      Shape a{3, 5, 2, 2}, b = a;
      b[dim] = dim == 0 ? 17 : 1;
      Tensor* x = rand_leaf(t, a, -100, 100);
      Tensor* y = rand_leaf(t, b, -100, 100);
      check(ops::concat(arena_, x, y, dim), kExact, {1, 3});
    }
  }
  // a permuted operand
  Tensor* x = rand_leaf(DType::F32, {5, 3, 1, 1});
  Tensor* y = rand_leaf(DType::F32, {3, 2, 1, 1});
  check(ops::concat(arena_, ops::transpose(arena_, x), y, 1), kExact);
}

TEST_F(OpsCpu, Im2ColWhisperConvolutions) {
  // conv1: mel [L=3000, 80] seen transposed as [Cin=80, L] (strided), K=3, stride 1, padding 1
  Tensor* mel = rand_leaf(DType::F32, {3000, 80, 1, 1}, -1, 1, "mel");
  check(ops::im2col(arena_, ops::transpose(arena_, mel), 3, 1, 1), kExact, {3});
  // conv2: [Cin=64, L=3000], K=3, stride 2, padding 1 -> Lout 1500
  Tensor* h = rand_leaf(DType::F32, {64, 3000, 1, 1});
  check(ops::im2col(arena_, h, 3, 2, 1), kExact, {2});
  // odd sizes: kernel longer than stride, no padding, kernel 1
  for (int K : {1, 2, 5}) {
    Tensor* x = rand_leaf(DType::F32, {3, 17, 1, 1});
    check(ops::im2col(arena_, x, K, 3, K / 2), kExact);
  }
  // a batch, split over the threads across items: Silero's STFT over 7 frames
  check(ops::im2col(arena_, rand_leaf(DType::F32, {1, 640, 7, 1}), 256, 128, 0), kExact, {1, 3});
}

// mul_mat has its own tests; this holds it to the reference backend too, and runs conv1d
// (im2col + mul_mat) at the shape of Whisper's first convolution.
TEST_F(OpsCpu, MulMatAndConv1dAgainstReference) {
  // f32/f16 weights: f32 sums of exact products. Quantized weights meet activations quantized to
  // 8 bits (q8a), an error of up to half a step of max|x|/127 per value, so 1% of the largest
  // result is allowed there.
  for (DType t : {DType::F32, DType::F16, DType::Q4_0, DType::Q4_1, DType::Q5_0, DType::Q5_1, DType::Q8_0}) {
    const Tol tol = dtype_quantized(t) ? Tol{0.0, 1e-2} : Tol{1e-5, 1e-5};
    Tensor* w = rand_leaf(t, {96, 33, 1, 1}, -1, 1, "w");
    for (int64_t m : {1, 3, 40}) check(ops::mul_mat(arena_, w, rand_leaf(DType::F32, {96, m, 1, 1})), tol, {1, 3});
  }
  // batched, with the weights broadcast over runs of activation batches
  Tensor* wb = rand_leaf(DType::F16, {64, 17, 2, 1}, -1, 1, "w");
  check(ops::mul_mat(arena_, wb, rand_leaf(DType::F32, {64, 5, 4, 1})), {1e-5, 1e-5}, {2});
  // conv1: kernel [K=3, Cin=80, Cout=64] f16 over a mel [3000, 80] seen as [80, 3000]
  Tensor* kern = rand_leaf(DType::F16, {3, 80, 64, 1}, -0.2f, 0.2f, "conv1.weight");
  Tensor* mel = rand_leaf(DType::F32, {3000, 80, 1, 1}, -1, 1, "mel");
  check(ops::conv1d(arena_, kern, ops::transpose(arena_, mel), 1, 1), {1e-5, 1e-5}, {2}, false);
  // a batch of inputs through one product: each item as its own conv1d gives the same bits
  Tensor* k2 = rand_leaf(DType::F16, {3, 16, 8, 1}, -0.5f, 0.5f, "k");
  Tensor* xs = rand_leaf(DType::F32, {16, 4, 5, 1});
  Tensor* batched = ops::conv1d(arena_, k2, xs, 2, 1);
  ASSERT_EQ(batched->ne, (Shape{8, 2, 5, 1}));
  check(batched, {1e-5, 1e-5}, {1, 2});
  for (cpu::SimdLevel level : cpu::kSimdLevelsBestFirst) {
    if (!cpu::simd_level_supported(level)) continue;
    const std::vector<float> all = run_cpu(batched, 2, level);
    for (int64_t b = 0; b < 5; ++b) {
      Tensor* item = ops::cont(arena_, ops::slice(arena_, xs, 2, b, b + 1));
      const std::vector<float> one = run_cpu(ops::conv1d(arena_, k2, item, 2, 1), 1, level);
      EXPECT_EQ(one, std::vector<float>(all.begin() + b * 16, all.begin() + (b + 1) * 16))
          << cpu::simd_level_name(level) << ", item " << b;
    }
  }
}

// mul_mat_bias is mul_mat, add and gelu in one node: against the reference on every path (row
// dots for f32, f16 and quantized weights, the GEMM, batches), and on the CPU bit for bit the
// three ops in turn at every kernel level and thread count.
TEST_F(OpsCpu, MulMatBiasIsMulMatThenAddThenGelu) {
  for (DType t : {DType::F32, DType::F16, DType::Q8_0, DType::Q5_0}) {
    const Tol tol = dtype_quantized(t) ? Tol{0.0, 1e-2} : Tol{1e-5, 1e-5};
    Tensor* w = rand_leaf(t, {64, 37, 1, 1}, -1, 1, "w");
    Tensor* b = rand_leaf(DType::F32, {37, 1, 1, 1}, -1, 1, "b");
    for (int64_t m : {1, 5, 40}) {
      Tensor* x = rand_leaf(DType::F32, {64, m, 2, 1});
      for (bool gelu : {false, true}) {
        Tensor* fused = ops::mul_mat_bias(arena_, w, x, b, gelu);
        check(fused, tol, {1, 2});
        Tensor* plain = ops::add(arena_, ops::mul_mat(arena_, w, x), b);
        if (gelu) plain = ops::gelu(arena_, plain);
        // and a residual added after (the output projections): contiguous, or rows apart
        Tensor* r = rand_leaf(DType::F32, {37, m, 2, 1}, -1, 1, "r");
        Tensor* wide = rand_leaf(DType::F32, {41, m, 2, 1}, -1, 1, "wide");
        Tensor* r_strided = ops::slice(arena_, wide, 0, 2, 39);
        Tensor* fused_r = ops::mul_mat_bias(arena_, w, x, b, gelu, r);
        Tensor* fused_rs = ops::mul_mat_bias(arena_, w, x, b, gelu, r_strided);
        check(fused_r, tol, {2});
        Tensor* plain_r = ops::add(arena_, r, plain);
        Tensor* plain_rs = ops::add(arena_, r_strided, plain);
        for (cpu::SimdLevel level : cpu::kSimdLevelsBestFirst) {
          if (!cpu::simd_level_supported(level)) continue;
          for (int n : {1, 3}) {
            const std::string what = std::string(dtype_name(t)) + " m=" + std::to_string(m) +
                                     " gelu=" + std::to_string(gelu) + " " + cpu::simd_level_name(level) + " " +
                                     std::to_string(n) + " threads";
            EXPECT_EQ(run_cpu(fused, n, level), run_cpu(plain, n, level)) << what;
            EXPECT_EQ(run_cpu(fused_r, n, level), run_cpu(plain_r, n, level)) << what << " residual";
            EXPECT_EQ(run_cpu(fused_rs, n, level), run_cpu(plain_rs, n, level)) << what << " strided residual";
          }
        }
      }
    }
  }
  // a conv1d with its bias and GELU (the encoder's convolutions), and a batch of inputs
  Tensor* kern = rand_leaf(DType::F16, {3, 16, 24, 1}, -0.5f, 0.5f, "k");
  Tensor* bias = rand_leaf(DType::F32, {1, 24, 1, 1}, -1, 1, "b");  // stored [1, Cout]
  for (Tensor* in : {rand_leaf(DType::F32, {16, 50, 1, 1}), rand_leaf(DType::F32, {16, 9, 4, 1})}) {
    Tensor* fused = ops::conv1d(arena_, kern, in, 2, 1, bias, true);
    check(fused, {1e-5, 1e-5}, {2});
    const Shape ne = fused->ne;
    Tensor* plain =
        ops::gelu(arena_, ops::add(arena_, ops::conv1d(arena_, kern, in, 2, 1), ops::reshape(arena_, bias, {24})));
    ASSERT_EQ(plain->ne, ne);
    EXPECT_EQ(run_cpu(fused, 2, cpu::best_simd_level()), run_cpu(plain, 2, cpu::best_simd_level()));
  }
}

TEST_F(OpsCpu, AddMulBroadcastAndStrides) {
  const Tol tol{1e-7, 1e-7};
  for (int64_t cols : {1, 3, 17, 1500}) {
    Tensor* x = rand_leaf(DType::F32, {cols, 7, 3, 2});
    const std::vector<Shape> ys = {{cols, 7, 3, 2}, {cols, 1, 1, 1}, {1, 7, 1, 1},
                                   {1, 1, 1, 1},    {cols, 7, 1, 2}, {cols, 1, 3, 1}};
    for (const Shape& ys_ne : ys) {
      Tensor* y = rand_leaf(DType::F32, ys_ne);
      check(ops::add(arena_, x, y), tol, {1, 3});
      check(ops::mul(arena_, x, y), tol, {2});
    }
  }
  // y repeating along dim 0 (51 = 3 x 17), and non-contiguous x and y
  Tensor* x = rand_leaf(DType::F32, {51, 4, 1, 1});
  check(ops::add(arena_, x, rand_leaf(DType::F32, {17, 2, 1, 1})), tol);
  Tensor* xt = ops::transpose(arena_, rand_leaf(DType::F32, {6, 17, 1, 1}));  // [17, 6] strided
  Tensor* yt = ops::transpose(arena_, rand_leaf(DType::F32, {6, 17, 1, 1}));
  check(ops::mul(arena_, xt, yt), tol);
  check(ops::add(arena_, xt, ops::slice(arena_, yt, 1, 0, 1)), tol);
}

TEST_F(OpsCpu, ScaleAndGelu) {
  for (int64_t cols : {1, 3, 17, 1536, 51865}) {
    Tensor* x = rand_leaf(DType::F32, {cols, 3, 1, 1}, -6, 6);
    check(ops::scale(arena_, x, 0.125f, -0.5f), {1e-6, 1e-6}, {1, 3});
    check(ops::gelu(arena_, x), {2e-6, 1e-5}, {1, 3});
  }
  Tensor* xt = ops::transpose(arena_, rand_leaf(DType::F32, {5, 19, 1, 1}, -6, 6));
  check(ops::scale(arena_, xt, -3.0f, 0.0f), {1e-6, 1e-6});
  check(ops::gelu(arena_, xt), {2e-6, 1e-5});
}

TEST_F(OpsCpu, UnaryFunctions) {
  for (int64_t cols : {1, 3, 17, 512, 4099}) {
    Tensor* x = rand_leaf(DType::F32, {cols, 3, 1, 1}, -8, 8);
    for (UnaryOp fn : {UnaryOp::Relu, UnaryOp::Sigmoid, UnaryOp::Tanh})
      check(ops::unary(arena_, x, fn), {1e-7, 1e-6}, {1, 3});
    check(ops::unary(arena_, x, UnaryOp::RoundF16), kExact, {2});
    check(ops::unary(arena_, rand_leaf(DType::F32, {cols, 2, 1, 1}, 0, 50), UnaryOp::Sqrt), {1e-7, 1e-6}, {2});
  }
  // strided rows: a transposed view and a slice of the first dim
  Tensor* xt = ops::transpose(arena_, rand_leaf(DType::F32, {5, 19, 1, 1}, -6, 6));
  for (UnaryOp fn : {UnaryOp::Relu, UnaryOp::Sigmoid, UnaryOp::Tanh}) check(ops::unary(arena_, xt, fn), {1e-7, 1e-6});
  Tensor* gates = rand_leaf(DType::F32, {512, 1, 1, 1}, -4, 4);
  check(ops::sigmoid(arena_, ops::slice(arena_, gates, 0, 128, 256)), {1e-7, 1e-6});
}

TEST_F(OpsCpu, PadReflect) {
  for (int64_t cols : {2, 5, 512}) {
    Tensor* x = rand_leaf(DType::F32, {cols, 3, 2, 1});
    for (auto [l, r] : {std::pair{0, 1}, std::pair{1, 0}, std::pair{1, 1}})
      check(ops::pad_reflect(arena_, x, l, r), kExact);
    const int p = static_cast<int>(cols - 1);
    check(ops::pad_reflect(arena_, x, p, p), kExact, {1, 3});
  }
  // the Silero front end: a 512-sample frame padded by 64 on both sides, and a strided source
  check(ops::pad_reflect(arena_, rand_leaf(DType::F32, {512, 1, 1, 1}), 64, 64), kExact);
  check(ops::pad_reflect(arena_, ops::transpose(arena_, rand_leaf(DType::F32, {4, 9, 1, 1})), 3, 8), kExact);
}

TEST_F(OpsCpu, LayerNorm) {
  const Tol tol{2e-5, 2e-5};  // f32 mean/variance over up to 1500 values
  for (int64_t cols : {1, 3, 17, 384, 1500}) {
    Tensor* x = rand_leaf(DType::F32, {cols, 5, 2, 1}, -3, 5);
    Tensor* w = rand_leaf(DType::F32, {cols, 1, 1, 1}, 0.5, 1.5);
    Tensor* b = rand_leaf(DType::F32, {cols, 1, 1, 1});
    check(ops::layer_norm(arena_, x, w, b, 1e-5f), tol);
    check(ops::layer_norm(arena_, x, nullptr, nullptr, 1e-5f), tol, {2});
    check(ops::layer_norm(arena_, x, w, nullptr, 1e-5f), tol, {3});
  }
  Tensor* xt = ops::transpose(arena_, rand_leaf(DType::F32, {9, 33, 1, 1}));
  Tensor* wt = ops::slice(arena_, ops::transpose(arena_, rand_leaf(DType::F32, {2, 33, 1, 1})), 1, 1, 2);
  check(ops::layer_norm(arena_, xt, wt, wt, 1e-5f), tol);
}

TEST_F(OpsCpu, SoftMax) {
  const Tol tol{1e-6, 1e-5};  // probabilities; f32 sums over up to 51865 terms
  for (int64_t cols : {1, 3, 17, 1500, 51865}) {
    const int64_t rows = cols > 2000 ? 2 : 5;
    Tensor* x = rand_leaf(DType::F32, {cols, rows, 2, 1}, -8, 8);
    std::vector<float> mv = uniform(cols * (rows + 1), -3, 0);
    for (size_t i = 0; i < mv.size(); i += 3) mv[i] = -kInf;
    for (int64_t j = 0; j < cols; ++j) mv[static_cast<size_t>(cols + j)] = -kInf;  // row 1 fully masked
    Tensor* mask = leaf(DType::F32, {cols, rows + 1, 1, 1}, mv, "mask");
    check(ops::soft_max(arena_, x, nullptr, 1.0f, false), tol, {1, 3});
    check(ops::soft_max(arena_, x, mask, 0.125f, false), tol, {2});
    check(ops::soft_max(arena_, x, nullptr, 0.7f, true), tol, {3});
    check(ops::soft_max(arena_, x, mask, 1.0f, true), tol, {1});
  }
  // causal with more rows than columns (rows with nothing visible), and strided views
  Tensor* tall = rand_leaf(DType::F32, {3, 7, 1, 1}, -8, 8);
  check(ops::soft_max(arena_, tall, nullptr, 1.0f, true), tol);
  Tensor* base = rand_leaf(DType::F32, {20, 6, 3, 1}, -8, 8);
  Tensor* cols = ops::slice(arena_, base, 0, 2, 19);  // 17 columns, rows 20 floats apart
  check(ops::soft_max(arena_, cols, nullptr, 2.0f, true), tol);
  Tensor* perm = ops::permute(arena_, base, 1, 0, 2, 3);  // [6, 20, 3], strided rows
  Tensor* pmask = rand_leaf(DType::F32, {6, 20, 1, 1}, -1, 0);
  check(
      ops::soft_max(arena_, perm, ops::transpose(arena_, ops::cont(arena_, ops::transpose(arena_, pmask))), 1.0f, true),
      tol);
}

TEST_F(OpsCpu, FullyMaskedSoftMaxRowsAreZeros) {
  Tensor* x = rand_leaf(DType::F32, {17, 3, 1, 1});
  std::vector<float> mv(17 * 3, -kInf);
  mv[17 + 4] = 0.0f;  // row 1 sees one column
  Tensor* mask = leaf(DType::F32, {17, 3, 1, 1}, mv);
  cpu_->set_n_threads(2);
  const std::vector<float> got = run<float>(*cpu_, ops::soft_max(arena_, x, mask, 1.0f));
  for (int64_t j = 0; j < 17; ++j) {
    EXPECT_EQ(got[static_cast<size_t>(j)], 0.0f);
    EXPECT_EQ(got[static_cast<size_t>(17 + j)], j == 4 ? 1.0f : 0.0f);
    EXPECT_EQ(got[static_cast<size_t>(34 + j)], 0.0f);
  }
}

TEST_F(OpsCpu, ArgmaxAndTopK) {
  for (int64_t cols : {1, 3, 17, 1500, 51865}) {
    Tensor* x = rand_leaf(DType::F32, {cols, 3, 2, 1}, -10, 10);
    check(ops::argmax(arena_, x), kExact, {1, 3});
    for (int k : {1, 5, 17}) {
      if (k > cols) continue;
      check(ops::top_k(arena_, x, k), kExact, {2});
    }
    check(ops::top_k(arena_, x, static_cast<int>(cols)), kExact, {3});  // a full sort
  }
  // many ties: small integers
  std::vector<float> tv(200 * 4);
  std::uniform_int_distribution<int> small(0, 4);
  for (float& e : tv) e = static_cast<float>(small(rng_));
  Tensor* ties = leaf(DType::F32, {200, 4, 1, 1}, tv);
  check(ops::argmax(arena_, ties), kExact);
  check(ops::top_k(arena_, ties, 37), kExact);
  // strided rows
  Tensor* xt = ops::transpose(arena_, ties);
  check(ops::argmax(arena_, xt), kExact);
  check(ops::top_k(arena_, xt, 3), kExact);
}

TEST_F(OpsCpu, FlashAttnSmallShapes) {
  const Tol tol{2e-6, 2e-5};
  struct Case {
    int64_t D, nq, nk, H, hkv, B;
    bool mask, causal;
  };
  const Case cases[] = {
      {8, 1, 1, 1, 1, 1, false, false},
      {16, 3, 17, 2, 2, 1, true, false},
      {16, 3, 17, 2, 2, 1, true, true},
      {64, 5, 300, 4, 2, 2, false, true},
      {32, 17, 5, 3, 1, 1, false, true},  // nq > nk: some rows see nothing
      {64, 7, 513, 2, 2, 1, true, true},
      // 16+ queries take the blocked GEMM path: partial blocks and tiles, GQA, batches, prompts
      {64, 50, 300, 4, 2, 2, true, true},
      {16, 160, 517, 2, 1, 1, true, false},
      {64, 97, 97, 3, 3, 1, false, true},
      {8, 20, 1, 1, 1, 1, true, true},
  };
  for (const Case& c : cases) {
    for (DType kv : {DType::F32, DType::F16}) {
      Tensor* q = rand_leaf(DType::F32, {c.D, c.nq, c.H, c.B}, -2, 2, "q");
      Tensor* k = rand_leaf(kv, {c.D, c.nk, c.hkv, c.B}, -2, 2, "k");
      Tensor* v = rand_leaf(kv, {c.D, c.nk, c.hkv, c.B}, -2, 2, "v");
      Tensor* mask = nullptr;
      if (c.mask) {
        std::vector<float> mv = uniform(c.nk * (c.nq + 1), -4, 0);
        for (size_t i = 0; i < mv.size(); i += 5) mv[i] = -kInf;
        for (int64_t j = 0; j < c.nk; ++j) mv[static_cast<size_t>(j)] = -kInf;  // query 0 sees nothing
        mask = leaf(DType::F32, {c.nk, c.nq + 1, 1, 1}, mv, "mask");
      }
      const float scale = 1.0f / std::sqrt(static_cast<float>(c.D));
      check(ops::flash_attn(arena_, q, k, v, mask, scale, c.causal), tol);
    }
  }
  // K/V as permuted views of a [D, H, Nk] cache layout (rows contiguous, heads interleaved)
  Tensor* q = rand_leaf(DType::F32, {32, 4, 3, 1}, -2, 2, "q");
  Tensor* kc = rand_leaf(DType::F16, {32, 3, 40, 1}, -2, 2, "kc");
  Tensor* vc = rand_leaf(DType::F16, {32, 3, 40, 1}, -2, 2, "vc");
  check(ops::flash_attn(arena_, q, ops::permute(arena_, kc, 0, 2, 1, 3), ops::permute(arena_, vc, 0, 2, 1, 3), nullptr,
                        0.2f, true),
        tol);
  // the same for f32 K/V (fed to the GEMM in place, rows D*H apart) and 20 queries
  Tensor* q20 = rand_leaf(DType::F32, {32, 20, 3, 1}, -2, 2, "q");
  Tensor* kc32 = rand_leaf(DType::F32, {32, 3, 40, 1}, -2, 2, "kc");
  Tensor* vc32 = rand_leaf(DType::F32, {32, 3, 40, 1}, -2, 2, "vc");
  check(ops::flash_attn(arena_, q20, ops::permute(arena_, kc32, 0, 2, 1, 3), ops::permute(arena_, vc32, 0, 2, 1, 3),
                        nullptr, 0.2f, true),
        tol);
}

TEST_F(OpsCpu, FlashAttnWhisperShapes) {
  const Tol tol{1e-5, 5e-5};  // f32 dot products of 64 and online sums over up to 1500 keys
  // encoder self-attention (tiny/base width: 6 heads of 64), 1500 frames
  Tensor* q = rand_leaf(DType::F32, {64, 1500, 6, 1}, -1.5, 1.5, "q");
  Tensor* k = rand_leaf(DType::F16, {64, 1500, 6, 1}, -1.5, 1.5, "k");
  Tensor* v = rand_leaf(DType::F16, {64, 1500, 6, 1}, -1.5, 1.5, "v");
  check(ops::flash_attn(arena_, q, k, v, nullptr, 0.125f, false), tol, {3}, false);
  // decoder step: one query against a 448-token self-attention cache, causal offset
  for (DType kv : {DType::F32, DType::F16}) {
    Tensor* dq = rand_leaf(DType::F32, {64, 1, 6, 1}, -1.5, 1.5, "q");
    Tensor* dk = rand_leaf(kv, {64, 448, 6, 1}, -1.5, 1.5, "k");
    Tensor* dv = rand_leaf(kv, {64, 448, 6, 1}, -1.5, 1.5, "v");
    check(ops::flash_attn(arena_, dq, dk, dv, nullptr, 0.125f, true), tol);
    // cross-attention of 4 prompt tokens over the 1500 encoder frames
    Tensor* cq = rand_leaf(DType::F32, {64, 4, 6, 1}, -1.5, 1.5, "q");
    Tensor* ck = rand_leaf(kv, {64, 1500, 6, 1}, -1.5, 1.5, "k");
    Tensor* cv = rand_leaf(kv, {64, 1500, 6, 1}, -1.5, 1.5, "v");
    check(ops::flash_attn(arena_, cq, ck, cv, nullptr, 0.125f, false), tol, {2});
  }
}

TEST_F(OpsCpu, FlashAttnFullyMaskedRowsAreZeros) {
  Tensor* q = rand_leaf(DType::F32, {8, 4, 1, 1});
  Tensor* k = rand_leaf(DType::F32, {8, 2, 1, 1});
  Tensor* v = rand_leaf(DType::F32, {8, 2, 1, 1});
  cpu_->set_n_threads(3);
  // causal offset nk - nq = -2: queries 0 and 1 see no key
  const std::vector<float> got = run<float>(*cpu_, ops::flash_attn(arena_, q, k, v, nullptr, 1.0f, true));
  for (size_t i = 0; i < got.size(); ++i) {
    EXPECT_FALSE(std::isnan(got[i])) << i;
    if (i < 16) {
      EXPECT_EQ(got[i], 0.0f) << i;
    }
  }
}

}  // namespace
}  // namespace hark
