// The Whisper decoder as a graph for one step: n new tokens at positions n_past .. n_past+n-1
// -> logits of the last one (or of every one: DecoderGraphOptions::all_logits).
//
//   token embedding + learned positions
//   -> n_text_layer x [x += masked self-attn(LN(x)) over the KV cache;
//                      x += cross-attn(LN(x)) over the encoder's cached K/V; x += MLP(LN(x))]
//   -> LN -> logits against the token embedding (the output projection shares its weights)
//
// The step's keys and values are copied into the self-attention cache by copy nodes that the
// graph lists before the attention reading the cache (graph order is execution order), so a
// step reads its own tokens and all earlier ones without recomputing them.
#pragma once
#include <span>
#include <vector>

#include "model/hparams.h"
#include "model/kv_cache.h"
#include "model/weights.h"
#include "runtime/graph.h"

namespace hark {

// A decoder cross-attention head whose attention logits a step hands out (word timestamps).
struct CrossQkHead {
  int layer = 0;
  int head = 0;
};

struct DecoderGraphOptions {
  // Fused flash_attn nodes, else the plain attention path (layers.h). A cache with transposed
  // values (KvCache::v_transposed) takes the plain path, reading them in place; flash_attn
  // cannot read it.
  bool flash_attn = true;
  bool all_logits = false;  // project every token's row, not only the last one
  int seq = 0;              // build_decoder: the self-attention cache slot the tokens extend
  int window = 0;           // the cross-attention cache window the tokens attend to (build_decoder;
                            // build_decoder_batch when it gets no per-row windows)
  // build_decoder only: for each of these heads, an extra graph output f32 [n_audio_ctx, n] =
  // (q_t . k_f) / sqrt(D), the head's cross-attention logits before the softmax, appended to
  // *cross_qk_out in this order. Computed beside the attention (which keeps its fused or plain
  // path), so a step without heads builds exactly the nodes it always did.
  std::span<const CrossQkHead> cross_qk;
  std::vector<Tensor*>* cross_qk_out = nullptr;
  // build_decoder_batch only: forks to make before the step reads the slots (beam search's
  // copy on fork). Each layer's part is a pair of copy nodes ahead of the layer's attention, so
  // the copies run on the compute threads, not one after another on the caller's. Slots must be
  // valid (KvCache::check_copy); a cache with transposed values is not supported here.
  std::span<const SeqCopy> forks;
  // build_decoder_batch only: set to the step's key mask, an input f32 [n_keys, 1, 1, B] the
  // caller fills with fill_key_mask once the graph is allocated, when the step has one (rows at
  // different positions in evenly stepped slots, through one flash_attn node), else to nullptr.
  // Left null, such rows take one attention node each.
  Tensor** key_mask = nullptr;
};

// tokens: i32 [n], an input tensor. Builds the whole step into g (cleared first) and returns the
// logits (marked as the graph's output): f32 [n_vocab] for the last token, or with all_logits
// f32 [n_vocab, n], row i for token i. Requires n_past + n <= n_text_ctx.
Tensor* build_decoder(TensorArena& a, Graph& g, const WhisperWeights& w, const HParams& hp, KvCache& cache,
                      Tensor* tokens, int n_past, const DecoderGraphOptions& opts = {});

// One step of B sequences (beam search, best-of, the batched pipeline's chunks): row b decodes
// tokens[b] at position positions[b] of self-attention cache slot seqs[b] (distinct slots),
// attending to that slot's positions [0, positions[b]]. Rows in lockstep share one position;
// under continuous batching (chunks that joined at different steps) they may differ.
// Projections, MLP and logits are single mul_mats over B columns (each weight read once for all
// rows); the self-attention is one batched node when the slots step evenly (s0, s0+d, s0+2d,
// ...) and the rows share a position (or, with opts.key_mask, do not), else one per row (rows at
// different positions take their positional embeddings and cache writes row by row).
// Cross-attention: without `windows` every row reads window opts.window, one node (all B
// queries against the shared cross K/V); with `windows` (one per row: the batched long-audio
// pipeline, each row its own chunk) row b reads window windows[b]: one node with the rows as
// batch dim when the windows step evenly, else one per row (rows sharing a window still share
// one node when all do). Returns f32 [n_vocab, B] logits, row b's column at b (opts.all_logits
// and opts.seq are not used). Requires every position < n_text_ctx.
Tensor* build_decoder_batch(TensorArena& a, Graph& g, const WhisperWeights& w, const HParams& hp, KvCache& cache,
                            Tensor* tokens, std::span<const int> seqs, std::span<const int> positions,
                            const DecoderGraphOptions& opts = {}, std::span<const int> windows = {});

// Row b of a step's key mask (DecoderGraphOptions::key_mask) shows keys [0, positions[b]] and
// hides the rest with -inf.
void fill_key_mask(Tensor& mask, std::span<const int> positions);

}  // namespace hark
