// version() and system_info(): what a bug report or a benchmark line needs to say about the build
// and the machine.
#include <string>

#include "backend/cpu/kernels.h"
#include "backend/registry.h"
#include "hark/hark.hpp"

#if __has_include("hark/version.h")
#include "hark/version.h"
#endif
#ifndef HARK_VERSION_STRING
#define HARK_VERSION_STRING "0.1.0"
#endif

namespace hark {

const char* version() { return HARK_VERSION_STRING; }

std::string system_info() {
  using cpu::SimdLevel;
  const SimdLevel best = cpu::best_simd_level();
  auto flag = [](const char* name, bool on) { return std::string(name) + " = " + (on ? "1" : "0"); };
  std::string s = flag("AVX512", best >= SimdLevel::AVX512) + " | " + flag("AVX2", best >= SimdLevel::AVX2) + " | " +
                  flag("FMA", best >= SimdLevel::AVX2) + " | " + flag("F16C", best >= SimdLevel::AVX2);
#ifdef HARK_HAVE_OPENBLAS
  s += " | " + flag("BLAS", true);
#else
  s += " | " + flag("BLAS", false);
#endif
  std::string devs;
  for (Device* d : Registry::global().devices()) devs += std::string(devs.empty() ? "" : ",") + d->name();
  s += " | DEVICES = " + devs;
  return s;
}

}  // namespace hark
