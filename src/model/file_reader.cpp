#include "model/file_reader.h"

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>

namespace hark::file_io {

std::string at(const std::string& label, const std::string& what, uint64_t offset) {
  return label + ": " + what + " at offset " + std::to_string(offset) + ": ";
}

std::string printable(std::string_view s) {
  std::string out;
  for (unsigned char c : s) {
    if (c >= 0x20 && c < 0x7f && c != '\\') {
      out += static_cast<char>(c);
    } else {
      char buf[8];
      std::snprintf(buf, sizeof buf, "\\x%02x", c);
      out += buf;
    }
  }
  return out;
}

std::string shape_str(const int64_t* ne, int n_dims) {
  std::string s = "[";
  for (int i = 0; i < n_dims; ++i) s += (i ? ", " : "") + std::to_string(ne[i]);
  return s + "]";
}

TensorRecord read_tensor_record(Reader& r, const std::string& label, size_t index, int min_dims, int max_name) {
  TensorRecord t;
  t.offset = r.pos();
  const std::string nth = "tensor record " + std::to_string(index);
  t.n_dims = r.i32(nth + " n_dims");
  const int32_t name_len = r.i32(nth + " name length");
  t.type = r.i32(nth + " type");
  if (t.n_dims < min_dims || t.n_dims > 4)
    throw Error(at(label, nth + " n_dims", t.offset) + "expected " + std::to_string(min_dims) + "..4, found " +
                std::to_string(t.n_dims));
  if (name_len < 1 || name_len > max_name)
    throw Error(at(label, nth + " name length", t.offset + 4) + "expected 1.." + std::to_string(max_name) + ", found " +
                std::to_string(name_len));
  for (int d = 0; d < t.n_dims; ++d) t.ne[static_cast<size_t>(d)] = r.i32(nth + " ne[" + std::to_string(d) + "]");
  const uint8_t* p = r.bytes(static_cast<uint64_t>(name_len), nth + " name");
  t.name.assign(reinterpret_cast<const char*>(p), static_cast<size_t>(name_len));
  return t;
}

Mapping map_file(const std::string& path, bool populate, const char* kind) {
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) {
    const int err = errno;
    throw Error(err == ENOENT || err == ENOTDIR ? ErrorCode::NotFound : ErrorCode::Io,
                path + ": cannot open " + std::string(kind) + ": " + std::strerror(err), path);
  }
  struct stat st {};
  if (::fstat(fd, &st) != 0) {
    const int err = errno;
    ::close(fd);
    throw Error(ErrorCode::Io, path + ": cannot stat " + std::string(kind) + ": " + std::strerror(err), path);
  }
  if (!S_ISREG(st.st_mode)) {
    ::close(fd);
    throw Error(ErrorCode::InvalidArgument, path + ": not a regular file", path);
  }
  if (st.st_size == 0) {
    ::close(fd);
    throw Error(ErrorCode::CorruptData, path + ": the " + std::string(kind) + " is empty (0 bytes)", path);
  }
  const size_t size = static_cast<size_t>(st.st_size);
  // MAP_PRIVATE + PROT_READ: the model is never written through, and a file changed on disk
  // while mapped cannot be written back by us.
  void* p = ::mmap(nullptr, size, PROT_READ, MAP_PRIVATE | (populate ? MAP_POPULATE : 0), fd, 0);
  const int err = errno;
  ::close(fd);  // the mapping keeps its own reference to the file
  if (p == MAP_FAILED)
    throw Error(
        err == ENOMEM ? ErrorCode::ResourceExhausted : ErrorCode::Io,
        path + ": cannot map " + std::string(kind) + " of " + std::to_string(size) + " bytes: " + std::strerror(err),
        path);
  Mapping m;
  m.data = static_cast<const uint8_t*>(p);
  m.size = size;
  m.keepalive = std::shared_ptr<void>(p, [size](void* q) { ::munmap(q, size); });
  return m;
}

void populate(const Mapping& m, const std::function<void(uint64_t, uint64_t)>& on_step) {
  constexpr size_t kStep = size_t{64} << 20;  // a multiple of the page size: every step starts page-aligned
  on_step(0, m.size);
  for (size_t off = 0; off < m.size; off += kStep) {
    const size_t n = std::min(kStep, m.size - off);
    uint8_t* p = const_cast<uint8_t*>(m.data) + off;
    bool done = false;
#ifdef MADV_POPULATE_READ
    done = ::madvise(p, n, MADV_POPULATE_READ) == 0;  // Linux 5.14+: one call reads the step in
#endif
    if (!done) {  // older kernels: one read per page faults it in
      volatile uint8_t sink = 0;
      for (size_t i = 0; i < n; i += 4096) sink = sink + p[i];
      (void)sink;
    }
    on_step(off + n, m.size);
  }
}

}  // namespace hark::file_io
