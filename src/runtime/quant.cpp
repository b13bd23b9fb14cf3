// Scalar reference quantization. Faster paths (SIMD kernels, tools) must match these results bit
// for bit, so the exact arithmetic is part of the contract:
//
//  * A block's scale d (and min m, for the _1 types) is chosen, rounded to f16, and the values are
//    then quantized against the *rounded* scale, the one dequantization will multiply by. That
//    keeps each value within half a step of its reconstruction, and quantize(dequantize(b))
//    gives back b's bytes for blocks that use their extreme levels and whose values are exact in
//    f32 (the layout tests hold it to that).
//  * A level is round_half_even(x * id) with id = 1/d computed once per block (0 when d is 0),
//    clamped to the type's range. Multiplying by the reciprocal and rounding half to even are what
//    vector units do natively (cvtps2dq in the default rounding mode), so SIMD code can agree.
//  * Symmetric types (q4_0, q5_0) map the signed value of largest magnitude exactly onto the lowest
//    level (-8 or -16); values of the other sign reach at most +7 or +15 steps, so the few that are
//    larger than that are clamped (error up to one step). q8_0 and q8a use d = amax/127 and the
//    symmetric range [-127, 127]: no -128, so integer dot kernels can flip signs without overflow.
//  * _1 types use m = min and d = (max - m)/levels, with m rounded to f16 before d is derived.
//  * All-zero blocks get d = +0 (and m = +0): no division by zero, canonical bytes.
//  * NaN inputs read as 0 in every quantized type (f32/f16 keep them). An infinite input makes
//    the block's scale infinite and the block dequantizes to NaN; it does not crash or invoke UB.
#include "runtime/quant.h"

#include <bit>
#include <cmath>
#include <cstring>
#include <string>

#include "runtime/error.h"

