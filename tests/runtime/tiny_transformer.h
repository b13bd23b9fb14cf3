// A small transformer graph for the graph allocator and scheduler tests: kLayers pre-norm blocks
// of attention + MLP over an input [kDim, T]. The tests make the weights (where they live and
// what they hold is theirs to choose); this builds the graph over them.
#pragma once
#include <cmath>
#include <cstdint>
#include <vector>

#include "runtime/ops.h"

namespace hark::tiny_transformer {

constexpr int kDim = 64, kHeads = 4, kHeadDim = kDim / kHeads, kFf = 128, kLayers = 4;

struct Layer {
  Tensor *ln1_w, *ln1_b, *wq, *bq, *wk, *wv, *wo, *ln2_w, *ln2_b, *w1, *b1, *w2, *b2;
};

// One layer's weights, each made by w(shape, name) in the order of Layer's fields.
template <typename MakeWeight>
Layer make_layer(MakeWeight&& w) {
  return {w({kDim}, "ln1_w"),    w({kDim}, "ln1_b"),    w({kDim, kDim}, "wq"), w({kDim}, "bq"),
          w({kDim, kDim}, "wk"), w({kDim, kDim}, "wv"), w({kDim, kDim}, "wo"), w({kDim}, "ln2_w"),
          w({kDim}, "ln2_b"),    w({kDim, kFf}, "w1"),  w({kFf}, "b1"),        w({kFf, kDim}, "w2"),
          w({kDim}, "b2")};
}

struct Built {
  Tensor* input;
  Tensor* output;
};

// The input and the layers over it. Even layers attend with flash_attn, odd layers with an
// explicit soft_max, so both code paths and the views/permutes/conts around them appear in the graph.
inline Built build_layers(TensorArena& a, const std::vector<Layer>& layers, int64_t T) {
  Tensor* inp = a.new_tensor(DType::F32, {kDim, T}, "input");
  inp->flags |= kFlagInput;
  Tensor* x = inp;
  const float scale = 1.0f / std::sqrt(static_cast<float>(kHeadDim));
  for (size_t l = 0; l < layers.size(); ++l) {
    const Layer& w = layers[l];
    Tensor* h = ops::layer_norm(a, x, w.ln1_w, w.ln1_b, 1e-5f);
    Tensor* q = ops::add(a, ops::mul_mat(a, w.wq, h), w.bq);
    Tensor* k = ops::mul_mat(a, w.wk, h);
    Tensor* v = ops::mul_mat(a, w.wv, h);
    // [D, T] -> [Dh, H, T] -> [Dh, T, H]
    Tensor* qh = ops::permute(a, ops::reshape(a, q, {kHeadDim, kHeads, T}), 0, 2, 1, 3);
    Tensor* kh = ops::permute(a, ops::reshape(a, k, {kHeadDim, kHeads, T}), 0, 2, 1, 3);
    Tensor* attn;
    if (l % 2 == 0) {
      Tensor* vh = ops::permute(a, ops::reshape(a, v, {kHeadDim, kHeads, T}), 0, 2, 1, 3);
      attn = ops::reshape(a, ops::flash_attn(a, qh, kh, vh, nullptr, scale), {kDim, T});
    } else {
      Tensor* scores = ops::mul_mat(a, ops::cont(a, kh), ops::cont(a, qh));  // [Tk, Tq, H]
      Tensor* probs = ops::soft_max(a, scores, nullptr, scale);
      // v as [T, Dh, H] so that mul_mat contracts over keys
      Tensor* vt = ops::cont(a, ops::permute(a, ops::reshape(a, v, {kHeadDim, kHeads, T}), 1, 2, 0, 3));
      Tensor* o = ops::mul_mat(a, vt, probs);  // [Dh, Tq, H]
      attn = ops::reshape(a, ops::cont(a, ops::permute(a, o, 0, 2, 1, 3)), {kDim, T});
    }
    x = ops::add(a, x, ops::mul_mat(a, w.wo, attn));
    Tensor* h2 = ops::layer_norm(a, x, w.ln2_w, w.ln2_b, 1e-5f);
    Tensor* f = ops::gelu(a, ops::add(a, ops::mul_mat(a, w.w1, h2), w.b1));
    x = ops::add(a, x, ops::add(a, ops::mul_mat(a, w.w2, f), w.b2));
  }
  return {inp, x};
}

}  // namespace hark::tiny_transformer
