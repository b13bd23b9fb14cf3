// Element types of hark tensors, with the exact block layouts of whisper.cpp's ggml model files.
//
// Quantized types store a row as consecutive blocks of 32 values; each block carries its own
// f16 scale (and min, for the _1 types). The structs below are the on-disk layouts: a model file's
// tensor data is read by casting bytes to these, so their sizes are checked at compile time.
#pragma once
#include <cstddef>
#include <cstdint>
#include <string_view>

namespace hark {

// Values are the ggml type ids used in model files (tensor headers store these numbers).
enum class DType : int32_t {
  F32 = 0,
  F16 = 1,
  Q4_0 = 2,
  Q4_1 = 3,
  Q5_0 = 6,
  Q5_1 = 7,
  Q8_0 = 8,
  I32 = 26,  // indices (token ids, argmax/top-k results); never a weight type
};

inline constexpr int kQuantBlock = 32;  // values per quantized block, every quantized type

using f16_t = uint16_t;  // IEEE-754 binary16 bits

// q4_0: value = (nibble - 8) * d. qs[j] holds value j in its low nibble and value j+16 in its high.
struct BlockQ4_0 {
  f16_t d;
  uint8_t qs[kQuantBlock / 2];
};
// q4_1: value = nibble * d + m. Nibble order as q4_0.
struct BlockQ4_1 {
  f16_t d;
  f16_t m;
  uint8_t qs[kQuantBlock / 2];
};
// q5_0: value = (q - 16) * d, q = nibble | (bit j of qh) << 4; bit j of qh belongs to value j.
struct BlockQ5_0 {
  f16_t d;
  uint8_t qh[4];
  uint8_t qs[kQuantBlock / 2];
};
// q5_1: value = q * d + m, q as q5_0.
struct BlockQ5_1 {
  f16_t d;
  f16_t m;
  uint8_t qh[4];
  uint8_t qs[kQuantBlock / 2];
};
// q8_0: value = qs[j] * d.
struct BlockQ8_0 {
  f16_t d;
  int8_t qs[kQuantBlock];
};
static_assert(sizeof(BlockQ4_0) == 18 && sizeof(BlockQ4_1) == 20 && sizeof(BlockQ5_0) == 22 &&
                  sizeof(BlockQ5_1) == 24 && sizeof(BlockQ8_0) == 34,
              "block layouts must match the model file format byte for byte");

struct DTypeTraits {
  const char* name;    // "f32", "q4_0", ...
  int block_size;      // values per block (1 for plain types)
  size_t block_bytes;  // bytes per block
  bool quantized;
};

const DTypeTraits& dtype_traits(DType t);
bool dtype_valid(int32_t raw);  // is this a type id hark knows (for validating file input)
inline const char* dtype_name(DType t) { return dtype_traits(t).name; }
inline int dtype_block_size(DType t) { return dtype_traits(t).block_size; }
inline size_t dtype_block_bytes(DType t) { return dtype_traits(t).block_bytes; }
inline bool dtype_quantized(DType t) { return dtype_traits(t).quantized; }
// Bytes of one row of n values; n must be a multiple of the block size.
size_t dtype_row_bytes(DType t, int64_t n);
// Parses "f32", "q5_0", ... ; returns false when the name is unknown.
bool dtype_from_name(std::string_view name, DType* out);

// IEEE half conversions (round to nearest even), scalar. SIMD paths use F16C where present.
float f16_to_f32(f16_t h);
f16_t f32_to_f16(float f);

}  // namespace hark
