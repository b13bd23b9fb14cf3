#include "vad/speech_segments.h"

#include <algorithm>
#include <cmath>
#include <string>

#include "runtime/error.h"

namespace hark::vad {

namespace {

constexpr float kNegThresholdGap = 0.15f;  // speech ends below threshold - 0.15 ...
constexpr float kMinNegThreshold = 0.01f;  // ... but never below 0.01
constexpr int kSplitSilenceMs = 98;        // a silence this long is a place to cut an overlong segment
constexpr int kMergeGapMs = 200;           // neighbours closer than this become one segment
constexpr float kUnlimitedSpeechS = 100000.0f;

int64_t ms_to_samples(int64_t ms, int sample_rate) { return static_cast<int64_t>(sample_rate) * ms / 1000; }

// The longest a segment may grow before it is cut (less one frame and both pads, so the padded
// segment stays under the limit); -1 when unlimited.
int64_t max_speech_samples(const SegmentOptions& o, int n_window, int sample_rate) {
  const double pad = static_cast<double>(ms_to_samples(o.speech_pad_ms, sample_rate));
  const double max = static_cast<double>(sample_rate) * o.max_speech_duration_s - n_window - 2 * pad;
  return o.max_speech_duration_s > kUnlimitedSpeechS || max < 0.0 ? -1 : static_cast<int64_t>(max);
}

// The frame-by-frame state machine: open speech, tentative end (first silent frame of a run),
// and for overlong speech the last long-enough silence seen (cut_end) and where speech resumed
// after it (resume).
class Tracker {
 public:
  Tracker(const SegmentOptions& o, int n_window, int sample_rate)
      : threshold_(o.threshold),
        neg_threshold_(std::max(o.threshold - kNegThresholdGap, kMinNegThreshold)),
        min_silence_(ms_to_samples(o.min_silence_duration_ms, sample_rate)),
        min_speech_(ms_to_samples(o.min_speech_duration_ms, sample_rate)),
        split_silence_(ms_to_samples(kSplitSilenceMs, sample_rate)),
        max_speech_(max_speech_samples(o, n_window, sample_rate)) {}

  void frame(float p, int64_t at) {
    const bool loud = p >= threshold_;
    if (loud && tentative_end_ != 0) {
      tentative_end_ = 0;
      if (resume_ < cut_end_) resume_ = at;
    }
    if (loud && !in_speech_) {
      in_speech_ = true;
      start_ = at;
      return;
    }
    if (in_speech_ && max_speech_ >= 0 && at - start_ > max_speech_) {
      if (cut_end_ != 0) {
        out_.push_back({start_, cut_end_});
        // still silent since the cut: speech is over; else it goes on from where it resumed
        if (resume_ < cut_end_)
          in_speech_ = false;
        else
          start_ = resume_;
        cut_end_ = resume_ = tentative_end_ = 0;
      } else {
        out_.push_back({start_, at});
        cut_end_ = resume_ = tentative_end_ = 0;
        in_speech_ = false;
        return;
      }
    }
    if (in_speech_ && p < neg_threshold_) {
      if (tentative_end_ == 0) tentative_end_ = at;
      if (at - tentative_end_ > split_silence_) cut_end_ = tentative_end_;
      if (at - tentative_end_ < min_silence_) return;
      if (tentative_end_ - start_ > min_speech_) out_.push_back({start_, tentative_end_});
      cut_end_ = resume_ = tentative_end_ = 0;
      in_speech_ = false;
    }
  }

  std::vector<SampleRange> finish(int64_t audio_end) {
    if (in_speech_ && audio_end - start_ > min_speech_) out_.push_back({start_, audio_end});
    in_speech_ = false;
    return std::move(out_);
  }

