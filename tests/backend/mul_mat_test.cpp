// op_mul_mat through CpuBackend against a double-precision loop over the dequantized weights
// (runtime/quant.h's dequantize_row), for every weight type, both paths (row dots below
// kGemmMinRows activation rows, tiled GEMM from there), broadcast batches, strided weights,
// transposed (non-contiguous) activations, 1-3 threads, every SIMD level this machine runs, and
// both GEMM implementations where OpenBLAS is built in.
//
// Error measure: ||out - ref||_2 / ||mag||_2 over the whole output, where mag is each output's
// sum of |w_k x_k|: the scale rounding errors grow with, which (unlike ||ref||) cannot cancel to
// near zero when there are only a few outputs. Tolerances:
//  * f32 and f16 weights, and quantized weights on the f32 GEMM path (weights dequantized
//    exactly, activations f32: levels without gemm_q8, or OpenBLAS): 2e-6, f32 rounding of sums
//    of up to a few hundred products.
//  * quantized weights on the row-dot path and on the int8 GEMM path (gemm_q8, hark's own GEMM):
//    the activations are quantized to 8 bits (q8a) first.
//    For uniform data that error is about 0.009/sqrt(K) of mag (0.0016 at K = 32): bound 5e-3.
//    Against a reference fed the same q8a activations: 2e-6 again, which pins down everything
//    except the activation rounding itself.
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include "backend/buffer.h"
#include "backend/cpu/cpu_backend.h"
#include "backend/cpu/cpu_ops.h"
#include "backend/cpu/gemm_config.h"
#include "backend/device_registry.h"
#include "backend/graph_allocator.h"
#include "runtime/graph.h"
#include "runtime/ops.h"
#include "runtime/quant.h"

namespace hark {
namespace {

using Shape = std::array<int64_t, kMaxDims>;

constexpr double kTightTol = 2e-6;
constexpr double kQ8aTol = 5e-3;

struct Case {
  DType type;
  int64_t K, N, M;
  int64_t wb2 = 1, wb3 = 1;   // weight batch
  int64_t b2 = 1, b3 = 1;     // activation batch (multiples of the weight batch)
  bool transposed_x = false;  // x is a transposed view of an [M, K] tensor
  bool strided_w = false;     // w is a view of every row's first K values of a [2K, N] tensor
};

std::string describe(const Case& c) {
  return std::string(dtype_name(c.type)) + " K=" + std::to_string(c.K) + " N=" + std::to_string(c.N) +
         " M=" + std::to_string(c.M) + " wbatch=" + std::to_string(c.wb2) + "x" + std::to_string(c.wb3) +
         " xbatch=" + std::to_string(c.b2) + "x" + std::to_string(c.b3) + (c.transposed_x ? " x^T" : "") +
         (c.strided_w ? " strided-w" : "");
}

class MulMatTest : public ::testing::Test {
 protected:
  MulMatTest() {
    dev_ = Registry::global().find(kCpuDeviceName);
    backend_ = dev_->init_backend({1});
    cpu_ = dynamic_cast<cpu::CpuBackend*>(backend_.get());
  }

  Tensor* placed_leaf(DType type, Shape ne, const char* name) {
    Tensor* t = arena_.new_tensor(type, ne, name);
    buffers_.push_back(dev_->buffer_type()->alloc(t->nbytes()));
    buffers_.back()->place(*t, 0);
    return t;
  }

  std::vector<float> uniform(int64_t n, float lo, float hi) {
    std::uniform_real_distribution<float> d(lo, hi);
    std::vector<float> v(static_cast<size_t>(n));
    for (float& e : v) e = d(rng_);
    return v;
  }

