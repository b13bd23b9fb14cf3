#include "backend/cpu/thread_pool.h"

#if defined(__x86_64__) || defined(__i386__)
#include <immintrin.h>
#define HARK_CPU_RELAX() _mm_pause()
#else
#define HARK_CPU_RELAX() ((void)0)
#endif

namespace hark::cpu {

namespace {
// Spin this many rounds before yielding / sleeping. Short graph nodes (decoder steps) finish in
// microseconds, so a sleeping worker would cost more than the node itself.
constexpr int kSpinRounds = 1 << 14;
}  // namespace

ThreadPool::ThreadPool(int n_threads) : n_threads_(n_threads < 1 ? 1 : n_threads) {
  for (int i = 1; i < n_threads_; ++i) threads_.emplace_back([this, i] { worker(i); });
}

ThreadPool::~ThreadPool() {
  {
    std::lock_guard<std::mutex> lock(mu_);
    stop_ = true;
    ++job_seq_;
    job_seq_atomic_.store(job_seq_, std::memory_order_release);
  }
  cv_.notify_all();
  for (auto& t : threads_) t.join();
}

void ThreadPool::run(const std::function<void(int, int)>& fn) {
  if (n_threads_ == 1) {
    fn(0, 1);
    return;
  }
  // Every thread is idle here, so a job that broke its barriers (leaving a partial count behind)
  // can be forgotten.
  barrier_count_.store(0, std::memory_order_relaxed);
  barrier_broken_.store(false, std::memory_order_relaxed);
  {
    std::lock_guard<std::mutex> lock(mu_);
    job_ = &fn;
    pending_.store(n_threads_ - 1, std::memory_order_relaxed);
    ++job_seq_;
    job_seq_atomic_.store(job_seq_, std::memory_order_release);
  }
  cv_.notify_all();
  fn(0, n_threads_);
  // Wait for the workers; they finish at about the same time as us (the job ends in a barrier
  // or balanced work), so spinning is cheapest.
  int spins = 0;
  while (pending_.load(std::memory_order_acquire) != 0) {
    if (++spins < kSpinRounds) {
      HARK_CPU_RELAX();
    } else {
      std::this_thread::yield();
    }
  }
  job_ = nullptr;
}

void ThreadPool::worker(int ith) {
  uint64_t seen = 0;
  for (;;) {
    // spin a while for the next job, then sleep on the condition variable
    int spins = 0;
    while (job_seq_atomic_.load(std::memory_order_acquire) == seen && spins < kSpinRounds) {
      HARK_CPU_RELAX();
      ++spins;
    }
    const std::function<void(int, int)>* job;
    {
      std::unique_lock<std::mutex> lock(mu_);
      cv_.wait(lock, [&] { return job_seq_ != seen; });
      seen = job_seq_;
      if (stop_) return;
      job = job_;
    }
    (*job)(ith, n_threads_);
    pending_.fetch_sub(1, std::memory_order_acq_rel);
  }
}

void ThreadPool::break_barriers() { barrier_broken_.store(true, std::memory_order_release); }

void ThreadPool::barrier() {
  if (n_threads_ == 1) return;
  if (barrier_broken_.load(std::memory_order_acquire)) return;
  const int sense = barrier_sense_.load(std::memory_order_relaxed);
  if (barrier_count_.fetch_add(1, std::memory_order_acq_rel) == n_threads_ - 1) {
    barrier_count_.store(0, std::memory_order_relaxed);
    barrier_sense_.store(sense ^ 1, std::memory_order_release);
    return;
  }
  int spins = 0;
  while (barrier_sense_.load(std::memory_order_acquire) == sense) {
    if (barrier_broken_.load(std::memory_order_acquire)) return;
    if (++spins < kSpinRounds) {
      HARK_CPU_RELAX();
    } else {
      std::this_thread::yield();
    }
  }
}

}  // namespace hark::cpu
