// Context::bench: whisper-bench's four figures on a fresh state of the loaded model.
#pragma once
#include "hark/hark.hpp"
#include "transcribe/state.h"

namespace hark {

BenchResult run_bench(StateImpl& state, int n_threads);

}  // namespace hark
