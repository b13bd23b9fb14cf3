// decode::SearchModel: what the decoding policy needs from a Whisper model, and nothing more. The
// long-form loop and the window search run against this interface, so tests can drive the real
// policy with a scripted stand-in (tests/decode/scripted_model.h) and check every rule on
// logits chosen by hand. WhisperSearchModel (runner_model.h) adapts the real WhisperRunner.
//
// Several sequences against one window (beam search, best-of): the text context has slots; decode()
// works in slot 0, decode_batch() steps many slots in lockstep as one graph, copy_sequence() forks
// a slot's history into another (copy on fork).
//
// Several windows (the batched long-audio pipeline): independent chunks encoded into windows
// 0..n-1 (select_window, then encode) and stepped together with decode_rows, each row against its
// own window. A model that holds one window refuses these.
#pragma once
#include <cstdint>
#include <functional>
#include <span>
#include <string>
#include <vector>

#include "backend/backend.h"
#include "decode/alignment.h"
#include "decode/alignment_heads.h"
#include "runtime/error.h"

namespace hark::decode {

class SearchModel {
 public:
  virtual ~SearchModel() = default;
  // ---- several sequences (slots) in lockstep: beam search and best-of ----
  // At least n slots from now on (slot 0 is decode()'s; growing keeps the slots there were).
  virtual void reserve_sequences(int n) = 0;
  // Row b feeds tokens[b] at position n_past of slot seqs[b] (distinct slots, every one holding
  // positions [0, n_past)); `logits` gets one n_vocab row per row, row b at [b * n_vocab, ...).
  virtual ComputeStatus decode_batch(std::span<const int32_t> tokens, std::span<const int> seqs, int n_past,
                                     std::vector<float>* logits) = 0;
  // Slot dst takes over positions [0, n_past) of slot src (its later positions are then stale).
  virtual void copy_sequence(int src, int dst, int n_past) = 0;
  // One 30 s window of log-mel, mel-major [n_mels][3000]; the decode calls after it see it.
  virtual ComputeStatus encode(std::span<const float> mel) = 0;
  // Feeds `tokens` at positions n_past.. of the current window's text context and writes the
  // logits of the last one (n_vocab values). Positions >= n_past from earlier calls are
  // overwritten, so a candidate may restart from any shared prefix.
  virtual ComputeStatus decode(std::span<const int32_t> tokens, int n_past, std::vector<float>* logits) = 0;
  virtual int n_text_ctx() const = 0;
  // ---- several windows: the batched long-audio pipeline ----
  // At least n windows (and n slots) from now on; growing keeps the windows there were.
  virtual void reserve_windows(int n) {
    if (n > 1) throw Error("this model holds one encoded window at a time (no batched windows)");
  }
  // encode(), decode() and decode_batch() from now on use window w (0 at the start).
  virtual void select_window(int w) {
    if (w != 0) throw Error("this model holds one encoded window at a time (no batched windows)");
  }
  // Row b feeds tokens[b] at position positions[b] of slot seqs[b] (distinct slots, each holding
  // its positions before that) against window windows[b]; `logits` as decode_batch's. Rows may
  // stand at different positions (a chunk that joined the batch later).
  virtual ComputeStatus decode_rows(std::span<const int32_t> /*tokens*/, std::span<const int> /*seqs*/,
                                    std::span<const int> /*windows*/, std::span<const int> /*positions*/,
                                    std::vector<float>* /*logits*/) {
    throw Error("this model holds one encoded window at a time (no batched windows)");
  }
  // fn(i) for every i < n, possibly on several threads at once and in any order (per-row host
  // work of a step: the rows of a batch are independent). Default: one after another.
  virtual void run_rows(int64_t n, const std::function<void(int64_t)>& fn) {
    for (int64_t i = 0; i < n; ++i) fn(i);
  }
  // Word timestamps: one teacher-forced pass over `tokens` ([sot sequence, notimestamps, text,
  // eot]) in slot 0 against the current window (select_window): each head's cross-attention
  // logits before the softmax (qk: heads x tokens x audio positions) and every token's logits
  // (tokens x n_vocab).
  virtual ComputeStatus align(std::span<const int32_t> /*tokens*/, std::span<const AlignmentHead> /*heads*/,
                              HeadWeights* /*qk*/, std::vector<float>* /*logits*/) {
    throw Error("this model cannot hand out cross-attention weights (word timestamps)");
  }
};

}  // namespace hark::decode
