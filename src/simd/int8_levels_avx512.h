// The weight types as the x86 int8 kernels see them (block layout, zero point, min, fifth bit,
// signed levels) and a block's signed levels: shared by the AVX-512 VNNI kernels
// (int8_avx512.cpp) and the AMX GEMM (int8_amx.cpp), both compiled with the AVX-512 flags.
//
// Everything here has internal linkage (an anonymous namespace): each ISA translation unit keeps
// its own copy, so the linker can never hand one file's build of these to code compiled for
// another instruction set (see kernels_internal.h).
#pragma once
#if defined(__x86_64__) || defined(__i386__)
#include <immintrin.h>

#include <cstdint>

#include "runtime/quant.h"
#include "runtime/unaligned.h"

namespace hark::cpu::detail {
namespace {

// A weight type as the kernels see it: block layout, zero point, min, fifth bit, signed levels.
template <typename B, int Z, bool M, bool F, bool S>
struct QType {
  using Block = B;
  static constexpr int kZero = Z;
  static constexpr bool kHasMin = M;
  static constexpr bool kFiveBit = F;
  static constexpr bool kSigned = S;
};
using Q4_0 = QType<BlockQ4_0, 8, false, false, false>;
using Q4_1 = QType<BlockQ4_1, 0, true, false, false>;
using Q5_0 = QType<BlockQ5_0, 16, false, true, false>;
using Q5_1 = QType<BlockQ5_1, 0, true, true, false>;
using Q8_0 = QType<BlockQ8_0, 0, false, false, true>;

inline float half(f16_t h) { return _cvtsh_ss(h); }

// The signed levels of one block (32 bytes, in value order).
template <typename T>
inline __m256i block_levels(const uint8_t* p) {
  const BlockBytes<typename T::Block> w{p};
  if constexpr (T::kSigned) {
    return _mm256_loadu_si256(reinterpret_cast<const __m256i*>(w.qs()));
  } else {
    const __m128i v = _mm_loadu_si128(reinterpret_cast<const __m128i*>(w.qs()));
    __m256i q = _mm256_inserti128_si256(_mm256_castsi128_si256(v), _mm_srli_epi16(v, 4), 1);
    q = _mm256_and_si256(q, _mm256_set1_epi8(0x0F));
    if constexpr (T::kFiveBit) q = _mm256_mask_add_epi8(q, static_cast<__mmask32>(w.qh()), q, _mm256_set1_epi8(0x10));
    if constexpr (T::kZero != 0) q = _mm256_sub_epi8(q, _mm256_set1_epi8(T::kZero));
    return q;
  }
}

}  // namespace
}  // namespace hark::cpu::detail
#endif
