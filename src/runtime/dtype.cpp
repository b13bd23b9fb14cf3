#include "runtime/dtype.h"

#include <cstring>

#include "runtime/error.h"

namespace hark {

namespace {
constexpr DTypeTraits kF32{"f32", 1, 4, false};
constexpr DTypeTraits kF16{"f16", 1, 2, false};
constexpr DTypeTraits kQ4_0{"q4_0", kQuantBlock, sizeof(BlockQ4_0), true};
constexpr DTypeTraits kQ4_1{"q4_1", kQuantBlock, sizeof(BlockQ4_1), true};
constexpr DTypeTraits kQ5_0{"q5_0", kQuantBlock, sizeof(BlockQ5_0), true};
constexpr DTypeTraits kQ5_1{"q5_1", kQuantBlock, sizeof(BlockQ5_1), true};
constexpr DTypeTraits kQ8_0{"q8_0", kQuantBlock, sizeof(BlockQ8_0), true};
constexpr DTypeTraits kI32{"i32", 1, 4, false};
}  // namespace

const DTypeTraits& dtype_traits(DType t) {
  switch (t) {
    case DType::F32: return kF32;
    case DType::F16: return kF16;
    case DType::Q4_0: return kQ4_0;
    case DType::Q4_1: return kQ4_1;
    case DType::Q5_0: return kQ5_0;
    case DType::Q5_1: return kQ5_1;
    case DType::Q8_0: return kQ8_0;
    case DType::I32: return kI32;
  }
  throw Error("unknown element type id " + std::to_string(static_cast<int>(t)));
}

bool dtype_valid(int32_t raw) {
  switch (static_cast<DType>(raw)) {
    case DType::F32:
    case DType::F16:
    case DType::Q4_0:
    case DType::Q4_1:
    case DType::Q5_0:
    case DType::Q5_1:
    case DType::Q8_0:
    case DType::I32: return true;
  }
  return false;
}

size_t dtype_row_bytes(DType t, int64_t n) {
  const DTypeTraits& tr = dtype_traits(t);
  HARK_CHECK(n >= 0 && n % tr.block_size == 0, "row of " + std::to_string(n) + " values is not a multiple of the " +
                                                   tr.name + " block size " + std::to_string(tr.block_size));
  return static_cast<size_t>(n / tr.block_size) * tr.block_bytes;
}

bool dtype_from_name(std::string_view name, DType* out) {
  for (DType t :
       {DType::F32, DType::F16, DType::Q4_0, DType::Q4_1, DType::Q5_0, DType::Q5_1, DType::Q8_0, DType::I32}) {
    if (name == dtype_traits(t).name) {
      *out = t;
      return true;
    }
  }
  return false;
}

float f16_to_f32(f16_t h) {
  const uint32_t sign = static_cast<uint32_t>(h & 0x8000u) << 16;
  const uint32_t exp = (h >> 10) & 0x1fu;
  uint32_t mant = h & 0x3ffu;
  uint32_t bits;
  if (exp == 0) {
    if (mant == 0) {
      bits = sign;
    } else {  // subnormal half: renormalise into a normal float
      int e = -1;
      do {
        ++e;
        mant <<= 1;
      } while ((mant & 0x400u) == 0);
      bits = sign | (static_cast<uint32_t>(127 - 15 - e) << 23) | ((mant & 0x3ffu) << 13);
    }
  } else if (exp == 0x1f) {
    bits = sign | 0x7f800000u | (mant << 13);  // inf / nan
  } else {
    bits = sign | ((exp + 127 - 15) << 23) | (mant << 13);
  }
  float f;
  std::memcpy(&f, &bits, 4);
  return f;
}

f16_t f32_to_f16(float f) {
  uint32_t x;
  std::memcpy(&x, &f, 4);
  const uint32_t sign = (x >> 16) & 0x8000u;
  const uint32_t absx = x & 0x7fffffffu;
  if (absx >= 0x7f800000u) {  // inf or nan (keep nan quiet and non-zero)
    return static_cast<f16_t>(sign | 0x7c00u | (absx > 0x7f800000u ? 0x200u : 0u));
  }
  if (absx >= 0x477ff000u) return static_cast<f16_t>(sign | 0x7c00u);  // rounds to >= 65520: inf
  if (absx < 0x38800000u) {                                   // below the smallest normal half: subnormal or zero
    if (absx < 0x33000000u) return static_cast<f16_t>(sign);  // < half of smallest subnormal
    const uint32_t e = absx >> 23;
    const uint32_t mant = (absx & 0x7fffffu) | 0x800000u;
    const uint32_t shift = 126 - e;  // 14 + (113 - e) ... places the value in units of 2^-24
    uint32_t q = mant >> shift;
    const uint32_t rem = mant & ((1u << shift) - 1);
    const uint32_t half = 1u << (shift - 1);
    if (rem > half || (rem == half && (q & 1u))) ++q;
    return static_cast<f16_t>(sign | q);
  }
  // normal: rebias exponent, round mantissa to 10 bits, nearest even; carry may bump exponent
  uint32_t h = ((absx >> 13) - ((127 - 15) << 10));
  const uint32_t rem = absx & 0x1fffu;
  if (rem > 0x1000u || (rem == 0x1000u && (h & 1u))) ++h;
  return static_cast<f16_t>(sign | h);
}

}  // namespace hark
