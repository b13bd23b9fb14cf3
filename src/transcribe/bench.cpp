#include "transcribe/bench.h"

#include <cstdio>

#include <nlohmann/json.hpp>

#include "runtime/error.h"

namespace hark {

BenchResult run_bench(StateImpl& state, int n_threads) {
  (void)state;
  (void)n_threads;
  throw Error("bench: not available yet");
}

std::string BenchResult::to_json() const {
  nlohmann::json j = nlohmann::json::array({config, n_threads, encode_ms, decode_ms, batch_ms, prompt_ms});
  return j.dump();
}

}  // namespace hark
