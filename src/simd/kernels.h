// Kernels: the innermost loops of the CPU backend, one table per instruction set.
//
// Ops (cpu_ops*.cpp) do the shapes, strides and threading; they call these for contiguous runs of
// values. kernels_scalar.cpp, kernels_avx2.cpp and kernels_avx512.cpp each fill a table; the CPU
// backend picks one at start-up from the processor's features (see cpu_features.cpp), and tests can
// force any level the machine supports. kernels_neon.cpp and kernels_dotprod.cpp are the ARM ones.
//
// Alignment: input arrays (the const pointers: f32, f16 and quantized rows) may start at any byte
// address, because weights are used in place from the model file's mapping, which aligns nothing.
// Kernels read them with unaligned vector loads or runtime/unaligned.h, never through a typed
// dereference. BlockQ8A activations and outputs are the backend's own memory and are aligned.
#pragma once
#include <cstddef>
#include <cstdint>

#include "runtime/dtype.h"
#include "runtime/quant.h"

namespace hark::cpu {

// Two families, each in order of preference after Scalar: x86 (AVX2, AVX2VNNI, AVX512) and ARM
// (Neon, Dotprod, I8mm). AVX2VNNI is AVX2 plus AVX-VNNI (vpdpbusd on 256 bits, VEX): a
// processor with AVX-512 VNNI need not have it (Zen 4 does not), so support is checked per
// level, never by order (simd_level_supported). Dotprod is NEON with ARMv8.2's sdot, I8mm adds
// ARMv8.6's smmla. A build has the tables of its own architecture only.
enum class SimdLevel { Scalar = 0, AVX2 = 1, AVX2VNNI = 2, AVX512 = 3, Neon = 4, Dotprod = 5, I8mm = 6 };
inline constexpr SimdLevel kSimdLevels[] = {SimdLevel::Scalar, SimdLevel::AVX2, SimdLevel::AVX2VNNI,
                                            SimdLevel::AVX512, SimdLevel::Neon, SimdLevel::Dotprod,
                                            SimdLevel::I8mm};
// The same, best first within each family (a processor supports levels of one family only).
inline constexpr SimdLevel kSimdLevelsBestFirst[] = {SimdLevel::I8mm,   SimdLevel::Dotprod,  SimdLevel::Neon,
                                                     SimdLevel::AVX512, SimdLevel::AVX2VNNI, SimdLevel::AVX2,
                                                     SimdLevel::Scalar};
const char* simd_level_name(SimdLevel l);
// Whether a processor running `best` also has what `l` needs: l is Scalar, or of best's family
// and not above it (the x86 flags of system_info: AVX2 under AVX512).
bool simd_level_includes(SimdLevel best, SimdLevel l);

// No level's GEMM register tile is wider than this on either side, so scratch sized with it
// fits every level's packed panels.
inline constexpr int64_t kMaxGemmPanel = 32;

struct Kernels {
  SimdLevel level;

