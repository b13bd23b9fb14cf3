// Tests for the FFT and the log-mel spectrogram. The reference here is deliberately naive: an
// O(N^2) double-precision DFT over an explicitly built reflect-padded signal, so it shares no
// code (and no shortcuts) with src/frontend/.
#include <gtest/gtest.h>

#include <atomic>

#include <chrono>
#include <cmath>
#include <complex>
#include <cstring>
#include <random>
#include <vector>

#include "frontend/fft.h"
#include "frontend/mel.h"
#include "runtime/error.h"

namespace hark::frontend {
namespace {

using cd = std::complex<double>;

std::vector<cd> naive_dft(const std::vector<cd>& x) {
  const size_t n = x.size();
  std::vector<cd> out(n);
  for (size_t k = 0; k < n; ++k) {
    cd sum = 0;
    for (size_t j = 0; j < n; ++j) {
      const double a = -2.0 * M_PI * double((k * j) % n) / double(n);
      sum += x[j] * cd(std::cos(a), std::sin(a));
    }
    out[k] = sum;
  }
  return out;
}

std::vector<float> test_signal(size_t n, uint32_t seed) {
  // Speech-like enough: a few tones, a chirp and some noise, at realistic levels.
  std::mt19937 rng(seed);
  std::normal_distribution<float> noise(0.0f, 0.02f);
  std::vector<float> x(n);
  for (size_t i = 0; i < n; ++i) {
    const double t = double(i) / kSampleRate;
    x[i] = float(0.3 * std::sin(2 * M_PI * 220 * t) + 0.1 * std::sin(2 * M_PI * 1330 * t) +
                 0.05 * std::sin(2 * M_PI * (300 + 900 * t) * t)) +
           noise(rng);
  }
  return x;
}

// Whisper's log-mel by definition, in double, straight from the formula.
std::vector<double> reference_log_mel(const std::vector<float>& audio, size_t pad, const MelFilters& filters) {
  std::vector<double> s(audio.begin(), audio.end());
  s.resize(audio.size() + pad, 0.0);
  const size_t len = s.size();
  EXPECT_GT(len, 200u) << "reference supports single reflection only";
  std::vector<double> padded;
  for (size_t i = 200; i >= 1; --i) padded.push_back(s[i]);  // s[200], ..., s[1]
  padded.insert(padded.end(), s.begin(), s.end());
  for (size_t i = 1; i <= 200; ++i) padded.push_back(s[len - 1 - i]);  // s[L-2], ..., s[L-201]
  const size_t n_frames = len / 160;                                   // 1 + len/160 STFT frames, the last one dropped
  const int n_mels = filters.n_mels;
  std::vector<double> mel(size_t(n_mels) * n_frames);
  // exp(-2 pi i k j / 400) depends only on k*j mod 400: tabulate it (speed only).
  std::vector<cd> root(400);
  for (int e = 0; e < 400; ++e) root[e] = std::polar(1.0, -2.0 * M_PI * e / 400.0);
  std::vector<double> hann(400);
  for (int j = 0; j < 400; ++j) hann[j] = 0.5 - 0.5 * std::cos(2 * M_PI * j / 400.0);
  for (size_t t = 0; t < n_frames; ++t) {
    std::vector<double> power(201);
    for (int k = 0; k <= 200; ++k) {
      cd sum = 0;
      for (int j = 0; j < 400; ++j) sum += padded[t * 160 + j] * hann[j] * root[(k * j) % 400];
      power[k] = std::norm(sum);
    }
    for (int m = 0; m < n_mels; ++m) {
      double e = 0;
      for (int k = 0; k <= 200; ++k) e += double(filters.weights[size_t(m) * 201 + k]) * power[k];
      mel[size_t(m) * n_frames + t] = std::log10(std::max(e, 1e-10));
    }
  }
  double mx = -1e300;
  for (double v : mel) mx = std::max(mx, v);
  for (double& v : mel) v = (std::max(v, mx - 8.0) + 4.0) / 4.0;
  return mel;
}

TEST(FrontendFft, MatchesNaiveDftForManyLengths) {
  std::mt19937 rng(7);
  std::uniform_real_distribution<double> u(-1, 1);
  for (size_t n : {1, 2, 3, 4, 5, 6, 7, 8, 12, 16, 25, 30, 49, 60, 64, 97, 100, 200, 400}) {
    std::vector<cd> x(n);
    for (auto& v : x) v = cd(u(rng), u(rng));
    const std::vector<cd> want = naive_dft(x);
    std::vector<cd> got(n);
    Fft(n).forward(x.data(), got.data());
    for (size_t k = 0; k < n; ++k) {
      EXPECT_NEAR(got[k].real(), want[k].real(), 1e-11 * double(n)) << "n=" << n << " k=" << k;
      EXPECT_NEAR(got[k].imag(), want[k].imag(), 1e-11 * double(n)) << "n=" << n << " k=" << k;
    }
  }
}

TEST(FrontendFft, RealTransformMatchesComplexOne) {
  std::mt19937 rng(11);
  std::uniform_real_distribution<double> u(-1, 1);
  for (size_t n : {1, 2, 5, 10, 400, 401}) {
    std::vector<double> x(n);
    std::vector<cd> xc(n);
    for (size_t i = 0; i < n; ++i) xc[i] = x[i] = u(rng);
    const std::vector<cd> want = naive_dft(xc);
    std::vector<cd> got(n / 2 + 1), scratch;
    Fft(n).forward_real(x.data(), got.data(), &scratch);
    for (size_t k = 0; k <= n / 2; ++k) {
      EXPECT_NEAR(std::abs(got[k] - want[k]), 0.0, 1e-11 * double(n)) << "n=" << n << " k=" << k;
    }
  }
  EXPECT_THROW(Fft(0), hark::Error);
}

TEST(MelFilters, SlaneyFilterbankShapeAndKnownValues) {
  for (int n_mels : {80, 128}) {
    const MelFilters f = slaney_mel_filters(n_mels);
    ASSERT_EQ(f.n_mels, n_mels);
    ASSERT_EQ(f.weights.size(), size_t(n_mels) * 201);
    for (int m = 0; m < n_mels; ++m) {
      float row_max = 0;
      for (int k = 0; k < 201; ++k) {
        EXPECT_GE(f.weights[size_t(m) * 201 + k], 0.0f);
        row_max = std::max(row_max, f.weights[size_t(m) * 201 + k]);
      }
      EXPECT_GT(row_max, 0.0f) << "mel " << m << " has no weight on any bin";
    }
  }
  // First filter of the 80-bin bank, worked out by hand from the Slaney scale: the band edges
  // are mel 0, M/81, 2M/81 with M = 15 + 27 ln(8)/ln(6.4), all below 1 kHz where 1 mel =
  // 200/3 Hz. Bin 1 (40 Hz) sits on the falling slope; the triangle has area-normalising
  // height 2 / (upper edge). Bin 0 (0 Hz) is the triangle's foot: weight 0.
  const double top_mel = 15.0 + 27.0 * std::log(8.0) / std::log(6.4);
  const double step_hz = top_mel / 81.0 * 200.0 / 3.0;
  const double want = (2.0 * step_hz - 40.0) / step_hz * 2.0 / (2.0 * step_hz);
  const MelFilters f80 = slaney_mel_filters(80);
  EXPECT_NEAR(f80.weights[1], want, 1e-7);
  EXPECT_EQ(f80.weights[0], 0.0f);
  EXPECT_THROW(slaney_mel_filters(0), hark::Error);
}

TEST(MelSpectrogram, MatchesDoublePrecisionDftReference) {
  const MelFilters filters = slaney_mel_filters(80);
  // Whisper's padding (the last content frames reflect into zeros) and no padding (reflection
  // of the signal itself at both ends).
  struct Case {
    size_t n, pad;
  } cases[] = {{16000 + 77, kWindowSamples}, {24000 + 5, 0}};
  for (const Case& c : cases) {
    const std::vector<float> audio = test_signal(c.n, 3);
    const LogMel got = log_mel_spectrogram(audio.data(), audio.size(), filters, 2, c.pad);
    const std::vector<double> want = reference_log_mel(audio, c.pad, filters);
    ASSERT_EQ(got.n_frames, (c.n + c.pad) / 160);
    ASSERT_EQ(got.data.size(), want.size());
    double worst = 0;
    for (size_t i = 0; i < want.size(); ++i) worst = std::max(worst, std::abs(got.data[i] - want[i]));
    EXPECT_LT(worst, 1e-4) << "n=" << c.n << " pad=" << c.pad;
    std::printf("[ detail ] n=%zu pad=%zu: worst |hark - double DFT| = %.3g\n", c.n, c.pad, worst);
  }
}

TEST(MelSpectrogram, ToneLandsInItsMelBin) {
  const MelFilters filters = slaney_mel_filters(80);
  std::vector<float> tone(kSampleRate * 2);
  for (size_t i = 0; i < tone.size(); ++i) tone[i] = 0.5f * float(std::sin(2 * M_PI * 1000.0 * i / kSampleRate));
  // 1 kHz is exactly FFT bin 25 (40 Hz bins); the bin's strongest filter must win.
  int expect = 0;
  for (int m = 1; m < 80; ++m) {
    if (filters.weights[size_t(m) * 201 + 25] > filters.weights[size_t(expect) * 201 + 25]) expect = m;
  }
  const LogMel mel = log_mel_spectrogram(tone.data(), tone.size(), filters, 1);
  for (size_t t = 5; t < mel.n_content_frames - 5; t += 37) {
    int best = 0;
    for (int m = 1; m < 80; ++m) {
      if (mel.at(m, t) > mel.at(best, t)) best = m;
    }
    EXPECT_EQ(best, expect) << "frame " << t;
  }
  // The tone is the loudest thing: its bin reaches the global maximum, (max + 4) / 4.
  float mx = -100;
  for (float v : mel.data) mx = std::max(mx, v);
  EXPECT_FLOAT_EQ(mel.at(expect, 50), mx);
}

TEST(MelSpectrogram, SilenceGivesTheFloor) {
  const MelFilters filters = slaney_mel_filters(80);
  std::vector<float> silence(kSampleRate, 0.0f);
  const LogMel mel = log_mel_spectrogram(silence.data(), silence.size(), filters, 3);
  // log10(1e-10) = -10 everywhere; the max is -10 too, so nothing is clamped: (-10 + 4) / 4.
  for (float v : mel.data) ASSERT_EQ(v, -1.5f);
}

TEST(MelSpectrogram, Lengths) {
  const MelFilters filters = slaney_mel_filters(80);
  EXPECT_THROW(log_mel_spectrogram(nullptr, 0, filters, 1), hark::Error);

  const float one = 0.25f;
  LogMel m = log_mel_spectrogram(&one, 1, filters, 4);
  EXPECT_EQ(m.n_frames, 3000u);
  EXPECT_EQ(m.n_content_frames, 0u);
  // Without padding a lone sample has no complete hop: an empty (not failing) spectrogram.
  m = log_mel_spectrogram(&one, 1, filters, 4, 0);
  EXPECT_EQ(m.n_frames, 0u);
  EXPECT_TRUE(m.data.empty());

  for (size_t seconds : {30, 95}) {
    const std::vector<float> audio = test_signal(seconds * kSampleRate, 5);
    m = log_mel_spectrogram(audio.data(), audio.size(), filters, 2);
    EXPECT_EQ(m.n_content_frames, seconds * 100);
    EXPECT_EQ(m.n_frames, seconds * 100 + 3000);
    EXPECT_EQ(m.data.size(), m.n_frames * 80);
  }
  // 95 s: windows at 0, 3000, 6000, 9000; the last holds 500 content frames, then zeros.
  const std::vector<float> w = mel_window(m, 9000);
  ASSERT_EQ(w.size(), 80u * 3000);
  for (int mel_bin : {0, 40, 79}) {
    EXPECT_EQ(w[size_t(mel_bin) * 3000 + 499], m.at(mel_bin, 9499));
    EXPECT_EQ(w[size_t(mel_bin) * 3000 + 500], 0.0f);
    EXPECT_EQ(w[size_t(mel_bin) * 3000 + 2999], 0.0f);
  }
  const std::vector<float> first = mel_window(m, 0);
  EXPECT_EQ(first[size_t(7) * 3000 + 2999], m.at(7, 2999));
  EXPECT_THROW(mel_window(m, m.n_frames + 1), hark::Error);
}

TEST(MelSpectrogram, ThreadCountsGiveIdenticalOutput) {
  const MelFilters filters = slaney_mel_filters(128);
  const std::vector<float> audio = test_signal(7 * kSampleRate + 123, 9);
  const LogMel one = log_mel_spectrogram(audio.data(), audio.size(), filters, 1);
  for (int threads : {2, 3, 7, 16}) {
    const LogMel many = log_mel_spectrogram(audio.data(), audio.size(), filters, threads);
    ASSERT_EQ(many.data.size(), one.data.size());
    EXPECT_EQ(std::memcmp(many.data.data(), one.data.data(), one.data.size() * sizeof(float)), 0)
        << threads << " threads";
  }
}

TEST(MelSpectrogram, RejectsBadInput) {
  const MelFilters filters = slaney_mel_filters(80);
  std::vector<float> audio(1000, 0.1f);
  audio[321] = std::nanf("");
  try {
    log_mel_spectrogram(audio.data(), audio.size(), filters, 1);
    FAIL() << "NaN accepted";
  } catch (const hark::Error& e) {
    EXPECT_NE(std::string(e.what()).find("sample 321 is NaN"), std::string::npos) << e.what();
  }
  audio[321] = 0;
  EXPECT_THROW(log_mel_spectrogram(audio.data(), audio.size(), filters, 0), hark::Error);
  MelFilters bad = filters;
  bad.weights.pop_back();
  EXPECT_THROW(log_mel_spectrogram(audio.data(), audio.size(), bad, 1), hark::Error);
  bad = filters;
  bad.weights[5] = INFINITY;
  EXPECT_THROW(log_mel_spectrogram(audio.data(), audio.size(), bad, 1), hark::Error);
}

TEST(MelSpectrogram, ThirtySecondsTiming) {
  const MelFilters filters = slaney_mel_filters(80);
  const std::vector<float> audio = test_signal(30 * kSampleRate, 1);
  for (int threads : {1, 2}) {
    const auto t0 = std::chrono::steady_clock::now();
    const LogMel m = log_mel_spectrogram(audio.data(), audio.size(), filters, threads);
    const double ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
    std::printf("[ timing ] log-mel of 30 s (80 bins, %zu frames), %d thread(s): %.1f ms\n", m.n_frames, threads, ms);
    EXPECT_LT(ms, 2000.0);  // a generous ceiling: only catches pathological slowness
  }
}

TEST(MelSpectrogram, StopsWhenAskedAndOtherwiseIgnoresTheCheck) {
  const MelFilters f = slaney_mel_filters(80);
  std::vector<float> a(16000 * 60);
  for (size_t i = 0; i < a.size(); ++i) a[i] = 0.3f * float(std::sin(0.05 * double(i)));
  std::atomic<int> polls{0};
  const LogMel stopped = log_mel_spectrogram(a.data(), a.size(), f, 2, kWindowSamples, [&] { return ++polls > 3; });
  EXPECT_TRUE(stopped.aborted);
  EXPECT_TRUE(stopped.data.empty());
  EXPECT_LT(polls.load(), 20) << "blocks kept being computed after the stop";
  const LogMel whole = log_mel_spectrogram(a.data(), a.size(), f, 2, kWindowSamples, [] { return false; });
  EXPECT_FALSE(whole.aborted);
  EXPECT_EQ(whole.data, log_mel_spectrogram(a.data(), a.size(), f, 2).data);
}

}  // namespace
}  // namespace hark::frontend
