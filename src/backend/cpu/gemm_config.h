// Which f32 GEMM the CPU mul_mat uses for large products (the encoder's), and where the switch
// from row dots to tiled GEMM happens. Two implementations stay selectable so they can be
// measured side by side: hark's own gemm_f32 kernels, and OpenBLAS sgemm when the build has it.
#pragma once
#include <cstdint>

namespace hark::cpu {

enum class GemmImpl { Own, Blas };

// True when built with OpenBLAS (HARK_HAVE_OPENBLAS).
bool gemm_blas_available();
// The current choice: set_gemm_impl's, else the environment variable HARK_GEMM ("own" or
// "blas") read once, else the default that measured faster on the target machine.
GemmImpl gemm_impl();
// Chooses for all later mul_mat calls in this process; Blas without OpenBLAS means Own.
void set_gemm_impl(GemmImpl impl);
const char* gemm_impl_name(GemmImpl impl);

// mul_mat takes the tiled GEMM path from this many activation rows (M) up; fewer rows use one dot
// product per output (the decoder's matrix-vector products).
inline constexpr int64_t kGemmMinRows = 32;

}  // namespace hark::cpu
