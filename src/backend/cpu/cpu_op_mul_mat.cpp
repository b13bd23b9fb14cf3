// mul_mat on the CPU: out[n, m] = sum_k w[k, n] * x[k, m], batched, w broadcast over batches.
//
// Two paths, by the number of activation rows M:
//  * Row dots (M < kGemmMinRows: decoder steps). Every output is one dot product of a weight row
//    with an activation row, and the weights are read once, so this is bound by memory bandwidth.
//    With several activation rows (a batch of beams) each weight row is unpacked or widened once
//    for all of them: register tiles of weight rows x activation rows, dot_q_tiles for quantized
//    weights (every row count, one included), dot_f32_rows / dot_f16_rows for f32 and f16.
//    Quantized weights meet activations quantized to BlockQ8A (integer dots); f32/f16 weights
//    meet f32 activations. Threads split the weight rows.
//  * Tiled GEMM (M >= kGemmMinRows: the encoder). Each thread takes a range of weight rows and
//    runs a GEMM of all M activation rows against them. Quantized weights, where the kernel table
//    has gemm_q8 and the GEMM choice is hark's own: an int8 GEMM on the weights' levels and
//    activations quantized to BlockQ8A, as the row dots use (the same numbers up to summation
//    order). Otherwise f32: directly for f32 weights, through a per-thread f32 panel of its rows
//    for f16 and quantized weights, with hark's gemm_f32 or OpenBLAS sgemm (gemm_config.h).
// Both work in two phases: first the threads convert the activations (quantize them, or make
// strided rows contiguous) into the work buffer; then, after a barrier, they compute outputs.
// When the activations are only a few rows (decoder steps), every thread converts all of them
// into its own copy instead, and no thread waits for another.
// A fused bias (mul_mat_bias: src[2], then GELU when params[0], then a residual src[3]) is applied
// to each block of outputs right after the block is computed, with the add and gelu kernels the
// separate ops would use, so the values are theirs bit for bit.
// Nothing here throws: CpuBackend::compute has validated the node before the threads started.
#include <algorithm>
#include <atomic>
#include <cstdlib>
#include <cstring>

#include "backend/cpu/cpu_op_util.h"
#include "backend/cpu/cpu_ops.h"
#include "backend/cpu/gemm_config.h"

#ifdef HARK_HAVE_OPENBLAS
#include <cblas.h>
#endif