 private:
  float threshold_, neg_threshold_;
  int64_t min_silence_, min_speech_, split_silence_, max_speech_;  // max_speech_ -1: unlimited
  bool in_speech_ = false;
  int64_t start_ = 0, tentative_end_ = 0, cut_end_ = 0, resume_ = 0;  // 0: not set
  std::vector<SampleRange> out_;
};

}  // namespace

void check_segment_options(const SegmentOptions& o) {
  HARK_CHECK_AS(InvalidArgument, "threshold", o.threshold >= 0.0f && o.threshold <= 1.0f,
                "vad: threshold must be in [0, 1], got " + std::to_string(o.threshold));
  HARK_CHECK_AS(InvalidArgument, "min_speech_duration_ms", o.min_speech_duration_ms >= 0,
                "vad: min_speech_duration_ms must be >= 0, got " + std::to_string(o.min_speech_duration_ms));
  HARK_CHECK_AS(InvalidArgument, "min_silence_duration_ms", o.min_silence_duration_ms >= 0,
                "vad: min_silence_duration_ms must be >= 0, got " + std::to_string(o.min_silence_duration_ms));
  HARK_CHECK_AS(InvalidArgument, "max_speech_duration_s", o.max_speech_duration_s > 0.0f,
                "vad: max_speech_duration_s must be > 0, got " + std::to_string(o.max_speech_duration_s));
  HARK_CHECK_AS(InvalidArgument, "speech_pad_ms", o.speech_pad_ms >= 0,
                "vad: speech_pad_ms must be >= 0, got " + std::to_string(o.speech_pad_ms));
  HARK_CHECK_AS(InvalidArgument, "samples_overlap", o.samples_overlap >= 0.0f,
                "vad: samples_overlap must be >= 0, got " + std::to_string(o.samples_overlap));
}

std::vector<SampleRange> speech_ranges(const std::vector<float>& probs, int n_window, int sample_rate,
                                       const SegmentOptions& o) {
  check_segment_options(o);
  HARK_CHECK(n_window > 0 && sample_rate > 0, "vad: n_window and sample_rate must be > 0");
  Tracker t(o, n_window, sample_rate);
  for (size_t i = 0; i < probs.size(); ++i) t.frame(probs[i], static_cast<int64_t>(i) * n_window);
  const int64_t audio_end = static_cast<int64_t>(probs.size()) * n_window;
  std::vector<SampleRange> s = t.finish(audio_end);

  // Close neighbours become one; then the minimum length applies to what is left. Unlike
  // whisper.cpp, a merge that would outgrow max_speech_duration_s is not made: there every cut
  // of continuous speech (gap: one frame) was merged back, and the option had no effect.
  const int64_t merge_gap = ms_to_samples(kMergeGapMs, sample_rate);
  const int64_t max_speech = max_speech_samples(o, n_window, sample_rate);
  std::vector<SampleRange> merged;
  for (const SampleRange& r : s) {
    if (!merged.empty() && r.start - merged.back().end < merge_gap &&
        (max_speech < 0 || r.end - merged.back().start <= max_speech))
      merged.back().end = r.end;
    else
      merged.push_back(r);
  }
  const int64_t min_speech = ms_to_samples(o.min_speech_duration_ms, sample_rate);
  std::erase_if(merged, [&](const SampleRange& r) { return r.end - r.start < min_speech; });

  // Padding: a gap narrower than two pads is shared half and half (computed from the gap as it
  // is before this pair is padded, with the earlier segment's start already padded).
  const int64_t pad = ms_to_samples(o.speech_pad_ms, sample_rate);
  for (size_t i = 0; i < merged.size(); ++i) {
    SampleRange& r = merged[i];
    if (i == 0) r.start = std::max<int64_t>(r.start - pad, 0);
    if (i + 1 < merged.size()) {
      SampleRange& next = merged[i + 1];
      const int64_t gap = next.start - r.end;
      const int64_t grow = gap < 2 * pad ? gap / 2 : pad;
      r.end = std::min(r.end + grow, audio_end);
      next.start = std::max<int64_t>(next.start - grow, 0);
    } else {
      r.end = std::min(r.end + pad, audio_end);
    }
  }
  return merged;
}

int64_t samples_to_cs(int64_t samples, int sample_rate) {
  return static_cast<int64_t>(std::floor(static_cast<double>(samples) * 100.0 / sample_rate + 0.5));
}

}  // namespace hark::vad
