// bench_jobs: what the job machinery costs and how fast it answers, as one JSON object.
//
//   bench_jobs --preset base [--type f16] [-t 2] [--aborts 20] [--seconds 30]
//   bench_jobs -m MODEL [-t 2] [--aborts 20] [--seconds 30]
//
// - state_bytes: the memory one more concurrent job needs (KV cache + compute buffers), next to
//   the weights it shares (tensor_bytes).
// - abort latency: a transcription of 60 s of audio is aborted from another thread at a random
//   moment; the time from Job::abort() to transcribe() returning, over --aborts runs (target:
//   under 100 ms on the base preset with 2 threads; --aborts 0 skips this part).
// - two jobs of --seconds of audio at once on one context (each with threads/2) against the same
//   two one after the other (each with all threads): how much running jobs side by side costs or
//   gains.
// - two jobs at once each with all -t threads (so twice as many threads as -t; with -t 2 on a
//   2-core machine, the case where spinning barriers collapse), against the same one after the
//   other: two_full_jobs_at_once_over_sequential (goal: at most 1).
#include <CLI/CLI.hpp>

#include <algorithm>
#include <chrono>
#include <random>
#include <thread>

#include <nlohmann/json.hpp>

#include "bench_util.h"
#include "hark/hark.hpp"

namespace {

// The defaults without temperature fallback: the random-weight test models fall back on every
// window, and these figures are about jobs, not about decoding six times.
hark::TranscribeParams quick_params() {
  hark::TranscribeParams p;
  p.temperature_inc = 0.0f;
  return p;
}

using Clock = std::chrono::steady_clock;
double ms_between(Clock::time_point a, Clock::time_point b) {
  return std::chrono::duration<double, std::milli>(b - a).count();
}

double percentile(std::vector<double> v, double q) {
  if (v.empty()) return 0;
  std::sort(v.begin(), v.end());
  return v[std::min(v.size() - 1, static_cast<size_t>(q * static_cast<double>(v.size() - 1) + 0.5))];
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"bench_jobs: state memory, abort latency and concurrent jobs, as JSON", "bench_jobs"};
  std::string model, preset, type = "f16";
  int threads = 2, aborts = 20;
  double seconds = 30.0;
  auto* m = app.add_option("-m,--model", model, "Whisper model (ggml .bin)");
  auto* p = app.add_option("--preset", preset, "Write a seeded test model of this size instead (tiny, base, ...)");
  m->excludes(p);
  app.add_option("--type", type, "Weight type of the --preset model")->capture_default_str();
  app.add_option("-t,--threads", threads, "Compute threads")->check(CLI::Range(1, 1024))->capture_default_str();
  app.add_option("--aborts", aborts, "Aborted runs to time")->check(CLI::Range(0, 10000))->capture_default_str();
  app.add_option("--seconds", seconds, "Audio per job in the two-jobs figures")
      ->check(CLI::Range(1.0, 600.0))
      ->capture_default_str();
  if (const int code = bench::parse_model_command(app, argc, argv, model, preset); code >= 0) return code;

  bench::TempModel temp;
  try {
    bench::model_or_preset(temp, model, preset, type, 1);
    hark::ContextParams cp;
    cp.n_threads = threads;
    const std::unique_ptr<hark::Context> ctx = hark::Context::load(model, cp);
    const size_t state_bytes = ctx->new_state()->bytes();

    // Abort latency. The first run (not timed) warms the state pool and the caches.
    const std::vector<float> audio = bench::synth_audio(60.0);
    double whole_ms = 0;
    if (aborts > 0) {
      const auto t0 = Clock::now();
      ctx->transcribe(audio, quick_params());
      whole_ms = ms_between(t0, Clock::now());
    }
    std::mt19937 rng(42);
    std::uniform_real_distribution<double> when(0.0, std::min(whole_ms * 0.9, 20000.0));
    std::vector<double> latencies;
    int not_aborted = 0;
    for (int i = 0; i < aborts; ++i) {
      const std::shared_ptr<hark::Job> job = hark::jobs::create();
      hark::TranscribeParams tp = quick_params();
      tp.job = job;
      Clock::time_point aborted_at{};
      std::thread stopper([&, delay = when(rng)] {
        std::this_thread::sleep_for(std::chrono::duration<double, std::milli>(delay));
        aborted_at = Clock::now();
        job->abort();
      });
      const hark::Transcript t = ctx->transcribe(audio, tp);
      const auto returned_at = Clock::now();
      stopper.join();
      if (t.aborted) {
        latencies.push_back(ms_between(aborted_at, returned_at));
      } else {
        ++not_aborted;  // it finished before the abort came
      }
      hark::jobs::remove(job->id());
    }

    // Two jobs side by side vs one after the other. A first run warms the states and caches.
    const std::vector<float> clip = bench::synth_audio(seconds);
    hark::TranscribeParams all = quick_params();
    all.n_threads = threads;
    {
      std::thread warm([&] { ctx->transcribe(clip, all); });
      ctx->transcribe(clip, all);
      warm.join();
    }
    auto t1 = Clock::now();
    ctx->transcribe(clip, all);
    ctx->transcribe(clip, all);
    const double sequential_ms = ms_between(t1, Clock::now());
    hark::TranscribeParams half = quick_params();
    half.n_threads = std::max(1, threads / 2);
    t1 = Clock::now();
    std::thread other([&] { ctx->transcribe(clip, half); });
    ctx->transcribe(clip, half);
    other.join();
    const double parallel_ms = ms_between(t1, Clock::now());
    t1 = Clock::now();
    std::thread other_full([&] { ctx->transcribe(clip, all); });
    ctx->transcribe(clip, all);
    other_full.join();
    const double full_parallel_ms = ms_between(t1, Clock::now());

    const nlohmann::ordered_json out = {
        {"model", preset.empty() ? model : "preset:" + preset},
        {"size", ctx->info().size_name},
        {"weight_type", ctx->info().weight_type},
        {"threads", threads},
        {"tensor_bytes", ctx->info().tensor_bytes},
        {"state_bytes", state_bytes},
        {"state_mib", static_cast<double>(state_bytes) / (1024.0 * 1024.0)},
        {"whole_run_ms", whole_ms},
        {"aborts_timed", latencies.size()},
        {"aborts_too_late", not_aborted},
        {"abort_latency_ms",
         {{"median", percentile(latencies, 0.5)},
          {"p90", percentile(latencies, 0.9)},
          {"max", latencies.empty() ? 0.0 : *std::max_element(latencies.begin(), latencies.end())}}},
        {"two_jobs_sequential_ms", sequential_ms},
        {"two_jobs_at_once_ms", parallel_ms},
        {"at_once_over_sequential", parallel_ms / sequential_ms},
        {"two_full_jobs_at_once_ms", full_parallel_ms},
        {"two_full_jobs_at_once_over_sequential", full_parallel_ms / sequential_ms}};
    std::printf("%s\n", out.dump(2).c_str());
    return 0;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "bench_jobs: error: %s\n", e.what());
    return 1;
  }
}
