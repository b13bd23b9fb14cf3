// WhisperRunner: runs one model's encoder and decoder graphs on a list of backends (in priority
// order), for one job at a time. It owns what a job needs besides the weights: the KV cache and
// the compute memory.
//
// Graphs run through a Scheduler, so each node goes to the backend that holds its weights (else
// the previous node's, else the first that supports it) and a model split across devices works
// without the runner knowing. With one backend the scheduler plans a single split and copies
// nothing. The KV cache lives in the first backend's memory: that backend (or one that can use
// its memory) runs the copies into the cache.
//
// Compute memory is planned once: the encoder graph is built and planned at construction, and the
// decoder's memory is reserved from its worst case (a full text context in one step, last-row
// logits), so decoding token after token allocates nothing. The decoder graph is rebuilt each step
// (building is cheap next to computing; its shape changes with n_past) into an arena that is
// reset, not freed. Steps asking for every row's logits fit the reserve up to
// kReservedLogitRows tokens; a larger one grows the buffers once (decoder_reallocs counts it).
#pragma once
#include <memory>
#include <span>
#include <vector>

#include "backend/backend.h"
#include "backend/scheduler.h"
#include "model/decoder.h"
#include "model/kv_cache.h"
#include "model/model_file.h"
#include "runtime/graph.h"

namespace hark {

struct RunnerOptions {
  // Attention through the fused flash_attn op; false builds the plain path (mul_mat, soft_max,
  // mul_mat), which materialises the score matrices (more memory, mostly slower) but needs no
  // fused kernel from the backend.
  bool flash_attn = true;
  // The cross-attention K/V cache's type: f16, or q8_0 (0.53x the bytes every decode step streams
  // per window; needs flash_attn). See KvCache.
  DType cross_kv_type = DType::F16;
};

class WhisperRunner {
 public:
  // All-rows decode steps of up to this many tokens fit the reserved compute memory: enough for
  // the candidates of best-of/beam search and for bench's 5-token batch.
  static constexpr int kReservedLogitRows = 8;

  // backends: priority order, at least one; none null. They must outlive the runner.
  WhisperRunner(const ModelFile& model, std::vector<Backend*> backends, RunnerOptions opts = {});
  WhisperRunner(const ModelFile& model, Backend& backend, RunnerOptions opts = {});
  ~WhisperRunner();
  WhisperRunner(const WhisperRunner&) = delete;
  WhisperRunner& operator=(const WhisperRunner&) = delete;

  // One 30 s window: mel is f32 mel-major [n_mels][2 * n_audio_ctx]. Fills cross-attention window
  // `window` of the cache (0 unless set_n_windows made more) for the decode steps that follow.
  // Aborted when the abort callback fired.
  ComputeStatus encode(std::span<const float> mel, int window = 0);

  // Decodes `tokens` at positions n_past.. of sequence slot `seq` (their keys/values enter that
  // slot's cache) and writes the logits of the last one (n_vocab floats) to `logits`; with
  // all_rows, the logits of every token (n_vocab x n floats, token i's at [i * n_vocab, (i + 1) *
  // n_vocab)).
  // The tokens attend to cross window `window`.
  ComputeStatus decode(std::span<const int32_t> tokens, int n_past, std::vector<float>* logits, bool all_rows = false,
                       int seq = 0, int window = 0);

  // ---- several sequences against one window (beam search, best-of) ----
  // Self-attention cache slots: 1 at construction. set_n_sequences(n) (re)sizes the
  // self-attention cache to n slots (memory grows only when asked; slots [0, min(old, n)) keep
  // their contents; the cross-attention K/V stay one copy) and reserves compute memory for batch
  // steps of up to n rows, so the steps that follow allocate nothing.
  void set_n_sequences(int n);
  int n_sequences() const { return cache_.n_seq(); }

  // One step of several sequences in lockstep, as one graph: row b decodes tokens[b] at position
  // n_past of slot seqs[b] (distinct slots), attending to that slot's positions [0, n_past].
  // `logits` gets n_vocab x rows floats, row b's at [b * n_vocab, (b + 1) * n_vocab). Every weight
  // is read once for all rows, so a step of a few rows costs little more than one row; rows whose
  // slots are 0, 1, 2, ... (any even step) share one self-attention node.
  // The shared prefix (prompt + start sequence) is decoded once with decode(..., seq = 0) and
  // forked to the other slots with copy_sequence.
  // windows: the cross window each row attends to (one per row; empty: every row window 0). Rows
  // of independent chunks (the batched pipeline: row b in slot b against window b) share one
  // cross-attention node when their windows step evenly.
  ComputeStatus decode_batch(std::span<const int32_t> tokens, std::span<const int> seqs, int n_past,
                             std::vector<float>* logits, std::span<const int> windows = {});
  // The same with a position per row: row b at positions[b] of its slot (continuous batching,
  // where chunks join the batch at different steps). Equal positions are decode_batch.
  ComputeStatus decode_rows(std::span<const int32_t> tokens, std::span<const int> seqs, std::span<const int> positions,
                            std::vector<float>* logits, std::span<const int> windows = {});

