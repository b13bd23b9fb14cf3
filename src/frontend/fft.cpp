// Mixed-radix decimation-in-time FFT. Each pass splits a length-L transform into p interleaved
// sub-transforms of length L/p (recursively), then combines them with twiddles and a p-point
// DFT per output column. Recursion depth is the number of factors (4 for n = 400).
#include "frontend/fft.h"

#include <cmath>

#include "runtime/error.h"

namespace hark::frontend {

using cd = std::complex<double>;

namespace {
// Plain complex product. std::complex's operator* must handle inf/NaN per C99 Annex G and, at
// -O2 without -ffast-math, calls a library routine for it; our inputs are finite, and that call
// made the whole transform several times slower.
inline cd mul(cd a, cd b) {
  return cd(a.real() * b.real() - a.imag() * b.imag(), a.real() * b.imag() + a.imag() * b.real());
}
}  // namespace

Fft::Fft(size_t n) : n_(n) {
  HARK_CHECK(n > 0, "Fft: length must be at least 1");
  // Radix 4 first (cheapest butterflies per point), then 2, then odd factors in rising order.
  size_t rest = n;
  while (rest % 4 == 0) factors_.push_back(4), rest /= 4;
  while (rest % 2 == 0) factors_.push_back(2), rest /= 2;
  for (size_t p = 3; rest > 1; p += 2) {
    while (rest % p == 0) factors_.push_back(p), rest /= p;
    if (p * p > rest && rest > 1) factors_.push_back(rest), rest = 1;  // a large prime left
  }
  if (factors_.empty()) factors_.push_back(1);  // n == 1: the identity
  if (n % 5 == 0) root5_ = n / 5;
  tw_.resize(n);
  for (size_t e = 0; e < n; ++e) {
    // Angles from integers so every twiddle is as exact as double allows (no accumulated drift).
    const double a = -2.0 * M_PI * double(e) / double(n);
    tw_[e] = cd(std::cos(a), std::sin(a));
  }
  if (n % 2 == 0 && n >= 2) {
    half_ = std::make_unique<Fft>(n / 2);
    real_tw_.resize(n / 2 + 1);
    for (size_t k = 0; k <= n / 2; ++k) real_tw_[k] = tw_[k % n];
  }
}

void Fft::forward(const cd* in, cd* out) const { pass(out, in, 1, 0); }

void Fft::pass(cd* out, const cd* in, size_t stride, size_t stage) const {
  const size_t p = factors_[stage];
  const size_t len = n_ / stride;  // length of the transform this pass produces
  const size_t m = len / p;        // length of each sub-transform
  if (m == 1) {
    for (size_t j = 0; j < p; ++j) out[j] = in[j * stride];
  } else {
    for (size_t j = 0; j < p; ++j) pass(out + j * m, in + j * stride, stride * p, stage + 1);
  }
  if (p == 1) return;

  // Column k: t_j = Y_j[k] * W_len^(j*k); X[q*m + k] = sum_j t_j * W_p^(j*q).
  // W_len^e is tw_[e * stride] because len * stride == n.
  if (p == 2) {
    for (size_t k = 0; k < m; ++k) {
      const cd t0 = out[k];
      const cd t1 = mul(out[k + m], tw_[k * stride]);
      out[k] = t0 + t1;
      out[k + m] = t0 - t1;
    }
    return;
  }
  if (p == 4) {
    for (size_t k = 0; k < m; ++k) {
      const cd t0 = out[k];
      const cd t1 = mul(out[k + m], tw_[k * stride]);
      const cd t2 = mul(out[k + 2 * m], tw_[2 * k * stride]);
      const cd t3 = mul(out[k + 3 * m], tw_[3 * k * stride]);
      const cd a = t0 + t2, b = t0 - t2, c = t1 + t3;
      const cd d(t1.imag() - t3.imag(), t3.real() - t1.real());  // -i * (t1 - t3)
      out[k] = a + c;
      out[k + m] = b + d;
      out[k + 2 * m] = a - c;
      out[k + 3 * m] = b - d;
    }
    return;
  }
  if (p == 5) {
    // The 5-point DFT with its symmetries folded: W^4 = conj(W), W^3 = conj(W^2), so pairs
    // t1/t4 and t2/t3 share cosines (sums) and sines (differences). 4 real products per pair
    // instead of 16 complex ones.
    const double c1 = tw_[root5_].real(), s1 = -tw_[root5_].imag();          // cos, sin 2pi/5
    const double c2 = tw_[2 * root5_].real(), s2 = -tw_[2 * root5_].imag();  // cos, sin 4pi/5
    for (size_t k = 0; k < m; ++k) {
      const cd t0 = out[k];
      const cd t1 = mul(out[k + m], tw_[k * stride]);
      const cd t2 = mul(out[k + 2 * m], tw_[2 * k * stride]);
      const cd t3 = mul(out[k + 3 * m], tw_[3 * k * stride]);
      const cd t4 = mul(out[k + 4 * m], tw_[4 * k * stride]);
      const cd a1 = t1 + t4, b1 = t1 - t4, a2 = t2 + t3, b2 = t2 - t3;
      const cd r1 = t0 + c1 * a1 + c2 * a2, r2 = t0 + c2 * a1 + c1 * a2;
      const cd u1 = s1 * b1 + s2 * b2, u2 = s2 * b1 - s1 * b2;
      const cd iu1(-u1.imag(), u1.real()), iu2(-u2.imag(), u2.real());  // i * u
      out[k] = t0 + a1 + a2;
      out[k + m] = r1 - iu1;
      out[k + 4 * m] = r1 + iu1;
      out[k + 2 * m] = r2 - iu2;
      out[k + 3 * m] = r2 + iu2;
    }
    return;
  }
  // Any other radix: a direct p-point DFT per column, O(p^2). Small scratch on the stack for the
  // radices that occur in practice (3, 5, 7); the heap only for a large prime length.
  cd small[16];
  std::vector<cd> big;
  cd* t = small;
  if (p > 16) big.resize(p), t = big.data();
  const size_t root = n_ / p;  // W_p^x == tw_[(x mod p) * root]
  for (size_t k = 0; k < m; ++k) {
    for (size_t j = 0; j < p; ++j) t[j] = mul(out[k + j * m], tw_[j * k * stride]);
    for (size_t q = 0; q < p; ++q) {
      cd sum = t[0];
      size_t e = 0;                     // j*q mod p, stepped rather than divided: a division per term was the
      for (size_t j = 1; j < p; ++j) {  // single largest cost of the whole transform
        e += q;
        if (e >= p) e -= p;
        sum += mul(t[j], tw_[e * root]);
      }
      out[k + q * m] = sum;
    }
  }
}

void Fft::forward_real(const double* in, cd* out, std::vector<cd>* scratch) const {
  const size_t half = n_ / 2;
  if (!half_) {
    // Odd length: no packing trick, a plain complex transform.
    scratch->resize(2 * n_);
    cd* z = scratch->data();
    for (size_t i = 0; i < n_; ++i) z[i] = cd(in[i], 0.0);
    forward(z, z + n_);
    for (size_t k = 0; k <= half; ++k) out[k] = z[n_ + k];
    return;
  }
  // Pack even samples as real parts and odd samples as imaginary parts, transform at half
  // length, then separate: E[k] = (Z[k] + conj(Z[h-k])) / 2 is the DFT of the even samples,
  // O[k] = (Z[k] - conj(Z[h-k])) / 2i that of the odd ones, and X[k] = E[k] + W_n^k O[k].
  scratch->resize(2 * half);
  cd* z = scratch->data();
  cd* zf = z + half;
  for (size_t i = 0; i < half; ++i) z[i] = cd(in[2 * i], in[2 * i + 1]);
  half_->forward(z, zf);
  for (size_t k = 0; k <= half; ++k) {
    // Z is periodic in `half`: Z[half] is Z[0]. Branches, not %, keep division out of the loop.
    const cd a = zf[k == half ? 0 : k];
    const cd b = std::conj(zf[k == 0 ? 0 : half - k]);
    const cd even = 0.5 * (a + b);
    const cd diff = 0.5 * (a - b);
    const cd odd(diff.imag(), -diff.real());  // diff / i
    out[k] = even + mul(real_tw_[k], odd);
  }
}

}  // namespace hark::frontend
