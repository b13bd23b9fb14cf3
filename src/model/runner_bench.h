// bench_runner: the four figures whisper.cpp's whisper-bench reports, measured on a loaded model
// through a WhisperRunner, so hark's numbers can be set beside whisper.cpp's for the same model:
//
//   encode_ms  one 30 s encoder window (after one warm-up window)
//   decode_ms  single-token steps at n_past 0, 1, ..., per step
//   batch_ms   steps of a 5-token batch at n_past 0 with every row's logits, per token
//   prompt_ms  256-token prompts at n_past 0 with the last row's logits, per token
//
// The model's weights are random or real alike: the work does not depend on the values. The
// runner's KV cache is overwritten; decode afresh (encode first) after a bench.
#pragma once
#include <vector>

#include "model/whisper_runner.h"

namespace hark {

struct RunnerBench {
  double encode_ms = 0.0;
  double decode_ms = 0.0;
  double batch_ms = 0.0;
  double prompt_ms = 0.0;
};

// The counts whisper-bench uses; tests may use fewer. Counts that do not fit the model's text
// context are clamped to it (a step cannot reach past n_text_ctx).
struct RunnerBenchOptions {
  int n_decode = 256;       // single-token steps, at n_past 0 .. n_decode-1
  int n_batch_steps = 64;   // batched steps, each at n_past 0
  int batch = 5;            // tokens per batched step
  int n_prompts = 16;       // prompts, each at n_past 0
  int prompt_tokens = 256;  // tokens per prompt
};

// Throws hark::Error when a pass does not complete (e.g. the runner's abort callback fired).
RunnerBench bench_runner(WhisperRunner& runner, const RunnerBenchOptions& opts = {});

// ---- batched decoder steps (beam search, best-of) ----
//
// decode_batch steps of B rows (slots 0..B-1) at position n_past, for each B in `rows`, against
// the 1-row step. The runner gets max(rows) sequence slots, n_past positions decoded into slot 0
// and forked to every slot (the cross K/V are whatever the last encode left: the work does not
// depend on them). The sizes take turns, 1 untimed + 4 timed steps back to back per turn (as a
// search runs them: interleaving single steps of different sizes changes what the caches hold
// and would bias the ratios towards 1), so every size
// sees the same machine load; each figure is the fastest and the median turn's time per step
// over n_rounds rounds (on a busy machine the fastest is the work itself).
struct BatchStepFigure {
  int rows = 0;
  double min_ms = 0.0;     // fastest step
  double median_ms = 0.0;  // median step
  double ratio = 0.0;      // min_ms / the 1-row step's min_ms
};
struct BatchStepOptions {
  std::vector<int> rows = {1, 2, 5, 8};
  int n_past = 64;
  int n_rounds = 30;
  // Time steps by the process's CPU time instead of the wall clock: with one thread that is the
  // work itself, unaffected by other processes taking the cores (with more, it counts waits).
  bool cpu_time = false;
  // Each row against its own cross-attention window (the batched long-audio pipeline: B chunks in
  // one step) instead of all rows against one (beams, best-of).
  bool own_windows = false;
  // Rows at different positions (n_past, n_past - 1, n_past - 2, n_past - 3, n_past, ...): the
  // steps of continuous batching, where chunks joined at different steps.
  bool staggered = false;
};
// The runner's cache is overwritten and its slot count set to max(rows); decode afresh after.
std::vector<BatchStepFigure> bench_batch_steps(WhisperRunner& runner, const BatchStepOptions& opts = {});

}  // namespace hark
