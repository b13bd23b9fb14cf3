// ScriptedModel: a decode::SearchModel whose logits come from a script, step by step, window by window,
// and which records everything it was fed (mel windows, tokens, positions). With it the real
// decoding policy (decode_window, run_long_form) runs on logits chosen by hand.
//
// Plan: the simple script most tests use. Per window, the tokens the "model" wants to say after
// the start sequence, in order (end-of-text after them); each wanted token gets `margin` over a
// flat 0 elsewhere, so greedy takes it unless a rule forbids it (then the lowest allowed id wins,
// as max_element takes the first of equal values). At <|startoftranscript|> the logits hold the
// window's no-speech and language preferences.
//
// Sequences: every slot keeps its own context. decode() works in slot 0; decode_batch() calls the
// script once per row with that slot's context (Call::seq, Call::batch); copy_sequence() copies
// the context's first n_past tokens and is recorded in `forks`.
//
// Windows (the batched pipeline): select_window(w) makes w the window encode() fills and decode()
// reads; Call::window is then the encode() call that filled the window a call reads, so a plan per
// encoded chunk holds whichever window the chunk sits in. decode_rows() is decode_batch() with a
// window per row (Call::batch counts its rows too).
#pragma once
#include <algorithm>
#include <cmath>
#include <functional>
#include <limits>
#include <map>
#include <stdexcept>
#include <vector>

#include "decode/search_model.h"
#include "model/hparams.h"

namespace hark::testing {

class ScriptedModel final : public decode::SearchModel {
 public:
  struct Call {
    int window = -1;              // encode() calls so far - 1
    int pass = -1;                // calls with n_past == 0 in this window so far - 1
    std::vector<int32_t> tokens;  // fed
    int n_past = 0;
    std::vector<int32_t> context;  // the whole text context after this call
    int seq = 0;                   // the slot
    int batch = 0;                 // rows of the decode_batch step this row was part of (0: decode())
  };
  struct Fork {
    int src = 0, dst = 0, n_past = 0;
  };
  using Script = std::function<std::vector<float>(const Call&)>;

  ScriptedModel(int n_text_ctx, Script s) : n_text_ctx_(n_text_ctx), script_(std::move(s)) {}

  ComputeStatus encode(std::span<const float> mel) override {
    mels.emplace_back(mel.begin(), mel.end());
    ++window_;
    filled_[static_cast<size_t>(selected_)] = window_;
    passes_[window_] = -1;
    return ComputeStatus::Ok;
  }
  ComputeStatus decode(std::span<const int32_t> tokens, int n_past, std::vector<float>* logits) override {
    EXPECT_GE(n_past, 0);
    std::vector<int32_t>& context_ = contexts_[0];
    EXPECT_LE(static_cast<size_t>(n_past), context_.size()) << "decode past the end of what was fed";
    const int win = filled_[static_cast<size_t>(selected_)];
    if (n_past == 0) ++passes_[win];
    context_.resize(static_cast<size_t>(n_past));
    context_.insert(context_.end(), tokens.begin(), tokens.end());
    EXPECT_LE(static_cast<int>(context_.size()), n_text_ctx_) << "text context overflow";
    Call c{win, passes_[win], {tokens.begin(), tokens.end()}, n_past, context_};
    const bool scripted = run_script(c, logits);
    calls.push_back(std::move(c));
    return scripted ? ComputeStatus::Ok : ComputeStatus::Aborted;
  }
  // Rows last to first: a search that depended on the order its rows are worked on would differ
  // from the real model's, whose threads take rows in any order.
  void run_rows(int64_t n, const std::function<void(int64_t)>& fn) override {
    for (int64_t i = n - 1; i >= 0; --i) fn(i);
  }
  int n_text_ctx() const override { return n_text_ctx_; }
  // Word timestamps: align_script fills the heads' weights and the logits; each call is recorded.
  struct AlignCall {
    int window = -1;
    std::vector<int32_t> tokens;
    std::vector<decode::AlignmentHead> heads;
  };
  using AlignScript = std::function<void(const AlignCall&, decode::HeadWeights*, std::vector<float>*)>;
  ComputeStatus align(std::span<const int32_t> tokens, std::span<const decode::AlignmentHead> heads,
                      decode::HeadWeights* qk, std::vector<float>* logits) override {
    AlignCall c{window_, {tokens.begin(), tokens.end()}, {heads.begin(), heads.end()}};
    EXPECT_TRUE(align_script) << "align() called without an align_script";
    if (align_script) align_script(c, qk, logits);
    align_calls.push_back(std::move(c));
    return ComputeStatus::Ok;
  }
  AlignScript align_script;
  std::vector<AlignCall> align_calls;