  void run_case(const Case& c) {
    SCOPED_TRACE(describe(c));
    // ---- weights: values, stored bytes, and what they dequantize to ----
    const int64_t wrows = c.N * c.wb2 * c.wb3;
    const int64_t kstore = c.strided_w ? 2 * c.K : c.K;
    Tensor* wstore = placed_leaf(c.type, {kstore, c.N, c.wb2, c.wb3}, "w");
    const std::vector<float> wvals = uniform(wrows * kstore, -1.0f, 1.0f);
    std::vector<uint8_t> wbytes(wstore->nbytes());
    quantize_rows(c.type, wvals.data(), wbytes.data(), wrows, kstore);
    tensor_set(*wstore, wbytes.data(), wbytes.size());
    std::vector<float> wd(static_cast<size_t>(wrows * c.K));  // dequantized [K, N, wb2, wb3]
    const size_t rb = dtype_row_bytes(c.type, kstore);
    for (int64_t r = 0; r < wrows; ++r) {
      std::vector<float> row(static_cast<size_t>(kstore));
      dequantize_row(c.type, wbytes.data() + r * rb, row.data(), kstore);
      std::memcpy(&wd[r * c.K], row.data(), c.K * sizeof(float));
    }
    Tensor* w = wstore;
    if (c.strided_w) {
      w = ops::view(arena_, wstore, {c.K, c.N, c.wb2, c.wb3}, {wstore->nb[1], wstore->nb[2], wstore->nb[3]}, 0);
    }

    // ---- activations [K, M, b2, b3], maybe as a transposed view of [M, K, b2, b3] ----
    const int64_t xrows = c.M * c.b2 * c.b3;
    const std::vector<float> xv = uniform(xrows * c.K, -1.0f, 1.0f);  // logical [K, M, b2, b3]
    Tensor* x;
    if (c.transposed_x) {
      Tensor* xs = placed_leaf(DType::F32, {c.M, c.K, c.b2, c.b3}, "xT");
      std::vector<float> t(xv.size());
      for (int64_t b = 0; b < c.b2 * c.b3; ++b)
        for (int64_t m = 0; m < c.M; ++m)
          for (int64_t k = 0; k < c.K; ++k) t[(b * c.K + k) * c.M + m] = xv[(b * c.M + m) * c.K + k];
      tensor_set(*xs, t.data(), t.size() * sizeof(float));
      x = ops::transpose(arena_, xs);
    } else {
      x = placed_leaf(DType::F32, {c.K, c.M, c.b2, c.b3}, "x");
      tensor_set(*x, xv.data(), xv.size() * sizeof(float));
    }
    Tensor* out = ops::mul_mat(arena_, w, x);
    ASSERT_EQ(out->ne, (Shape{c.N, c.M, c.b2, c.b3}));

    // ---- references: exact activations, and activations rounded through q8a ----
    // Quantized weights may meet q8a activations (row dots, int8 GEMM): a reference for those too.
    const bool quantized = dtype_quantized(c.type);
    std::vector<float> xq(xv.size());
    if (quantized) {
      std::vector<BlockQ8A> blocks(static_cast<size_t>(c.K / kQuantBlock));
      for (int64_t r = 0; r < xrows; ++r) {
        quantize_row_q8a(&xv[r * c.K], blocks.data(), c.K);
        for (int64_t k = 0; k < c.K; ++k)
          xq[r * c.K + k] = static_cast<float>(blocks[k / 32].qs[k % 32]) * blocks[k / 32].d;
      }
    }
    const int64_t nout = c.N * xrows;
    std::vector<double> ref(static_cast<size_t>(nout)), refq(quantized ? nout : 0), mag(static_cast<size_t>(nout));
    for (int64_t i3 = 0; i3 < c.b3; ++i3) {
      for (int64_t i2 = 0; i2 < c.b2; ++i2) {
        const int64_t wb = i2 / (c.b2 / c.wb2) + c.wb2 * (i3 / (c.b3 / c.wb3));
        const int64_t xb = i2 + c.b2 * i3;
        for (int64_t m = 0; m < c.M; ++m) {
          const float* xr = &xv[(xb * c.M + m) * c.K];
          const float* xqr = quantized ? &xq[(xb * c.M + m) * c.K] : nullptr;
          for (int64_t n = 0; n < c.N; ++n) {
            const float* wr = &wd[(wb * c.N + n) * c.K];
            double s = 0, sq = 0, a = 0;
            for (int64_t k = 0; k < c.K; ++k) {
              s += double(wr[k]) * xr[k];
              a += std::fabs(double(wr[k]) * xr[k]);
              if (xqr) sq += double(wr[k]) * xqr[k];
            }
            ref[(xb * c.M + m) * c.N + n] = s;
            mag[(xb * c.M + m) * c.N + n] = a;
            if (xqr) refq[(xb * c.M + m) * c.N + n] = sq;
          }
        }
      }
    }

    // ---- every level x thread count x GEMM implementation ----
    Graph g;
    g.build(out);
    GraphAllocator ga(dev_->buffer_type());
    ga.alloc(g);
    std::vector<cpu::GemmImpl> impls = {cpu::GemmImpl::Own};
    if (c.M >= cpu::kGemmMinRows && cpu::gemm_blas_available()) impls.push_back(cpu::GemmImpl::Blas);
    const cpu::GemmImpl saved = cpu::gemm_impl();
    for (cpu::SimdLevel level : cpu::kSimdLevels) {
      if (!cpu::simd_level_supported(level)) continue;
      for (int threads : {1, 2, 3}) {
        for (cpu::GemmImpl impl : impls) {
          SCOPED_TRACE(std::string(cpu::simd_level_name(level)) + ", " + std::to_string(threads) + " threads, gemm " +
                       cpu::gemm_impl_name(impl));
          cpu::set_gemm_impl(impl);
          cpu_->set_simd_level(level);
          cpu_->set_n_threads(threads);
          std::vector<float> got(static_cast<size_t>(nout), NAN);
          tensor_set(*out, got.data(), got.size() * sizeof(float));
          ASSERT_EQ(backend_->compute(g), ComputeStatus::Ok);
          const bool q8a_path =
              quantized &&
              (c.M < cpu::kGemmMinRows || (impl == cpu::GemmImpl::Own && cpu::kernels_for(level).gemm_q8 != nullptr));
          tensor_get(*out, got.data(), got.size() * sizeof(float));
          EXPECT_LE(rel_error(got, ref, mag), q8a_path ? kQ8aTol : kTightTol);
          if (q8a_path) {
            EXPECT_LE(rel_error(got, refq, mag), kTightTol);
          }
        }
      }
    }
    cpu::set_gemm_impl(saved);
  }

