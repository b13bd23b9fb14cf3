// Device: one piece of compute hardware and what it can do. It creates backends (streams) on
// itself, says which ops and buffer types it supports, and reports its memory.
#pragma once
#include <cstddef>
#include <memory>
#include <string>

#include "backend/backend.h"
#include "backend/buffer.h"

namespace hark {

enum class DeviceType { CPU, GPU, Accelerator };
const char* device_type_name(DeviceType t);

struct BackendParams {
  int n_threads = 0;  // 0: the device's default (CPU: hardware threads)
};

class Device {
 public:
  virtual ~Device() = default;
  virtual const char* name() const = 0;
  virtual std::string description() const = 0;
  virtual DeviceType type() const = 0;
  virtual void memory(size_t* free, size_t* total) const = 0;
  virtual bool supports_op(const Tensor& node) const = 0;
  virtual bool supports_buffer_type(const BufferType* bt) const = 0;
  virtual BufferType* buffer_type() = 0;  // this device's default memory
  virtual std::unique_ptr<Backend> init_backend(const BackendParams& params = {}) = 0;
};

}  // namespace hark