namespace hark::cpu {

// ---- GEMM selection -----------------------------------------------------------------------

namespace {

// Measured on the target (Zen 4, 2 threads, bench_kernels): see the report in bench/kernels.cpp.
constexpr GemmImpl kDefaultGemm = GemmImpl::Own;

GemmImpl initial_gemm_impl() {
  if (const char* env = std::getenv("HARK_GEMM")) {
    if (std::strcmp(env, "blas") == 0 && gemm_blas_available()) return GemmImpl::Blas;
    if (std::strcmp(env, "own") == 0) return GemmImpl::Own;
  }
  return gemm_blas_available() ? kDefaultGemm : GemmImpl::Own;
}

std::atomic<int>& gemm_choice() {
  static std::atomic<int> choice{static_cast<int>(initial_gemm_impl())};
  return choice;
}

}  // namespace

bool gemm_blas_available() {
#ifdef HARK_HAVE_OPENBLAS
  return true;
#else
  return false;
#endif
}

GemmImpl gemm_impl() { return static_cast<GemmImpl>(gemm_choice().load(std::memory_order_relaxed)); }

void set_gemm_impl(GemmImpl impl) {
  if (impl == GemmImpl::Blas && !gemm_blas_available()) impl = GemmImpl::Own;
  gemm_choice().store(static_cast<int>(impl), std::memory_order_relaxed);
}

const char* gemm_impl_name(GemmImpl impl) { return impl == GemmImpl::Blas ? "openblas" : "own"; }

// ---- planning -----------------------------------------------------------------------------

namespace {

// Weight rows a thread converts to f32 at a time on the GEMM path. As wide as gemm_f32's column
// block, so the activations are packed once per panel, not more often than for f32 weights.
constexpr int64_t kPanelRows = 1024;

// Row-dot path: activations up to this many values are converted by every thread for itself.
constexpr int64_t kPrivateValues = 1 << 16;

constexpr size_t align64(size_t n) { return (n + 63) & ~size_t{63}; }

// GEMM path: weight rows (over all batches) per thread, in whole 32-column tiles when there are
// enough rows to go round.
int64_t gemm_rows_per_thread(int64_t total, int nth) {
  int64_t per = (total + nth - 1) / nth;
  if (total >= 64 * nth) per = (per + 31) / 32 * 32;
  return per;
}

// True when t's data and row strides are float-aligned, so its rows are valid float arrays.
bool f32_aligned(const Tensor& t) {
  return reinterpret_cast<uintptr_t>(t.data) % alignof(float) == 0 && t.nb[1] % sizeof(float) == 0 &&
         t.nb[2] % sizeof(float) == 0 && t.nb[3] % sizeof(float) == 0;
}

// Shapes, the path, and where each part of the work buffer starts. work_size and the op build the
// same plan from the same node, so the buffer always matches what the op uses.
struct Plan {
  int64_t K, N, M;
  int64_t wb2, wb3;      // weight batch dims
  int64_t b2, b3;        // activation (and output) batch dims
  bool gemm;             // tiled GEMM path (else row dots)
  bool quant_x;          // activations quantized to BlockQ8A (quantized weights: row dots, int8 GEMM)
  bool int8_gemm;        // GEMM path on gemm_q8
  bool copy_x;           // activations copied to contiguous f32 rows
  bool private_x;        // each thread converts all rows for itself: no barrier (decoder steps)
  bool w_panel;          // GEMM path with non-f32 (or unaligned f32) weights: per-thread f32 panels
  size_t xrow_bytes;     // one converted activation row
  size_t off_x = 0;      // converted activations: rows in (m, b2, b3) order (one copy per
                         // thread when private_x)
  size_t x_bytes = 0;    // bytes of one copy of the converted activations
  size_t off_tmp = 0;    // per thread: one f32 row (gathering strided rows before quantizing)
  size_t off_panel = 0;  // per thread: min(kPanelRows, its rows) x K f32
  size_t panel_bytes = 0;
  size_t total = 0;
};

Plan make_plan(const Tensor& node, int nth, bool int8_gemm) {
  const Tensor& w = *node.src[0];
  const Tensor& x = *node.src[1];
  Plan p;
  p.K = w.ne[0];
  p.N = w.ne[1];
  p.M = x.ne[1];
  p.wb2 = w.ne[2];
  p.wb3 = w.ne[3];
  p.b2 = x.ne[2];
  p.b3 = x.ne[3];
  p.gemm = p.M >= kGemmMinRows;
  // Whole f32 arrays go to gemm_f32 and OpenBLAS sgemm as float pointers; those want float
  // alignment (OpenBLAS promises nothing for less), but weights in the file mapping may sit at
  // any byte. Such operands take the copying paths: activations are copied (copy_x), f32 weights
  // go through the per-thread panels like the other types (a memcpy per row).
  const bool x_dense = x.nb[0] == sizeof(float) && f32_aligned(x);
  p.int8_gemm = p.gemm && int8_gemm && dtype_quantized(w.type);
  p.quant_x = (!p.gemm || p.int8_gemm) && dtype_quantized(w.type);
  p.copy_x = !p.quant_x && !x_dense;
  p.w_panel = p.gemm && !p.int8_gemm && (w.type != DType::F32 || !f32_aligned(w));
  const int64_t rows = p.M * p.b2 * p.b3;
  p.xrow_bytes =
      p.quant_x ? static_cast<size_t>(p.K / kQuantBlock) * sizeof(BlockQ8A) : static_cast<size_t>(p.K) * sizeof(float);
  // Converting a few rows twice costs less than making every thread wait for the others: a
  // decoder step has a couple of dozen products, each would pay a barrier.
  p.private_x = !p.gemm && rows * p.K <= kPrivateValues;
  size_t at = 0;
  if (p.quant_x || p.copy_x) {
    p.off_x = at;
    p.x_bytes = align64(static_cast<size_t>(rows) * p.xrow_bytes);
    at += (p.private_x ? static_cast<size_t>(nth) : 1) * p.x_bytes;
  }
  if (p.quant_x && !x_dense) {
    p.off_tmp = at;
    at += static_cast<size_t>(nth) * align64(static_cast<size_t>(p.K) * sizeof(float));
  }
  if (p.w_panel) {
    const int64_t per = gemm_rows_per_thread(p.N * p.b2 * p.b3, nth);
    const int64_t panel_rows = per < kPanelRows ? per : kPanelRows;
    p.panel_bytes = align64(static_cast<size_t>(panel_rows * p.K) * sizeof(float));
    p.off_panel = at;
    at += static_cast<size_t>(nth) * p.panel_bytes;
  }
  p.total = at;
  return p;
}

// x's row m of batch (i2, i3), as bytes.
inline const uint8_t* x_row(const Tensor& x, int64_t m, int64_t i2, int64_t i3) {
  return static_cast<const uint8_t*>(x.data) + row_offset(x, m, i2, i3);
}

inline const uint8_t* w_row(const Tensor& w, const Plan& p, int64_t n, int64_t i2, int64_t i3) {
  return static_cast<const uint8_t*>(w.data) + row_offset(w, n, i2 / (p.b2 / p.wb2), i3 / (p.b3 / p.wb3));
}

inline float* out_row(Tensor& out, int64_t m, int64_t i2, int64_t i3) {
  return reinterpret_cast<float*>(static_cast<uint8_t*>(out.data) + row_offset(out, m, i2, i3));
}

// The converted activations this thread reads: its own copy, or the shared one.
inline uint8_t* converted_x(const ComputeContext& ctx, const Plan& p) {
  return static_cast<uint8_t*>(ctx.wdata) + p.off_x + (p.private_x ? static_cast<size_t>(ctx.ith) * p.x_bytes : 0);
}

// Phase 1: activation rows in (m, i2, i3) order into the work buffer: all rows into this
// thread's own copy (private_x), or this thread's share of the rows into the shared copy.
void prepare_x(const ComputeContext& ctx, const Plan& p, const Tensor& x) {
  uint8_t* base = static_cast<uint8_t*>(ctx.wdata);
  uint8_t* xdst = converted_x(ctx, p);
  int64_t r0 = 0, r1 = p.M * p.b2 * p.b3;
  if (!p.private_x) ctx.range(r1, &r0, &r1);
  float* tmp = reinterpret_cast<float*>(
      base + p.off_tmp + static_cast<size_t>(ctx.ith) * align64(static_cast<size_t>(p.K) * sizeof(float)));
  for (int64_t r = r0; r < r1; ++r) {
    const int64_t m = r % p.M, i2 = (r / p.M) % p.b2, i3 = r / (p.M * p.b2);
    const uint8_t* src = x_row(x, m, i2, i3);
    uint8_t* dst = xdst + static_cast<size_t>(r) * p.xrow_bytes;
    const float* dense = reinterpret_cast<const float*>(src);
    if (x.nb[0] != sizeof(float)) {
      float* gathered = p.quant_x ? tmp : reinterpret_cast<float*>(dst);
      for (int64_t k = 0; k < p.K; ++k) gathered[k] = load_f32(src + k * x.nb[0]);
      dense = gathered;
    } else if (!p.quant_x) {
      std::memcpy(dst, src, static_cast<size_t>(p.K) * sizeof(float));
    }
    if (p.quant_x) ctx.k->quantize_q8a(dense, reinterpret_cast<BlockQ8A*>(dst), p.K);
  }
}

// The fused bias (then GELU, then residual) on outputs [n0, n1) of the M activation rows of batch
// (i2, i3), whose row 0 is at c (rows ldc floats apart). Nothing without a bias.
void finish_outputs(const ComputeContext& ctx, const Tensor& node, float* c, int64_t ldc, int64_t M, int64_t n0,
                    int64_t n1, int64_t i2, int64_t i3) {
  const Tensor* b = node.src[2];
  if (!b || n1 <= n0) return;
  const float* bias = static_cast<const float*>(b->data) + n0;
  const bool gelu = node.params[0].i != 0;
  const Tensor* r = node.src[3];
  const uint8_t* rbase = r ? static_cast<const uint8_t*>(r->data) + i2 * r->nb[2] + i3 * r->nb[3] : nullptr;
  for (int64_t m = 0; m < M; ++m) {
    float* row = c + m * ldc + n0;
    ctx.k->add(n1 - n0, row, bias, row);
    if (gelu) ctx.k->gelu(n1 - n0, row, row);
    if (rbase) ctx.k->add(n1 - n0, reinterpret_cast<const float*>(rbase + m * r->nb[1]) + n0, row, row);
  }
}

// Phase 2 of the row-dot path: threads split the (batch, weight row) pairs; each weight row is
// read once and dotted with all M activation rows while it is in L1 (quantized weights: a range of
// rows at a time through dot_q_tiles, each block unpacked once for all activation rows).
void mul_mat_rows(const ComputeContext& ctx, const Plan& p, const Tensor& w, const Tensor& x, Tensor& out) {
  const uint8_t* xbase = converted_x(ctx, p);
  const bool converted = p.quant_x || p.copy_x;
  const int64_t ldo = static_cast<int64_t>(out.nb[1] / sizeof(float));
  // Rows claimed in pieces (about 8 a thread, whole 4-row tiles) rather than halves: a decoder
  // step has ~25 products, and an even split left the first thread to finish waiting at each.
  const int64_t total = p.N * p.b2 * p.b3;
  const int64_t chunk = std::max<int64_t>(64, (total / (8 * ctx.nth) + 3) / 4 * 4);
  WorkClaims claims(ctx, total, chunk);
  for (int64_t f0, f1; claims.next(&f0, &f1);) {
    for (int64_t f = f0; f < f1;) {
      const int64_t batch = f / p.N, i2 = batch % p.b2, i3 = batch / p.b2;
      const int64_t n_end = (batch + 1) * p.N < f1 ? (batch + 1) * p.N : f1;
      const uint8_t* xb = xbase + static_cast<size_t>(p.M * batch) * p.xrow_bytes;
      float* ob = out_row(out, 0, i2, i3);
      if (p.quant_x) {
        const int64_t n = f - batch * p.N;
        ctx.k->dot_q_tiles(w.type, p.K, w_row(w, p, n, i2, i3), w.nb[1], n_end - f,
                           reinterpret_cast<const BlockQ8A*>(xb), p.K / kQuantBlock, p.M, ob + n, ldo);
        finish_outputs(ctx, out, ob, ldo, p.M, n, n + (n_end - f), i2, i3);
        f = n_end;
        continue;
      }
      // f32/f16 weights: register tiles of four weight rows x the activation rows, each weight chunk
      // loaded once for all rows (dot_f32_rows / dot_f16_rows). One activation row goes the same
      // way: four rows' sums reduced together cost less than one reduction per row (tiny f16
      // decoder step 1.55 -> 1.31 ms, base 4.7 -> 3.9 ms, against a dot per weight row).
      const int64_t n = f - batch * p.N;
      const float* xr =
          converted ? reinterpret_cast<const float*>(xb) : reinterpret_cast<const float*>(x_row(x, 0, i2, i3));
      const int64_t xs = converted ? static_cast<int64_t>(p.xrow_bytes / sizeof(float))
                                   : static_cast<int64_t>(x.nb[1] / sizeof(float));
      auto rows = w.type == DType::F16 ? ctx.k->dot_f16_rows : ctx.k->dot_f32_rows;
      rows(p.K, w_row(w, p, n, i2, i3), w.nb[1], n_end - f, xr, xs, p.M, ob + n, ldo);
      finish_outputs(ctx, out, ob, ldo, p.M, n, n + (n_end - f), i2, i3);
      f = n_end;
    }
  }
}

// C (M x n, ldc) = A (M x K, lda) * B^T (n x K, ldb), with the selected implementation.
void gemm(const ComputeContext& ctx, GemmImpl impl, int64_t M, int64_t n, int64_t K, const float* a, int64_t lda,
          const float* b, int64_t ldb, float* c, int64_t ldc) {
#ifdef HARK_HAVE_OPENBLAS
  if (impl == GemmImpl::Blas) {
    cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasTrans, static_cast<blasint>(M), static_cast<blasint>(n),
                static_cast<blasint>(K), 1.0f, a, static_cast<blasint>(lda), b, static_cast<blasint>(ldb), 0.0f, c,
                static_cast<blasint>(ldc));
    return;
  }
#else
  (void)impl;
#endif
  ctx.k->gemm_f32(M, n, K, a, lda, b, ldb, c, ldc);
}

// Phase 2 of the GEMM path: threads split the (batch, weight row) pairs into ranges of whole
// register tiles where there are enough rows; each range runs against all M activation rows.
void mul_mat_gemm(const ComputeContext& ctx, const Plan& p, GemmImpl impl, const Tensor& w, const Tensor& x,
                  Tensor& out) {
  const int64_t total = p.N * p.b2 * p.b3;
  const int64_t per = gemm_rows_per_thread(total, ctx.nth);
  const int64_t f0 = per * ctx.ith < total ? per * ctx.ith : total;
  const int64_t f1 = f0 + per < total ? f0 + per : total;
  float* panel = reinterpret_cast<float*>(static_cast<uint8_t*>(ctx.wdata) + p.off_panel +
                                          static_cast<size_t>(ctx.ith) * p.panel_bytes);
  const int64_t ldc = static_cast<int64_t>(out.nb[1] / sizeof(float));
  for (int64_t f = f0; f < f1;) {
    const int64_t batch = f / p.N, i2 = batch % p.b2, i3 = batch / p.b2;
    const int64_t n0 = f - batch * p.N;
    const int64_t n1 = (batch + 1) * p.N < f1 ? p.N : f1 - batch * p.N;
    const float* a;
    int64_t lda;
    if (p.copy_x) {
      a = reinterpret_cast<const float*>(static_cast<const uint8_t*>(ctx.wdata) + p.off_x) + p.M * batch * p.K;
      lda = p.K;
    } else {
      a = reinterpret_cast<const float*>(x_row(x, 0, i2, i3));
      lda = static_cast<int64_t>(x.nb[1] / sizeof(float));
    }
    float* c = out_row(out, 0, i2, i3);
    if (p.int8_gemm) {
      const int64_t nb = p.K / kQuantBlock;
      const auto* xq =
          reinterpret_cast<const BlockQ8A*>(static_cast<const uint8_t*>(ctx.wdata) + p.off_x) + p.M * batch * nb;
      ctx.k->gemm_q8(w.type, p.M, n1 - n0, p.K, xq, nb, w_row(w, p, n0, i2, i3), w.nb[1], c + n0, ldc);
      finish_outputs(ctx, out, c, ldc, p.M, n0, n1, i2, i3);
    } else if (!p.w_panel) {
      const float* b = reinterpret_cast<const float*>(w_row(w, p, n0, i2, i3));
      gemm(ctx, impl, p.M, n1 - n0, p.K, a, lda, b, static_cast<int64_t>(w.nb[1] / sizeof(float)), c + n0, ldc);
      finish_outputs(ctx, out, c, ldc, p.M, n0, n1, i2, i3);
    } else {
      for (int64_t j0 = n0; j0 < n1; j0 += kPanelRows) {
        const int64_t rows = n1 - j0 < kPanelRows ? n1 - j0 : kPanelRows;
        for (int64_t r = 0; r < rows; ++r)
          ctx.k->dequantize_row(w.type, w_row(w, p, j0 + r, i2, i3), panel + r * p.K, p.K);
        gemm(ctx, impl, p.M, rows, p.K, a, lda, panel, p.K, c + j0, ldc);
        finish_outputs(ctx, out, c, ldc, p.M, j0, j0 + rows, i2, i3);
      }
    }
    f += n1 - n0;
  }
}

}  // namespace