  // The calls of one window that start a pass (n_past == 0): what was fed first.
  std::vector<Call> pass_starts(int window) const {
    std::vector<Call> r;
    for (const Call& c : calls)
      if (c.window == window && c.n_past == 0) r.push_back(c);
    return r;
  }

  void reserve_sequences(int n) override {
    if (static_cast<int>(contexts_.size()) < n) contexts_.resize(static_cast<size_t>(n));
  }
  ComputeStatus decode_batch(std::span<const int32_t> tokens, std::span<const int> seqs, int n_past,
                             std::vector<float>* logits) override {
    return rows(tokens, seqs, std::vector<int>(tokens.size(), selected_), std::vector<int>(tokens.size(), n_past),
                logits);
  }
  void reserve_windows(int n) override {
    reserve_sequences(n);
    if (static_cast<int>(filled_.size()) < n) filled_.resize(static_cast<size_t>(n), -1);
  }
  void select_window(int w) override {
    EXPECT_TRUE(w >= 0 && w < static_cast<int>(filled_.size())) << "window " << w << " not reserved";
    selected_ = w;
  }
  ComputeStatus decode_rows(std::span<const int32_t> tokens, std::span<const int> seqs, std::span<const int> windows,
                            std::span<const int> positions, std::vector<float>* logits) override {
    EXPECT_EQ(windows.size(), tokens.size());
    EXPECT_EQ(positions.size(), tokens.size());
    for (int w : windows)
      EXPECT_TRUE(w >= 0 && w < static_cast<int>(filled_.size())) << "window " << w << " not reserved";
    ++n_row_steps;
    return rows(tokens, seqs, windows, positions, logits);
  }
  int n_row_steps = 0;  // decode_rows calls

 private:
  // The script's logits for one call. A step the script has none for (it throws, e.g. an
  // out-of-range .at(), or returns a row of another size than the first one) is a test failure,
  // and the call then reports Aborted, so the decoding stops cleanly instead of reading past
  // what the script gave.
  bool run_script(const Call& c, std::vector<float>* row) {
    try {
      *row = script_(c);
    } catch (const std::exception& e) {
      ADD_FAILURE() << "the script has no step for window " << c.window << ", pass " << c.pass << ", position "
                    << c.n_past << ": " << e.what();
      row->clear();
      return false;
    }
    if (n_vocab_ == 0) n_vocab_ = row->size();
    if (row->empty() || row->size() != n_vocab_) {
      ADD_FAILURE() << "the script gave " << row->size() << " logits for window " << c.window << ", position "
                    << c.n_past << " (its first step gave " << n_vocab_ << ")";
      row->assign(n_vocab_, 0.0f);
      return false;
    }
    return true;
  }

  ComputeStatus rows(std::span<const int32_t> tokens, std::span<const int> seqs, std::span<const int> windows,
                     std::span<const int> positions, std::vector<float>* logits) {
    EXPECT_EQ(tokens.size(), seqs.size());
    EXPECT_GE(tokens.size(), 1u);
    logits->clear();
    for (size_t b = 0; b < tokens.size(); ++b) {
      const int s = seqs[b];
      EXPECT_TRUE(s >= 0 && s < static_cast<int>(contexts_.size())) << "slot " << s << " not reserved";
      for (size_t o = 0; o < b; ++o) EXPECT_NE(seqs[o], s) << "slot " << s << " twice in one step";
      const int n_past = positions[b];
      std::vector<int32_t>& ctx = contexts_.at(static_cast<size_t>(s));
      EXPECT_LE(static_cast<size_t>(n_past), ctx.size()) << "slot " << s << " does not hold positions [0, n_past)";
      ctx.resize(static_cast<size_t>(n_past));
      ctx.push_back(tokens[b]);
      EXPECT_LE(static_cast<int>(ctx.size()), n_text_ctx_) << "text context overflow";
      const int win = filled_.at(static_cast<size_t>(windows[b]));
      if (n_past == 0) ++passes_[win];
      Call c{win, passes_[win], {tokens[b]}, n_past, ctx, s, static_cast<int>(tokens.size())};
      std::vector<float> row;
      const bool scripted = run_script(c, &row);
      logits->insert(logits->end(), row.begin(), row.end());
      calls.push_back(std::move(c));
      if (!scripted) return ComputeStatus::Aborted;
    }
    ++n_batch_steps;
    return ComputeStatus::Ok;
  }

