// Log-mel spectrogram and the Slaney filterbank. See mel.h for the definition being matched.
#include "frontend/mel.h"

#include <algorithm>
#include <atomic>
#include <cmath>
#include <complex>
#include <exception>
#include <limits>
#include <thread>

#include "frontend/fft.h"
#include "runtime/error.h"

namespace hark::frontend {
namespace {

// Same bound as the audio layer (8 hours at 16 kHz): the spectrogram of more would not fit in
// memory comfortably, and the caller's allocation must not be driven by an unchecked length.
constexpr size_t kMaxSamples = size_t(8) * 3600 * kSampleRate;
constexpr int kMaxMels = 512;
constexpr double kLogFloor = -10.0;  // log10(1e-10), the floor Whisper clamps power to

// Slaney's mel scale as librosa implements it (htk=False): linear below 1 kHz at 200/3 Hz per
// mel, logarithmic above with 27 mels per factor 6.4.
constexpr double kFSp = 200.0 / 3.0;
constexpr double kMinLogHz = 1000.0;
constexpr double kMinLogMel = kMinLogHz / kFSp;  // 15
const double kLogStep = std::log(6.4) / 27.0;

double hz_to_mel(double hz) { return hz >= kMinLogHz ? kMinLogMel + std::log(hz / kMinLogHz) / kLogStep : hz / kFSp; }
double mel_to_hz(double mel) {
  return mel >= kMinLogMel ? kMinLogHz * std::exp(kLogStep * (mel - kMinLogMel)) : mel * kFSp;
}

// The periodic Hann window (torch.hann_window's default): w[i] = 0.5 - 0.5 cos(2 pi i / N),
// i.e. the first N points of an N+1-point symmetric window. Periodic, because Whisper used it.
std::vector<double> hann_window() {
  std::vector<double> w(kNFft);
  for (int i = 0; i < kNFft; ++i) w[i] = 0.5 - 0.5 * std::cos(2.0 * M_PI * i / kNFft);
  return w;
}

// Each filter's nonzero weights span a short run of bins (at most a few dozen of 201); only that
// run is multiplied. Skipping exact zeros leaves every sum bit-identical to the dense product.
struct SparseRow {
  int lo = 0, hi = 0;  // nonzero bins are within [lo, hi)
};

// The signal torch.stft sees: x, then `pad` zeros (length L), reflect-padded by kNFft/2 at each
// end. Reflection repeats for L < 201, where torch would refuse; only pad_samples = 0 with very
// short input gets there.
class PaddedSignal {
 public:
  PaddedSignal(const float* x, size_t n, size_t pad) : x_(x), n_(n), len_(n + pad) {}

  // Fills frame t's kNFft samples (before windowing). Returns false when they are all zero.
  bool frame(size_t t, double* out) const {
    const int64_t i0 = int64_t(t * kHop) - kNFft / 2;
    if (i0 >= 0 && i0 + kNFft <= int64_t(n_)) {
      bool any = false;
      for (int j = 0; j < kNFft; ++j) {
        out[j] = x_[i0 + j];
        any |= out[j] != 0.0;
      }
      return any;
    }
    if (i0 >= int64_t(n_) && i0 + kNFft <= int64_t(len_)) return false;  // inside the padding
    bool any = false;
    for (int j = 0; j < kNFft; ++j) {
      out[j] = at(i0 + j);
      any |= out[j] != 0.0;
    }
    return any;
  }

 private:
  double at(int64_t i) const {
    if (len_ == 1) return n_ == 1 ? x_[0] : 0.0;
    const int64_t period = 2 * (int64_t(len_) - 1);
    i %= period;
    if (i < 0) i += period;
    if (i >= int64_t(len_)) i = period - i;
    return i < int64_t(n_) ? double(x_[i]) : 0.0;
  }

