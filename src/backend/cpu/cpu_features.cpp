// Which kernel table this processor can run, and the HARK_SIMD override.
#include <cstdlib>
#include <cstring>

#include "backend/cpu/kernels.h"
#include "backend/cpu/kernels_internal.h"

namespace hark::cpu {

const char* simd_level_name(SimdLevel l) {
  switch (l) {
    case SimdLevel::Scalar: return "scalar";
    case SimdLevel::AVX2: return "avx2";
    case SimdLevel::AVX512: return "avx512";
  }
  return "unknown";
}

namespace {

// What the hardware (and the OS, which must save the wider registers) supports. libgcc's
// __builtin_cpu_supports checks the XSAVE state as well as the CPUID bits.
SimdLevel hardware_level() {
#if defined(__x86_64__) || defined(__i386__)
  __builtin_cpu_init();
  const bool avx2 = __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma") &&
                    __builtin_cpu_supports("f16c");
  // The AVX-512 file is compiled with F, BW, VL, DQ and VNNI; all must be present.
  const bool avx512 = avx2 && __builtin_cpu_supports("avx512f") &&
                      __builtin_cpu_supports("avx512bw") && __builtin_cpu_supports("avx512vl") &&
                      __builtin_cpu_supports("avx512dq") && __builtin_cpu_supports("avx512vnni");
  if (avx512 && detail::avx512_kernels()) return SimdLevel::AVX512;
  if (avx2 && detail::avx2_kernels()) return SimdLevel::AVX2;
#endif
  return SimdLevel::Scalar;
}

SimdLevel cached_hardware_level() {
  static const SimdLevel level = hardware_level();
  return level;
}

}  // namespace

bool simd_level_supported(SimdLevel level) {
  return static_cast<int>(level) <= static_cast<int>(cached_hardware_level());
}

SimdLevel best_simd_level() {
  SimdLevel level = cached_hardware_level();
  // HARK_SIMD only lowers the level: asking for more than the processor has would crash.
  if (const char* env = std::getenv("HARK_SIMD")) {
    SimdLevel want = level;
    if (std::strcmp(env, "scalar") == 0) want = SimdLevel::Scalar;
    else if (std::strcmp(env, "avx2") == 0) want = SimdLevel::AVX2;
    else if (std::strcmp(env, "avx512") == 0) want = SimdLevel::AVX512;
    if (static_cast<int>(want) < static_cast<int>(level)) level = want;
  }
  return level;
}

const Kernels& kernels_for(SimdLevel level) {
  if (simd_level_supported(level)) {
    if (level == SimdLevel::AVX512) return *detail::avx512_kernels();
    if (level == SimdLevel::AVX2) return *detail::avx2_kernels();
  }
  return detail::scalar_kernels();
}

}  // namespace hark::cpu
