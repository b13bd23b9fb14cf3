// The optimised CPU device and backend: SIMD kernels (chosen at run time) and a thread pool owned
// by each backend. A graph runs as one pool job with a barrier between nodes; the abort callback
// is checked by thread 0 after every node.
#pragma once
#include <atomic>
#include <memory>
#include <vector>

#include "backend/device.h"
#include "simd/kernels.h"

namespace hark::cpu {

class ThreadPool;

class CpuDevice : public Device {
 public:
  CpuDevice();
  const char* name() const override;
  std::string description() const override;
  DeviceType type() const override { return DeviceType::CPU; }
  void memory(size_t* free, size_t* total) const override;
  bool supports_op(const Tensor& node) const override;
  bool supports_buffer_type(const BufferType* bt) const override;
  BufferType* buffer_type() override { return &cpu_buffer_type(); }
  std::unique_ptr<Backend> init_backend(const BackendParams& params = {}) override;
};

class CpuBackend : public Backend {
 public:
  CpuBackend(Device& dev, int n_threads, SimdLevel level);
  ~CpuBackend() override;
  const char* name() const override { return "cpu"; }
  Device& device() const override { return dev_; }
  ComputeStatus compute(const Graph& g) override;
  void set_tensor_async(Tensor& t, const void* data, size_t offset, size_t size) override;
  void get_tensor_async(const Tensor& t, void* data, size_t offset, size_t size) override;
  void synchronize() override {}
  std::unique_ptr<Event> new_event() override;
  void set_n_threads(int n) override;
  int n_threads() const override { return n_threads_; }
  void run_on_host(int64_t n, const std::function<void(int64_t)>& fn) override;
  int host_threads() const override { return n_threads_; }
  // Tests force a kernel level; it must be supported by this processor.
  void set_simd_level(SimdLevel level);
  SimdLevel simd_level() const { return kernels_->level; }

 private:
  Device& dev_;
  int n_threads_;
  const Kernels* kernels_;
  std::unique_ptr<ThreadPool> pool_;
  std::vector<uint8_t, std::allocator<uint8_t>> work_;  // per-node scratch, grown, never shrunk
  // compute()'s schedule: a parallel node (first == last), or a run of small nodes [first, last]
  // that thread 0 computes alone. Kept to reuse its memory.
  struct ScheduleStep {
    int first, last;
    bool small;
    bool by_rows = false;  // a small run every thread works on, each its own rows of every node
  };
  std::vector<ScheduleStep> steps_;
  // One work-claim counter per step (ComputeContext::claim), zeroed before each graph runs.
  std::unique_ptr<std::atomic<int64_t>[]> claims_;
  size_t claims_size_ = 0;
};

// With more than one thread, an element-wise, row or copy node that touches fewer values than
// this (output, and first input) is a "small" node: thread 0 computes a run of them alone, with
// one barrier after the run instead of one after each node.
inline constexpr int64_t kCpuSmallNodeElements = 16384;
bool cpu_is_small_node(const Tensor& node);

// Hardware threads available to this process.
int hardware_threads();

}  // namespace hark::cpu
