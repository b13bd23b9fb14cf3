// What kernels_dotprod.cpp (and later ARM levels) take from the NEON table (kernels_neon.cpp):
// its table with their own quantized dots in place. AArch64 only. Like kernels_internal.h, no
// inline functions with external linkage: a copy compiled with +dotprod could be the one the
// linker keeps.
#pragma once
#if defined(__aarch64__)
#include "simd/kernels_internal.h"

namespace hark::cpu::detail::neon {

using QDot = float (*)(int64_t n, const void* w, const BlockQ8A* x);
// One quantized dot per weight type (kernels.h's dot_q*).
struct QDots {
  QDot q4_0, q4_1, q5_0, q5_1, q8_0;
};
QDot q_dot_for(DType type, const QDots& dots);

// The NEON table at `level`, its quantized dots (and dot_q_rows / dot_q_tiles, which the caller
// sets over the same dots) taken from `dots`.
Kernels table(SimdLevel level, const QDots& dots);

}  // namespace hark::cpu::detail::neon
#endif
