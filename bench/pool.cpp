// bench_pool: the CPU thread pool alone, on a job shaped like a decoder step, as one JSON object.
//
//   bench_pool [-t 2] [--steps 300] [--barriers 150] [--work 32768] [--spin-ns N] [--repeats 3] [--one-only]
//              [--width adapt|all]
//
// A "step" is one pool job of --barriers segments with a barrier after each: in a segment the
// threads share --work floats of arithmetic, and every fourth segment is thread 0's alone (the
// small nodes a decoder step runs on one thread) while the others go straight to the barrier.
// Printed, each the best of --repeats runs:
// - one_job: ms per step of one pool of -t threads, and how many waits slept per step.
// - two jobs of -t threads each (two pools, two caller threads) at once, against the same two
//   one after the other: the times and their ratio (at_once_over_sequential; under 1 is a gain).
//   With -t 2 on a 2-core machine this is the case that collapses when barriers only spin.
//   --one-only skips it (under chrt -f, where same-priority threads never share a core).
// - the single-thread time of the same steps, for scale.
// Jobs run as the CPU backend runs its graphs (--width adapt: on the caller alone while the
// machine is oversubscribed; two_jobs_at_once_narrow_share is the share of jobs that did), or
// always on every thread (--width all).
#include <CLI/CLI.hpp>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <memory>
#include <thread>
#include <vector>

#include <nlohmann/json.hpp>

#include "backend/cpu/thread_pool.h"

namespace {

using Clock = std::chrono::steady_clock;
double ms_since(Clock::time_point t) { return std::chrono::duration<double, std::milli>(Clock::now() - t).count(); }

struct Shape {
  int steps = 300;
  int barriers = 150;
  int work = 32768;  // floats per segment
};

// One pool and the data its jobs work on.
struct Runner {
  std::unique_ptr<hark::cpu::ThreadPool> pool;
  std::vector<float> data;
  hark::cpu::ThreadPool::Width width;
  Runner(int threads, int64_t spin_ns, const Shape& s, hark::cpu::ThreadPool::Width w)
      : pool(std::make_unique<hark::cpu::ThreadPool>(threads, spin_ns)),
        data(static_cast<size_t>(s.work), 1.0f),
        width(w) {}

  void segment(size_t begin, size_t end) {
    float* d = data.data();
    for (int r = 0; r < 4; ++r)
      for (size_t i = begin; i < end; ++i) d[i] = d[i] * 0.999f + 0.001f;
  }

  void steps(const Shape& s) {
    const size_t n = data.size();
    for (int st = 0; st < s.steps; ++st) {
      pool->run(
          [&](int ith, int nth) {
            for (int b = 0; b < s.barriers; ++b) {
              if (b % 4 == 3) {
                if (ith == 0) segment(0, n / 8);  // a run of small nodes: thread 0 alone, less work
              } else {
                segment(n * static_cast<size_t>(ith) / static_cast<size_t>(nth),
                        n * static_cast<size_t>(ith + 1) / static_cast<size_t>(nth));
              }
              pool->barrier();
            }
          },
          width);
    }
  }
};

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"bench_pool: the thread pool on decoder-step-shaped jobs, alone and two at once, as JSON", "bench_pool"};
  Shape s;
  int threads = 2, repeats = 3;
  bool one_only = false;
  int64_t spin_ns = hark::cpu::ThreadPool::kDefaultSpinNs;
  app.add_option("-t,--threads", threads, "Threads per pool")->check(CLI::Range(1, 256))->capture_default_str();
  app.add_option("--steps", s.steps, "Jobs per run")->check(CLI::Range(1, 1000000))->capture_default_str();
  app.add_option("--barriers", s.barriers, "Barriers per job")->check(CLI::Range(1, 100000))->capture_default_str();
  app.add_option("--work", s.work, "Floats of work per segment")->check(CLI::Range(64, 1 << 26))->capture_default_str();
  app.add_option("--spin-ns", spin_ns, "How long a wait spins before sleeping")
      ->check(CLI::Range(int64_t{0}, int64_t{1'000'000'000}))
      ->capture_default_str();
  app.add_option("--repeats", repeats, "Runs of each measure (the best is printed)")
      ->check(CLI::Range(1, 100))
      ->capture_default_str();
  app.add_flag("--one-only", one_only, "Measure one job only (not two at once)");
  std::string width_name = "adapt";
  app.add_option("--width", width_name,
                 "adapt: jobs run as the CPU backend's graphs (on the caller alone while "
                 "oversubscribed); all: always on every thread")
      ->check(CLI::IsMember({"adapt", "all"}))
      ->capture_default_str();
  CLI11_PARSE(app, argc, argv);

  const auto w = width_name == "all" ? hark::cpu::ThreadPool::Width::All : hark::cpu::ThreadPool::Width::AdaptToLoad;
  Runner single(1, spin_ns, s, w), a(threads, spin_ns, s, w), b(threads, spin_ns, s, w);
  single.steps(s);  // warm up
  a.steps(s);
  if (!one_only) b.steps(s);

  double one_thread_ms = 1e300, one_job_ms = 1e300, seq_ms = 1e300, at_once_ms = 1e300;
  double one_job_sleeps = 0, at_once_sleeps = 0, at_once_narrow = 0;
  for (int r = 0; r < repeats; ++r) {
    auto t = Clock::now();
    single.steps(s);
    one_thread_ms = std::min(one_thread_ms, ms_since(t));

    uint64_t z = a.pool->sleeps();
    t = Clock::now();
    a.steps(s);
    const double one = ms_since(t);
    if (one < one_job_ms) {
      one_job_ms = one;
      one_job_sleeps = static_cast<double>(a.pool->sleeps() - z);
    }

    if (one_only) continue;
    t = Clock::now();
    a.steps(s);
    b.steps(s);
    seq_ms = std::min(seq_ms, ms_since(t));

    z = a.pool->sleeps() + b.pool->sleeps();
    const uint64_t narrow0 = a.pool->narrow_jobs() + b.pool->narrow_jobs();
    t = Clock::now();
    std::thread other([&] { b.steps(s); });
    a.steps(s);
    other.join();
    const double both = ms_since(t);
    if (both < at_once_ms) {
      at_once_ms = both;
      at_once_sleeps = static_cast<double>(a.pool->sleeps() + b.pool->sleeps() - z);
      at_once_narrow = static_cast<double>(a.pool->narrow_jobs() + b.pool->narrow_jobs() - narrow0);
    }
  }

  nlohmann::ordered_json out = {{"threads", threads},
                                {"hardware_threads", std::thread::hardware_concurrency()},
                                {"spin_ns", spin_ns},
                                {"width", width_name},
                                {"steps", s.steps},
                                {"barriers_per_step", s.barriers},
                                {"work_floats", s.work},
                                {"one_thread_ms_per_step", one_thread_ms / s.steps},
                                {"one_job_ms_per_step", one_job_ms / s.steps},
                                {"one_job_sleeps_per_step", one_job_sleeps / s.steps}};
  if (!one_only) {
    out["two_jobs_sequential_ms"] = seq_ms;
    out["two_jobs_at_once_ms"] = at_once_ms;
    out["two_jobs_at_once_sleeps_per_step"] = at_once_sleeps / (2.0 * s.steps);
    out["two_jobs_at_once_narrow_share"] = at_once_narrow / (2.0 * s.steps);
    out["at_once_over_sequential"] = at_once_ms / seq_ms;
  }
  std::printf("%s\n", out.dump(2).c_str());
  return 0;
}