  // ---- several windows at once (the batched long-audio pipeline) ----
  // Cross-attention windows: 1 at construction. set_n_windows(n) (re)sizes the cross K/V to n
  // windows (windows [0, min(old, n)) keep their contents), grows the self-attention slots to at
  // least n, and reserves compute memory for batch steps of n rows each against its own window.
  // Memory: n x the cross K/V of one window (tiny 9 MB, base 18 MB per window).
  void set_n_windows(int n);
  int n_windows() const { return cache_.n_windows(); }

  // Fork: positions [0, n_past) of every layer's self K/V go from slot src to slot dst (copy on
  // fork: n_past rows per layer). dst then continues src's history at n_past. The copy is made by
  // the next decode_batch's graph, on the compute threads (it was ~5% of a 5-beam step, done on
  // the caller's thread while the others waited); any other use of the cache makes pending
  // copies first, on the caller's thread, as does a fork that reads a slot a pending one writes.
  void copy_sequence(int src_slot, int dst_slot, int n_past);

  // ---- word timestamps ----
  // One teacher-forced pass over `tokens` from position 0 of slot 0 (overwriting that slot's
  // history) against `window` (see encode), handing out what DTW alignment needs: for each head of
  // `heads` (in that order) its cross-attention logits before the softmax, (q . k) / sqrt(D), as
  // qk[(h * n + t) * n_audio_ctx + f], and every token's logits (n x n_vocab, row t at t * n_vocab).
  // Runs in steps of kReservedLogitRows tokens (the KV cache carries the earlier ones), so its
  // compute memory is the all-rows reserve plus the heads' rows. Nothing of this is built into
  // ordinary decode steps.
  ComputeStatus align(std::span<const int32_t> tokens, std::span<const CrossQkHead> heads, std::vector<float>* qk,
                      std::vector<float>* logits, int window = 0);

  // Polled between graph nodes (and between splits) of every later encode/decode; nullptr clears.
  void set_abort_callback(AbortCallback cb);

  // Host work between steps, fn(i) for i < n, on the host threads of the backend that has the
  // most (Backend::run_on_host): a beam step's per-beam rules and log-softmax run on the CPU
  // backend's compute threads, idle between graphs, instead of on one.
  void run_on_host(int64_t n, const std::function<void(int64_t)>& fn);

  const HParams& hparams() const { return model_.hparams(); }
  const RunnerOptions& options() const { return opts_; }
  const std::vector<Backend*>& backends() const { return backends_; }
  size_t kv_cache_bytes() const { return cache_.bytes(); }
  size_t encoder_compute_bytes() const;  // over all backends
  size_t decoder_compute_bytes() const;
  int decoder_reallocs() const;  // decoder buffer growths since construction (0: steps fit)
  // The plans of the latest encode / decode (or of construction before any): splits and
  // cross-backend copies, for diagnostics and tests.
  const Scheduler& encoder_scheduler() const { return *enc_sched_; }
  const Scheduler& decoder_scheduler() const { return *dec_sched_; }

 private:
  Tensor* build_decoder_step(int n_tokens, int n_past, bool all_rows, int seq = 0,
                             std::span<const CrossQkHead> cross_qk = {}, std::vector<Tensor*>* cross_qk_out = nullptr,
                             int window = 0);
  Tensor* build_decoder_batch_step(std::span<const int> seqs, std::span<const int> positions,
                                   std::span<const int> windows, std::span<const SeqCopy> forks = {});
  void build_encoder_graph(int window);
  void reserve_batch(int n, bool own_windows);
  void check_tokens(std::span<const int32_t> tokens, const char* what) const;
  // positions: the rows' positions of a batch step, which fill its key mask when it has one.
  ComputeStatus run_decoder(Tensor* out, std::span<const int32_t> tokens, std::vector<float>* logits,
                            std::span<const int> positions = {});
  // Makes the pending forks on this thread (KvCache::copy_seq).
  void flush_forks();

  const ModelFile& model_;
  std::vector<Backend*> backends_;
  RunnerOptions opts_;
  KvCache cache_;
  std::vector<SeqCopy> pending_forks_;  // copy_sequence's forks, for the next decode_batch graph

  TensorArena enc_arena_;
  Graph enc_graph_;
  Tensor* enc_mel_ = nullptr;
  int enc_window_ = 0;  // the cross window enc_graph_ writes
  std::unique_ptr<Scheduler> enc_sched_;

  TensorArena dec_arena_;
  Graph dec_graph_;
  Tensor* dec_tokens_ = nullptr;
  Tensor* dec_key_mask_ = nullptr;  // the batch step's key mask, when it has one
  std::unique_ptr<Scheduler> dec_sched_;
  int reallocs_at_start_ = 0;                        // growths while reserving, which decode steps did not cause
  std::vector<std::pair<int, int>> align_reserved_;  // the heads align() last reserved memory for
};

}  // namespace hark
