#include "model/decoder.h"

#include <string>

#include "model/layers.h"
#include "runtime/error.h"
#include "runtime/ops.h"

namespace hark {

using namespace ops;

Tensor* build_decoder(TensorArena& a, Graph& g, const WhisperWeights& w, const HParams& hp, KvCache& cache,
                      Tensor* tokens, int n_past) {
  const int64_t n = tokens->ne[0];
  const int64_t n_kv = n_past + n;
  HARK_CHECK(tokens->type == DType::I32 && n >= 1, "decoder: tokens must be a non-empty i32 vector, got " +
                                                       tokens->describe());
  HARK_CHECK(n_past >= 0 && n_kv <= hp.n_text_ctx,
             "decoder: " + std::to_string(n_past) + " cached + " + std::to_string(n) +
                 " new tokens exceed the text context of " + std::to_string(hp.n_text_ctx));
  g.clear();
  const int n_head = hp.n_text_head;

  Tensor* x = add(a, get_rows(a, w.token_embedding, tokens), slice(a, w.dec_pos, 1, n_past, n_kv));

  for (int il = 0; il < hp.n_text_layer; ++il) {
    const DecoderLayer& l = w.dec[static_cast<size_t>(il)];
    Tensor* h = layer_norm(a, x, l.attn_ln_w, l.attn_ln_b, kLayerNormEps);
    Tensor* q = linear(a, h, l.attn_q_w, l.attn_q_b);
    // This step's keys and values go to cache rows [n_past, n_kv). Building the copies into g now
    // puts them (and everything they need) before the attention below, which reads the cache.
    Tensor* self_k = cache.self_k(il);
    Tensor* self_v = cache.self_v(il);
    g.build(copy(a, linear(a, h, l.attn_k_w, nullptr), slice(a, self_k, 1, n_past, n_kv)));
    g.build(copy(a, linear(a, h, l.attn_v_w, l.attn_v_b), slice(a, self_v, 1, n_past, n_kv)));
    Tensor* att = multi_head_attention(a, q, cache_heads(a, self_k, n_head, n_kv),
                                       cache_heads(a, self_v, n_head, n_kv), n_head, /*causal=*/true);
    x = add(a, x, linear(a, att, l.attn_out_w, l.attn_out_b));

    h = layer_norm(a, x, l.cross_ln_w, l.cross_ln_b, kLayerNormEps);
    q = linear(a, h, l.cross_q_w, l.cross_q_b);
    att = multi_head_attention(a, q, cache_heads(a, cache.cross_k(il), n_head, hp.n_audio_ctx),
                               cache_heads(a, cache.cross_v(il), n_head, hp.n_audio_ctx), n_head, false);
    x = add(a, x, linear(a, att, l.cross_out_w, l.cross_out_b));

    h = layer_norm(a, x, l.mlp_ln_w, l.mlp_ln_b, kLayerNormEps);
    h = gelu(a, linear(a, h, l.mlp_0_w, l.mlp_0_b));
    x = add(a, x, linear(a, h, l.mlp_2_w, l.mlp_2_b));
  }
  // Only the last token's logits are needed to choose the next token: project one column.
  Tensor* last = slice(a, x, 1, n - 1, n);
  last = layer_norm(a, last, w.dec_ln_w, w.dec_ln_b, kLayerNormEps);
  Tensor* logits = reshape(a, mul_mat(a, w.token_embedding, last), {hp.n_vocab});
  logits->name = "logits";
  g.build(logits);
  return logits;
}

}  // namespace hark
