#include "model/decoder.h"

#include <string>

#include "model/layers.h"
#include "runtime/error.h"
#include "runtime/ops.h"

namespace hark {

using namespace ops;

Tensor* build_decoder(TensorArena& a, Graph& g, const WhisperWeights& w, const HParams& hp, KvCache& cache,
                      Tensor* tokens, int n_past, const DecoderGraphOptions& opts) {
  const int64_t n = tokens->ne[0];
  const int64_t n_kv = n_past + n;
  HARK_CHECK(tokens->type == DType::I32 && n >= 1, "decoder: tokens must be a non-empty i32 vector, got " +
                                                       tokens->describe());
  HARK_CHECK(n_past >= 0 && n_kv <= hp.n_text_ctx,
             "decoder: " + std::to_string(n_past) + " cached + " + std::to_string(n) +
                 " new tokens exceed the text context of " + std::to_string(hp.n_text_ctx));
  HARK_CHECK(!(opts.flash_attn && cache.v_transposed()),
             "decoder: flash_attn reads values as [S, n_ctx], but this KV cache stores them transposed");
  g.clear();
  const int n_head = hp.n_text_head;
  // Values of the first n positions of a V cache, per head, in the layout the attention path
  // reads: [D, n, H] for flash_attn, key-major [n, D, H] from a transposed cache.
  auto attend = [&](Tensor* q, Tensor* k_cache, Tensor* v_cache, int64_t n_keys, bool causal) {
    Tensor* k = cache_heads(a, k_cache, n_head, n_keys);
    if (cache.v_transposed()) return plain_attention(a, q, k, cache_heads_transposed(a, v_cache, n_head, n_keys), n_head, causal);
    return multi_head_attention(a, q, k, cache_heads(a, v_cache, n_head, n_keys), n_head, causal, opts.flash_attn);
  };

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
    Tensor* v = linear(a, h, l.attn_v_w, l.attn_v_b);  // [S, n]
    if (cache.v_transposed()) {
      // Columns [n_past, n_kv) of every channel's row: the new values, key-major.
      g.build(copy(a, transpose(a, v), slice(a, self_v, 0, n_past, n_kv)));
    } else {
      g.build(copy(a, v, slice(a, self_v, 1, n_past, n_kv)));
    }
    Tensor* att = attend(q, self_k, self_v, n_kv, /*causal=*/true);
    x = add(a, x, linear(a, att, l.attn_out_w, l.attn_out_b));

    h = layer_norm(a, x, l.cross_ln_w, l.cross_ln_b, kLayerNormEps);
    q = linear(a, h, l.cross_q_w, l.cross_q_b);
    att = attend(q, cache.cross_k(il), cache.cross_v(il), hp.n_audio_ctx, /*causal=*/false);
    x = add(a, x, linear(a, att, l.cross_out_w, l.cross_out_b));

    h = layer_norm(a, x, l.mlp_ln_w, l.mlp_ln_b, kLayerNormEps);
    h = gelu(a, linear(a, h, l.mlp_0_w, l.mlp_0_b));
    x = add(a, x, linear(a, h, l.mlp_2_w, l.mlp_2_b));
  }
  // Choosing the next token needs only the last token's logits, so by default one column is
  // projected (the projection against the whole vocabulary is the step's largest product). Some
  // callers (scoring a batch of candidates, bench) want every row.
  Tensor* rows = opts.all_logits ? x : slice(a, x, 1, n - 1, n);
  rows = layer_norm(a, rows, w.dec_ln_w, w.dec_ln_b, kLayerNormEps);
  Tensor* logits = mul_mat(a, w.token_embedding, rows);  // [n_vocab, rows]
  if (!opts.all_logits) logits = reshape(a, logits, {hp.n_vocab});
  logits->name = "logits";
  g.build(logits);
  return logits;
}

}  // namespace hark
