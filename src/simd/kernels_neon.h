// What kernels_dotprod.cpp (and later ARM levels) take from the NEON table (kernels_neon.cpp):
// its table with their own quantized entries in place. AArch64 only. Like kernels_internal.h, no
// inline functions with external linkage: a copy compiled with +dotprod could be the one the
// linker keeps.
#pragma once
#if defined(__aarch64__)
#include "simd/kernels_internal.h"

namespace hark::cpu::detail::neon {

// A table's quantized entries: one dot per weight type (kernels.h's dot_q*), and dot_q_rows and
// dot_q_tiles over them (neon_levels.h's QuantDots makes them for a block-dot instruction).
struct QDots {
  using Dot = float (*)(int64_t n, const void* w, const BlockQ8A* x);
  Dot q4_0, q4_1, q5_0, q5_1, q8_0;
  decltype(Kernels::dot_q_rows) rows;
  decltype(Kernels::dot_q_tiles) tiles;
};

// The NEON table at `level`, with `dots` as its quantized entries.
Kernels table(SimdLevel level, const QDots& dots);

}  // namespace hark::cpu::detail::neon
#endif
