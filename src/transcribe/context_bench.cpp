#include "transcribe/context_bench.h"

#include <nlohmann/json.hpp>

#include "model/runner_bench.h"

namespace hark {

BenchResult run_bench(StateImpl& state, int n_threads) {
  state.backend().set_n_threads(n_threads);
  const RunnerBench r = bench_runner(state.runner());
  BenchResult out;
  out.config = system_info() + " | DEVICE = " + state.model().device_choice.name +
               " | FLASH_ATTN = " + (state.model().flash_attn ? "1" : "0") +
               " | CROSS_KV = " + dtype_name(state.model().cross_kv_type);
  out.n_threads = n_threads;
  out.encode_ms = r.encode_ms;
  out.decode_ms = r.decode_ms;
  out.batch_ms = r.batch_ms;
  out.prompt_ms = r.prompt_ms;
  return out;
}

std::string BenchResult::to_json() const {
  return nlohmann::json::array({config, n_threads, encode_ms, decode_ms, batch_ms, prompt_ms}).dump();
}

}  // namespace hark
