// TimestampWatch: a decode::SearchModel that passes every call through and notes the latest timestamp
// token fed back while a window is decoded. The long-form loop reports progress from it inside a
// window (the decoded text has reached <|t|>, so the audio up to t is done), so a progress bar
// moves while a 30 s window is decoded instead of jumping once per window.
//
// Only one-token feeds count: those are tokens the search chose. A prefix pass feeds the previous
// window's text, whose timestamps belong to that window.
#pragma once
#include <cstdint>
#include <functional>
#include <span>
#include <vector>

#include "decode/search_model.h"

namespace hark {

class TimestampWatch final : public decode::SearchModel {
 public:
  // on_reached(frames into the window) is called whenever the chosen text reaches a later time.
  TimestampWatch(decode::SearchModel& inner, int32_t timestamp_begin, std::function<void(int64_t)> on_reached)
      : inner_(inner), timestamp_begin_(timestamp_begin), on_reached_(std::move(on_reached)) {}

  // Before each window's search: times are counted from 0 again.
  void start_window() { reached_ = 0; }

  void reserve_sequences(int n) override { inner_.reserve_sequences(n); }
  ComputeStatus decode_batch(std::span<const int32_t> tokens, std::span<const int> seqs, int n_past,
                             std::vector<float>* logits) override {
    for (int32_t t : tokens) note(t);
    return inner_.decode_batch(tokens, seqs, n_past, logits);
  }
  void copy_sequence(int src, int dst, int n_past) override { inner_.copy_sequence(src, dst, n_past); }
  ComputeStatus encode(std::span<const float> mel) override { return inner_.encode(mel); }
  ComputeStatus decode(std::span<const int32_t> tokens, int n_past, std::vector<float>* logits) override {
    if (tokens.size() == 1) note(tokens[0]);
    return inner_.decode(tokens, n_past, logits);
  }
  int n_text_ctx() const override { return inner_.n_text_ctx(); }
  void reserve_windows(int n) override { inner_.reserve_windows(n); }
  void select_window(int w) override { inner_.select_window(w); }
  ComputeStatus decode_rows(std::span<const int32_t> tokens, std::span<const int> seqs, std::span<const int> windows,
                            std::span<const int> positions, std::vector<float>* logits) override {
    return inner_.decode_rows(tokens, seqs, windows, positions, logits);
  }
  void run_rows(int64_t n, const std::function<void(int64_t)>& fn) override { inner_.run_rows(n, fn); }
  ComputeStatus align(std::span<const int32_t> tokens, std::span<const decode::AlignmentHead> heads,
                      decode::HeadWeights* qk, std::vector<float>* logits) override {
    return inner_.align(tokens, heads, qk, logits);
  }

 private:
  void note(int32_t token) {
    if (token < timestamp_begin_ || !on_reached_) return;
    const int64_t frames = 2 * static_cast<int64_t>(token - timestamp_begin_);  // a timestamp step is 20 ms
    if (frames <= reached_) return;
    reached_ = frames;
    on_reached_(frames);
  }

  decode::SearchModel& inner_;
  const int32_t timestamp_begin_;
  std::function<void(int64_t)> on_reached_;
  int64_t reached_ = 0;
};

}  // namespace hark