 public:
  void copy_sequence(int src, int dst, int n_past) override {
    const std::vector<int32_t>& from = contexts_.at(static_cast<size_t>(src));
    EXPECT_LE(static_cast<size_t>(n_past), from.size()) << "fork of positions slot " << src << " never had";
    const size_t n = std::min(static_cast<size_t>(n_past), from.size());
    std::vector<int32_t> copy(from.begin(), from.begin() + static_cast<std::ptrdiff_t>(n));
    contexts_.at(static_cast<size_t>(dst)) = std::move(copy);
    forks.push_back({src, dst, n_past});
  }
  std::vector<Fork> forks;  // every copy_sequence, in order
  int n_batch_steps = 0;    // decode_batch calls

  std::vector<std::vector<float>> mels;
  std::vector<Call> calls;

 private:
  int n_text_ctx_;
  Script script_;
  size_t n_vocab_ = 0;                      // the size of the script's first row: every row must have it
  int window_ = -1;                         // encode() calls so far - 1
  int selected_ = 0;                        // select_window
  std::vector<int> filled_ = {-1};          // per window: the encode() call that filled it
  std::map<int, int> passes_ = {{-1, -1}};  // per filled window: calls with n_past == 0 so far - 1
  std::vector<std::vector<int32_t>> contexts_ = std::vector<std::vector<int32_t>>(1);  // per slot
};

struct WindowPlan {
  std::vector<int32_t> say;        // wanted tokens after the start sequence (eot implied after)
  float margin = 20.0f;            // logit of a wanted token over the flat rest
  float no_speech = 0.0f;          // logit of <|nospeech|> at <|startoftranscript|>
  int language = -1;               // language index favoured at <|startoftranscript|> (-1: none)
  std::map<int32_t, float> extra;  // more logits at every sampled step
};

// The tokens sampled so far in this pass: what follows the start sequence in the context.
inline std::vector<int32_t> sampled_of(const SpecialTokens& st, const std::vector<int32_t>& ctx) {
  size_t i = ctx.size();
  for (size_t k = ctx.size(); k-- > 0;)
    if (ctx[k] == st.sot) {
      i = k + 1;
      break;
    }
  while (i < ctx.size() && ctx[i] >= st.eot && !st.is_timestamp(ctx[i]) && ctx[i] != st.eot)
    ++i;  // lang, task, notimestamps
  return {ctx.begin() + static_cast<std::ptrdiff_t>(std::min(i, ctx.size())), ctx.end()};
}

// A script from plans: plans[window] (the last one repeats for later windows); `pick` may choose
// another plan per call (e.g. by pass).
inline ScriptedModel::Script plan_script(const SpecialTokens& st,
                                         std::function<WindowPlan(const ScriptedModel::Call&)> pick) {
  return [st, pick](const ScriptedModel::Call& c) {
    const WindowPlan plan = pick(c);
    std::vector<float> l(static_cast<size_t>(st.n_vocab), 0.0f);
    if (c.context.back() == st.sot) {
      l[static_cast<size_t>(st.no_speech)] = plan.no_speech;
      if (plan.language >= 0 && st.n_languages > 0) l[static_cast<size_t>(st.lang_first + plan.language)] = 15.0f;
      return l;
    }
    const std::vector<int32_t> sampled = sampled_of(st, c.context);
    for (const auto& [id, v] : plan.extra) l[static_cast<size_t>(id)] = v;
    const size_t k = sampled.size();
    const int32_t want = k < plan.say.size() ? plan.say[k] : st.eot;
    l[static_cast<size_t>(want)] = plan.margin;
    return l;
  };
}

inline ScriptedModel::Script plans_script(const SpecialTokens& st, std::vector<WindowPlan> plans) {
  return plan_script(st, [plans](const ScriptedModel::Call& c) {
    return plans[std::min(static_cast<size_t>(std::max(c.window, 0)), plans.size() - 1)];
  });
}

// A small vocabulary for search tests: text tokens 0 .. n_text - 1, then end-of-text and the
// special tokens (no languages), then n_timestamps timestamps.
inline SpecialTokens compact_tokens(int32_t n_text, int32_t n_timestamps) {
  SpecialTokens st{};
  st.eot = n_text;
  st.sot = n_text + 1;
  st.lang_first = n_text + 2;
  st.n_languages = 0;
  st.translate = n_text + 2;
  st.transcribe = n_text + 3;
  st.solm = n_text + 4;
  st.prev = n_text + 5;
  st.no_speech = n_text + 6;
  st.no_timestamps = n_text + 7;
  st.timestamp_begin = n_text + 8;
  st.n_vocab = n_text + 8 + n_timestamps;
  return st;
}

}  // namespace hark::testing