// The kernel level is not known here (a backend may switch it between planning and computing),
// so the buffer fits both GEMM variants.
size_t mul_mat_work_size(const Tensor& node, int nth) {
  nth = nth < 1 ? 1 : nth;
  const size_t f32 = make_plan(node, nth, false).total, int8 = make_plan(node, nth, true).total;
  return f32 > int8 ? f32 : int8;
}

void op_mul_mat(const ComputeContext& ctx, Tensor& node) {
  const Tensor& w = *node.src[0];
  const Tensor& x = *node.src[1];
  // Every thread reads the same GEMM choice and table, so all build the same plan.
  const GemmImpl impl = x.ne[1] >= kGemmMinRows ? gemm_impl() : GemmImpl::Own;
  const Plan p = make_plan(node, ctx.nth, impl == GemmImpl::Own && ctx.k->gemm_q8 != nullptr);

  if (p.quant_x || p.copy_x) prepare_x(ctx, p, x);
#ifdef HARK_HAVE_OPENBLAS
  // Each of our threads runs its own single-threaded sgemm: OpenBLAS's own threads would compete
  // with ours for the same cores.
  if (impl == GemmImpl::Blas && ctx.ith == 0 && openblas_get_num_threads() != 1) openblas_set_num_threads(1);
#endif
  // Every thread decides from the plan alone, so all of them meet at this barrier or none do.
  if (((p.quant_x || p.copy_x) && !p.private_x) || p.gemm) ctx.barrier();

  if (p.gemm) {
    mul_mat_gemm(ctx, p, impl, w, x, node);
  } else {
    mul_mat_rows(ctx, p, w, x, node);
  }
}

}  // namespace hark::cpu
