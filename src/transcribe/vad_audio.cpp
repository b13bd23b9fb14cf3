#include "transcribe/vad_audio.h"

#include <algorithm>
#include <cmath>
#include <string>

#include "runtime/error.h"

namespace hark {

namespace {
constexpr int64_t kUnitSamples = kSampleRate / 100;  // one 10 ms unit
}  // namespace

VadTimeMap::VadTimeMap(std::vector<VadStretch> stretches, int64_t gap_units)
    : stretches_(std::move(stretches)), gap_(gap_units) {
  HARK_CHECK(gap_ >= 0, "vad time map: the gap must be >= 0, got " + std::to_string(gap_));
  for (size_t i = 0; i < stretches_.size(); ++i) {
    const VadStretch& s = stretches_[i];
    HARK_CHECK(s.orig_t1 > s.orig_t0, "vad time map: stretch " + std::to_string(i) + " is empty");
    if (i == 0) continue;
    const VadStretch& prev = stretches_[i - 1];
    HARK_CHECK(s.orig_t0 >= prev.orig_t1, "vad time map: stretch " + std::to_string(i) + " overlaps the one before");
    HARK_CHECK(s.proc_t0 >= prev.proc_t0 + (prev.orig_t1 - prev.orig_t0) + gap_,
               "vad time map: stretch " + std::to_string(i) + " starts inside the one before or its gap");
  }
}

int64_t VadTimeMap::to_original(int64_t t) const {
  if (stretches_.empty()) return t;
  // The last stretch starting at or before t.
  auto it = std::upper_bound(stretches_.begin(), stretches_.end(), t,
                             [](int64_t v, const VadStretch& s) { return v < s.proc_t0; });
  if (it == stretches_.begin()) return stretches_.front().orig_t0;
  const VadStretch& s = *(it - 1);
  const int64_t len = s.orig_t1 - s.orig_t0;
  if (t <= s.proc_t0 + len) return s.orig_t0 + (t - s.proc_t0);  // inside: exact
  if (it == stretches_.end()) return s.orig_t1;                  // past the last stretch
  // In the inserted silence: its first half belongs to the speech before, the rest to the next.
  const int64_t into_gap = t - (s.proc_t0 + len);
  const int64_t gap = it->proc_t0 - (s.proc_t0 + len);
  return 2 * into_gap < gap ? s.orig_t1 : it->orig_t0;
}

void VadTimeMap::map(Segment& s) const {
  s.t0 = to_original(s.t0);
  s.t1 = to_original(s.t1);
  s.seek = to_original(s.seek);  // as its window's t0 (below)
  for (TokenData& tok : s.tokens) {
    // -1: no token timestamps.
    if (tok.t0 >= 0) tok.t0 = to_original(tok.t0);
    if (tok.t1 >= 0) tok.t1 = to_original(tok.t1);
  }
  for (Word& w : s.words) {
    w.t0 = to_original(w.t0);
    w.t1 = to_original(w.t1);
  }
}

void VadTimeMap::map(Transcript& t) const {
  for (Segment& s : t.segments) map(s);
  for (Window& w : t.windows) {
    w.t0 = to_original(w.t0);
    w.t1 = to_original(w.t1);
  }
}

VadAudio cut_speech(std::span<const float> samples, std::span<const VadSegment> segments, float samples_overlap,
                    int64_t origin_units) {
  HARK_CHECK(std::isfinite(samples_overlap) && samples_overlap >= 0.0f,
             "vad: samples_overlap must be finite and >= 0, got " + std::to_string(samples_overlap));
  const int64_t n = static_cast<int64_t>(samples.size());
  const int64_t n_units = (n + kUnitSamples - 1) / kUnitSamples;  // a partial last unit counts
  const int64_t overlap = std::llround(static_cast<double>(samples_overlap) * 100.0);

  // The original ranges: clamped to the audio, each (but the last) extended by the overlap up to
  // the next one's start, so ranges stay disjoint and the map monotone.
  std::vector<std::pair<int64_t, int64_t>> ranges;
  for (const VadSegment& seg : segments) {
    const int64_t a = std::clamp<int64_t>(seg.t0, 0, n_units);
    const int64_t b = std::clamp<int64_t>(seg.t1, 0, n_units);
    if (b <= a) continue;
    if (!ranges.empty()) {
      HARK_CHECK(a >= ranges.back().first, "vad: speech segments must be in order");
      if (a < ranges.back().second) {  // touching or overlapping segments: one stretch
        ranges.back().second = std::max(ranges.back().second, b);
        continue;
      }
    }
    ranges.emplace_back(a, b);
  }
  for (size_t i = 0; i + 1 < ranges.size(); ++i)
    ranges[i].second = std::min(ranges[i].second + overlap, ranges[i + 1].first);

  VadAudio out;
  std::vector<VadStretch> stretches;
  int64_t proc = 0;
  for (size_t i = 0; i < ranges.size(); ++i) {
    const auto [a, b] = ranges[i];
    if (i > 0) {
      proc += kVadGapUnits;
      out.samples.insert(out.samples.end(), static_cast<size_t>(kVadGapUnits * kUnitSamples), 0.0f);
    }
    // Only the last unit of the audio can be partial, and only the last range can reach it, so
    // every stretch starts at sample proc * kUnitSamples of the processed audio.
    const int64_t s0 = a * kUnitSamples, s1 = std::min(b * kUnitSamples, n);
    out.samples.insert(out.samples.end(), samples.begin() + s0, samples.begin() + s1);
    stretches.push_back({origin_units + a, origin_units + b, proc});
    proc += b - a;
  }
  out.map = VadTimeMap(std::move(stretches), kVadGapUnits);
  return out;
}

}  // namespace hark
