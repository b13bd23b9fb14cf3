// ModelFile: a Whisper model in whisper.cpp's ggml .bin format, read and validated in full, its
// weights memory-mapped (not copied) into a backend buffer as named tensors.
//
// Layout (little-endian): magic 0x67676d6c "ggml"; 11 int32 hyper-parameters; mel filters (int32
// n_mel, int32 n_fft, n_mel*n_fft f32); vocabulary (int32 count, then count x [uint32 length,
// bytes]); then tensor records to the end of the file: int32 n_dims, int32 name length, int32
// type id, int32 ne[n_dims], the name, the raw data. Nothing is aligned or padded.
//
// Every field is checked before it is used, and every size the file states is bounded by the
// hyper-parameters (themselves range-checked) before anything is allocated or read. Problems throw
// hark::Error naming the file, the field, its byte offset, and what was expected vs found.
#pragma once
#include <array>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "backend/buffer.h"
#include "frontend/mel.h"
#include "model/hparams.h"
#include "model/vocab.h"
#include "model/weights.h"
#include "runtime/tensor.h"

namespace hark {

inline constexpr uint32_t kModelMagic = 0x67676d6c;       // "ggml" read as a little-endian uint32
inline constexpr int32_t kMelFftBins = frontend::kNFreq;  // bins of a 400-point FFT (25 ms at 16 kHz)
inline constexpr uint32_t kMaxTokenBytes = 1024;          // real tokens are at most 128 bytes
inline constexpr int32_t kMaxTensorNameBytes = 256;

// Everything before the tensor records.
struct ModelHeader {
  HParams hparams;
  // The file's filterbank: n_mels rows of kMelFftBins weights (the file's n_fft field, which the
  // parser requires to be 201), the type the log-mel front end takes.
  frontend::MelFilters mel;
  Vocab vocab;
  uint64_t tensors_offset = 0;  // where the first tensor record starts
};

// One tensor record, validated: known name, expected shape, allowed type, data inside the file.
struct TensorEntry {
  std::string name;
  DType type;
  TensorKind kind;
  int n_dims;
  std::array<int64_t, kMaxDims> ne;
  uint64_t record_offset;  // start of its record (for messages)
  uint64_t data_offset;
  uint64_t nbytes;
};

// Pure parsing of a file's bytes in memory: no I/O, so tests and fuzzers drive it directly.
// `label` (normally the path) starts every error message.
ModelHeader parse_model_header(const uint8_t* data, size_t size, const std::string& label);
// The tensor records after the header; every expected tensor exactly once, nothing else. A file
// that ends right after the vocabulary gets a "no tensor data" error.
std::vector<TensorEntry> parse_model_tensors(const uint8_t* data, size_t size, const ModelHeader& header,
                                             const std::string& label);

struct LoadOptions {
  // nullptr: wrap the read-only mapping in a CPU host buffer; tensors point into the file's pages
  // (1-byte aligned, as the file stores them; writing to one faults). Otherwise: allocate one
  // buffer of this type and copy the tensors in, each at the type's alignment (device memory, or
  // aligned host memory).
  BufferType* buffer_type = nullptr;
  // Read the whole file into the page cache during open (MAP_POPULATE), so load time is honest
  // and the first inference does not stall on page faults.
  bool populate = false;
  // With populate: called as the file is read in (bytes read so far, file size), in steps of
  // 64 MiB, so a front end can show a large model's load; the pages are then read step by step
  // (MADV_POPULATE_READ) instead of in one MAP_POPULATE.
  std::function<void(uint64_t done, uint64_t total)> on_progress;
};

class ModelFile {
 public:
  // Maps, parses and validates the file, and makes a tensor of every weight. Throws hark::Error.
  static std::unique_ptr<ModelFile> open(const std::string& path, const LoadOptions& options = {});
  // Parses only the header; works on header-only files (test fixtures) too.
  static ModelHeader read_header(const std::string& path);

  ~ModelFile();
  ModelFile(const ModelFile&) = delete;
  ModelFile& operator=(const ModelFile&) = delete;

  const std::string& path() const { return path_; }
  const HParams& hparams() const { return header_.hparams; }
  const Vocab& vocab() const { return header_.vocab; }
  const frontend::MelFilters& mel_filters() const { return header_.mel; }
  const std::vector<TensorEntry>& entries() const { return entries_; }
  uint64_t tensors_offset() const { return header_.tensors_offset; }  // where the header ends
  const WhisperWeights& weights() const { return weights_; }
  Tensor* tensor(const std::string& name) const;  // nullptr when the model has no such tensor
  Buffer* buffer() const { return buffer_.get(); }

  bool mapped() const { return mapped_; }  // weights live in the file mapping
  uint64_t file_bytes() const { return file_bytes_; }
  uint64_t tensor_bytes() const { return tensor_bytes_; }  // sum of the weights' data
  double load_ms() const { return load_ms_; }
  // A few lines for `hark info`: size, hyper-parameters, types, bytes, load time.
  std::string describe() const;

 private:
  ModelFile() = default;

  std::string path_;
  ModelHeader header_;
  std::vector<TensorEntry> entries_;
  TensorArena arena_;
  std::unordered_map<std::string, Tensor*> by_name_;
  std::unique_ptr<Buffer> buffer_;
  WhisperWeights weights_{};
  bool mapped_ = false;
  uint64_t file_bytes_ = 0;
  uint64_t tensor_bytes_ = 0;
  double load_ms_ = 0.0;
};

}  // namespace hark