  // ---- dot products: one weight row (n values, n % 32 == 0 for quantized) with activations ----
  float (*dot_f32)(int64_t n, const float* w, const float* x);
  float (*dot_f16_f32)(int64_t n, const f16_t* w, const float* x);
  // Quantized weight row with activations pre-quantized to BlockQ8A (n/32 blocks).
  float (*dot_q4_0)(int64_t n, const void* w, const BlockQ8A* x);
  float (*dot_q4_1)(int64_t n, const void* w, const BlockQ8A* x);
  float (*dot_q5_0)(int64_t n, const void* w, const BlockQ8A* x);
  float (*dot_q5_1)(int64_t n, const void* w, const BlockQ8A* x);
  float (*dot_q8_0)(int64_t n, const void* w, const BlockQ8A* x);
  // One quantized weight row (q4_0 .. q8_0) with nx activation rows: y[i * y_stride] = dot of w
  // with the row starting at x + i * x_stride (in blocks). The weight blocks are unpacked once for
  // all rows, which is what several activation rows (beam search) gain over nx single dots.
  void (*dot_q_rows)(DType type, int64_t n, const void* w, const BlockQ8A* x, int64_t x_stride, int64_t nx, float* y,
                     int64_t y_stride);
  // nw quantized weight rows (row r at byte w + r * w_stride) with nx activation rows (row m at
  // x + m * x_stride, in blocks): y[m * ldy + r] = dot of weight row r with activation row m, the
  // same number dot_q* gives up to f32 summation order, and bit for bit the same for any nw (a
  // weight row's results do not depend on how the rows are split, e.g. over threads). The bits
  // may depend on nx: a table may change layouts with the number of activation rows. The
  // row-dot path of mul_mat calls this for every quantized product, one activation row or several.
  void (*dot_q_tiles)(DType type, int64_t n, const void* w, size_t w_stride, int64_t nw, const BlockQ8A* x,
                      int64_t x_stride, int64_t nx, float* y, int64_t ldy);
  void (*quantize_q8a)(const float* x, BlockQ8A* y, int64_t n);
  // Integer GEMM of quantized weights with q8 activations, for the encoder's large products:
  // C[i * ldc + j] = dot of weight row j (at byte b + j * ldb, k values of `type`) with activation
  // row i (at a + i * lda blocks), as dot_q_tiles computes it. Single-threaded, like gemm_f32.
  // nullptr in tables without one: mul_mat then multiplies dequantized weights in f32.
  void (*gemm_q8)(DType type, int64_t m, int64_t n, int64_t k, const BlockQ8A* a, int64_t lda, const void* b,
                  size_t ldb, float* c, int64_t ldc);
  // nw f32 / f16 weight rows (row r at byte w + r * w_stride) with nx f32 activation rows (row m
  // at x + m * x_stride): y[m * ldy + r] = dot of weight row r with activation row m. Each chunk of
  // the weights is loaded (and widened from f16) once for all activation rows, into register
  // tiles of a few weight rows x up to 8 activation rows: a decoder step of a few rows (beam
  // search, best-of) streams every weight once instead of once per row.
  void (*dot_f32_rows)(int64_t n, const void* w, size_t w_stride, int64_t nw, const float* x, int64_t x_stride,
                       int64_t nx, float* y, int64_t ldy);
  void (*dot_f16_rows)(int64_t n, const void* w, size_t w_stride, int64_t nw, const float* x, int64_t x_stride,
                       int64_t nx, float* y, int64_t ldy);

  // ---- conversions ----
  void (*f16_to_f32_row)(const f16_t* x, float* y, int64_t n);
  void (*f32_to_f16_row)(const float* x, f16_t* y, int64_t n);
  // Dequantize a row of any weight type to f32 (used to feed tiled GEMM and get_rows).
  void (*dequantize_row)(DType type, const void* x, float* y, int64_t n);
  // f32 -> a quantized row, byte for byte runtime/quant's quantize_row (n % 32 == 0). The SIMD
  // tables vectorize q8_0 (the copies that fill a quantized cross-attention cache); other types
  // go to the reference.
  void (*quantize_row)(DType type, const float* x, void* y, int64_t n);

  // ---- vector math ----
  // Element-wise kernels (add, mul, scale, axpy, axpy_f16, exp_sub_sum, gelu, sigmoid, tanh) may run in place:
  // the output pointer may equal an input pointer (ops reuse a row as their own scratch, e.g.
  // layer_norm and soft_max). Element i is read before element i is written, and no other
  // overlap than exact equality is allowed.
  void (*add)(int64_t n, const float* a, const float* b, float* y);         // y = a + b
  void (*mul)(int64_t n, const float* a, const float* b, float* y);         // y = a * b
  void (*scale)(int64_t n, const float* x, float s, float bias, float* y);  // y = x*s + bias
  // y += a * x
  void (*axpy)(int64_t n, float a, const float* x, float* y);
  void (*axpy_f16)(int64_t n, float a, const f16_t* x, float* y);
  // Weighted sums of f16 rows into several outputs (attention values of a batch of queries that
  // share V): for g < na and t < nk in order, y_g += a[g * a_stride + t] * x_t, where x_t is n
  // values at x + t * x_stride bytes and y_g is at y + g * y_stride. Each y_g gets exactly what
  // axpy_f16 for t = 0, 1, ... would give it; each x_t is widened once for all outputs.
  void (*axpy_f16_rows)(int64_t n, int64_t nk, const float* a, int64_t a_stride, int64_t na, const f16_t* x,
                        size_t x_stride, float* y, int64_t y_stride);
  // The same over q8_0 rows (a quantized cross-attention cache; n % 32 == 0): x_t's values are
  // q * d, and each output adds, per block of x_t, the coefficient a * d (rounded once) times the
  // block's levels. Each block is widened once for all outputs.
  void (*axpy_q8_0_rows)(int64_t n, int64_t nk, const float* a, int64_t a_stride, int64_t na, const void* x,
                         size_t x_stride, float* y, int64_t y_stride);
  float (*max)(int64_t n, const float* x);
  // y = exp(x - m), returns sum(y). y may be nullptr: only the sum (a log-sum-exp).
  float (*exp_sub_sum)(int64_t n, const float* x, float m, float* y);
  void (*gelu)(int64_t n, const float* x, float* y);  // erf form, |error| < 1e-6 relative-ish
  // The LSTM's gate functions (the Silero VAD), within a few ulp: 1 / (1 + exp(-x)), and tanh.
  void (*sigmoid)(int64_t n, const float* x, float* y);
  void (*tanh)(int64_t n, const float* x, float* y);
  // mean and variance of x (two-pass, f32 accumulators in double where it matters)
  void (*mean_var)(int64_t n, const float* x, float* mean, float* var);

