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

}  // namespace hark