namespace hark {

// Blocks are memcpy'd to and from their structs, whose f16 fields are host-endian; the file
// format is little-endian. (qh is a byte array and is assembled explicitly, so it is portable.)
static_assert(std::endian::native == std::endian::little, "hark's block I/O assumes little-endian");

namespace {

constexpr int kHalfBlock = kQuantBlock / 2;

// Round to nearest, ties to even, independent of the floating-point environment.
float round_half_even(float v) {
  float r = std::round(v);  // ties away from zero
  if (std::fabs(r - v) == 0.5f) r = 2.0f * std::round(v * 0.5f);
  return r;
}

// The integer level nearest to v within [lo, hi]. v is NaN only for inf * 0 (an infinite scale);
// it is read as 0 so the float-to-int conversion is always defined.
int to_level(float v, int lo, int hi) {
  if (std::isnan(v)) v = 0.0f;
  v = std::fmin(std::fmax(v, static_cast<float>(lo)), static_cast<float>(hi));
  return static_cast<int>(round_half_even(v));
}

// A chosen scale as stored (f16 bits) and as used (its f32 value and reciprocal).
struct Scale {
  f16_t bits;
  float d;
  float id;
};

// f16 bits of v, with -0 (from an all-zero block, or a tiny value that underflows) stored as +0
// so that zero scales and mins always have all-zero bytes.
f16_t to_f16_canonical(float v) {
  const f16_t h = f32_to_f16(v);
  return (h & 0x7fffu) == 0 ? f16_t{0} : h;
}

Scale make_scale(float d) {
  Scale s;
  s.bits = to_f16_canonical(d);
  s.d = f16_to_f32(s.bits);
  s.id = s.d != 0.0f ? 1.0f / s.d : 0.0f;
  return s;
}

// The signed value of largest magnitude (the first one on ties); 0 for an all-zero block.
float signed_absmax(const float* x) {
  float best = 0.0f, amax = 0.0f;
  for (int j = 0; j < kQuantBlock; ++j) {
    if (std::fabs(x[j]) > amax) {
      amax = std::fabs(x[j]);
      best = x[j];
    }
  }
  return best;
}

float absmax(const float* x) {
  float amax = 0.0f;
  for (int j = 0; j < kQuantBlock; ++j) amax = std::fmax(amax, std::fabs(x[j]));
  return amax;
}

// Min and scale for the _1 types. m is rounded first so d spans from the stored min to the max.
void min_scale(const float* x, int levels, f16_t* m_bits, float* m, Scale* s) {
  float lo = x[0], hi = x[0];
  for (int j = 1; j < kQuantBlock; ++j) {
    lo = std::fmin(lo, x[j]);
    hi = std::fmax(hi, x[j]);
  }
  *m_bits = to_f16_canonical(lo);
  *m = f16_to_f32(*m_bits);
  // Rounding m up past the max (a near-constant block) would make d negative; use d = 0 then.
  // !(d > 0) also catches inf - inf.
  float d = (hi - *m) / static_cast<float>(levels);
  if (!(d > 0.0f)) d = 0.0f;
  *s = make_scale(d);
}

uint32_t load_qh(const uint8_t qh[4]) {
  return static_cast<uint32_t>(qh[0]) | static_cast<uint32_t>(qh[1]) << 8 | static_cast<uint32_t>(qh[2]) << 16 |
         static_cast<uint32_t>(qh[3]) << 24;
}

void store_qh(uint32_t bits, uint8_t qh[4]) {
  for (int i = 0; i < 4; ++i) qh[i] = static_cast<uint8_t>(bits >> (8 * i));
}

// ---- one block each way, per type -----------------------------------------------------------

void quantize_block(const float* x, BlockQ4_0* b) {
  const Scale s = make_scale(signed_absmax(x) / -8.0f);
  b->d = s.bits;
  for (int j = 0; j < kHalfBlock; ++j) {
    const int lo = to_level(x[j] * s.id, -8, 7) + 8;
    const int hi = to_level(x[j + kHalfBlock] * s.id, -8, 7) + 8;
    b->qs[j] = static_cast<uint8_t>(lo | hi << 4);
  }
}

void dequantize_block(const BlockQ4_0& b, float* y) {
  const float d = f16_to_f32(b.d);
  for (int j = 0; j < kHalfBlock; ++j) {
    y[j] = static_cast<float>((b.qs[j] & 0x0f) - 8) * d;
    y[j + kHalfBlock] = static_cast<float>((b.qs[j] >> 4) - 8) * d;
  }
}

void quantize_block(const float* x, BlockQ4_1* b) {
  float m;
  Scale s;
  min_scale(x, 15, &b->m, &m, &s);
  b->d = s.bits;
  for (int j = 0; j < kHalfBlock; ++j) {
    const int lo = to_level((x[j] - m) * s.id, 0, 15);
    const int hi = to_level((x[j + kHalfBlock] - m) * s.id, 0, 15);
    b->qs[j] = static_cast<uint8_t>(lo | hi << 4);
  }
}

void dequantize_block(const BlockQ4_1& b, float* y) {
  const float d = f16_to_f32(b.d), m = f16_to_f32(b.m);
  for (int j = 0; j < kHalfBlock; ++j) {
    y[j] = static_cast<float>(b.qs[j] & 0x0f) * d + m;
    y[j + kHalfBlock] = static_cast<float>(b.qs[j] >> 4) * d + m;
  }
}

// Splits 5-bit levels q[0..31] into the nibble array and the high-bit word of the q5 layouts.
void pack5(const int* q, uint8_t qs[kHalfBlock], uint8_t qh[4]) {
  uint32_t high = 0;
  for (int j = 0; j < kQuantBlock; ++j) high |= static_cast<uint32_t>(q[j] >> 4) << j;
  for (int j = 0; j < kHalfBlock; ++j) qs[j] = static_cast<uint8_t>((q[j] & 0x0f) | (q[j + kHalfBlock] & 0x0f) << 4);
  store_qh(high, qh);
}

void unpack5(const uint8_t qs[kHalfBlock], const uint8_t qh[4], int* q) {
  const uint32_t high = load_qh(qh);
  for (int j = 0; j < kHalfBlock; ++j) {
    q[j] = (qs[j] & 0x0f) | static_cast<int>((high >> j) & 1u) << 4;
    q[j + kHalfBlock] = (qs[j] >> 4) | static_cast<int>((high >> (j + kHalfBlock)) & 1u) << 4;
  }
}

void quantize_block(const float* x, BlockQ5_0* b) {
  const Scale s = make_scale(signed_absmax(x) / -16.0f);
  b->d = s.bits;
  int q[kQuantBlock];
  for (int j = 0; j < kQuantBlock; ++j) q[j] = to_level(x[j] * s.id, -16, 15) + 16;
  pack5(q, b->qs, b->qh);
}

void dequantize_block(const BlockQ5_0& b, float* y) {
  const float d = f16_to_f32(b.d);
  int q[kQuantBlock];
  unpack5(b.qs, b.qh, q);
  for (int j = 0; j < kQuantBlock; ++j) y[j] = static_cast<float>(q[j] - 16) * d;
}

void quantize_block(const float* x, BlockQ5_1* b) {
  float m;
  Scale s;
  min_scale(x, 31, &b->m, &m, &s);
  b->d = s.bits;
  int q[kQuantBlock];
  for (int j = 0; j < kQuantBlock; ++j) q[j] = to_level((x[j] - m) * s.id, 0, 31);
  pack5(q, b->qs, b->qh);
}

void dequantize_block(const BlockQ5_1& b, float* y) {
  const float d = f16_to_f32(b.d), m = f16_to_f32(b.m);
  int q[kQuantBlock];
  unpack5(b.qs, b.qh, q);
  for (int j = 0; j < kQuantBlock; ++j) y[j] = static_cast<float>(q[j]) * d + m;
}

void quantize_block(const float* x, BlockQ8_0* b) {
  const Scale s = make_scale(absmax(x) / 127.0f);
  b->d = s.bits;
  for (int j = 0; j < kQuantBlock; ++j) b->qs[j] = static_cast<int8_t>(to_level(x[j] * s.id, -127, 127));
}

void dequantize_block(const BlockQ8_0& b, float* y) {
  const float d = f16_to_f32(b.d);
  for (int j = 0; j < kQuantBlock; ++j) y[j] = static_cast<float>(b.qs[j]) * d;
}

// ---- rows -------------------------------------------------------------------------------------

// Blocks go through memcpy because model-file tensor data need not be aligned for the structs.
template <class Block>
void quantize_blocks(const float* src, void* dst, int64_t n) {
  auto* out = static_cast<uint8_t*>(dst);
  float x[kQuantBlock];
  for (int64_t i = 0; i < n / kQuantBlock; ++i) {
    for (int j = 0; j < kQuantBlock; ++j) {
      const float v = src[i * kQuantBlock + j];
      x[j] = std::isnan(v) ? 0.0f : v;
    }
    Block b{};
    quantize_block(x, &b);
    std::memcpy(out + i * sizeof(Block), &b, sizeof(Block));
  }
}

template <class Block>
void dequantize_blocks(const void* src, float* dst, int64_t n) {
  const auto* in = static_cast<const uint8_t*>(src);
  for (int64_t i = 0; i < n / kQuantBlock; ++i) {
    Block b;
    std::memcpy(&b, in + i * sizeof(Block), sizeof(Block));
    dequantize_block(b, dst + i * kQuantBlock);
  }
}

void check_row(const char* fn, DType type, int64_t n) {
  const DTypeTraits& tr = dtype_traits(type);  // throws for an unknown type id
  HARK_CHECK(type != DType::I32, std::string(fn) + ": i32 holds indices, not numbers to (de)quantize");
  HARK_CHECK(n >= 0 && n % tr.block_size == 0, std::string(fn) + ": row of " + std::to_string(n) +
                                                   " values is not a multiple of the " + tr.name + " block size " +
                                                   std::to_string(tr.block_size));
}

}  // namespace

void quantize_row(DType type, const float* src, void* dst, int64_t n) {
  check_row("quantize_row", type, n);
  if (n == 0) return;  // src/dst may be null; memcpy must not see them
  switch (type) {
    case DType::F32: std::memcpy(dst, src, static_cast<size_t>(n) * sizeof(float)); return;
    case DType::F16: {
      auto* out = static_cast<uint8_t*>(dst);
      for (int64_t i = 0; i < n; ++i) {
        const f16_t h = f32_to_f16(src[i]);
        std::memcpy(out + i * sizeof(f16_t), &h, sizeof h);
      }
      return;
    }
    case DType::Q4_0: return quantize_blocks<BlockQ4_0>(src, dst, n);
    case DType::Q4_1: return quantize_blocks<BlockQ4_1>(src, dst, n);
    case DType::Q5_0: return quantize_blocks<BlockQ5_0>(src, dst, n);
    case DType::Q5_1: return quantize_blocks<BlockQ5_1>(src, dst, n);
    case DType::Q8_0: return quantize_blocks<BlockQ8_0>(src, dst, n);
    case DType::I32: break;  // rejected by check_row
  }
}

void dequantize_row(DType type, const void* src, float* dst, int64_t n) {
  check_row("dequantize_row", type, n);
  if (n == 0) return;
  switch (type) {
    case DType::F32: std::memcpy(dst, src, static_cast<size_t>(n) * sizeof(float)); return;
    case DType::F16: {
      const auto* in = static_cast<const uint8_t*>(src);
      for (int64_t i = 0; i < n; ++i) {
        f16_t h;
        std::memcpy(&h, in + i * sizeof(f16_t), sizeof h);
        dst[i] = f16_to_f32(h);
      }
      return;
    }
    case DType::Q4_0: return dequantize_blocks<BlockQ4_0>(src, dst, n);
    case DType::Q4_1: return dequantize_blocks<BlockQ4_1>(src, dst, n);
    case DType::Q5_0: return dequantize_blocks<BlockQ5_0>(src, dst, n);
    case DType::Q5_1: return dequantize_blocks<BlockQ5_1>(src, dst, n);
    case DType::Q8_0: return dequantize_blocks<BlockQ8_0>(src, dst, n);
    case DType::I32: break;
  }
}

size_t quantize_rows(DType type, const float* src, void* dst, int64_t nrows, int64_t ncols) {
  // Validate before the loop so a bad call fails the same way whether or not nrows is 0.
  check_row("quantize_rows", type, ncols);
  HARK_CHECK(nrows >= 0, "quantize_rows: negative row count " + std::to_string(nrows));
  const size_t row_bytes = dtype_row_bytes(type, ncols);
  auto* out = static_cast<uint8_t*>(dst);
  for (int64_t r = 0; r < nrows; ++r)
    quantize_row(type, src + r * ncols, out + static_cast<size_t>(r) * row_bytes, ncols);
  return static_cast<size_t>(nrows) * row_bytes;
}

void quantize_row_q8a(const float* src, BlockQ8A* dst, int64_t n) {
  HARK_CHECK(n >= 0 && n % kQuantBlock == 0, "quantize_row_q8a: row of " + std::to_string(n) +
                                                 " values is not a multiple of the block size " +
                                                 std::to_string(kQuantBlock));
  for (int64_t i = 0; i < n / kQuantBlock; ++i) {
    // Same reading of NaN as the file types; the scale stays f32 (no f16 rounding) because these
    // blocks live only for one matmul and precision there is free.
    float x[kQuantBlock];
    for (int j = 0; j < kQuantBlock; ++j) {
      const float v = src[i * kQuantBlock + j];
      x[j] = std::isnan(v) ? 0.0f : v;
    }
    const float d = absmax(x) / 127.0f;
    const float id = d != 0.0f ? 1.0f / d : 0.0f;
    BlockQ8A& b = dst[i];
    int sum = 0;
    for (int j = 0; j < kQuantBlock; ++j) {
      const int q = to_level(x[j] * id, -127, 127);
      b.qs[j] = static_cast<int8_t>(q);
      sum += q;
    }
    b.d = d;
    b.s = d * static_cast<float>(sum);
  }
}

}  // namespace hark
