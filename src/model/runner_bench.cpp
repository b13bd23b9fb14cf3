#include "model/runner_bench.h"

#include <algorithm>
#include <chrono>
#include <ctime>
#include <numeric>
#include <string>
#include <vector>

#include "runtime/error.h"
#include "runtime/stopwatch.h"

namespace hark {

namespace {

using Clock = std::chrono::steady_clock;

double process_cpu_ms() {
  timespec ts{};
  clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
  return static_cast<double>(ts.tv_sec) * 1e3 + static_cast<double>(ts.tv_nsec) * 1e-6;
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

std::vector<BatchStepFigure> bench_batch_steps(WhisperRunner& runner, const BatchStepOptions& opts) {
  constexpr int kStepsPerTurn = 4;
  const HParams& hp = runner.hparams();
  HARK_CHECK(!opts.rows.empty(), "bench_batch_steps: no batch sizes");
  const int max_rows = *std::max_element(opts.rows.begin(), opts.rows.end());
  HARK_CHECK(*std::min_element(opts.rows.begin(), opts.rows.end()) >= 1, "bench_batch_steps: batch sizes must be >= 1");
  const int n_past = std::clamp(opts.n_past, 0, hp.n_text_ctx - 1);
  const int n_rounds = std::max(opts.n_rounds, 1);
  runner.set_n_sequences(std::max(max_rows, runner.n_sequences()));
  if (opts.own_windows) runner.set_n_windows(std::max(max_rows, runner.n_windows()));
  std::vector<float> logits;
  if (n_past > 0) {
    check(runner.decode(token_ids(n_past, hp.n_vocab), 0, &logits), "prefix");
    for (int s = 1; s < max_rows; ++s) runner.copy_sequence(0, s, n_past);
  }
  std::vector<int> sizes = opts.rows;
  if (std::find(sizes.begin(), sizes.end(), 1) == sizes.end()) sizes.insert(sizes.begin(), 1);
  std::vector<std::vector<double>> times(sizes.size());
  std::vector<int32_t> tokens = token_ids(max_rows, hp.n_vocab);
  std::vector<int> seqs(static_cast<size_t>(max_rows));
  std::iota(seqs.begin(), seqs.end(), 0);
  std::vector<int> positions(static_cast<size_t>(max_rows), n_past);
  if (opts.staggered)
    for (int b = 0; b < max_rows; ++b) positions[static_cast<size_t>(b)] = std::max(0, n_past - b % 4);
  for (int round = -1; round < n_rounds; ++round) {  // round -1: warm-up, not timed
    for (size_t i = 0; i < sizes.size(); ++i) {
      const auto n = static_cast<size_t>(sizes[i]);
      // A few steps of one size back to back, as a search runs them: one untimed step first,
      // so the timed ones find the caches as this size's own previous step left them.
      auto step = [&] {
        check(runner.decode_rows(std::span(tokens).first(n), std::span(seqs).first(n), std::span(positions).first(n),
                                 &logits,
                                 opts.own_windows ? std::span<const int>(seqs).first(n) : std::span<const int>()),
              "batch");
      };
      step();
      const auto t0 = Clock::now();
      const double c0 = opts.cpu_time ? process_cpu_ms() : 0.0;
      for (int k = 0; k < kStepsPerTurn; ++k) step();
      if (round >= 0) times[i].push_back((opts.cpu_time ? process_cpu_ms() - c0 : ms_since(t0)) / kStepsPerTurn);
    }
  }
  std::vector<BatchStepFigure> out;
  double one = 0.0;
  for (size_t i = 0; i < sizes.size(); ++i) {
    std::vector<double>& t = times[i];
    std::sort(t.begin(), t.end());
    BatchStepFigure f;
    f.rows = sizes[i];
    f.min_ms = t.front();
    f.median_ms = t[t.size() / 2];
    if (f.rows == 1) one = f.min_ms;
    out.push_back(f);
  }
  for (BatchStepFigure& f : out) f.ratio = one > 0 ? f.min_ms / one : 0.0;
  // Only the sizes asked for (1 was timed as the base either way).
  std::erase_if(out, [&](const BatchStepFigure& f) {
    return std::find(opts.rows.begin(), opts.rows.end(), f.rows) == opts.rows.end();
  });
  return out;
}

}  // namespace hark
