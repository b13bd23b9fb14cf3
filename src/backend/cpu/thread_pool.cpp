#include "backend/cpu/thread_pool.h"

#include <algorithm>
#include <chrono>
#include <cstdlib>

#if defined(__linux__)
#include <sys/resource.h>
#endif

namespace hark::cpu {

namespace {

// The least a wait spins on a busy machine: about a microsecond still catches threads that arrive
// together (no system call) and costs little next to a sleep.
constexpr int64_t kMinSpinNs = 1'000;

// A worker waiting for the next job spins this many times longer than a barrier: the gap between
// two decoder steps (sampling, the next graph) is a few hundred microseconds, and a worker that
// slept through it wakes late for the next step (tens of microseconds, more in a VM).
constexpr int64_t kJobWaitSpinScale = 20;

// How many times the kernel has taken this thread off its core while it could still run
// (involuntary context switches): that happens only when something else wants the core, which
// is exactly when spinning hurts. 0 where the count is not available (spins stay at the most).
uint64_t preemptions_of_this_thread() {
#if defined(__linux__)
  rusage ru{};
  if (getrusage(RUSAGE_THREAD, &ru) == 0) return static_cast<uint64_t>(ru.ru_nivcsw);
#endif
  return 0;
}

// This thread's count when it last looked (per OS thread, as the count is); kNotYet before its
// first look, which only takes the count (what came before says nothing about this pool).
constexpr uint64_t kNotYet = ~uint64_t{0};
thread_local uint64_t t_preemptions_seen = kNotYet;

void start_counting_preemptions() {
  if (t_preemptions_seen == kNotYet) t_preemptions_seen = preemptions_of_this_thread();
}

}  // namespace

ThreadPool::ThreadPool(int n_threads, int64_t max_spin_ns)
    : n_threads_(n_threads < 1 ? 1 : n_threads),
      max_spin_ns_(max_spin_ns < 0 ? 0 : max_spin_ns),
      spin_ns_(max_spin_ns_),
      job_width_(n_threads_) {
  threads_.reserve(static_cast<size_t>(n_threads_ - 1));
  for (int i = 1; i < n_threads_; ++i) threads_.emplace_back([this, i] { worker(i); });
}

ThreadPool::~ThreadPool() {
  stop_ = true;
  job_seq_.add(1);  // publishes stop_ (the workers read it after seeing the new sequence)
  for (auto& t : threads_) t.join();
}

void ThreadPool::check_preempted() {
  const uint64_t now = preemptions_of_this_thread();
  const uint64_t before = t_preemptions_seen;
  t_preemptions_seen = now;
  if (now == before || before == kNotYet) return;
  // Something else wanted this core: from now on hand it over after a short spin.
  job_preemptions_.fetch_add(static_cast<int64_t>(now - before), std::memory_order_relaxed);
  if (spin_ns_.load(std::memory_order_relaxed) > kMinSpinNs)
    spin_ns_.store(std::min(kMinSpinNs, max_spin_ns_), std::memory_order_relaxed);
}

void ThreadPool::wait_while(const WaitWord& w, uint32_t old, int64_t spin_scale) {
  if (w.wait_while(old, spin_scale * spin_ns_.load(std::memory_order_relaxed)) == 0) return;
  sleeps_.fetch_add(1, std::memory_order_relaxed);
  // A sleep costs far more than a look at the count, and a long job (an encoder graph) should
  // not spin through all of it on a busy machine.
  check_preempted();
}

void ThreadPool::run(const std::function<void(int, int)>& fn, Width width) {
  if (n_threads_ == 1) {
    fn(0, 1);
    return;
  }
  if (width == Width::AdaptToLoad && Clock::now() < narrow_until_) {
    // Oversubscribed: the caller alone, no barrier to wait at and no worker to wake. Its own
    // preemptions still cut the spin.
    narrow_jobs_.fetch_add(1, std::memory_order_relaxed);
    job_width_.store(1, std::memory_order_relaxed);
    start_counting_preemptions();
    fn(0, 1);
    check_preempted();
    job_width_.store(n_threads_, std::memory_order_relaxed);
    return;
  }
  // Every worker is idle here, so a job that broke its barriers (leaving a partial count behind)
  // can be forgotten.
  const Clock::time_point t0 = Clock::now();
  job_preemptions_.store(0, std::memory_order_relaxed);
  barrier_count_.store(0, std::memory_order_relaxed);
  barrier_broken_.store(false, std::memory_order_relaxed);
  job_ = &fn;
  pending_.reset(static_cast<uint32_t>(n_threads_ - 1));
  job_seq_.add(1);  // publishes the job and the resets above
  start_counting_preemptions();
  fn(0, n_threads_);
  check_preempted();
  for (uint32_t left = pending_.load(); left != 0; left = pending_.load()) wait_while(pending_, left, 1);
  job_ = nullptr;
  // The workers looked before counting themselves out. A whole job without anyone losing their
  // core: spin longer again, in steps (a busy machine shows itself again within a job or two).
  const int64_t preemptions = job_preemptions_.load(std::memory_order_relaxed);
  if (preemptions == 0) {
    const int64_t spin = spin_ns_.load(std::memory_order_relaxed);
    if (spin < max_spin_ns_) spin_ns_.store(std::min(max_spin_ns_, spin + max_spin_ns_ / 8), std::memory_order_relaxed);
  }
  // Oversubscribed: preemptions at a core-sharing rate over kNarrowAfter windows in a row.
  const Clock::time_point t1 = Clock::now();
  window_preemptions_ += preemptions;
  window_seconds_ += std::chrono::duration<double>(t1 - t0).count();
  if (window_seconds_ < kWindowSeconds) return;
  const bool busy = window_preemptions_ > 0 && static_cast<double>(window_preemptions_) >=
                                                   kOversubscribedPreemptionsPerSecond * window_seconds_ * n_threads_;
  window_preemptions_ = 0;
  window_seconds_ = 0;
  if (!busy) {
    busy_windows_in_a_row_ = 0;
    return;
  }
  if (++busy_windows_in_a_row_ < kNarrowAfter) return;
  narrow_until_ = t1 + std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double>(kNarrowSeconds));
  busy_windows_in_a_row_ = kNarrowAfter - 1;  // after the narrow spell, one busy window narrows again
}

