// hark model conversion, the C++ API: rewrite a Whisper model file with its weight matrices in
// another type (f32, f16, q4_0, q4_1, q5_0, q5_1, q8_0), in whisper.cpp's file layout, so both
// whisper.cpp and hark load the result.
//
//   hark::QuantizeResult r = hark::quantize_model("ggml-base.bin", "ggml-base-q5_0.bin", "q5_0");
//
// What changes is what whisper.cpp's quantizer changes: the 2-D weight matrices (projections and
// the token embedding). Biases, layer norms and positional embeddings stay f32; the convolution
// kernels are f16 (f32 in an f32 file). A matrix whose rows are not whole 32-value blocks stays
// f16. Quantized input is dequantized first (converting between quantized types loses accuracy
// twice; going back to f16 is for checking). The output is written under a temporary name and
// renamed at the end: a failure leaves no output file.
#pragma once
#include <cstdint>
#include <functional>
#include <string>

#include "hark/error.hpp"
#include "hark/export.h"

namespace hark {

struct QuantizeResult {
  std::string from_type;     // the input file's weight type ("f16", ...)
  std::string to_type;       // the output's
  uint64_t input_bytes = 0;  // file sizes
  uint64_t output_bytes = 0;
  int n_tensors = 0;    // tensors in the file
  int n_converted = 0;  // tensors whose type changed
  int n_kept_f16 = 0;   // matrices left f16 because their rows are not whole blocks
};

// progress(done, total): bytes of tensor data converted so far, after each tensor.
using QuantizeProgress = std::function<void(uint64_t done, uint64_t total)>;

// Throws hark::Error naming the file or the type that is wrong (unknown type, unreadable or
// invalid input, output path equal to the input, a write that failed).
HARK_API QuantizeResult quantize_model(const std::string& input_path, const std::string& output_path,
                                       const std::string& type, const QuantizeProgress& progress = {});

}  // namespace hark
