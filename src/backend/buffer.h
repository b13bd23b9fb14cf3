// BufferType and Buffer: where tensor bytes live.
//
// A BufferType is an allocator for one kind of memory (host RAM, a device's memory): it knows its
// alignment and largest allocation. A Buffer is one allocation from it; tensors are placed in a
// buffer at an offset, and their bytes are read and written only through the buffer, so the same
// code works whether the memory is host-visible or not.
#pragma once
#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>

#include "runtime/tensor.h"

namespace hark {

class Buffer;

enum class BufferUsage { Any, Weights, Compute };

class BufferType {
 public:
  virtual ~BufferType() = default;
  virtual const char* name() const = 0;
  // Throws hark::Error when `size` exceeds max_size() or memory is exhausted.
  virtual std::unique_ptr<Buffer> alloc(size_t size) = 0;
  virtual size_t alignment() const = 0;
  virtual size_t max_size() const = 0;
  virtual bool is_host() const = 0;  // bytes directly addressable by the CPU
  // Bytes a tensor needs in this memory (a device may pad); default: nbytes.
  virtual size_t alloc_size(const Tensor& t) const { return t.nbytes(); }
};

class Buffer {
 public:
  Buffer(BufferType* type, size_t size) : type_(type), size_(size) {}
  virtual ~Buffer() = default;
  Buffer(const Buffer&) = delete;
  Buffer& operator=(const Buffer&) = delete;

  BufferType* type() const { return type_; }
  size_t size() const { return size_; }
  BufferUsage usage() const { return usage_; }
  void set_usage(BufferUsage u) { usage_ = u; }
  virtual void* base() = 0;

  // Places t (a non-view tensor) at `offset`; checks that its bytes fit.
  void place(Tensor& t, size_t offset);
  // Byte access to a placed tensor (offset/size relative to the tensor's first byte).
  virtual void set_tensor(Tensor& t, const void* data, size_t offset, size_t size) = 0;
  virtual void get_tensor(const Tensor& t, void* data, size_t offset, size_t size) const = 0;
  virtual void memset_tensor(Tensor& t, uint8_t value, size_t offset, size_t size) = 0;
  // Copies all of src into dst when this buffer can (same memory kind); returns false otherwise.
  virtual bool copy_tensor(const Tensor& src, Tensor& dst) = 0;
  virtual void clear(uint8_t value) = 0;

 protected:
  // Throws unless [offset, offset+size) lies inside t and t inside this buffer.
  void check_range(const Tensor& t, size_t offset, size_t size, const char* what) const;

 private:
  BufferType* type_;
  size_t size_;
  BufferUsage usage_ = BufferUsage::Any;
};

// Host memory buffers shared by the CPU devices. `HostBufferType(name)` gives distinct types with
// the same behaviour, so two CPU devices can each own "their" memory (the scheduler then copies).
class HostBufferType : public BufferType {
 public:
  explicit HostBufferType(const char* name, size_t alignment = 64) : name_(name), alignment_(alignment) {}
  const char* name() const override { return name_; }
  std::unique_ptr<Buffer> alloc(size_t size) override;
  size_t alignment() const override { return alignment_; }
  size_t max_size() const override { return SIZE_MAX / 2; }
  bool is_host() const override { return true; }
  // A buffer over memory owned elsewhere (e.g. an mmap of a model file); nothing is copied and
  // the memory is not freed by the buffer. `keepalive` is released when the buffer is destroyed.
  std::unique_ptr<Buffer> wrap(void* ptr, size_t size, std::shared_ptr<void> keepalive = nullptr);

 private:
  const char* name_;
  size_t alignment_;
};

// The host memory of the CPU device ("cpu"): what CpuDevice::buffer_type() returns and where a
// model file's mapping is wrapped. It lives here rather than in the CPU backend so the model
// loader needs only buffers, not the device registry and the kernels (the loader's ASan and
// fuzz builds compile just what they test). Never destroyed, like the registry's devices.
HostBufferType& cpu_buffer_type();

// Copies the bytes of src into dst (same element count; both placed). Works across buffers of any
// types, through host memory when neither buffer can do it directly. Types must match.
void copy_tensor_bytes(const Tensor& src, Tensor& dst);

// Convenience for tests and tools: write/read a whole tensor from/to host memory.
void tensor_set(Tensor& t, const void* data, size_t size);
void tensor_get(const Tensor& t, void* data, size_t size);
// Part of a tensor: bytes [offset, offset+size) of its storage as the tensor sees it.
void tensor_set_range(Tensor& t, const void* data, size_t offset, size_t size);
void tensor_get_range(const Tensor& t, void* data, size_t offset, size_t size);

}  // namespace hark
