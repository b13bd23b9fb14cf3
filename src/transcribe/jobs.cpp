// The process-wide job registry (hark::jobs) and JobControl.
#include <map>
#include <mutex>

#include "runtime/error.h"
#include "transcribe/job_control.h"

namespace hark {

namespace {

struct Registry {
  std::mutex mutex;
  std::map<int, std::shared_ptr<JobImpl>> jobs;
  int next_id = 1;
};

Registry& registry() {
  static Registry* r = new Registry();  // never destroyed: jobs may end during static destruction
  return *r;
}

}  // namespace

namespace jobs {

std::shared_ptr<Job> create() {
  Registry& r = registry();
  std::lock_guard<std::mutex> lock(r.mutex);
  auto job = std::make_shared<JobImpl>(r.next_id++);
  r.jobs.emplace(job->id(), job);
  return job;
}

std::shared_ptr<Job> get(int id) {
  Registry& r = registry();
  std::lock_guard<std::mutex> lock(r.mutex);
  const auto it = r.jobs.find(id);
  return it == r.jobs.end() ? nullptr : it->second;
}

bool remove(int id) {
  Registry& r = registry();
  std::lock_guard<std::mutex> lock(r.mutex);
  return r.jobs.erase(id) > 0;
}

bool abort(int id) {
  const std::shared_ptr<Job> job = get(id);
  if (!job) return false;
  job->abort();
  return true;
}

void abort_all() {
  Registry& r = registry();
  std::lock_guard<std::mutex> lock(r.mutex);
  for (auto& [id, job] : r.jobs) job->abort();
}

bool is_transcribing() {
  Registry& r = registry();
  std::lock_guard<std::mutex> lock(r.mutex);
  for (auto& [id, job] : r.jobs)
    if (job->running()) return true;
  return false;
}

}  // namespace jobs

std::shared_ptr<JobImpl> job_for(const std::shared_ptr<Job>& given) {
  if (!given) return std::static_pointer_cast<JobImpl>(jobs::create());
  // Jobs come only from jobs::create(), so every Job is a JobImpl; a caller's own subclass is not.
  auto impl = std::dynamic_pointer_cast<JobImpl>(given);
  HARK_CHECK(impl != nullptr, "transcribe: params.job must come from hark::jobs::create()");
  return impl;
}

bool JobControl::should_stop() {
  if (failed_.load() || job_->abort_requested()) return true;
  if (!should_abort_) return false;
  bool stop = false;
  if (!call([&] { stop = should_abort_(); })) return true;
  return stop;
}

void JobControl::fail(std::exception_ptr e) {
  {
    std::lock_guard<std::mutex> lock(error_mutex_);
    if (!error_) error_ = std::move(e);
  }
  failed_.store(true);
}

void JobControl::rethrow_if_failed() {
  std::exception_ptr e;
  {
    std::lock_guard<std::mutex> lock(error_mutex_);
    e = error_;
  }
  if (e) std::rethrow_exception(e);
}

}  // namespace hark
