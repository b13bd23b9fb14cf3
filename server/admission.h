// Admission: which request runs when. A request waits for an idle state of its model, first come
// first served per model, in a bounded queue: when `queue_size` requests already wait, the next is
// refused at once (503 + Retry-After) instead of piling up. A wait ends early at the request's
// deadline (504), when its client is gone, or when the server closes (503).
#pragma once
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <set>

#include "model_pools.h"

namespace hark::server {

using Clock = std::chrono::steady_clock;

class Admission;
class Lease;

// A request's place, taken before any work is spent on it: running (a state was idle) or waiting
// in the queue. wait() turns it into the state; destroying it gives the place back.
class Ticket {
 public:
  Ticket(const Ticket&) = delete;
  Ticket& operator=(const Ticket&) = delete;
  ~Ticket();
  // The state: at once when the place was a running one, else when this request is first in
  // line and a state is idle. Throws ApiError: 503 closed, 504 deadline passed, 499 client gone
  // (`gone` polled every 20 ms while waiting). Once.
  std::unique_ptr<Lease> wait(Clock::time_point deadline, const std::function<bool()>& gone);

 private:
  friend class Admission;
  Ticket(Admission* a, std::shared_ptr<ModelPool> m) : sched_(a), model_(std::move(m)) {}
  void leave();  // out of the queue (the lock held)
  Admission* sched_;
  std::shared_ptr<ModelPool> model_;
  std::unique_ptr<Lease> lease_;  // the running place, taken at enter()
  bool queued_ = false;
  uint64_t number_ = 0;  // its place in its model's line
};

// A state borrowed from a model's pool; returned when the lease is destroyed.
class Lease {
 public:
  Lease(Admission* s, std::shared_ptr<ModelPool> m, std::unique_ptr<State> st)
      : sched_(s), model_(std::move(m)), state_(std::move(st)) {}
  Lease(const Lease&) = delete;
  Lease& operator=(const Lease&) = delete;
  ~Lease();
  State& state() { return *state_; }
  const ModelPool& model() const { return *model_; }

 private:
  Admission* sched_;
  std::shared_ptr<ModelPool> model_;
  std::unique_ptr<State> state_;
};

class Admission {
 public:
  explicit Admission(int queue_size) : queue_size_(queue_size) {}

  // A place for a request on `model`: a state at once when one is idle and nobody waits for it,
  // else a place in the queue. Throws ApiError 503 when the queue is full or the server closed.
  std::unique_ptr<Ticket> enter(std::shared_ptr<ModelPool> model);
  // enter(model)->wait(deadline, gone).
  std::unique_ptr<Lease> acquire(std::shared_ptr<ModelPool> model, Clock::time_point deadline,
                                 const std::function<bool()>& gone);
  // A state of `model` now, without waiting: nullptr when none is idle or requests already wait
  // for one (they come first). Throws ApiError 503 when closed. For realtime sessions, which
  // hold their state for as long as the client streams and so do not queue.
  std::unique_ptr<Lease> try_acquire(std::shared_ptr<ModelPool> model);
  void close();  // waiting and later requests get 503

  int running() const;
  int queued() const;
  bool closed() const;

 private:
  friend class Lease;
  friend class Ticket;
  void release(ModelPool& m, std::unique_ptr<State> s);

  const int queue_size_;
  mutable std::mutex mu_;
  std::condition_variable cv_;
  bool closed_ = false;
  int running_ = 0;
  int queued_ = 0;
  uint64_t next_ticket_ = 0;
  std::map<const ModelPool*, std::set<uint64_t>> waiting_;  // per model, tickets in order
};

}  // namespace hark::server
