// Fft: an exact discrete Fourier transform of any fixed length, in double precision.
// Whisper's frames are 400 samples (2^4 * 5^2), not a power of two, so this is a mixed-radix
// Cooley-Tukey transform (radix 4, 2 and 5 butterflies; any other prime factor by a direct
// small DFT). Zero-padding to 512 would change the bins, so that shortcut is not an option.
//
//   X[k] = sum_n x[n] * exp(-2*pi*i*k*n/N)      (no scaling)
//
// A plan is immutable after construction; one plan may be used from many threads at once as
// long as each passes its own output and scratch.
#pragma once
#include <complex>
#include <cstddef>
#include <memory>
#include <vector>

namespace hark::frontend {

class Fft {
 public:
  explicit Fft(size_t n);  // throws hark::Error for n == 0

  size_t size() const { return n_; }

  // out[0..n) = DFT of in[0..n). `in` and `out` must not overlap.
  void forward(const std::complex<double>* in, std::complex<double>* out) const;

  // Spectrum of a real signal of even length n: bins 0..n/2 (n/2 + 1 values, the rest being
  // their conjugates). Runs one complex FFT of length n/2. `scratch` is resized as needed.
  // For odd n it falls back to a full complex transform.
  void forward_real(const double* in, std::complex<double>* out, std::vector<std::complex<double>>* scratch) const;

 private:
  void pass(std::complex<double>* out, const std::complex<double>* in, size_t stride, size_t stage) const;

  size_t n_;
  std::vector<size_t> factors_;           // radices, outermost first; product == n
  std::vector<std::complex<double>> tw_;  // tw_[e] = exp(-2*pi*i*e/n)
  size_t root5_ = 0;                      // n/5 when 5 divides n: tw_[root5_] = W_5
  // forward_real: the half-length transform and the twiddles that unpack it.
  std::unique_ptr<const Fft> half_;
  std::vector<std::complex<double>> real_tw_;  // exp(-2*pi*i*k/n), k in [0, n/2]
};

}  // namespace hark::frontend
