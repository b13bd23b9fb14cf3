#include "model/encoder.h"

#include <string>

#include "model/layers.h"
#include "runtime/error.h"
#include "runtime/ops.h"

namespace hark {

using namespace ops;

Tensor* build_encoder(TensorArena& a, const WhisperWeights& w, const HParams& hp, Tensor* mel, bool flash_attn) {
  const int64_t n_frames = 2 * static_cast<int64_t>(hp.n_audio_ctx);
  HARK_CHECK(mel->ne[0] == n_frames && mel->ne[1] == hp.n_mels && mel->type == DType::F32,
             "encoder: mel input must be f32 [" + std::to_string(n_frames) + ", " + std::to_string(hp.n_mels) +
                 "], got " + mel->describe());

  // The convolutions read the mel channels-first, [n_mels, frames]: a transposed view, no copy.
  Tensor* x = conv1d(a, w.conv1_w, transpose(a, mel), 1, 1, w.conv1_b, /*gelu=*/true);
  x = conv1d(a, w.conv2_w, x, 2, 1, w.conv2_b, /*gelu=*/true);
  x = add(a, x, w.enc_pos);  // [S, n_audio_ctx]

  for (const EncoderLayer& l : w.enc) {
    Tensor* h = layer_norm(a, x, l.attn_ln_w, l.attn_ln_b, kLayerNormEps);
    Tensor* q = linear(a, h, l.attn_q_w, l.attn_q_b);
    Tensor* k = split_heads(a, linear(a, h, l.attn_k_w, nullptr), hp.n_audio_head);
    Tensor* v = split_heads(a, linear(a, h, l.attn_v_w, l.attn_v_b), hp.n_audio_head);
    Tensor* att = multi_head_attention(a, q, k, v, hp.n_audio_head, /*causal=*/false, flash_attn);
    x = linear_residual(a, att, l.attn_out_w, l.attn_out_b, x);

    h = layer_norm(a, x, l.mlp_ln_w, l.mlp_ln_b, kLayerNormEps);
    h = linear_gelu(a, h, l.mlp_0_w, l.mlp_0_b);
    x = linear_residual(a, h, l.mlp_2_w, l.mlp_2_b, x);
  }
  Tensor* out = layer_norm(a, x, w.enc_ln_w, w.enc_ln_b, kLayerNormEps);
  out->name = "encoder.out";
  return out;
}

void build_cross_kv(TensorArena& a, Graph& g, const WhisperWeights& w, const HParams& hp, Tensor* features,
                    KvCache& cache, int window) {
  HARK_CHECK(window >= 0 && window < cache.n_windows(), "encoder: cross K/V window " + std::to_string(window) +
                                                            " outside the KV cache's [0, " +
                                                            std::to_string(cache.n_windows()) + ")");
  const int64_t n_head = hp.n_text_head, d = hp.n_text_state / n_head;
  // [S, n_audio_ctx] (a frame's heads side by side) as the cache holds it, [D, n_audio_ctx, H]:
  // a permuted view that the copy gathers head by head.
  auto heads_outer = [&](Tensor* x) { return permute(a, reshape(a, x, {d, n_head, x->ne[1]}), 0, 2, 1, 3); };
  for (int l = 0; l < hp.n_text_layer; ++l) {
    const DecoderLayer& dl = w.dec[static_cast<size_t>(l)];
    g.build(copy(a, heads_outer(linear(a, features, dl.cross_k_w, nullptr)), cache.cross_k_heads(a, l, window)));
    Tensor* v = linear(a, features, dl.cross_v_w, dl.cross_v_b);  // [S, n_audio_ctx]
    // A transposed cache takes the values key-major (the copy converts the strided view).
    if (cache.v_transposed()) {
      Tensor* c = cache.cross_v(l);
      g.build(copy(a, transpose(a, v),
                   view(a, c, {c->ne[0], c->ne[1]}, {c->nb[1]}, static_cast<size_t>(window) * c->nb[2])));
    } else {
      g.build(copy(a, heads_outer(v), cache.cross_v_heads(a, l, window)));
    }
  }
}

}  // namespace hark
