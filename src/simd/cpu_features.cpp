// Which kernel table this processor can run, and the HARK_SIMD override.
#include <cstdint>
#include <cstdlib>
#include <cstring>

#if defined(__x86_64__) || defined(__i386__)
#include <cpuid.h>
#include <sys/syscall.h>
#include <unistd.h>
#endif

#include "simd/kernels.h"
#include "simd/kernels_internal.h"

namespace hark::cpu {

const char* simd_level_name(SimdLevel l) {
  switch (l) {
    case SimdLevel::Scalar: return "scalar";
    case SimdLevel::AVX2: return "avx2";
    case SimdLevel::AVX2VNNI: return "avx2vnni";
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

// What the hardware supports and the OS enables, level by level: the CPUID feature bits, and in
// XCR0 the AVX (XMM, YMM) and AVX-512 (opmask, ZMM) register state, without which the
// instructions fault. A level counts only when its table is compiled in.
struct Hardware {
  bool avx2 = false, avx2vnni = false, avx512 = false;
  bool amx_int8 = false;  // AMX-TILE and AMX-INT8, the OS saving the tile state, and this process allowed to use it
};

#if defined(__x86_64__) && defined(__linux__)
// Linux enables the AMX tile data (8 KB of state) per process, on request; the first tile
// instruction of a process that did not ask faults. Asked once, when the hardware is probed.
bool request_amx_tile_data() {
  constexpr long kArchReqXcompPerm = 0x1023;  // ARCH_REQ_XCOMP_PERM
  constexpr long kXfeatureXtiledata = 18;     // XFEATURE_XTILEDATA
  return syscall(SYS_arch_prctl, kArchReqXcompPerm, kXfeatureXtiledata) == 0;
}
#endif

Hardware detect() {
  Hardware h;
#if defined(__x86_64__) || defined(__i386__)
  const CpuidRegs l1 = cpuid(1, 0);
  const bool osxsave = bit(l1.c, 27);
  const uint64_t xcr = osxsave ? xcr0() : 0;
  const bool os_avx = (xcr & 0x6) == 0x6;       // XMM | YMM
  const bool os_avx512 = (xcr & 0xE6) == 0xE6;  // XMM | YMM | opmask | ZMM_Hi256 | Hi16_ZMM
  const CpuidRegs l7 = cpuid(7, 0);
  const CpuidRegs l7s1 = l7.a >= 1 ? cpuid(7, 1) : CpuidRegs{};
  const bool avx2 = os_avx && bit(l1.c, 28) /* AVX */ && bit(l1.c, 12) /* FMA */ && bit(l1.c, 29) /* F16C */ &&
                    bit(l7.b, 5) /* AVX2 */;
  // The AVX-512 files are compiled with F, BW, VL, DQ and VNNI; all must be present.
  const bool avx512 = avx2 && os_avx512 && bit(l7.b, 16) /* F */ && bit(l7.b, 17) /* DQ */ && bit(l7.b, 30) /* BW */ &&
                      bit(l7.b, 31) /* VL */ && bit(l7.c, 11) /* VNNI */;
  h.avx2 = avx2 && detail::avx2_kernels();
  h.avx2vnni = avx2 && bit(l7s1.a, 4) /* AVX-VNNI */ && detail::avx2vnni_kernels();
  h.avx512 = avx512 && detail::avx512_kernels();
#if defined(__x86_64__) && defined(__linux__)
  const bool os_amx = (xcr & 0x60000) == 0x60000;  // XTILECFG | XTILEDATA
  h.amx_int8 =
      h.avx512 && os_amx && bit(l7.d, 24) /* AMX-TILE */ && bit(l7.d, 25) /* AMX-INT8 */ && request_amx_tile_data();
#endif
#endif
  return h;
}

const Hardware& hardware() {
  static const Hardware h = detect();
  return h;
}

}  // namespace

bool simd_level_supported(SimdLevel level) {
  switch (level) {
    case SimdLevel::Scalar: return true;
    case SimdLevel::AVX2: return hardware().avx2;
    case SimdLevel::AVX2VNNI: return hardware().avx2vnni;
    case SimdLevel::AVX512: return hardware().avx512;
  }
  return false;
}

SimdLevel best_simd_level() {
  // HARK_SIMD only lowers the level: asking for more than the processor has would crash. The
  // best supported level at or below the one asked for (avx2vnni on a processor without
  // AVX-VNNI gives avx2).
  int cap = static_cast<int>(SimdLevel::AVX512);
  if (const char* env = std::getenv("HARK_SIMD")) {
    for (SimdLevel l : kSimdLevels)
      if (std::strcmp(env, simd_level_name(l)) == 0) cap = static_cast<int>(l);
  }
  for (int l = cap; l > 0; --l)
    if (simd_level_supported(static_cast<SimdLevel>(l))) return static_cast<SimdLevel>(l);
  return SimdLevel::Scalar;
}

bool amx_int8_enabled() {
  static const bool on = [] {
    const char* env = std::getenv("HARK_AMX");
    return hardware().amx_int8 && !(env && std::strcmp(env, "0") == 0);
  }();
  return on;
}

const Kernels& kernels_for(SimdLevel level) {
  if (simd_level_supported(level)) {
    if (level == SimdLevel::AVX512) {
      if (amx_int8_enabled()) {
        // The AVX-512 table with the encoder's int8 GEMM on AMX tiles.
        static const Kernels with_amx = [] {
          Kernels k = *detail::avx512_kernels();
          k.gemm_q8 = detail::amx_gemm_q8;
          return k;
        }();
        return with_amx;
      }
      return *detail::avx512_kernels();
    }
    if (level == SimdLevel::AVX2VNNI) return *detail::avx2vnni_kernels();
    if (level == SimdLevel::AVX2) return *detail::avx2_kernels();
  }
  return detail::scalar_kernels();
}

}  // namespace hark::cpu
