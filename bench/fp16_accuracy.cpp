// bench_fp16_accuracy (ARM64 only): what ARMv8.2's half-precision arithmetic would cost in
// accuracy if hark's f16-weight dots used it, measured before choosing it for anything (issue 34).
// Built with -march=armv8.2-a+fp16+fp16fml; runs on a core with FP16 and FHM (QEMU's max).
//
//   bench_fp16_accuracy
//
// For the dot shapes of the decoder (k = 384, 512, 768, 1024, 1280, 1536, 2048, 4096 inputs per
// weight row: tiny to large's widths and MLPs), on seeded f16 weights with a trained model's
// spread (N(0, 0.05)) and layer-normed activations (N(0, 1)), three ways to compute each dot:
//   f32      the NEON table's dot_f16_f32 (weights widened with fcvtl, f32 multiply-add): hark's
//   fhm      activations rounded to f16, f16 x f16 products added into f32 (fmlal/fmlal2)
//   fp16     activations rounded to f16, products and sums in f16 (fmla .8h, 4 x 8 lanes)
// Each against the exact dot (double) of the same f16 weights and f32 activations, as
// max |y - exact| / max |exact| over 512 rows: the measure of the logits bounds (relative 2e-4
// for f16 models against whisper.cpp).
#include <arm_neon.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <random>
#include <vector>

#include "runtime/dtype.h"
#include "simd/kernels.h"

using namespace hark;
using namespace hark::cpu;

namespace {

float dot_fhm(int64_t n, const f16_t* w, const float* x) {
  float32x4_t acc[2] = {vdupq_n_f32(0), vdupq_n_f32(0)};
  for (int64_t i = 0; i < n; i += 8) {
    const float16x8_t wv = vreinterpretq_f16_u16(vld1q_u16(reinterpret_cast<const uint16_t*>(w + i)));
    const float16x8_t xv = vcombine_f16(vcvt_f16_f32(vld1q_f32(x + i)), vcvt_f16_f32(vld1q_f32(x + i + 4)));
    acc[0] = vfmlalq_low_f16(acc[0], wv, xv);
    acc[1] = vfmlalq_high_f16(acc[1], wv, xv);
  }
  return vaddvq_f32(vaddq_f32(acc[0], acc[1]));
}

float dot_fp16(int64_t n, const f16_t* w, const float* x) {
  float16x8_t acc[4] = {vdupq_n_f16(0), vdupq_n_f16(0), vdupq_n_f16(0), vdupq_n_f16(0)};
  for (int64_t i = 0; i < n; i += 32)
    for (int j = 0; j < 4; ++j) {
      const int64_t o = i + 8 * j;
      const float16x8_t wv = vreinterpretq_f16_u16(vld1q_u16(reinterpret_cast<const uint16_t*>(w + o)));
      const float16x8_t xv = vcombine_f16(vcvt_f16_f32(vld1q_f32(x + o)), vcvt_f16_f32(vld1q_f32(x + o + 4)));
      acc[j] = vfmaq_f16(acc[j], wv, xv);
    }
  const float16x8_t s = vaddq_f16(vaddq_f16(acc[0], acc[1]), vaddq_f16(acc[2], acc[3]));
  return vaddvq_f32(vaddq_f32(vcvt_f32_f16(vget_low_f16(s)), vcvt_f32_f16(vget_high_f16(s))));
}

}  // namespace

int main() {
  if (!simd_level_supported(SimdLevel::Neon)) {
    std::fprintf(stderr, "bench_fp16_accuracy: no NEON table here\n");
    return 1;
  }
  const Kernels& neon = kernels_for(SimdLevel::Neon);
  constexpr int kRows = 512;
  std::printf("%6s %12s %12s %12s   (max |y - exact| / max |exact|, %d rows)\n", "k", "f32 (hark)", "fhm", "fp16",
              kRows);
  for (int64_t k : {384, 512, 768, 1024, 1280, 1536, 2048, 4096}) {
    std::mt19937 rng(static_cast<uint32_t>(k));
    std::normal_distribution<float> wd(0.0f, 0.05f), xd(0.0f, 1.0f);
    std::vector<float> x(static_cast<size_t>(k));
    for (float& v : x) v = xd(rng);
    std::vector<f16_t> w(static_cast<size_t>(k));
    double max_exact = 0, err[3] = {0, 0, 0};
    for (int r = 0; r < kRows; ++r) {
      for (f16_t& v : w) v = f32_to_f16(wd(rng));
      double exact = 0;
      for (int64_t i = 0; i < k; ++i) exact += static_cast<double>(f16_to_f32(w[i])) * x[i];
      const float y[3] = {neon.dot_f16_f32(k, w.data(), x.data()), dot_fhm(k, w.data(), x.data()),
                          dot_fp16(k, w.data(), x.data())};
      max_exact = std::max(max_exact, std::fabs(exact));
      for (int m = 0; m < 3; ++m) err[m] = std::max(err[m], std::fabs(y[m] - exact));
    }
    std::printf("%6lld %12.2e %12.2e %12.2e\n", static_cast<long long>(k), err[0] / max_exact, err[1] / max_exact,
                err[2] / max_exact);
  }
  return 0;
}