  static double rel_error(const std::vector<float>& got, const std::vector<double>& ref,
                          const std::vector<double>& mag) {
    double e = 0, r = 0;
    for (size_t i = 0; i < ref.size(); ++i) {
      const double d = double(got[i]) - ref[i];
      e += d * d;  // NaN (an output never written) makes the error NaN, which fails the check
      r += mag[i] * mag[i];
    }
    return r > 0 ? std::sqrt(e / r) : std::sqrt(e);
  }

  Device* dev_;
  std::unique_ptr<Backend> backend_;
  cpu::CpuBackend* cpu_;
  TensorArena arena_;
  std::vector<std::unique_ptr<Buffer>> buffers_;
  std::mt19937 rng_{1234};
};

const DType kAllTypes[] = {DType::F32, DType::F16, DType::Q4_0, DType::Q4_1, DType::Q5_0, DType::Q5_1, DType::Q8_0};

TEST_F(MulMatTest, SmallShapesEveryType) {
  for (DType t : kAllTypes) {
    for (int64_t M : {1, 3, 17}) {
      for (int64_t N : {1, 3, 17}) run_case({t, 64, N, M});
    }
    run_case({t, 96, 5, 2});
  }
}

TEST_F(MulMatTest, FewActivationRowsEveryCount) {
  // 2..9 activation rows (a decoder step of several beams): f32/f16 weights go through the
  // register tiles of dot_f32_rows / dot_f16_rows (every group size and remainder), quantized
  // ones through dot_q_rows. N = 1, 5, 19: thread ranges that split the tiles unevenly.
  for (DType t : kAllTypes)
    for (int64_t M = 2; M <= 9; ++M)
      for (int64_t N : {1, 5, 19}) run_case({t, 96, N, M});
  for (DType t : {DType::F32, DType::F16}) {
    Case c{t, 100, 7, 5};  // K not a multiple of the vector width: tails
    run_case(c);
    c.strided_w = true;
    c.transposed_x = true;
    run_case(c);
  }
}

TEST_F(MulMatTest, DecoderStepWideOutput) {
  // N = 51865 (the vocabulary): the logits product, split over threads by rows.
  for (DType t : kAllTypes) {
    run_case({t, 64, 51865, 1});
    run_case({t, 32, 51865, 3});
  }
}

TEST_F(MulMatTest, EncoderRowsTakeTheGemmPath) {
  for (DType t : kAllTypes) {
    run_case({t, 64, 3, 1500});
    run_case({t, 320, 96, 1500});  // K over two depth slices, N over 3 threads' tiles
  }
  run_case({DType::F32, 384, 17, 1500});
  run_case({DType::F16, 128, 200, 33});
  // The int8 GEMM's edges: depth over two of its slices (17 blocks), columns and rows not whole
  // tiles, more columns than one packed block (300 > 256 with one thread).
  for (DType t : {DType::Q4_0, DType::Q4_1, DType::Q5_0, DType::Q5_1, DType::Q8_0}) {
    run_case({t, 544, 45, 37});
    run_case({t, 64, 300, 40});
  }
}

TEST_F(MulMatTest, BroadcastBatches) {
  for (DType t : kAllTypes) {
    for (int64_t M : {3, 40}) {
      Case c{t, 64, 17, M};
      c.wb2 = 2;
      c.b2 = 4;
      c.b3 = 3;
      run_case(c);
    }
  }
}

TEST_F(MulMatTest, RowDotsWithManyActivationRows) {
  // Past 65536 activation values the row-dot path converts them once, shared by all threads
  // (behind a barrier), instead of once per thread.
  for (DType t : kAllTypes) {
    Case c{t, 512, 17, 17};
    c.b2 = 8;
    run_case(c);
    c.transposed_x = true;
    run_case(c);
  }
}

TEST_F(MulMatTest, TransposedActivationsAndStridedWeights) {
  for (DType t : kAllTypes) {
    for (int64_t M : {1, 5, 40}) {
      Case c{t, 96, 19, M};
      c.transposed_x = true;
      run_case(c);
      c.transposed_x = false;
      c.strided_w = true;
      c.b2 = 2;
      run_case(c);
    }
  }
}

TEST_F(MulMatTest, WorkSizeCoversEveryThreadCount) {
  TensorArena a;
  Tensor* w = a.new_tensor(DType::Q4_0, {384, 1536});
  Tensor* x = a.new_tensor(DType::F32, {384, 1500});
  Tensor* y = ops::mul_mat(a, w, x);
  // The GEMM path keeps one f32 panel of weight rows per thread, so more threads need more.
  EXPECT_LT(cpu::work_size(*y, 1), cpu::work_size(*y, 4));
  Tensor* xs = a.new_tensor(DType::F32, {384, 2});
  Tensor* ys = ops::mul_mat(a, w, xs);
  EXPECT_GE(cpu::work_size(*ys, 1), 2 * (384 / 32) * sizeof(BlockQ8A));  // the quantized rows
}

}  // namespace
}  // namespace hark
