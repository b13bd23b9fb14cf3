// Backend and Event: a Backend is a stream that computes graphs on one device. Work submitted to a
// backend may run asynchronously; `synchronize` waits for it. An Event marks a point in a
// backend's stream so another stream (or the host) can wait for it. The CPU backend is
// synchronous, so its events are trivially complete; the interface leaves room for GPU streams.
#pragma once
#include <functional>
#include <memory>

#include "runtime/graph.h"

namespace hark {

class Device;
class Backend;

// Returns true to abort a running graph; checked between graph nodes.
using AbortCallback = std::function<bool()>;

class Event {
 public:
  virtual ~Event() = default;
  virtual void record(Backend& backend) = 0;  // mark the current end of backend's stream
  virtual void synchronize() = 0;             // host waits until the marked point is reached
  virtual void wait(Backend& backend) = 0;    // backend's later work waits for the marked point
};

enum class ComputeStatus { Ok, Aborted };

class Backend {
 public:
  virtual ~Backend() = default;
  virtual const char* name() const = 0;
  virtual Device& device() const = 0;

  // Computes every node of g in order. Tensors must already have memory (see GraphAllocator).
  // Throws hark::Error when a node is not supported; returns Aborted when the abort callback fired.
  virtual ComputeStatus compute(const Graph& g) = 0;
  virtual void set_tensor_async(Tensor& t, const void* data, size_t offset, size_t size) = 0;
  virtual void get_tensor_async(const Tensor& t, void* data, size_t offset, size_t size) = 0;
  virtual void synchronize() = 0;
  virtual std::unique_ptr<Event> new_event() = 0;

  virtual void set_n_threads(int n) = 0;
  virtual int n_threads() const = 0;
  void set_abort_callback(AbortCallback cb) { abort_ = std::move(cb); }

  // Host work between graphs (a decoder step's per-row rules and sampling): fn(i) for every
  // i < n, spread over this backend's host threads where it has some (the CPU backend's compute
  // threads, idle between graphs), else one after another on the calling thread. Calls of fn may
  // run concurrently, in any order; exceptions reach the caller. Not while compute() runs.
  virtual void run_on_host(int64_t n, const std::function<void(int64_t)>& fn) {
    for (int64_t i = 0; i < n; ++i) fn(i);
  }
  // How many threads run_on_host spreads work over (1: the calling thread alone).
  virtual int host_threads() const { return 1; }

 protected:
  AbortCallback abort_;
};

// An Event for synchronous backends: recording happens after all prior work has finished.
class ImmediateEvent : public Event {
 public:
  void record(Backend& backend) override { backend.synchronize(); }
  void synchronize() override {}
  void wait(Backend&) override {}
};

}  // namespace hark