  const float* x_;
  size_t n_, len_;
};

void validate(const float* samples, size_t n, const MelFilters& filters, int n_threads, size_t pad_samples) {
  HARK_CHECK(n > 0, "log-mel: no audio samples (n == 0)");
  HARK_CHECK(samples != nullptr, "log-mel: null sample pointer");
  HARK_CHECK(n <= kMaxSamples && pad_samples <= kMaxSamples,
             "log-mel: " + std::to_string(n) + " samples + " + std::to_string(pad_samples) +
                 " padding is more than the 8 hour limit (" + std::to_string(kMaxSamples) + " samples at 16 kHz)");
  HARK_CHECK(n_threads >= 1, "log-mel: n_threads must be at least 1, got " + std::to_string(n_threads));
  HARK_CHECK(filters.n_mels >= 1 && filters.n_mels <= kMaxMels,
             "log-mel: filterbank has " + std::to_string(filters.n_mels) + " mel bins (expected 1 to " +
                 std::to_string(kMaxMels) + ")");
  HARK_CHECK(filters.weights.size() == size_t(filters.n_mels) * kNFreq,
             "log-mel: filterbank holds " + std::to_string(filters.weights.size()) +
                 " weights, expected n_mels x 201 = " + std::to_string(size_t(filters.n_mels) * kNFreq));
  for (size_t i = 0; i < filters.weights.size(); ++i) {
    HARK_CHECK(std::isfinite(filters.weights[i]), "log-mel: filterbank weight " + std::to_string(i) + " (mel " +
                                                      std::to_string(i / kNFreq) + ", bin " +
                                                      std::to_string(i % kNFreq) + ") is not finite");
  }
  for (size_t i = 0; i < n; ++i) {
    HARK_CHECK(std::isfinite(samples[i]),
               "log-mel: sample " + std::to_string(i) + " is " + (std::isnan(samples[i]) ? "NaN" : "infinite"));
  }
}

// Runs fn(worker, begin, end) over [0, n) in blocks of `block`, handed out to at most n_threads
// workers (the caller's thread is worker 0) as each finishes its last block. Dynamic because
// the cost is uneven: silent frames, such as Whisper's 30 s of padding, cost almost nothing.
// Blocks never share an output element, so the result cannot depend on who ran what.
template <typename Fn>
void parallel_for(size_t n, int n_threads, size_t block, Fn fn) {
  const size_t n_blocks = (n + block - 1) / block;
  const size_t workers_wanted = std::max<size_t>(1, std::min<size_t>(size_t(n_threads), n_blocks));
  std::atomic<size_t> next{0};
  // An exception escaping a std::thread would terminate the process; carry it to the caller.
  std::vector<std::exception_ptr> errors(workers_wanted);
  auto run = [&](size_t worker) {
    try {
      for (size_t b; (b = next.fetch_add(1)) < n_blocks;) {
        fn(worker, b * block, std::min(n, (b + 1) * block));
      }
    } catch (...) {
      errors[worker] = std::current_exception();
      next.store(n_blocks);  // stop the others early
    }
  };
  std::vector<std::thread> workers;
  workers.reserve(workers_wanted - 1);
  for (size_t w = 1; w < workers_wanted; ++w) workers.emplace_back(run, w);
  run(0);
  for (auto& w : workers) w.join();
  for (auto& e : errors) {
    if (e) std::rethrow_exception(e);
  }
}

}  // namespace

MelFilters slaney_mel_filters(int n_mels, int sample_rate, int n_fft) {
  HARK_CHECK(n_mels >= 1 && n_mels <= kMaxMels,
             "slaney_mel_filters: n_mels " + std::to_string(n_mels) + " out of range 1.." + std::to_string(kMaxMels));
  HARK_CHECK(sample_rate > 0 && n_fft >= 2, "slaney_mel_filters: sample_rate " + std::to_string(sample_rate) +
                                                " and n_fft " + std::to_string(n_fft) + " must be positive");
  const int n_freq = n_fft / 2 + 1;
  // Band edges: n_mels + 2 points evenly spaced in mel from 0 Hz to Nyquist.
  const double max_mel = hz_to_mel(sample_rate / 2.0);
  std::vector<double> edge(n_mels + 2);
  for (int i = 0; i < n_mels + 2; ++i) edge[i] = mel_to_hz(max_mel * i / (n_mels + 1));

  MelFilters f;
  f.n_mels = n_mels;
  f.weights.assign(size_t(n_mels) * n_freq, 0.0f);
  for (int m = 0; m < n_mels; ++m) {
    const double lo = edge[m], mid = edge[m + 1], hi = edge[m + 2];
    // Triangles scaled to unit area ("slaney" normalisation: 2 / bandwidth), so wide
    // high-frequency bands do not outweigh narrow low ones.
    const double norm = 2.0 / (hi - lo);
    for (int k = 0; k < n_freq; ++k) {
      const double hz = double(k) * sample_rate / n_fft;
      const double rising = (hz - lo) / (mid - lo);
      const double falling = (hi - hz) / (hi - mid);
      const double w = std::max(0.0, std::min(rising, falling));
      f.weights[size_t(m) * n_freq + k] = float(w * norm);
    }
  }
  return f;
}

LogMel log_mel_spectrogram(const float* samples, size_t n, const MelFilters& filters, int n_threads, size_t pad_samples,
                           const std::function<bool()>& should_stop) {
  validate(samples, n, filters, n_threads, pad_samples);
  const int n_mels = filters.n_mels;

  LogMel out;
  out.n_mels = n_mels;
  out.n_frames = (n + pad_samples) / kHop;
  out.n_content_frames = n / kHop;
  out.data.assign(size_t(n_mels) * out.n_frames, 0.0f);
  if (out.n_frames == 0) return out;

  std::vector<SparseRow> rows(n_mels);
  for (int m = 0; m < n_mels; ++m) {
    const float* w = &filters.weights[size_t(m) * kNFreq];
    int lo = 0, hi = kNFreq;
    while (lo < hi && w[lo] == 0.0f) ++lo;
    while (hi > lo && w[hi - 1] == 0.0f) --hi;
    rows[m] = {lo, hi};
  }
  const std::vector<double> window = hann_window();
  const Fft fft(kNFft);
  const PaddedSignal signal(samples, n, pad_samples);
  const size_t n_frames = out.n_frames;
  float* data = out.data.data();

  // Pass 1: log10 of the mel energies, per frame, and each thread's maximum.
  constexpr size_t kBlock = 64;  // frames per work item: ~0.1 ms of work, cheap to hand out
  const int threads = int(std::min<size_t>(size_t(n_threads), (n_frames + kBlock - 1) / kBlock));
  std::vector<float> thread_max(size_t(threads), -std::numeric_limits<float>::infinity());
  struct Scratch {
    std::vector<double> frame = std::vector<double>(kNFft);
    std::vector<std::complex<double>> spectrum = std::vector<std::complex<double>>(kNFreq);
    std::vector<std::complex<double>> fft;
    std::vector<double> power = std::vector<double>(kNFreq);
  };
  std::vector<Scratch> scratches{size_t(threads)};
  std::atomic<bool> stopped{false};
  parallel_for(n_frames, threads, kBlock, [&](size_t worker, size_t begin, size_t end) {
    if (stopped.load(std::memory_order_relaxed)) return;
    if (should_stop && should_stop()) {
      stopped.store(true);
      return;
    }
    Scratch& s = scratches[worker];
    std::vector<double>& frame = s.frame;
    std::vector<std::complex<double>>& spectrum = s.spectrum;
    std::vector<double>& power = s.power;
    float local_max = thread_max[worker];
    for (size_t t = begin; t < end; ++t) {
      if (!signal.frame(t, frame.data())) {
        // Silence: the power is exactly zero, so every mel value is the floor. Skipping the
        // FFT here changes nothing and halves the work for Whisper's 30 s of padding.
        for (int m = 0; m < n_mels; ++m) data[size_t(m) * n_frames + t] = float(kLogFloor);
        local_max = std::max(local_max, float(kLogFloor));
        continue;
      }
      for (int j = 0; j < kNFft; ++j) frame[j] *= window[j];
      fft.forward_real(frame.data(), spectrum.data(), &s.fft);
      for (int k = 0; k < kNFreq; ++k) {
        power[k] = spectrum[k].real() * spectrum[k].real() + spectrum[k].imag() * spectrum[k].imag();
      }
      for (int m = 0; m < n_mels; ++m) {
        const float* w = &filters.weights[size_t(m) * kNFreq];
        double sum = 0.0;
        for (int k = rows[m].lo; k < rows[m].hi; ++k) sum += double(w[k]) * power[k];
        const float v = float(std::log10(std::max(sum, 1e-10)));
        data[size_t(m) * n_frames + t] = v;
        local_max = std::max(local_max, v);
      }
    }
    thread_max[worker] = local_max;
  });
  if (stopped.load()) {
    out.data.clear();
    out.aborted = true;
    return out;
  }
  const float global_max = *std::max_element(thread_max.begin(), thread_max.end());

  // Pass 2: dynamic range of 8 (80 dB) below the loudest point, then Whisper's scaling. In
  // float, as the reference does it.
  const float floor = global_max - 8.0f;
  const size_t total = out.data.size();
  parallel_for(total, threads, size_t(1) << 16, [&](size_t, size_t begin, size_t end) {
    for (size_t i = begin; i < end; ++i) data[i] = (std::max(data[i], floor) + 4.0f) / 4.0f;
  });
  return out;
}

std::vector<float> mel_window(const LogMel& mel, size_t seek, size_t frames) {
  HARK_CHECK(seek <= mel.n_frames, "mel_window: seek " + std::to_string(seek) + " is past the spectrogram's " +
                                       std::to_string(mel.n_frames) + " frames");
  std::vector<float> win(size_t(mel.n_mels) * kWindowFrames, 0.0f);
  const size_t end = std::min(seek + std::min(frames, static_cast<size_t>(kWindowFrames)), mel.n_content_frames);
  if (end <= seek) return win;
  for (int m = 0; m < mel.n_mels; ++m) {
    const float* src = &mel.data[size_t(m) * mel.n_frames + seek];
    std::copy(src, src + (end - seek), &win[size_t(m) * kWindowFrames]);
  }
  return win;
}

}  // namespace hark::frontend
