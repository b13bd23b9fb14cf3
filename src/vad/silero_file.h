// SileroFile: the Silero VAD model in whisper.cpp's VAD file layout, read and validated in full,
// its weights memory-mapped (not copied) into a CPU host buffer as named tensors.
//
// Layout (little-endian, nothing aligned): magic 0x67676d6c "ggml"; int32 length + model type
// ("silero-16k"); int32 version major, minor, patch; int32 n_window (samples per frame, 512) and
// n_context (64); int32 n_encoder_layers, then per layer int32 in_channels, out_channels,
// kernel_size; int32 lstm_input_size, lstm_hidden_size, final_conv_in, final_conv_out; then
// tensor records to the end: int32 n_dims (0 for a scalar), int32 name length, int32 type id,
// int32 ne[n_dims], the name, the raw data.
//
// Every size the file states is checked against the architecture hark runs (vad/silero_graph.h)
// before it is used; problems throw hark::Error naming the file, the field, its byte offset and
// what was expected vs found.
#pragma once
#include <array>
#include <cstdint>
#include <memory>
#include <string>
#include <unordered_map>
#include <vector>

#include "backend/buffer.h"
#include "runtime/tensor.h"

namespace hark::vad {

inline constexpr int kSileroEncoderLayers = 4;
inline constexpr int kSileroStftWindow = 256;                      // samples per STFT window (the basis kernel)
inline constexpr int kSileroStftBins = kSileroStftWindow / 2 + 1;  // 129 magnitudes per window

struct SileroHParams {
  std::string model_type;
  std::array<int32_t, 3> version{};
  int32_t n_window = 0;
  int32_t n_context = 0;
  struct EncoderLayer {
    int32_t in_channels, out_channels, kernel_size;
  };
  std::vector<EncoderLayer> encoder;
  int32_t lstm_input_size = 0;
  int32_t lstm_hidden_size = 0;
  int32_t final_conv_in = 0;
  int32_t final_conv_out = 0;
  uint64_t tensors_offset = 0;  // where the first tensor record starts

  std::string version_str() const;
};

// The weights the graph reads, bound by name after validation.
struct SileroWeights {
  std::array<Tensor*, kSileroEncoderLayers> enc_w{}, enc_b{};  // [K, Cin, Cout] f16/f32, [Cout] f32
  Tensor* lstm_w_ih = nullptr;                                 // [lstm_input, 4 * hidden] f32/f16, gates i, f, g, o
  Tensor* lstm_w_hh = nullptr;                                 // [hidden, 4 * hidden]
  Tensor* lstm_b_ih = nullptr;                                 // [4 * hidden] f32
  Tensor* lstm_b_hh = nullptr;
  Tensor* out_w = nullptr;       // [final_conv_in] (a 1x1 convolution to one channel)
  Tensor* out_b = nullptr;       // [1] f32 (a scalar in the file)
  Tensor* stft_basis = nullptr;  // [256, 1, 2 * 129]: real parts, then imaginary parts
};

struct SileroTensorEntry {
  std::string name;
  DType type;
  int n_dims;
  std::array<int64_t, kMaxDims> ne;
  uint64_t record_offset;
  uint64_t data_offset;
  uint64_t nbytes;
};

// Pure parsing of a file's bytes (no I/O), so tests drive it directly. `label` starts every error.
SileroHParams parse_silero_header(const uint8_t* data, size_t size, const std::string& label);
std::vector<SileroTensorEntry> parse_silero_tensors(const uint8_t* data, size_t size, const SileroHParams& hp,
                                                    const std::string& label);

class SileroFile {
 public:
  static std::unique_ptr<SileroFile> open(const std::string& path);
  ~SileroFile();
  SileroFile(const SileroFile&) = delete;
  SileroFile& operator=(const SileroFile&) = delete;

  const std::string& path() const { return path_; }
  const SileroHParams& hparams() const { return hp_; }
  const SileroWeights& weights() const { return w_; }
  const std::vector<SileroTensorEntry>& entries() const { return entries_; }
  uint64_t file_bytes() const { return file_bytes_; }

 private:
  SileroFile() = default;
  std::string path_;
  SileroHParams hp_;
  std::vector<SileroTensorEntry> entries_;
  TensorArena arena_;
  std::unique_ptr<Buffer> buffer_;
  SileroWeights w_;
  uint64_t file_bytes_ = 0;
};

}  // namespace hark::vad
