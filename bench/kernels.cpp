// STUB
#include <benchmark/benchmark.h>
static void tiny_stub(benchmark::State& s) { for (auto _ : s) benchmark::DoNotOptimize(s.iterations()); }
BENCHMARK(tiny_stub);
BENCHMARK_MAIN();
