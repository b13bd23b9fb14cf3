// ThreadPool: a fixed set of worker threads that run one job at a time, all together.
//
// `run(fn)` calls fn(ith, nth) on every thread (the caller is thread 0) and returns when all are
// done. Inside fn, threads may call `barrier()` to wait for each other: the CPU backend runs a
// whole graph as one job, with a barrier between nodes, so workers are woken once per graph, not
// once per op. Workers spin briefly, then sleep, between jobs.
#pragma once
#include <atomic>
#include <condition_variable>
#include <functional>
#include <mutex>
#include <thread>
#include <vector>

namespace hark::cpu {

class ThreadPool {
 public:
  explicit ThreadPool(int n_threads);
  ~ThreadPool();
  ThreadPool(const ThreadPool&) = delete;
  ThreadPool& operator=(const ThreadPool&) = delete;

  int size() const { return n_threads_; }
  void run(const std::function<void(int ith, int nth)>& fn);
  // All threads of the running job wait here until each has arrived. Only valid inside run().
  void barrier();
  // Makes every barrier of the running job return at once, now and until the job ends. A thread
  // that fails inside an op calls this: it will not reach the barriers the others wait at (an
  // op's own, or the one after the node), so without it they would wait forever. The next run()
  // starts with whole barriers again.
  void break_barriers();

 private:
  void worker(int ith);

  int n_threads_;
  std::vector<std::thread> threads_;
  std::mutex mu_;
  std::condition_variable cv_;
  const std::function<void(int, int)>* job_ = nullptr;
  uint64_t job_seq_ = 0;       // bumped per job; workers run each sequence once
  std::atomic<uint64_t> job_seq_atomic_{0};
  std::atomic<int> pending_{0};  // workers still running the current job
  bool stop_ = false;

  // sense-reversing barrier
  std::atomic<int> barrier_count_{0};
  std::atomic<int> barrier_sense_{0};
  std::atomic<bool> barrier_broken_{false};
};

}  // namespace hark::cpu
