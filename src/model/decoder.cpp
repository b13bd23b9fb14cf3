#include "model/decoder.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <string>
#include <vector>

#include "backend/buffer.h"
#include "model/layers.h"
#include "runtime/error.h"
#include "runtime/ops.h"

namespace hark {

using namespace ops;

namespace {

// Slot `seq` of a [ne0, ne1, n_seq] self-attention cache tensor, as a 2-D view [ne0, ne1].
Tensor* slot_view(TensorArena& a, Tensor* cache, int seq) {
  return view(a, cache, {cache->ne[0], cache->ne[1]}, {cache->nb[1]}, static_cast<size_t>(seq) * cache->nb[2]);
}

// The requested heads of layer il: their scaled cross-attention logits as extra graph outputs.
// One head's query rows are a strided view of q and its keys a view of the f16 cross cache, so
// nothing is copied; the product is the same mul_mat (keys as weight rows) the plain path uses.
void build_cross_qk(TensorArena& a, Graph& g, Tensor* q, Tensor* cross_k, int il, const HParams& hp,
                    const DecoderGraphOptions& opts) {
  if (opts.cross_qk.empty()) return;
  HARK_CHECK(opts.cross_qk_out != nullptr, "decoder: cross_qk heads asked for without an output list");
  const int64_t n = q->ne[1];
  const int64_t d = hp.n_text_state / hp.n_text_head;
  const float kq_scale = 1.0f / std::sqrt(static_cast<float>(d));
  for (const CrossQkHead& ch : opts.cross_qk) {
    if (ch.layer != il) continue;
    HARK_CHECK(ch.head >= 0 && ch.head < hp.n_text_head, "decoder: cross-attention head " + std::to_string(ch.head) +
                                                             " outside [0, " + std::to_string(hp.n_text_head) + ")");
    Tensor* qh = view(a, q, {d, n}, {q->nb[1]}, static_cast<size_t>(ch.head) * dtype_row_bytes(q->type, d));
    Tensor* kh = view(a, cross_k, {d, hp.n_audio_ctx}, {cross_k->nb[1]}, static_cast<size_t>(ch.head) * cross_k->nb[2]);
    Tensor* qk = ops::scale(a, mul_mat(a, kh, qh), kq_scale);  // [n_audio_ctx, n]
    qk->name = "cross_qk";
    g.build(qk);
    opts.cross_qk_out->push_back(qk);
  }
}

}  // namespace

Tensor* build_decoder(TensorArena& a, Graph& g, const WhisperWeights& w, const HParams& hp, KvCache& cache,
                      Tensor* tokens, int n_past, const DecoderGraphOptions& opts) {
  const int64_t n = tokens->ne[0];
  const int64_t n_kv = n_past + n;
  HARK_CHECK(tokens->type == DType::I32 && n >= 1,
             "decoder: tokens must be a non-empty i32 vector, got " + tokens->describe());
  HARK_CHECK(n_past >= 0 && n_kv <= hp.n_text_ctx, "decoder: " + std::to_string(n_past) + " cached + " +
                                                       std::to_string(n) + " new tokens exceed the text context of " +
                                                       std::to_string(hp.n_text_ctx));
  HARK_CHECK(!(opts.flash_attn && cache.v_transposed()),
             "decoder: flash_attn reads values as [S, n_ctx], but this KV cache stores them transposed");
  g.clear();
  HARK_CHECK(opts.seq >= 0 && opts.seq < cache.n_seq(), "decoder: sequence slot " + std::to_string(opts.seq) +
                                                            " outside the KV cache's [0, " +
                                                            std::to_string(cache.n_seq()) + ")");
  HARK_CHECK(opts.window >= 0 && opts.window < cache.n_windows(),
             "decoder: cross K/V window " + std::to_string(opts.window) + " outside the KV cache's [0, " +
                 std::to_string(cache.n_windows()) + ")");
  for (const CrossQkHead& ch : opts.cross_qk)
    HARK_CHECK(ch.layer >= 0 && ch.layer < hp.n_text_layer, "decoder: cross-attention layer " +
                                                                std::to_string(ch.layer) + " outside [0, " +
                                                                std::to_string(hp.n_text_layer) + ")");
  const int n_head = hp.n_text_head;
  // Values of the first n positions of a V cache, per head, in the layout the attention path
  // reads: [D, n, H] for flash_attn, key-major [n, D, H] from a transposed cache.
  auto attend = [&](Tensor* q, Tensor* k_cache, Tensor* v_cache, int64_t n_keys, bool causal) {
    Tensor* k = cache_heads(a, k_cache, n_head, n_keys);
    if (cache.v_transposed())
      return plain_attention(a, q, k, cache_heads_transposed(a, v_cache, n_head, n_keys), n_head, causal);
    return multi_head_attention(a, q, k, cache_heads(a, v_cache, n_head, n_keys), n_head, causal, opts.flash_attn);
  };

  Tensor* x = add(a, get_rows(a, w.token_embedding, tokens), slice(a, w.dec_pos, 1, n_past, n_kv));

  for (int il = 0; il < hp.n_text_layer; ++il) {
    const DecoderLayer& l = w.dec[static_cast<size_t>(il)];
    Tensor* h = layer_norm(a, x, l.attn_ln_w, l.attn_ln_b, kLayerNormEps);
    Tensor* q = linear(a, h, l.attn_q_w, l.attn_q_b);
    // This step's keys and values go to cache rows [n_past, n_kv). Building the copies into g now
    // puts them (and everything they need) before the attention below, which reads the cache.
    Tensor* self_k = slot_view(a, cache.self_k(il), opts.seq);
    Tensor* self_v = slot_view(a, cache.self_v(il), opts.seq);
    g.build(copy(a, linear(a, h, l.attn_k_w, nullptr), slice(a, self_k, 1, n_past, n_kv)));
    Tensor* v = linear(a, h, l.attn_v_w, l.attn_v_b);  // [S, n]
    if (cache.v_transposed()) {
      // Columns [n_past, n_kv) of every channel's row: the new values, key-major.
      g.build(copy(a, transpose(a, v), slice(a, self_v, 0, n_past, n_kv)));
    } else {
      g.build(copy(a, v, slice(a, self_v, 1, n_past, n_kv)));
    }
    Tensor* att = attend(q, self_k, self_v, n_kv, /*causal=*/true);
    x = linear_residual(a, att, l.attn_out_w, l.attn_out_b, x);

    h = layer_norm(a, x, l.cross_ln_w, l.cross_ln_b, kLayerNormEps);
    q = linear(a, h, l.cross_q_w, l.cross_q_b);
    Tensor* cross_k = cache.cross_k_heads(a, il, opts.window);  // [D, n_audio_ctx, H]
    Tensor* cross_v = cache.cross_v_heads(a, il, opts.window);
    att = cache.v_transposed()
              ? plain_attention(a, q, cross_k, cross_v, n_head, /*causal=*/false)
              : multi_head_attention(a, q, cross_k, cross_v, n_head, /*causal=*/false, opts.flash_attn);
    x = linear_residual(a, att, l.cross_out_w, l.cross_out_b, x);
    build_cross_qk(a, g, q, cross_k, il, hp, opts);

    h = layer_norm(a, x, l.mlp_ln_w, l.mlp_ln_b, kLayerNormEps);
    h = linear_gelu(a, h, l.mlp_0_w, l.mlp_0_b);
    x = linear_residual(a, h, l.mlp_2_w, l.mlp_2_b, x);
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

Tensor* build_decoder_batch(TensorArena& a, Graph& g, const WhisperWeights& w, const HParams& hp, KvCache& cache,
                            Tensor* tokens, std::span<const int> seqs, std::span<const int> positions,
                            const DecoderGraphOptions& opts, std::span<const int> windows) {
  const int64_t n_rows = tokens->ne[0];
  HARK_CHECK(
      tokens->type == DType::I32 && n_rows >= 1 && tokens->ne[1] == 1 && tokens->ne[2] == 1 && tokens->ne[3] == 1,
      "decoder batch: tokens must be a non-empty i32 vector, got " + tokens->describe());
  HARK_CHECK(static_cast<int64_t>(seqs.size()) == n_rows, "decoder batch: " + std::to_string(n_rows) + " tokens but " +
                                                              std::to_string(seqs.size()) +
                                                              " sequence slots (one slot per row)");
  for (size_t i = 0; i < seqs.size(); ++i) {
    HARK_CHECK(seqs[i] >= 0 && seqs[i] < cache.n_seq(),
               "decoder batch: row " + std::to_string(i) + "'s sequence slot " + std::to_string(seqs[i]) +
                   " is outside the KV cache's [0, " + std::to_string(cache.n_seq()) + ") (set_n_sequences first)");
    for (size_t j = 0; j < i; ++j)
      HARK_CHECK(seqs[j] != seqs[i], "decoder batch: rows " + std::to_string(j) + " and " + std::to_string(i) +
                                         " both use sequence slot " + std::to_string(seqs[i]) +
                                         " (each row needs its own slot)");
  }
  HARK_CHECK(windows.empty() || static_cast<int64_t>(windows.size()) == n_rows,
             "decoder batch: " + std::to_string(n_rows) + " rows but " + std::to_string(windows.size()) +
                 " cross windows (one per row, or none)");
  for (size_t i = 0; i < windows.size(); ++i)
    HARK_CHECK(windows[i] >= 0 && windows[i] < cache.n_windows(),
               "decoder batch: row " + std::to_string(i) + "'s cross window " + std::to_string(windows[i]) +
                   " is outside the KV cache's [0, " + std::to_string(cache.n_windows()) + ") (set_n_windows first)");
  HARK_CHECK(opts.window >= 0 && opts.window < cache.n_windows(),
             "decoder batch: cross window " + std::to_string(opts.window) + " is outside the KV cache's [0, " +
                 std::to_string(cache.n_windows()) + ")");
  HARK_CHECK(static_cast<int64_t>(positions.size()) == n_rows, "decoder batch: " + std::to_string(n_rows) +
                                                                   " rows but " + std::to_string(positions.size()) +
                                                                   " positions (one per row)");
  bool uniform = true;
  for (size_t i = 0; i < positions.size(); ++i) {
    HARK_CHECK(positions[i] >= 0 && positions[i] < hp.n_text_ctx,
               "decoder batch: row " + std::to_string(i) + "'s position " + std::to_string(positions[i]) +
                   " is outside the text context [0, " + std::to_string(hp.n_text_ctx) + ")");
    uniform = uniform && positions[i] == positions[0];
  }
  const int n_past = positions[0];  // every row's, when uniform
  HARK_CHECK(!(opts.flash_attn && cache.v_transposed()),
             "decoder: flash_attn reads values as [S, n_ctx], but this KV cache stores them transposed");
  HARK_CHECK(opts.forks.empty() || !cache.v_transposed(),
             "decoder batch: forks in the graph need values stored as [S, n_ctx] (not transposed)");
  for (const SeqCopy& f : opts.forks) cache.check_copy(f.src, f.dst, f.n_past);
  g.clear();
  const int n_head = hp.n_text_head;
  const int64_t S = hp.n_text_state, D = S / n_head, B = n_rows, n_kv = n_past + 1;
  const float kq_scale = 1.0f / std::sqrt(static_cast<float>(D));
  // Rows whose slots step evenly (0, 1, 2, ...: beam search's usual layout) read their caches
  // through one strided view with the rows as the batch dim: one attention node for all rows.
  // Rows at different positions (continuous batching) do too with flash_attn, when the caller
  // takes the key mask (opts.key_mask): the node spans the longest row's keys and each row's
  // mask hides the positions past its own. Other slot lists get one attention node per row.
  const int64_t step = B > 1 ? seqs[1] - seqs[0] : 1;
  bool slots_even = step >= 1;
  for (int64_t b = 0; b < B; ++b) slots_even = slots_even && seqs[static_cast<size_t>(b)] == seqs[0] + b * step;
  const bool masked = slots_even && !uniform && opts.flash_attn && opts.key_mask != nullptr;
  const bool strided = slots_even && (uniform || masked);
  const size_t first = static_cast<size_t>(seqs[0]);
  int64_t n_keys = n_kv;  // the one node's keys: the longest row's
  Tensor* key_mask = nullptr;
  if (masked) {
    n_keys = *std::max_element(positions.begin(), positions.end()) + 1;
    key_mask = a.new_tensor(DType::F32, {n_keys, 1, 1, B}, "key_mask");
    key_mask->flags |= kFlagInput;
  }
  if (opts.key_mask) *opts.key_mask = key_mask;
  // The cross windows: one shared by all rows (beams, candidates: today's one node), rows stepping
  // evenly through the windows (one batched node), or any other list (one node per row).
  bool shared_window = true;
  for (int wi : windows) shared_window = shared_window && wi == windows[0];
  const int64_t wstep = windows.size() > 1 ? windows[1] - windows[0] : 1;
  bool wstrided = !shared_window && wstep >= 1;
  for (int64_t b = 0; wstrided && b < B; ++b) wstrided = windows[static_cast<size_t>(b)] == windows[0] + b * wstep;
  const int shared = windows.empty() ? opts.window : windows[0];

  Tensor* pos = nullptr;  // [S, B]: each row's positional embedding
  if (uniform) {
    pos = slice(a, w.dec_pos, 1, n_past, n_kv);
  } else {
    for (int64_t b = 0; b < B; ++b) {
      const int p = positions[static_cast<size_t>(b)];
      Tensor* row = slice(a, w.dec_pos, 1, p, p + 1);
      pos = pos ? concat(a, pos, row, 1) : row;
    }
  }
  Tensor* x = add(a, get_rows(a, w.token_embedding, tokens), pos);  // [S, B]

  for (int il = 0; il < hp.n_text_layer; ++il) {
    const DecoderLayer& l = w.dec[static_cast<size_t>(il)];
    Tensor* h = layer_norm(a, x, l.attn_ln_w, l.attn_ln_b, kLayerNormEps);
    Tensor* q = linear(a, h, l.attn_q_w, l.attn_q_b);  // [S, B]
    Tensor* k = linear(a, h, l.attn_k_w, nullptr);     // [S, B]
    Tensor* v = linear(a, h, l.attn_v_w, l.attn_v_b);  // [S, B]
    Tensor* kc = cache.self_k(il);
    Tensor* vc = cache.self_v(il);
    const size_t vel = dtype_row_bytes(vc->type, 1);
    // Forks first: positions [0, n_past) of slot src into slot dst, before anything reads dst.
    // (Position n_past, written below, is not part of a fork.)
    for (const SeqCopy& f : opts.forks) {
      if (f.src == f.dst || f.n_past == 0) continue;
      for (Tensor* c : {kc, vc}) {
        const auto at = [&](int slot) {
          return view(a, c, {S, static_cast<int64_t>(f.n_past)}, {c->nb[1]}, static_cast<size_t>(slot) * c->nb[2]);
        };
        g.build(copy(a, at(f.src), at(f.dst)));
      }
    }
    // Row b's key and value go to position n_past of its slot. As in build_decoder, the copies
    // enter g before the attention that reads them.
    if (strided && uniform) {
      g.build(copy(a, reshape(a, k, {S, 1, B}),
                   view(a, kc, {S, 1, B}, {kc->nb[1], step * kc->nb[2]}, first * kc->nb[2] + n_past * kc->nb[1])));
      if (cache.v_transposed()) {
        g.build(copy(a, reshape(a, v, {1, S, B}),
                     view(a, vc, {1, S, B}, {vc->nb[1], step * vc->nb[2]}, first * vc->nb[2] + n_past * vel)));
      } else {
        g.build(copy(a, reshape(a, v, {S, 1, B}),
                     view(a, vc, {S, 1, B}, {vc->nb[1], step * vc->nb[2]}, first * vc->nb[2] + n_past * vc->nb[1])));
      }
    } else {
      for (int64_t b = 0; b < B; ++b) {
        const size_t slot = static_cast<size_t>(seqs[static_cast<size_t>(b)]);
        const size_t p = static_cast<size_t>(positions[static_cast<size_t>(b)]);
        g.build(copy(a, slice(a, k, 1, b, b + 1), view(a, kc, {S, 1}, {kc->nb[1]}, slot * kc->nb[2] + p * kc->nb[1])));
        if (cache.v_transposed()) {
          g.build(copy(a, reshape(a, slice(a, v, 1, b, b + 1), {1, S}),
                       view(a, vc, {1, S}, {vc->nb[1]}, slot * vc->nb[2] + p * vel)));
        } else {
          g.build(
              copy(a, slice(a, v, 1, b, b + 1), view(a, vc, {S, 1}, {vc->nb[1]}, slot * vc->nb[2] + p * vc->nb[1])));
        }
      }
    }

    Tensor* att = nullptr;
    if (strided) {
      // q as B batches of one query: [D, 1, H, B]; keys [D, n_kv, H, B] over the rows' slots.
      Tensor* qh = permute(a, reshape(a, q, {D, n_head, 1, B}), 0, 2, 1, 3);
      Tensor* kh = view(a, kc, {D, n_keys, n_head, B}, {kc->nb[1], dtype_row_bytes(kc->type, D), step * kc->nb[2]},
                        first * kc->nb[2]);
      Tensor* out = nullptr;  // [D, H, 1, B]
      if (opts.flash_attn) {
        Tensor* vh = view(a, vc, {D, n_keys, n_head, B}, {vc->nb[1], dtype_row_bytes(vc->type, D), step * vc->nb[2]},
                          first * vc->nb[2]);
        out = flash_attn(a, qh, kh, vh, key_mask, kq_scale, /*causal=*/false);
      } else {
        // The plain path (layers.h's plain_attention with a batch dim): keys as weight rows, the
        // values key-major, read in place from a transposed cache.
        Tensor* vt = cache.v_transposed()
                         ? view(a, vc, {n_kv, D, n_head, B},
                                {vc->nb[1], static_cast<size_t>(D) * vc->nb[1], step * vc->nb[2]}, first * vc->nb[2])
                         : cont(a, transpose(a, view(a, vc, {D, n_kv, n_head, B},
                                                     {vc->nb[1], dtype_row_bytes(vc->type, D), step * vc->nb[2]},
                                                     first * vc->nb[2])));
        Tensor* probs = soft_max(a, mul_mat(a, kh, qh), nullptr, kq_scale, /*causal=*/false);  // [n_kv, 1, H, B]
        out = cont(a, permute(a, mul_mat(a, vt, probs), 0, 2, 1, 3));                          // [D, H, 1, B]
      }
      att = reshape(a, out, {S, B});
    } else {
      for (int64_t b = 0; b < B; ++b) {
        const int slot = seqs[static_cast<size_t>(b)];
        const int64_t row_kv = positions[static_cast<size_t>(b)] + 1;
        Tensor* kv_k = cache_heads(a, slot_view(a, kc, slot), n_head, row_kv);
        Tensor* qb = slice(a, q, 1, b, b + 1);
        Tensor* ab =
            cache.v_transposed()
                ? plain_attention(a, qb, kv_k, cache_heads_transposed(a, slot_view(a, vc, slot), n_head, row_kv),
                                  n_head, false)
                : multi_head_attention(a, qb, kv_k, cache_heads(a, slot_view(a, vc, slot), n_head, row_kv), n_head,
                                       false, opts.flash_attn);
        att = att ? concat(a, att, ab, 1) : ab;
      }
    }
    x = linear_residual(a, att, l.attn_out_w, l.attn_out_b, x);

    // Cross-attention (see the windows above).
    h = layer_norm(a, x, l.cross_ln_w, l.cross_ln_b, kLayerNormEps);
    q = linear(a, h, l.cross_q_w, l.cross_q_b);
    auto cross_one = [&](Tensor* qr, int win) {  // queries qr [S, n] against window win, one node
      Tensor* ck = cache.cross_k_heads(a, il, win);
      Tensor* cv = cache.cross_v_heads(a, il, win);
      return cache.v_transposed() ? plain_attention(a, qr, ck, cv, n_head, false)
                                  : multi_head_attention(a, qr, ck, cv, n_head, false, opts.flash_attn);
    };
    if (shared_window) {
      att = cross_one(q, shared);
    } else if (wstrided) {
      // As the strided self-attention: B batches of one query, each against its own window.
      const int w0 = windows[0];
      const int ws = static_cast<int>(wstep);
      Tensor* qh = permute(a, reshape(a, q, {D, n_head, 1, B}), 0, 2, 1, 3);
      Tensor* kh = cache.cross_k_heads(a, il, w0, B, ws);  // [D, n_audio_ctx, H, B]
      Tensor* out = nullptr;                               // [D, H, 1, B]
      if (opts.flash_attn) {
        out = flash_attn(a, qh, kh, cache.cross_v_heads(a, il, w0, B, ws), nullptr, kq_scale, /*causal=*/false);
      } else {
        Tensor* vt = cache.v_transposed() ? cache.cross_v_heads(a, il, w0, B, ws)
                                          : cont(a, transpose(a, cache.cross_v_heads(a, il, w0, B, ws)));
        Tensor* probs = soft_max(a, mul_mat(a, kh, qh), nullptr, kq_scale, /*causal=*/false);  // [n_ctx, 1, H, B]
        out = cont(a, permute(a, mul_mat(a, vt, probs), 0, 2, 1, 3));                          // [D, H, 1, B]
      }
      att = reshape(a, out, {S, B});
    } else {
      att = nullptr;
      for (int64_t b = 0; b < B; ++b) {
        Tensor* ab = cross_one(slice(a, q, 1, b, b + 1), windows[static_cast<size_t>(b)]);
        att = att ? concat(a, att, ab, 1) : ab;
      }
    }
    x = linear_residual(a, att, l.cross_out_w, l.cross_out_b, x);

    h = layer_norm(a, x, l.mlp_ln_w, l.mlp_ln_b, kLayerNormEps);
    h = linear_gelu(a, h, l.mlp_0_w, l.mlp_0_b);
    x = linear_residual(a, h, l.mlp_2_w, l.mlp_2_b, x);
  }
  x = layer_norm(a, x, w.dec_ln_w, w.dec_ln_b, kLayerNormEps);
  Tensor* logits = mul_mat(a, w.token_embedding, x);  // [n_vocab, B]
  logits->name = "logits";
  g.build(logits);
  return logits;
}

void fill_key_mask(Tensor& mask, std::span<const int> positions) {
  HARK_CHECK(mask.type == DType::F32 && mask.ne[3] == static_cast<int64_t>(positions.size()) && mask.is_contiguous(),
             "fill_key_mask: mask " + mask.describe() + " does not fit " + std::to_string(positions.size()) + " rows");
  const int64_t n = mask.ne[0];
  std::vector<float> m(static_cast<size_t>(n * mask.ne[3]));
  for (size_t b = 0; b < positions.size(); ++b)
    for (int64_t j = 0; j < n; ++j)
      m[b * static_cast<size_t>(n) + static_cast<size_t>(j)] =
          j <= positions[b] ? 0.0f : -std::numeric_limits<float>::infinity();
  tensor_set(mask, m.data(), m.size() * sizeof(float));
}

}  // namespace hark
