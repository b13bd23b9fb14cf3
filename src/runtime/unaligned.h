// Loads from bytes at any address.
//
// Model weights are used in place in the file's read-only mapping, where tensor data sits at
// arbitrary byte offsets (the format has no padding), so a weight's f32 and f16 values and its
// quantized blocks may be at odd addresses. Reading them through a typed pointer (`w[i]`,
// `block[b].d`) is undefined behaviour, which UBSan reports and a vectorizing compiler may turn
// into aligned vector loads. Code that reads weight data goes through these instead: memcpy makes
// no alignment promise and compiles to the same single load on x86. The arguments are `const
// void*` so no pointee type's alignment is assumed (clang takes it from a typed memcpy argument).
//
// Everything here has internal linkage (unnamed namespace): the per-ISA kernel files include this
// header, and an inline function with external linkage compiled there with AVX-512 flags could
// be the one copy the linker keeps for every caller (see simd/kernels_internal.h).
#pragma once
#include <cstddef>
#include <cstdint>
#include <cstring>

#include "runtime/dtype.h"

namespace hark {
namespace {

inline float load_f32(const void* p) {
  float v;
  std::memcpy(&v, p, sizeof v);
  return v;
}

inline f16_t load_f16(const void* p) {
  f16_t v;
  std::memcpy(&v, p, sizeof v);
  return v;
}

inline uint32_t load_u32(const void* p) {
  uint32_t v;
  std::memcpy(&v, p, sizeof v);
  return v;
}

// Element i of an f32 / f16 array that may start at any byte.
inline float load_f32(const void* base, int64_t i) { return load_f32(static_cast<const uint8_t*>(base) + i * 4); }
inline f16_t load_f16(const void* base, int64_t i) { return load_f16(static_cast<const uint8_t*>(base) + i * 2); }

// One quantized block (BlockQ4_0 .. BlockQ8_0 of runtime/dtype.h) read field by field from its
// bytes. Only the fields the block type has may be asked for (m() of a BlockQ4_0 does not compile).
template <typename Block>
struct BlockBytes {
  const uint8_t* p;
  f16_t d() const { return load_f16(p + offsetof(Block, d)); }
  f16_t m() const { return load_f16(p + offsetof(Block, m)); }
  // q5 high bits: bit j belongs to value j (little-endian, as the file format).
  uint32_t qh() const { return load_u32(p + offsetof(Block, qh)); }
  const uint8_t* qh_bytes() const { return p + offsetof(Block, qh); }
  // Packed levels as bytes; q8_0's are signed (qs_i8). Byte pointers carry no alignment.
  const uint8_t* qs() const { return p + offsetof(Block, qs); }
  const int8_t* qs_i8() const { return reinterpret_cast<const int8_t*>(p + offsetof(Block, qs)); }
};

// Block b of a row of Blocks starting at `row` (any address).
template <typename Block>
inline BlockBytes<Block> block_at(const void* row, int64_t b) {
  return {static_cast<const uint8_t*>(row) + b * static_cast<int64_t>(sizeof(Block))};
}

}  // namespace
}  // namespace hark
