// Reading whisper.cpp-style binary files (Whisper models, the Silero VAD model): a read-only
// mapping of the whole file, and a bounds-checked sequential reader whose errors name the file,
// the field being read and its byte offset, so a truncated or corrupted file is an actionable
// hark::Error and never a read past the end.
#pragma once
#include <array>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <functional>
#include <memory>
#include <string>
#include <string_view>

#include "runtime/error.h"

namespace hark::file_io {

// "<label>: <what> at offset N: " — the start of every message about a field.
std::string at(const std::string& label, const std::string& what, uint64_t offset);
// Names come from the file; unprintable bytes are escaped so a message stays one readable line.
std::string printable(std::string_view s);
// "[3, 129, 128]"
std::string shape_str(const int64_t* ne, int n_dims);

// A read-only private mapping of a whole file, unmapped when the last owner lets go. `kind`
// ("model file", "VAD model file") names the file in errors: missing, not regular, empty.
struct Mapping {
  std::shared_ptr<void> keepalive;  // owns the mapping
  const uint8_t* data = nullptr;
  size_t size = 0;
};
Mapping map_file(const std::string& path, bool populate, const char* kind = "model file");
// Reads a mapping's pages in (as MAP_POPULATE does) in 64 MiB steps, calling on_step(bytes read,
// size) after each one, starting with (0, size).
void populate(const Mapping& m, const std::function<void(uint64_t, uint64_t)>& on_step);

// Sequential reader over a file's bytes. Every read checks the bytes are there first.
class Reader {
 public:
  Reader(const uint8_t* data, size_t size, const std::string& label, size_t pos = 0)
      : data_(data), size_(size), pos_(pos), label_(label) {}

  size_t pos() const { return pos_; }
  size_t left() const { return size_ - pos_; }
  bool at_end() const { return pos_ == size_; }

  const uint8_t* bytes(uint64_t n, const std::string& what) {
    if (n > left()) {
      throw Error(label_ + ": " + what + " at offset " + std::to_string(pos_) + ": needs " + std::to_string(n) +
                  " bytes, the file has only " + std::to_string(left()) + " left (file size " + std::to_string(size_) +
                  "; truncated?)");
    }
    const uint8_t* p = data_ + pos_;
    pos_ += static_cast<size_t>(n);
    return p;
  }
  int32_t i32(const std::string& what) {
    int32_t v;
    std::memcpy(&v, bytes(4, what), 4);
    return v;
  }
  uint32_t u32(const std::string& what) {
    uint32_t v;
    std::memcpy(&v, bytes(4, what), 4);
    return v;
  }

 private:
  const uint8_t* data_;
  size_t size_;
  size_t pos_;
  const std::string& label_;
};

// The head of one tensor record (whisper.cpp's layout, shared by its Whisper and VAD files):
// int32 n_dims, int32 name length, int32 type id, int32 ne[n_dims], the name; the data follows.
struct TensorRecord {
  uint64_t offset = 0;  // the record's first byte, for messages
  int n_dims = 0;
  int32_t type = 0;                       // the file's type id, not checked here
  std::array<int64_t, 4> ne{1, 1, 1, 1};  // 1 beyond n_dims
  std::string name;
};

// Reads record number `index` at r's position; n_dims must be in min_dims..4 and the name 1 to
// max_name bytes long (a hark::Error naming the field, its offset, expected vs found otherwise).
TensorRecord read_tensor_record(Reader& r, const std::string& label, size_t index, int min_dims, int max_name);

}  // namespace hark::file_io
