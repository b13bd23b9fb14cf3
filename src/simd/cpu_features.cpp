// Which kernel table this processor can run, and the HARK_SIMD override.
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <iterator>

#if defined(__x86_64__) || defined(__i386__)
#include <cpuid.h>
#include <sys/syscall.h>
#include <unistd.h>
#endif
#if defined(__aarch64__) && defined(__linux__)
#include <sys/auxv.h>  // getauxval: glibc and Android's bionic both have it
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
    case SimdLevel::Neon: return "neon";
    case SimdLevel::Dotprod: return "dotprod";
    case SimdLevel::I8mm: return "i8mm";
  }
  return "unknown";
}

namespace {

bool is_arm(SimdLevel l) { return l >= SimdLevel::Neon; }

// Each family's levels, best first.
[[maybe_unused]] constexpr SimdLevel kX86Order[] = {SimdLevel::AVX512, SimdLevel::AVX2VNNI, SimdLevel::AVX2};
[[maybe_unused]] constexpr SimdLevel kArmOrder[] = {SimdLevel::I8mm, SimdLevel::Dotprod, SimdLevel::Neon};

}  // namespace

bool simd_level_includes(SimdLevel best, SimdLevel l) {
  return l == SimdLevel::Scalar || (best != SimdLevel::Scalar && is_arm(best) == is_arm(l) && l <= best);
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
  bool neon = false, dotprod = false, i8mm = false;  // AT_HWCAP's ASIMD and ASIMDDP, AT_HWCAP2's I8MM
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
#if defined(__aarch64__) && defined(__linux__)
  // The kernel's view of the core (what it enabled, as on x86 XCR0): bit numbers of the Linux
  // arm64 ABI (asm/hwcap.h), spelled out for older headers.
  constexpr unsigned long kHwcapAsimd = 1ul << 1, kHwcapAsimddp = 1ul << 20, kHwcap2I8mm = 1ul << 13;
  const unsigned long hwcap = getauxval(AT_HWCAP), hwcap2 = getauxval(AT_HWCAP2);
  h.neon = (hwcap & kHwcapAsimd) && detail::neon_kernels();
  h.dotprod = h.neon && (hwcap & kHwcapAsimddp) && detail::dotprod_kernels();
  h.i8mm = h.dotprod && (hwcap2 & kHwcap2I8mm) && detail::i8mm_kernels();
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
    case SimdLevel::Neon: return hardware().neon;
    case SimdLevel::Dotprod: return hardware().dotprod;
    case SimdLevel::I8mm: return hardware().i8mm;
  }
  return false;
}

SimdLevel best_simd_level() {
  // HARK_SIMD only lowers the level: asking for more than the processor has would crash. The
  // best supported level at or below the one asked for (avx2vnni on a processor without
  // AVX-VNNI gives avx2), in this architecture's family.
  const SimdLevel* order = kX86Order;
  size_t count = std::size(kX86Order);
#if defined(__aarch64__)
  order = kArmOrder;
  count = std::size(kArmOrder);
#endif
  size_t from = 0;
  if (const char* env = std::getenv("HARK_SIMD")) {
    if (std::strcmp(env, "scalar") == 0) return SimdLevel::Scalar;
    for (size_t i = 0; i < count; ++i)
      if (std::strcmp(env, simd_level_name(order[i])) == 0) from = i;
  }
  for (size_t i = from; i < count; ++i)
    if (simd_level_supported(order[i])) return order[i];
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
#if defined(__x86_64__) || defined(__i386__)
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
#endif
    if (level == SimdLevel::I8mm) return *detail::i8mm_kernels();
    if (level == SimdLevel::Dotprod) return *detail::dotprod_kernels();
    if (level == SimdLevel::Neon) return *detail::neon_kernels();
  }
  return detail::scalar_kernels();
}

}  // namespace hark::cpu
