// STUB: the scalar table, cpu feature detection
#include "backend/cpu/kernels.h"
#include "runtime/error.h"
namespace hark::cpu {
const char* simd_level_name(SimdLevel l) { return l == SimdLevel::AVX512 ? "avx512" : l == SimdLevel::AVX2 ? "avx2" : "scalar"; }
static Kernels kScalar{};
const Kernels& kernels_for(SimdLevel) { return kScalar; }
SimdLevel best_simd_level() { return SimdLevel::Scalar; }
bool simd_level_supported(SimdLevel l) { return l == SimdLevel::Scalar; }
}  // namespace hark::cpu
