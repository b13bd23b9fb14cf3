#include "admission.h"

#include "api_error.h"

namespace hark::server {

Lease::~Lease() {
  if (state_) sched_->release(*model_, std::move(state_));
}

std::unique_ptr<Lease> Admission::acquire(std::shared_ptr<ModelPool> model, Clock::time_point deadline,
                                          const std::function<bool()>& gone) {
  std::unique_lock lock(mu_);
  if (closed_) throw ApiError(503, "the server is shutting down", "server_error", "", "shutting_down");
  if (auto it = waiting_.find(model.get()); it == waiting_.end()) {  // nobody waits for this model
    if (std::unique_ptr<State> s = model->try_take()) {
      ++running_;
      return std::make_unique<Lease>(this, std::move(model), std::move(s));
    }
  }
  if (queued_ >= queue_size_) {
    ApiError e(503,
               "the server is busy: " + std::to_string(queued_) +
                   " requests are already waiting (--queue-size); try again shortly",
               "server_error", "", "queue_full");
    e.retry_after_s = 1;
    throw e;
  }
  ++queued_;
  auto& line = waiting_[model.get()];
  const auto ticket = line.emplace(next_ticket_++, true);
  auto leave = [&] {
    line.erase(ticket);
    if (line.empty()) waiting_.erase(model.get());
    --queued_;
    cv_.notify_all();  // the next in line may be first now
  };
  while (true) {
    if (line.begin() == ticket) {  // first in line for this model
      if (std::unique_ptr<State> s = model->try_take()) {
        leave();
        ++running_;
        return std::make_unique<Lease>(this, std::move(model), std::move(s));
      }
    }
    if (closed_) {
      leave();
      throw ApiError(503, "the server is shutting down", "server_error", "", "shutting_down");
    }
    if (Clock::now() >= deadline) {
      leave();
      throw ApiError(504, "the request waited for a free state past its timeout (--timeout)", "server_error", "",
                     "timeout");
    }
    if (gone && gone()) {
      leave();
      throw ApiError(499, "the client closed the connection", "invalid_request_error", "", "client_closed");
    }
    cv_.wait_for(lock, std::chrono::milliseconds(20));
  }
}

std::unique_ptr<Lease> Admission::try_acquire(std::shared_ptr<ModelPool> model) {
  std::lock_guard lock(mu_);
  if (closed_) throw ApiError(503, "the server is shutting down", "server_error", "", "shutting_down");
  if (waiting_.count(model.get())) return nullptr;
  std::unique_ptr<State> s = model->try_take();
  if (!s) return nullptr;
  ++running_;
  return std::make_unique<Lease>(this, std::move(model), std::move(s));
}

void Admission::release(ModelPool& m, std::unique_ptr<State> s) {
  m.give_back(std::move(s));
  std::lock_guard lock(mu_);
  --running_;
  cv_.notify_all();
}

void Admission::close() {
  std::lock_guard lock(mu_);
  closed_ = true;
  cv_.notify_all();
}

int Admission::running() const {
  std::lock_guard lock(mu_);
  return running_;
}

int Admission::queued() const {
  std::lock_guard lock(mu_);
  return queued_;
}

bool Admission::closed() const {
  std::lock_guard lock(mu_);
  return closed_;
}

}  // namespace hark::server
