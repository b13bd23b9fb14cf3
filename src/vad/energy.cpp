#include "vad/energy.h"

#include <algorithm>
#include <cmath>
#include <numbers>
#include <string>
#include <vector>

#include "runtime/error.h"

namespace hark::vad {

namespace {

// One-pole RC high-pass, y[i] = a (y[i-1] + x[i] - x[i-1]), with the first sample passed through
// (so the first output equals the first input, as the reference filter starts).
void high_pass(std::vector<float>& x, float cutoff_hz, int sample_rate) {
  const float rc = 1.0f / (2.0f * std::numbers::pi_v<float> * cutoff_hz);
  const float dt = 1.0f / static_cast<float>(sample_rate);
  const float alpha = dt / (rc + dt);
  float y = x[0];
  float prev_in = x[0];
  for (size_t i = 1; i < x.size(); ++i) {
    const float in = x[i];
    y = alpha * (y + in - prev_in);
    prev_in = in;
    x[i] = y;
  }
}

}  // namespace

EnergyVadResult energy_vad(const float* samples, size_t n, int sample_rate, const EnergyVadOptions& o) {
  HARK_CHECK(o.last_ms > 0, "energy vad: last_ms must be > 0, got " + std::to_string(o.last_ms));
  HARK_CHECK(o.vad_thold >= 0.0f, "energy vad: vad_thold must be >= 0, got " + std::to_string(o.vad_thold));
  HARK_CHECK(o.freq_thold >= 0.0f && o.freq_thold < sample_rate / 2.0f,
             "energy vad: freq_thold must be in [0, " + std::to_string(sample_rate / 2) + ") Hz, got " +
                 std::to_string(o.freq_thold));
  HARK_CHECK(samples != nullptr || n == 0, "energy vad: no samples");
  const int vad_ms = std::max(o.vad_ms, kEnergyVadMinWindowMs);
  const size_t window = static_cast<size_t>(static_cast<int64_t>(sample_rate) * vad_ms / 1000);
  const size_t last = static_cast<size_t>(static_cast<int64_t>(sample_rate) * o.last_ms / 1000);
  HARK_CHECK(last < window, "energy vad: last_ms (" + std::to_string(o.last_ms) + ") must be shorter than the " +
                                std::to_string(vad_ms) + " ms window");
  EnergyVadResult r;
  if (n <= window) return r;  // the window is not full yet: nothing to decide

  std::vector<float> x(samples + (n - window), samples + n);
  for (float v : x) HARK_CHECK(std::isfinite(v), "energy vad: the samples hold NaN or infinity");
  if (o.freq_thold > 0.0f) high_pass(x, o.freq_thold, sample_rate);
  double all = 0.0, tail = 0.0;
  for (size_t i = 0; i < window; ++i) {
    const double a = std::fabs(x[i]);
    all += a;
    if (i >= window - last) tail += a;
  }
  r.energy_all = static_cast<float>(all / static_cast<double>(window));
  r.energy_last = static_cast<float>(tail / static_cast<double>(last));
  r.detected = r.energy_last <= o.vad_thold * r.energy_all;
  return r;
}

}  // namespace hark::vad
