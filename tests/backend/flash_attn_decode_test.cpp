// FlashAttn's few-query path (decoder steps) on the shapes the decoder gives it: one to a few
// queries against many keys, K/V as strided views of an f16 or f32 KV cache laid out
// [D * H, positions] (model/layers.cpp cache_heads: a position's heads side by side), causal
// with the KV offset of a step past the prompt, and more (query, head) rows than one group of
// rows walks together. The optimised CPU backend against the reference, through compare_backends.
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
#include "runtime/ops.h"
#include "runtime/quant.h"

namespace hark {
namespace {

using Shape = std::array<int64_t, kMaxDims>;

class FlashAttnDecode : public ::testing::Test {
 protected:
  FlashAttnDecode() {
    cpu_ = Registry::global().find(kCpuDeviceName)->init_backend({1});
    ref_ = Registry::global().find(kReferenceDeviceName)->init_backend();
  }

  Tensor* rand_leaf(DType type, Shape ne, float lo, float hi, const char* name) {
    Tensor* t = arena_.new_tensor(type, ne, name);
    buffers_.push_back(host_.alloc(t->nbytes()));
    buffers_.back()->place(*t, 0);
    std::uniform_real_distribution<float> d(lo, hi);
    std::vector<float> values(static_cast<size_t>(t->nelements()));
    for (float& e : values) e = d(rng_);
    std::vector<uint8_t> bytes(t->nbytes());
    quantize_rows(type, values.data(), bytes.data(), t->nrows(), t->ne[0]);
    tensor_set(*t, bytes.data(), bytes.size());
    return t;
  }

  // The heads of a [D * H, n_ctx] cache over its first n positions, as the decoder views them.
  Tensor* cache_heads(Tensor* cache, int64_t H, int64_t n) {
    const int64_t d = cache->ne[0] / H;
    return ops::view(arena_, cache, {d, n, H}, {cache->nb[1], dtype_row_bytes(cache->type, d)}, 0);
  }

  // Every kernel level this machine runs, with 1, 2 and 3 threads.
  void check(Tensor* out, double atol, double rtol) {
    Graph g;
    g.build(out);
    auto* cpu = dynamic_cast<cpu::CpuBackend*>(cpu_.get());
    ASSERT_NE(cpu, nullptr);
    for (cpu::SimdLevel level : cpu::kSimdLevelsBestFirst) {
      if (!cpu::simd_level_supported(level)) continue;
      for (int n : {1, 2, 3}) {
        cpu->set_simd_level(level);
        cpu->set_n_threads(n);
        const CompareResult r = compare_backends(g, *cpu_, *ref_);
        for (const NodeDiff& d : r.nodes)
          EXPECT_LE(d.max_abs, atol + rtol * d.max_ref)
              << cpu::simd_level_name(level) << ", " << n << " threads, " << d.node->describe() << "\n"
              << r.report();
      }
    }
    cpu->set_simd_level(cpu::best_simd_level());
  }