void ThreadPool::worker(int ith) {
  start_counting_preemptions();
  uint32_t seen = 0;
  for (;;) {
    wait_while(job_seq_, seen, kJobWaitSpinScale);
    seen = job_seq_.load();
    if (stop_) return;
    // run() cannot change job_ before this worker has counted itself out of pending_.
    (*job_)(ith, n_threads_);
    check_preempted();
    pending_.sub(1);
  }
}

void ThreadPool::break_barriers() {
  barrier_broken_.store(true, std::memory_order_seq_cst);
  barrier_gen_.add(1);  // wakes the sleepers; they see broken_ (stored before this)
}

void ThreadPool::barrier() {
  if (n_threads_ == 1 || job_width_.load(std::memory_order_relaxed) == 1) return;
  // The generation first, then broken_: if the generation read is already the one a
  // break_barriers() bumped, broken_ (stored before that bump) reads true here; if it is older,
  // the bump ends the wait below. Either way no thread waits for arrivals that will not come.
  const uint32_t gen = barrier_gen_.load();
  if (barrier_broken_.load(std::memory_order_acquire)) return;
  if (barrier_count_.fetch_add(1, std::memory_order_acq_rel) == n_threads_ - 1) {
    barrier_count_.store(0, std::memory_order_relaxed);
    barrier_gen_.add(1);
    return;
  }
  wait_while(barrier_gen_, gen, 1);
}

}  // namespace hark::cpu
