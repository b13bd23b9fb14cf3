// Which kernel table this processor can run, and the HARK_SIMD override.
#include <cstdint>
#include <cstdlib>
#include <cstring>

#if defined(__x86_64__) || defined(__i386__)
#include <cpuid.h>
#endif

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

#if defined(__x86_64__) || defined(__i386__)
// CPUID and XGETBV read directly: __builtin_cpu_supports would do, but its feature names differ
// between compilers (clang 14 rejects "avx512vnni"), and the fuzz build uses clang.
struct CpuidRegs {
  unsigned a = 0, b = 0, c = 0, d = 0;
};

CpuidRegs cpuid(unsigned leaf, unsigned subleaf) {
  CpuidRegs r;
  if (!__get_cpuid_count(leaf, subleaf, &r.a, &r.b, &r.c, &r.d)) return CpuidRegs{};
  return r;
}

// XCR0: which register states the OS saves on a context switch. (Inline asm, so this file needs
// no -mxsave; only called after CPUID says OSXSAVE is on, otherwise xgetbv faults.)
uint64_t xcr0() {
  unsigned lo = 0, hi = 0;
  __asm__ volatile("xgetbv" : "=a"(lo), "=d"(hi) : "c"(0));
  return (uint64_t{hi} << 32) | lo;
}

bool bit(unsigned reg, int i) { return (reg >> i) & 1u; }
#endif

// What the hardware supports and the OS enables: the CPUID feature bits, and in XCR0 the AVX
// (XMM, YMM) and AVX-512 (opmask, ZMM) register state, without which the instructions fault.
SimdLevel hardware_level() {
#if defined(__x86_64__) || defined(__i386__)
  const CpuidRegs l1 = cpuid(1, 0);
  const bool osxsave = bit(l1.c, 27);
  const uint64_t xcr = osxsave ? xcr0() : 0;
  const bool os_avx = (xcr & 0x6) == 0x6;        // XMM | YMM
  const bool os_avx512 = (xcr & 0xE6) == 0xE6;   // XMM | YMM | opmask | ZMM_Hi256 | Hi16_ZMM
  const CpuidRegs l7 = cpuid(7, 0);
  const bool avx2 = os_avx && bit(l1.c, 28) /* AVX */ && bit(l1.c, 12) /* FMA */ &&
                    bit(l1.c, 29) /* F16C */ && bit(l7.b, 5) /* AVX2 */;
  // The AVX-512 file is compiled with F, BW, VL, DQ and VNNI; all must be present.
  const bool avx512 = avx2 && os_avx512 && bit(l7.b, 16) /* F */ && bit(l7.b, 17) /* DQ */ &&
                      bit(l7.b, 30) /* BW */ && bit(l7.b, 31) /* VL */ && bit(l7.c, 11) /* VNNI */;
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
