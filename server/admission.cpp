#include "admission.h"

#include "api_error.h"

namespace hark::server {

Lease::~Lease() {
  if (state_) sched_->release(*model_, std::move(state_));
}

std::unique_ptr<Ticket> Admission::enter(std::shared_ptr<ModelPool> model) {
  std::lock_guard lock(mu_);
  if (closed_) throw ApiError(503, "the server is shutting down", "server_error", "", "shutting_down");
  std::unique_ptr<Ticket> t(new Ticket(this, model));
  if (waiting_.find(model.get()) == waiting_.end()) {  // nobody waits for this model
    if (std::unique_ptr<State> s = model->try_take()) {
      ++running_;
      t->lease_ = std::make_unique<Lease>(this, std::move(model), std::move(s));
      return t;
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
  t->queued_ = true;
  t->number_ = next_ticket_++;
  waiting_[model.get()].insert(t->number_);
  return t;
}

std::unique_ptr<Lease> Admission::acquire(std::shared_ptr<ModelPool> model, Clock::time_point deadline,
                                          const std::function<bool()>& gone) {
  return enter(std::move(model))->wait(deadline, gone);
}

Ticket::~Ticket() {
  if (!queued_) return;
  std::lock_guard lock(sched_->mu_);
  leave();
}

void Ticket::leave() {
  auto& line = sched_->waiting_[model_.get()];
  line.erase(number_);
  if (line.empty()) sched_->waiting_.erase(model_.get());
  --sched_->queued_;
  queued_ = false;
  sched_->cv_.notify_all();  // the next in line may be first now
}

std::unique_ptr<Lease> Ticket::wait(Clock::time_point deadline, const std::function<bool()>& gone) {
  if (lease_) return std::move(lease_);
  Admission& a = *sched_;
  std::unique_lock lock(a.mu_);
  while (true) {
    if (!queued_) throw ApiError(500, "internal error: a request's place was used twice", "server_error");
    if (*a.waiting_[model_.get()].begin() == number_) {  // first in line for this model
      if (std::unique_ptr<State> s = model_->try_take()) {
        leave();
        ++a.running_;
        return std::make_unique<Lease>(&a, model_, std::move(s));
      }
    }
    if (a.closed_) {
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
    a.cv_.wait_for(lock, std::chrono::milliseconds(20));
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
