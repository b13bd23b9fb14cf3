// The C++ side of bench/overhead.js: the same job (the same synthesized audio, options and
// warm-up) through hark's C++ API, timed around Context::transcribe. Prints the wall time of
// each run and their median as JSON, for comparison with transcribeData's.
//   build/bench_node_same_job MODEL.bin [SECONDS] [RUNS]
#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <vector>

#include "hark/hark.hpp"

int main(int argc, char** argv) {
  if (argc < 2) {
    std::fprintf(stderr, "usage: %s MODEL.bin [SECONDS] [RUNS]\n", argv[0]);
    return 2;
  }
  const int seconds = argc > 2 ? std::atoi(argv[2]) : 10;
  const int runs = argc > 3 ? std::atoi(argv[3]) : 5;
  // overhead.js's audio: a tone gated on and off every half second.
  std::vector<float> audio(size_t(seconds) * 16000);
  for (size_t i = 0; i < audio.size(); ++i) audio[i] = float(0.3 * std::sin(double(i) * 0.05) * double((i / 8000) % 2));
  try {
    hark::ContextParams cp;
    cp.flash_attn = true;
    auto ctx = hark::Context::load(argv[1], cp);
    hark::TranscribeParams p;  // overhead.js's options: { language: 'en', temperatureInc: 0, maxThreads: 2 }
    p.language = "en";
    p.temperature_inc = 0;
    p.n_threads = 2;
    ctx->transcribe(audio, p);  // warm-up
    std::vector<double> wall;
    for (int i = 0; i < runs; ++i) {
      const auto t0 = std::chrono::steady_clock::now();
      const hark::Transcript t = ctx->transcribe(audio, p);
      wall.push_back(std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count());
      std::printf("Context::transcribe %.2f ms (engine total_ms %.2f)\n", wall.back(), t.timings.total_ms);
    }
    std::vector<double> sorted = wall;
    std::sort(sorted.begin(), sorted.end());
    std::printf("{\"audio_seconds\": %d, \"runs\": %d, \"cpp_transcribe_ms\": %.3f}\n", seconds, runs,
                sorted[sorted.size() / 2]);
  } catch (const hark::Error& e) {
    std::fprintf(stderr, "error: %s\n", e.what());
    return 1;
  }
  return 0;
}
