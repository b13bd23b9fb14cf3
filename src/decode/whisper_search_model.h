// decode::WhisperSearchModel: the decoding policy's Model interface (model.h) over the real
// WhisperRunner, without editing the runner; kept apart from the interface so that the policy and
// its scripted test doubles do not depend on the concrete runner.
#pragma once
#include <cstdint>
#include <functional>
#include <span>
#include <string>
#include <vector>

#include "decode/search_model.h"
#include "model/whisper_runner.h"
#include "runtime/error.h"

namespace hark::decode {

// The real model.
class WhisperSearchModel final : public SearchModel {
 public:
  explicit WhisperSearchModel(WhisperRunner& r) : r_(r) {}
  void reserve_sequences(int n) override {
    if (r_.n_sequences() < n) r_.set_n_sequences(n);  // never shrinks: the memory stays for the next window
  }
  ComputeStatus decode_batch(std::span<const int32_t> tokens, std::span<const int> seqs, int n_past,
                             std::vector<float>* logits) override {
    if (window_ == 0) return r_.decode_batch(tokens, seqs, n_past, logits);
    const std::vector<int> same(seqs.size(), window_);
    return r_.decode_batch(tokens, seqs, n_past, logits, same);
  }
  void copy_sequence(int src, int dst, int n_past) override { r_.copy_sequence(src, dst, n_past); }
  ComputeStatus encode(std::span<const float> mel) override { return r_.encode(mel, window_); }
  ComputeStatus decode(std::span<const int32_t> tokens, int n_past, std::vector<float>* logits) override {
    return r_.decode(tokens, n_past, logits, false, 0, window_);
  }
  int n_text_ctx() const override { return r_.hparams().n_text_ctx; }
  void reserve_windows(int n) override {
    if (r_.n_windows() < n) r_.set_n_windows(n);  // never shrinks, as reserve_sequences
  }
  void select_window(int w) override {
    HARK_CHECK(w >= 0 && w < r_.n_windows(), "select_window: window " + std::to_string(w) + " outside [0, " +
                                                 std::to_string(r_.n_windows()) + ") (reserve_windows first)");
    window_ = w;
  }
  ComputeStatus decode_rows(std::span<const int32_t> tokens, std::span<const int> seqs, std::span<const int> windows,
                            std::span<const int> positions, std::vector<float>* logits) override {
    HARK_CHECK(windows.size() == tokens.size(), "decode_rows: one window per row");
    return r_.decode_rows(tokens, seqs, positions, logits, windows);
  }
  void run_rows(int64_t n, const std::function<void(int64_t)>& fn) override { r_.run_on_host(n, fn); }
  ComputeStatus align(std::span<const int32_t> tokens, std::span<const AlignmentHead> heads, HeadWeights* qk,
                      std::vector<float>* logits) override {
    std::vector<CrossQkHead> ch;
    for (const AlignmentHead& h : heads) ch.push_back({h.layer, h.head});
    const ComputeStatus s = r_.align(tokens, ch, &qk->data, logits, window_);
    qk->n_heads = static_cast<int>(heads.size());
    qk->n_tokens = static_cast<int>(tokens.size());
    qk->n_frames = r_.hparams().n_audio_ctx;
    return s;
  }

 private:
  WhisperRunner& r_;
  int window_ = 0;
};

}  // namespace hark::decode
