#include "backend/buffer.h"

#include <sys/mman.h>

#include <cstdlib>
#include <cstring>
#include <vector>

#include "runtime/error.h"

namespace hark {

void Buffer::place(Tensor& t, size_t offset) {
  HARK_CHECK(t.view_src == nullptr, "cannot place view " + t.describe() + " in a buffer");
  const size_t need = type()->alloc_size(t);
  HARK_CHECK(offset <= size() && need <= size() - offset,
             "buffer too small: " + t.describe() + " needs " + std::to_string(need) + " bytes at offset " +
                 std::to_string(offset) + ", buffer '" + type()->name() + "' has " + std::to_string(size()));
  t.buffer = this;
  t.data = static_cast<uint8_t*>(base()) + offset;
}

void Buffer::check_range(const Tensor& t, size_t offset, size_t size, const char* what) const {
  HARK_CHECK(t.data != nullptr, std::string(what) + ": tensor " + t.describe() + " has no memory");
  const size_t n = t.nbytes();
  HARK_CHECK(offset <= n && size <= n - offset, std::string(what) + ": range [" + std::to_string(offset) + ", " +
                                                    std::to_string(offset + size) + ") outside tensor " + t.describe() +
                                                    " of " + std::to_string(n) + " bytes");
}

namespace {

// Buffers from this size up are mapped from the system directly and unmapped when freed: the
// C library's allocator keeps large freed blocks in its heap once its dynamic mmap threshold has
// risen (glibc's does after the first large free), so a process that loads and drops models (a
// server's /load) would grow by a model each time.
constexpr size_t kMapFrom = size_t(1) << 20;

class HostBuffer : public Buffer {
 public:
  HostBuffer(BufferType* type, void* mem, size_t size, bool owned, std::shared_ptr<void> keepalive, size_t mapped = 0)
      : Buffer(type, size), mem_(mem), owned_(owned), mapped_(mapped), keepalive_(std::move(keepalive)) {}
  ~HostBuffer() override {
    if (mapped_)
      ::munmap(mem_, mapped_);
    else if (owned_)
      std::free(mem_);
  }
  void* base() override { return mem_; }
  void set_tensor(Tensor& t, const void* data, size_t offset, size_t size) override {
    check_range(t, offset, size, "set_tensor");
    std::memcpy(static_cast<uint8_t*>(t.data) + offset, data, size);
  }
  void get_tensor(const Tensor& t, void* data, size_t offset, size_t size) const override {
    check_range(t, offset, size, "get_tensor");
    std::memcpy(data, static_cast<const uint8_t*>(t.data) + offset, size);
  }
  void memset_tensor(Tensor& t, uint8_t value, size_t offset, size_t size) override {
    check_range(t, offset, size, "memset_tensor");
    std::memset(static_cast<uint8_t*>(t.data) + offset, value, size);
  }
  bool copy_tensor(const Tensor& src, Tensor& dst) override {
    if (!src.buffer || !src.buffer->type()->is_host()) return false;
    HARK_CHECK(src.nbytes() == dst.nbytes(),
               "copy_tensor: " + src.describe() + " and " + dst.describe() + " differ in size");
    std::memmove(dst.data, src.data, src.nbytes());
    return true;
  }
  void clear(uint8_t value) override { std::memset(mem_, value, size()); }

 private:
  void* mem_;
  bool owned_;
  size_t mapped_;  // > 0: mmap'ed, this many bytes
  std::shared_ptr<void> keepalive_;
};

}  // namespace

std::unique_ptr<Buffer> HostBufferType::alloc(size_t size) {
  HARK_CHECK_AS(ResourceExhausted, "", size <= max_size(),
                std::string("buffer '") + name_ + "': " + std::to_string(size) + " bytes is more than the maximum " +
                    std::to_string(max_size()));
  const size_t rounded = (std::max<size_t>(size, 1) + alignment_ - 1) / alignment_ * alignment_;
  if (rounded >= kMapFrom && alignment_ <= 4096) {  // (pages are aligned to at least 4 KB)
    void* mem = ::mmap(nullptr, rounded, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    HARK_CHECK_AS(ResourceExhausted, "", mem != MAP_FAILED,
                  std::string("buffer '") + name_ + "': out of memory mapping " + std::to_string(size) + " bytes");
    return std::make_unique<HostBuffer>(this, mem, size, true, nullptr, rounded);
  }
  void* mem = std::aligned_alloc(alignment_, rounded);
  HARK_CHECK_AS(ResourceExhausted, "", mem != nullptr,
                std::string("buffer '") + name_ + "': out of memory allocating " + std::to_string(size) + " bytes");
  return std::make_unique<HostBuffer>(this, mem, size, true, nullptr);
}

std::unique_ptr<Buffer> HostBufferType::wrap(void* ptr, size_t size, std::shared_ptr<void> keepalive) {
  return std::make_unique<HostBuffer>(this, ptr, size, false, std::move(keepalive));
}

HostBufferType& cpu_buffer_type() {
  static HostBufferType* type = new HostBufferType("cpu");
  return *type;
}

static Buffer* buffer_of(const Tensor& t) {
  const Tensor* s = t.storage();
  return t.buffer ? t.buffer : s->buffer;
}

void copy_tensor_bytes(const Tensor& src, Tensor& dst) {
  HARK_CHECK(src.type == dst.type && src.nelements() == dst.nelements(),
             "copy_tensor_bytes: " + src.describe() + " -> " + dst.describe() + " need the same type and size");
  HARK_CHECK(src.is_contiguous() && dst.is_contiguous(),
             "copy_tensor_bytes: both tensors must be contiguous: " + src.describe() + " -> " + dst.describe());
  Buffer* sb = buffer_of(src);
  Buffer* db = buffer_of(dst);
  HARK_CHECK(sb && db, "copy_tensor_bytes: tensor without a buffer: " + (sb ? dst : src).describe());
  if (db->copy_tensor(src, dst)) return;
  std::vector<uint8_t> staging(src.nbytes());
  sb->get_tensor(src, staging.data(), 0, staging.size());
  db->set_tensor(dst, staging.data(), 0, staging.size());
}

void tensor_set(Tensor& t, const void* data, size_t size) {
  Buffer* b = buffer_of(t);
  HARK_CHECK(b, "tensor_set: " + t.describe() + " is not in a buffer");
  HARK_CHECK(size == t.nbytes(), "tensor_set: " + t.describe() + " holds " + std::to_string(t.nbytes()) +
                                     " bytes, got " + std::to_string(size));
  b->set_tensor(t, data, 0, size);
}

void tensor_get(const Tensor& t, void* data, size_t size) {
  Buffer* b = buffer_of(t);
  HARK_CHECK(b, "tensor_get: " + t.describe() + " is not in a buffer");
  HARK_CHECK(size == t.nbytes(), "tensor_get: " + t.describe() + " holds " + std::to_string(t.nbytes()) +
                                     " bytes, asked for " + std::to_string(size));
  b->get_tensor(t, data, 0, size);
}

void tensor_set_range(Tensor& t, const void* data, size_t offset, size_t size) {
  Buffer* b = buffer_of(t);
  HARK_CHECK(b, "tensor_set: " + t.describe() + " is not in a buffer");
  b->set_tensor(t, data, offset, size);
}

void tensor_get_range(const Tensor& t, void* data, size_t offset, size_t size) {
  Buffer* b = buffer_of(t);
  HARK_CHECK(b, "tensor_get: " + t.describe() + " is not in a buffer");
  b->get_tensor(t, data, offset, size);
}

}  // namespace hark
