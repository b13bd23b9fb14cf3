#include "model/bench.h"

#include <algorithm>
#include <chrono>
#include <string>
#include <vector>

#include "runtime/error.h"

namespace hark {

namespace {

using Clock = std::chrono::steady_clock;

double ms_since(Clock::time_point t0) {
  return std::chrono::duration<double, std::milli>(Clock::now() - t0).count();
}

void check(ComputeStatus s, const char* what) {
  HARK_CHECK(s == ComputeStatus::Ok, std::string("bench: the ") + what + " pass was aborted");
}

// Ids 0, 1, 2, ...: any valid ids cost the same (an embedding row each), and these are valid in
// every vocabulary.
std::vector<int32_t> token_ids(int n, int n_vocab) {
  std::vector<int32_t> ids(static_cast<size_t>(n));
  for (int i = 0; i < n; ++i) ids[static_cast<size_t>(i)] = i % n_vocab;
  return ids;
}

}  // namespace

RunnerBench bench_runner(WhisperRunner& runner, const RunnerBenchOptions& opts) {
  const HParams& hp = runner.hparams();
  const int ctx = hp.n_text_ctx;
  // A step may not reach past the text context: clamp the counts to what fits.
  const int n_decode = std::clamp(opts.n_decode, 1, ctx);
  const int batch = std::clamp(opts.batch, 1, ctx);
  const int prompt_tokens = std::clamp(opts.prompt_tokens, 1, ctx);
  const int n_batch_steps = std::max(opts.n_batch_steps, 1);
  const int n_prompts = std::max(opts.n_prompts, 1);
  RunnerBench r;

  // Encoder: a silent window (log-mel floor); the first run pays for first-touch page faults of
  // the compute buffer and for cold caches, so the figure is the second.
  const std::vector<float> mel(static_cast<size_t>(2 * hp.n_audio_ctx) * static_cast<size_t>(hp.n_mels), -1.5f);
  check(runner.encode(mel), "encoder");
  auto t0 = Clock::now();
  check(runner.encode(mel), "encoder");
  r.encode_ms = ms_since(t0);

  std::vector<float> logits;
  const std::vector<int32_t> ids = token_ids(std::max({n_decode, batch, prompt_tokens}), hp.n_vocab);

  // One token at a time at growing n_past: what sampling a transcript costs per token.
  t0 = Clock::now();
  for (int i = 0; i < n_decode; ++i)
    check(runner.decode(std::span(ids).subspan(static_cast<size_t>(i), 1), i, &logits), "decoder");
  r.decode_ms = ms_since(t0) / n_decode;

  // A small batch with every row's logits (beam search / best-of scoring several candidates).
  t0 = Clock::now();
  for (int i = 0; i < n_batch_steps; ++i)
    check(runner.decode(std::span(ids).first(static_cast<size_t>(batch)), 0, &logits, /*all_rows=*/true), "batch");
  r.batch_ms = ms_since(t0) / (static_cast<double>(n_batch_steps) * batch);

  // Long prompts: the prefix pass of each window (previous text + special tokens).
  t0 = Clock::now();
  for (int i = 0; i < n_prompts; ++i)
    check(runner.decode(std::span(ids).first(static_cast<size_t>(prompt_tokens)), 0, &logits), "prompt");
  r.prompt_ms = ms_since(t0) / (static_cast<double>(n_prompts) * prompt_tokens);
  return r;
}

}  // namespace hark
