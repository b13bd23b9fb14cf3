// The Whisper encoder as a graph: a 30 s log-mel window -> audio features, and the
// cross-attention keys and values of every decoder layer, written into the KV cache once per
// window (not once per decoded token).
//
//   conv1 (k3 s1 p1) -> GELU -> conv2 (k3 s2 p1) -> GELU -> + sinusoidal positions
//   -> n_audio_layer x [x += attn(LN(x)); x += MLP(LN(x))] -> LN
//
// Attention is the fused flash_attn op by default: a head's 1500 x 1500 score matrix never exists.
// flash_attn = false builds the plain path instead (layers.h), which does hold the scores.
#pragma once
#include "model/hparams.h"
#include "model/kv_cache.h"
#include "model/weights.h"
#include "runtime/graph.h"

namespace hark {

// mel: f32 [2 * n_audio_ctx frames, n_mels] (frames innermost, as LogMel stores them).
// Returns the encoder output, f32 [n_audio_state, n_audio_ctx].
Tensor* build_encoder(TensorArena& a, const WhisperWeights& w, const HParams& hp, Tensor* mel, bool flash_attn = true);

// Adds to g, layer by layer, the nodes that project `features` into every decoder layer's cross
// key/value cache window `window` (and, on the way, the encoder nodes that compute `features`).
// Values go in transposed when the cache stores them so (KvCache::v_transposed).
void build_cross_kv(TensorArena& a, Graph& g, const WhisperWeights& w, const HParams& hp, Tensor* features,
                    KvCache& cache, int window = 0);

}  // namespace hark
