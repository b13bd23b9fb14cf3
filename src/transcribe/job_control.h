// JobImpl and JobControl: how a running transcription learns it must stop.
//
// JobImpl is the public Job: an id and an abort flag that any thread may set. JobControl is one
// transcription's view of everything that can stop it: the job's flag, the caller's should_abort,
// and a user callback that threw. The backend polls should_stop() between graph nodes, the
// long-form loop between tokens and windows, and the parts of an n_processors run share one.
#pragma once
#include <atomic>
#include <exception>
#include <functional>
#include <memory>
#include <mutex>

#include "hark/hark.hpp"

namespace hark {

class JobImpl final : public Job {
 public:
  explicit JobImpl(int id) : id_(id) {}
  int id() const override { return id_; }
  void abort() override { abort_.store(true); }
  bool abort_requested() const override { return abort_.load(); }
  bool running() const override { return running_.load() > 0; }

  // Marks the job running for the lifetime of the returned guard (parts of one job nest).
  struct RunningGuard {
    JobImpl* job;
    ~RunningGuard() { job->running_.fetch_sub(1); }
  };
  RunningGuard start_running() {
    running_.fetch_add(1);
    return RunningGuard{this};
  }

 private:
  const int id_;
  std::atomic<bool> abort_{false};
  std::atomic<int> running_{0};
};

class JobControl {
 public:
  JobControl(std::shared_ptr<JobImpl> job, std::function<bool()> should_abort)
      : job_(std::move(job)), should_abort_(std::move(should_abort)) {}

  JobImpl& job() { return *job_; }

  // True once the job was aborted, should_abort said so, or a callback threw. Thread-safe.
  bool should_stop();

  // Runs a user callback; an exception it throws is kept (the first one), stops the job and
  // is rethrown by rethrow_if_failed(). Returns false when it threw. Serialised: callbacks of
  // the parts of an n_processors run never overlap.
  template <typename F>
  bool call(F&& f) {
    std::lock_guard<std::recursive_mutex> lock(callback_mutex_);
    try {
      f();
      return true;
    } catch (...) {
      fail(std::current_exception());
      return false;
    }
  }

  void fail(std::exception_ptr e);
  void rethrow_if_failed();

 private:
  std::shared_ptr<JobImpl> job_;
  std::function<bool()> should_abort_;
  std::atomic<bool> failed_{false};
  std::mutex error_mutex_;
  std::exception_ptr error_;
  std::recursive_mutex callback_mutex_;
};

// The registry's side that transcribe() needs: a job for a call that brought none.
std::shared_ptr<JobImpl> job_for(const std::shared_ptr<Job>& given);

}  // namespace hark