  // ---- f32 GEMM, cache-blocked around a register-tile micro-kernel (gemm_blocked.h) ----
  // Single-threaded (callers split the work); packs panels into per-thread scratch that is
  // allocated on a thread's first call and kept.
  // C (ldc) = sum_k A(i,k) * B(j,k) for i < m, j < n: both operands "row = one output", so a
  // weight matrix [K, N] in file layout and activations [K, M] are used as they are.
  void (*gemm_f32)(int64_t m, int64_t n, int64_t k, const float* a, int64_t lda, const float* b, int64_t ldb, float* c,
                   int64_t ldc);
  // The same with B depth-major: C = sum_k A(i,k) * B(k,j), B(k,j) at b[k * ldb + j]. Attention's
  // weighted values (probabilities times V, whose rows are keys) without transposing V.
  void (*gemm_f32_nn)(int64_t m, int64_t n, int64_t k, const float* a, int64_t lda, const float* b, int64_t ldb,
                      float* c, int64_t ldc);

  // The same micro-kernel on operands packed ahead, for callers that reuse a packed operand across
  // many products (attention packs a head's keys and values once, not once per query block).
  // A is packed in panels of gemm_mr rows, B in panels of gemm_nr (rows past the end zeros); a
  // panel of depth k holds, for each step of p, its gemm_mr (gemm_nr) values side by side.
  int32_t gemm_mr, gemm_nr;  // each at most kMaxGemmPanel
  // rows x depth of a row-major src (stride ld) into A panels / B panels; dst holds
  // round_up(rows, gemm_mr or gemm_nr) * depth floats.
  void (*pack_a)(int64_t rows, int64_t depth, const float* src, int64_t ld, float* dst);
  void (*pack_b)(int64_t rows, int64_t depth, const float* src, int64_t ld, float* dst);
  // cols x depth of a depth-major src (value (j, p) at src[p * ld + j]) into B panels.
  void (*pack_b_depth_major)(int64_t cols, int64_t depth, const float* src, int64_t ld, float* dst);
  // C (ldc) = A B^T, or C += A B^T with accumulate, for i < m, j < n, over depth k: A's panels at
  // ap (panel i at ap + i * gemm_mr * k), B's at bp (panel j at bp + j * gemm_nr * ldbp; ldbp >= k
  // reads the first k steps of panels packed ldbp deep); bp 64-byte aligned, as the micro-kernels
  // load B with aligned vector loads. The same sums in the same order as
  // gemm_f32 on the unpacked operands when k fits one of its depth slices.
  void (*gemm_packed)(int64_t m, int64_t n, int64_t k, const float* ap, const float* bp, int64_t ldbp, float* c,
                      int64_t ldc, bool accumulate);

  // Index of the first largest of n > 0 values in one pass (a decoder's 51,865 logits per
  // token); a NaN counts as larger than any number, so the first NaN wins (as numpy's argmax),
  // and a caller checking the winner for finiteness sees every broken row.
  int64_t (*argmax)(int64_t n, const float* x);
};

// The table for a level (Scalar always exists; others only when compiled in and supported).
const Kernels& kernels_for(SimdLevel level);
// The best level this processor runs, lowered by the environment variable HARK_SIMD
// ("scalar", "avx2", "avx2vnni", "avx512"; "neon", "dotprod", "i8mm") when set: the best
// supported level at or below it. A level of the other family (or no name) lowers nothing.
SimdLevel best_simd_level();
bool simd_level_supported(SimdLevel level);
// True when the AVX-512 table's gemm_q8 runs on AMX-INT8 tiles: the processor has them, Linux
// granted this process the tile state, and HARK_AMX is not "0" (which keeps the VNNI GEMM).
bool amx_int8_enabled();

}  // namespace hark::cpu