  std::unique_ptr<Backend> cpu_, ref_;
  TensorArena arena_;
  HostBufferType host_{"flash-attn-decode-test"};
  std::vector<std::unique_ptr<Buffer>> buffers_;
  std::mt19937 rng_{7};
};

// Cross-attention: 1 to 3 queries over 1500 encoder frames, 6 and 12 heads (12 is more rows
// than one group), no mask, not causal.
TEST_F(FlashAttnDecode, CrossAttentionOverCacheViews) {
  const int64_t D = 64, nk = 1500;
  for (DType kv : {DType::F16, DType::F32}) {
    for (int64_t H : {6, 12}) {
      for (int64_t nq : {1, 3}) {
        Tensor* q = rand_leaf(DType::F32, {D, nq, H, 1}, -1.5f, 1.5f, "q");
        Tensor* kc = rand_leaf(kv, {D * H, nk, 1, 1}, -1.5f, 1.5f, "cross_k");
        Tensor* vc = rand_leaf(kv, {D * H, nk, 1, 1}, -1.5f, 1.5f, "cross_v");
        check(ops::flash_attn(arena_, q, cache_heads(kc, H, nk), cache_heads(vc, H, nk), nullptr, 0.125f, false), 1e-5,
              5e-5);
      }
    }
  }
}

// Self-attention: the queries of one step (1 to 3, as split_heads gives them: a permuted view of
// [D * H, nq]) against the first n_kv positions of a larger cache, causal with the offset
// n_kv - nq, so the rows of a group see different numbers of keys.
TEST_F(FlashAttnDecode, CausalSelfAttentionWithOffset) {
  const int64_t D = 64, n_ctx = 448;
  for (DType kv : {DType::F16, DType::F32}) {
    for (int64_t H : {6, 10}) {
      for (int64_t nq : {1, 2, 3}) {
        for (int64_t n_kv : {nq, int64_t{5}, int64_t{300}, int64_t{448}}) {
          Tensor* qx = rand_leaf(DType::F32, {D * H, nq, 1, 1}, -1.5f, 1.5f, "q");
          Tensor* q = ops::permute(arena_, ops::reshape(arena_, qx, {D, H, nq}), 0, 2, 1, 3);
          Tensor* kc = rand_leaf(kv, {D * H, n_ctx, 1, 1}, -1.5f, 1.5f, "self_k");
          Tensor* vc = rand_leaf(kv, {D * H, n_ctx, 1, 1}, -1.5f, 1.5f, "self_v");
          check(ops::flash_attn(arena_, q, cache_heads(kc, H, n_kv), cache_heads(vc, H, n_kv), nullptr, 0.125f, true),
                1e-5, 5e-5);
        }
      }
    }
  }
}

// A mask that hides whole tiles from some rows of a group and leaves others visible: rows whose
// tile has no visible key must neither take weight from it nor stop the others.
TEST_F(FlashAttnDecode, MaskedTilesWithinAGroup) {
  const int64_t D = 32, nk = 700, H = 4, nq = 3;
  std::vector<float> mv(static_cast<size_t>(nk * nq));
  std::uniform_real_distribution<float> d(-3.0f, 0.0f);
  for (int64_t i = 0; i < nq; ++i)
    for (int64_t j = 0; j < nk; ++j) {
      const bool hidden = (i == 0 && j < 512) || (i == 1 && j >= 256) || (i == 2 && j % 3 == 0);
      mv[static_cast<size_t>(i * nk + j)] = hidden ? -std::numeric_limits<float>::infinity() : d(rng_);
    }
  Tensor* mask = arena_.new_tensor(DType::F32, {nk, nq, 1, 1}, "mask");
  buffers_.push_back(host_.alloc(mask->nbytes()));
  buffers_.back()->place(*mask, 0);
  tensor_set(*mask, mv.data(), mv.size() * sizeof(float));
  Tensor* q = rand_leaf(DType::F32, {D, nq, H, 1}, -2.0f, 2.0f, "q");
  Tensor* kc = rand_leaf(DType::F16, {D * H, nk, 1, 1}, -2.0f, 2.0f, "k");
  Tensor* vc = rand_leaf(DType::F16, {D * H, nk, 1, 1}, -2.0f, 2.0f, "v");
  check(ops::flash_attn(arena_, q, cache_heads(kc, H, nk), cache_heads(vc, H, nk), mask, 0.2f, false), 2e-6, 2e-5);
}

// A q8_0 cross-attention cache laid out as KvCache keeps it ([D, n_audio_ctx, H, windows]: each
// head's keys contiguous): one query per window (the batched pipeline's rows), three queries of
// one window (beams), and a prompt of 20 queries (the blocked path, which dequantizes tiles). The
// reference scores the f32 queries against the dequantized keys; the CPU quantizes each query to
// q8 blocks first (as mul_mat does for a q8_0 weight), ~0.4% of a query value, which moves a
// score by ~1e-3 here and an output by a few 1e-3 of its scale.
TEST_F(FlashAttnDecode, QuantizedCrossCache) {
  const int64_t D = 64, nk = 1500, H = 6;
  struct Case {
    int64_t nq, B;
  };
  for (Case c : {Case{1, 3}, Case{3, 1}, Case{20, 2}}) {
    Tensor* q = rand_leaf(DType::F32, {D, c.nq, H, c.B}, -1.5f, 1.5f, "q");
    Tensor* k = rand_leaf(DType::Q8_0, {D, nk, H, c.B}, -1.5f, 1.5f, "cross_k");
    Tensor* v = rand_leaf(DType::Q8_0, {D, nk, H, c.B}, -1.5f, 1.5f, "cross_v");
    check(ops::flash_attn(arena_, q, k, v, nullptr, 0.125f, false), 2e-3, 1e-2);
  }
}

}  // namespace
// A batch step's rows at different positions through one node: query b (batch b) sees the first
// len[b] keys of its own slot of the cache, the rest hidden by its own mask row. The hidden tail
// holds NaN (a cache slot's unwritten or stale end may hold anything): it must not be read.
TEST_F(FlashAttnDecode, PerBatchMasksHideEachRowsTail) {
  const int64_t D = 64, H = 6, n_ctx = 448, B = 4;
  const int64_t len[B] = {1, 70, 300, 257};
  const int64_t nk = 300;  // the longest row's keys
  const float nan = std::numeric_limits<float>::quiet_NaN();
  for (DType kv : {DType::F16, DType::F32}) {
    Tensor* q = rand_leaf(DType::F32, {D, 1, H, B}, -1.5f, 1.5f, "q");
    Tensor* caches[2];
    for (int c = 0; c < 2; ++c) {
      std::uniform_real_distribution<float> d(-1.5f, 1.5f);
      std::vector<float> values(static_cast<size_t>(D * H * n_ctx * B));
      for (int64_t b = 0; b < B; ++b)
        for (int64_t j = 0; j < n_ctx; ++j)
          for (int64_t e = 0; e < D * H; ++e)
            values[static_cast<size_t>((b * n_ctx + j) * D * H + e)] = j < len[b] ? d(rng_) : nan;
      Tensor* t = arena_.new_tensor(kv, {D * H, n_ctx, B, 1}, c == 0 ? "self_k" : "self_v");
      buffers_.push_back(host_.alloc(t->nbytes()));
      buffers_.back()->place(*t, 0);
      std::vector<uint8_t> bytes(t->nbytes());
      quantize_rows(kv, values.data(), bytes.data(), t->nrows(), t->ne[0]);
      tensor_set(*t, bytes.data(), bytes.size());
      caches[c] = t;
    }
    std::vector<float> mv(static_cast<size_t>(nk * B));
    for (int64_t b = 0; b < B; ++b)
      for (int64_t j = 0; j < nk; ++j)
        mv[static_cast<size_t>(b * nk + j)] = j < len[b] ? 0.0f : -std::numeric_limits<float>::infinity();
    Tensor* mask = arena_.new_tensor(DType::F32, {nk, 1, 1, B}, "mask");
    buffers_.push_back(host_.alloc(mask->nbytes()));
    buffers_.back()->place(*mask, 0);
    tensor_set(*mask, mv.data(), mv.size() * sizeof(float));
    auto heads = [&](Tensor* c) {  // [D, nk, H, B]: batch b's keys in slot b
      return ops::view(arena_, c, {D, nk, H, B}, {c->nb[1], dtype_row_bytes(c->type, D), c->nb[2]}, 0);
    };
    check(ops::flash_attn(arena_, q, heads(caches[0]), heads(caches[1]), mask, 0.125f, false), 1e-5, 5e-5);
  }
}

}  // namespace hark
