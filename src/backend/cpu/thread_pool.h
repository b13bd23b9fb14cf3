// ThreadPool: a fixed set of worker threads that run one job at a time, all together.
//
// `run(fn)` calls fn(ith, nth) on every thread (the caller is thread 0) and returns when all are
// done. Inside fn, threads may call `barrier()` to wait for each other: the CPU backend runs a
// whole graph as one job, with a barrier between nodes, so workers are woken once per graph, not
// once per op.
//
// Every wait (a barrier, a worker waiting for the next job, the caller waiting for the workers)
// spins for a bounded time, then sleeps until woken (WaitWord). Spinning keeps a barrier under a
// microsecond when each thread has a core; sleeping keeps the pool from collapsing when threads
// outnumber free cores (other jobs, other processes, n_threads > cores): a spinning thread would
// burn the core that the thread it waits for needs. How long to spin adapts to how busy the
// machine is: when a pool thread finds it was preempted (the kernel gave its core to someone
// else), spins drop to about a microsecond; each job that runs with no thread preempted lets
// them grow back towards the longest spin.
//
// A job that may run narrow (run(fn, Width::AdaptToLoad): the CPU backend's graphs, whose work
// splits any way) goes further. The pool counts its threads' preemptions over windows of at
// least kWindowSeconds of job time; kNarrowAfter windows in a row at a core-sharing rate mean the
// machine has fewer free cores than the pool has threads (two jobs of 2 threads on 2 cores, other
// processes), where every barrier costs a sleep and a wake-up. Such jobs then run on the caller
// alone (fn(0, 1); barriers return at once) for kNarrowSeconds, after which they run at full
// width again and one more busy window narrows them again. Rates over windows, not single jobs:
// a decoder step lasts ~1 ms, and one preemption in it by a passing daemon is not a busy machine.
#pragma once
#include <atomic>
#include <chrono>
#include <cstdint>
#include <functional>
#include <thread>
#include <vector>

#include "backend/cpu/wait_word.h"

namespace hark::cpu {

class ThreadPool {
 public:
  // The longest a wait spins before it sleeps, by default: on an idle machine almost every wait
  // of a decoder step ends within it (bench_pool: ~0.01 sleeps a step at 50 us, ~0.1 at 20 us),
  // and a sleep and wake-up costs ~20-50 us (more in a VM), so shorter spins would be slower.
  static constexpr int64_t kDefaultSpinNs = 50'000;

  // max_spin_ns: the longest each wait spins before sleeping (0: always sleep at once).
  explicit ThreadPool(int n_threads, int64_t max_spin_ns = kDefaultSpinNs);
  ~ThreadPool();
  ThreadPool(const ThreadPool&) = delete;
  ThreadPool& operator=(const ThreadPool&) = delete;

  static constexpr double kWindowSeconds = 0.05;
  static constexpr int kNarrowAfter = 2;
  static constexpr double kNarrowSeconds = 0.2;
  // Preemptions a second per thread that mean its core is shared. Measured on the 2-core VM with
  // busy threads: one alone lost its core 2-3 times a second, two (a core each) 7-26 times, four
  // (two a core) ~110 times.
  static constexpr double kOversubscribedPreemptionsPerSecond = 50.0;

  // Whether a job must run on every thread, or may run on the caller alone while the machine is
  // oversubscribed (fn must then split its work by the nth it is given).
  enum class Width { All, AdaptToLoad };

  int size() const { return n_threads_; }
  void run(const std::function<void(int ith, int nth)>& fn, Width width = Width::All);
  // All threads of the running job wait here until each has arrived. Only valid inside run().
  void barrier();
  // Makes every barrier of the running job return at once, now and until the job ends. A thread
  // that fails inside an op calls this: it will not reach the barriers the others wait at (an
  // op's own, or the one after the node), so without it they would wait forever. Threads asleep
  // at a barrier are woken. The next run() starts with whole barriers again.
  void break_barriers();

  // How many waits so far ended asleep rather than spinning (for tests and benchmarks).
  uint64_t sleeps() const { return sleeps_.load(std::memory_order_relaxed); }
  // Threads asleep in a wait right now (a barrier, or between jobs).
  int sleeping() const { return static_cast<int>(job_seq_.sleepers() + pending_.sleepers() + barrier_gen_.sleepers()); }
  // How long a wait spins now (adapted; at most max_spin_ns).
  int64_t spin_ns() const { return spin_ns_.load(std::memory_order_relaxed); }
  // How many jobs so far ran on the caller alone because the machine was oversubscribed.
  uint64_t narrow_jobs() const { return narrow_jobs_.load(std::memory_order_relaxed); }

 private:
  void worker(int ith);
  // Waits for `w` to leave `old`, spinning spin_scale times the current spin first.
  void wait_while(const WaitWord& w, uint32_t old, int64_t spin_scale);
  // Cuts the spin if this thread was preempted since it last looked.
  void check_preempted();

  // Laid out by who writes what, a cache line each (alignas): a barrier's arrivals and a job's
  // start and end move their own lines between cores, not the settings every wait reads.
  // Read by every wait, written rarely.
  const int n_threads_;
  const int64_t max_spin_ns_;
  std::atomic<int64_t> spin_ns_;  // written only when a thread was preempted, or once a job while it grows
  std::atomic<int> job_width_;    // threads of the running job: barriers of a one-thread job return
  // A job: run() writes job_ (and stop_), then bumps job_seq_; workers run each sequence once.
  const std::function<void(int, int)>* job_ = nullptr;
  bool stop_ = false;

  // Written by any thread that finds it was preempted.
  alignas(64) std::atomic<int64_t> job_preemptions_{0};  // preemptions the threads of this job saw
  std::atomic<uint64_t> sleeps_{0};

  // Narrowing: the thread calling run() alone (one job at a time).
  using Clock = std::chrono::steady_clock;
  alignas(64) int64_t window_preemptions_ = 0;
  double window_seconds_ = 0;
  int busy_windows_in_a_row_ = 0;
  Clock::time_point narrow_until_{};  // AdaptToLoad jobs before this run on the caller alone
  std::atomic<uint64_t> narrow_jobs_{0};
  std::vector<std::thread> threads_;

  alignas(64) WaitWord job_seq_;
  alignas(64) WaitWord pending_;  // workers still running the current job; run() waits for 0

  // Barrier: arrivals count up; the last one resets the count and bumps the generation, which
  // the others wait on. break_barriers() bumps it too, so sleepers wake and see broken_.
  alignas(64) std::atomic<int> barrier_count_{0};
  WaitWord barrier_gen_;
  std::atomic<bool> barrier_broken_{false};
};

}  // namespace hark::cpu
