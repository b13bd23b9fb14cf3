// Converter and resample(): downmix, validate and resample with libsoxr.
#include <soxr.h>

#include <algorithm>
#include <cmath>
#include <cstdio>

#include "audio/audio.h"
#include "runtime/error.h"

namespace hark::audio {
namespace {

std::string seconds_text(double s) {
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.3f s", s);
  return buf;
}

void check_format(const std::string& name, int rate, int channels) {
  HARK_CHECK(rate >= kMinSourceRate && rate <= kMaxSourceRate,
             name + ": unsupported sample rate " + std::to_string(rate) + " Hz (expected " +
                 std::to_string(kMinSourceRate) + " to " + std::to_string(kMaxSourceRate) + " Hz)");
  HARK_CHECK(channels >= 1 && channels <= kMaxChannels, name + ": unsupported channel count " +
                                                            std::to_string(channels) + " (expected 1 to " +
                                                            std::to_string(kMaxChannels) + ")");
}

// Throws on the first NaN/Inf, naming its frame, channel and time. `first_frame` is the index of
// in[0] in the whole stream. Rejected rather than zeroed: such values mean a broken decoder or
// file, and silently patching them would hide that from the user.
void check_finite(const std::string& name, const float* in, size_t n_frames, int channels, int64_t first_frame,
                  int rate) {
  const size_t n_values = n_frames * size_t(channels);
  for (size_t i = 0; i < n_values; ++i) {
    if (std::isfinite(in[i])) continue;
    const int64_t frame = first_frame + int64_t(i / channels);
    HARK_CHECK(false, name + ": sample " + std::to_string(frame) +
                          (channels > 1 ? " (channel " + std::to_string(i % channels) + ")" : std::string()) + " at " +
                          seconds_text(double(frame) / rate) + " is " + (std::isnan(in[i]) ? "NaN" : "infinite") +
                          "; the audio data is corrupt");
  }
}

// round(n * out / in); no overflow for any n we accept (8 h at 768 kHz < 2^35, rates < 2^20).
int64_t scaled_length(int64_t n, int in_rate, int out_rate) { return (n * out_rate + in_rate / 2) / in_rate; }

}  // namespace

// A libsoxr stream for one channel. soxr's output lags its input by the filter delay; a flush
// drains it. libsoxr 0.1.3 then has produced exactly round(n * ratio) samples in every case we
// measured; the owners still trim or pad to that length, so the duration promise in audio.h
// does not rest on a library detail.
class detail::SoxrStream {
 public:
  SoxrStream(int in_rate, int out_rate) : ratio_(double(out_rate) / in_rate) {
    soxr_error_t err = nullptr;
    const soxr_io_spec_t io = soxr_io_spec(SOXR_FLOAT32_I, SOXR_FLOAT32_I);
    const soxr_quality_spec_t quality = soxr_quality_spec(SOXR_HQ, 0);
    // One thread: callers already parallelise across jobs, and a fixed thread count keeps the
    // output bit-identical from run to run.
    const soxr_runtime_spec_t runtime = soxr_runtime_spec(1);
    soxr_ = soxr_create(in_rate, out_rate, 1, &err, &io, &quality, &runtime);
    if (err != nullptr && soxr_ != nullptr) soxr_delete(soxr_), soxr_ = nullptr;  // no dtor runs
    HARK_CHECK(soxr_ != nullptr, std::string("libsoxr could not create a ") + std::to_string(in_rate) + " -> " +
                                     std::to_string(out_rate) + " Hz resampler: " + (err ? err : "unknown error"));
  }
  ~SoxrStream() { soxr_delete(soxr_); }
  SoxrStream(const SoxrStream&) = delete;
  SoxrStream& operator=(const SoxrStream&) = delete;

  // in == nullptr flushes.
  void process(const float* in, size_t n, std::vector<float>* out) {
    size_t offered = 0;
    for (;;) {
      const size_t room = static_cast<size_t>(double(n - offered) * ratio_) + 1024;
      const size_t base = out->size();
      out->resize(base + room);
      size_t used = 0, made = 0;
      soxr_error_t err = soxr_process(soxr_, in ? in + offered : nullptr, in ? n - offered : 0, &used,
                                      out->data() + base, room, &made);
      HARK_CHECK(err == nullptr, std::string("libsoxr failed while resampling: ") + err);
      out->resize(base + made);
      offered += used;
      if (in ? offered >= n : made == 0) return;
      if (in && used == 0 && made == 0) return;  // soxr buffered everything it will take
    }
  }

 private:
  soxr_t soxr_ = nullptr;
  double ratio_;
};

Converter::Converter(int sample_rate, int channels, std::string name, int channel)
    : name_(std::move(name)),
      rate_(sample_rate),
      channels_(channels),
      channel_(channel),
      max_frames_in_(kMaxSeconds * int64_t(sample_rate)) {
  check_format(name_, sample_rate, channels);
  HARK_CHECK_AS(InvalidArgument, "channel", channel >= -1 && channel < channels,
                name_ + ": has " + std::to_string(channels) + " channel" + (channels == 1 ? "" : "s") +
                    ", no channel " + std::to_string(channel));
  if (rate_ != kSampleRate) resampler_ = std::make_unique<detail::SoxrStream>(rate_, kSampleRate);
}

Converter::~Converter() = default;

void Converter::set_max_seconds(double seconds) {
  if (!(seconds > 0) || seconds >= double(kMaxSeconds)) return;
  max_seconds_ = seconds;
  max_frames_in_ = int64_t(std::ceil(seconds * rate_));
}

void Converter::push(const float* in, size_t n_frames, std::vector<float>* out) {
  HARK_CHECK(!finished_, name_ + ": audio pushed after finish()");
  if (n_frames == 0) return;
  if (frames_in_ + int64_t(n_frames) > max_frames_in_) {
    char limit[64];
    std::snprintf(limit, sizeof limit, "%g s", max_seconds_);
    const std::string why = max_seconds_ > 0 ? name_ + ": longer than " + limit + ", the most asked for"
                                             : name_ + ": longer than the " + std::to_string(kMaxSeconds / 3600) +
                                                   " hour limit hark accepts; split the audio first";
    HARK_CHECK_AS(ResourceExhausted, "", false, why);
  }
  // Validate before anything is resampled, so the index we report is the caller's own.
  check_finite(name_, in, n_frames, channels_, frames_in_, rate_);
  frames_in_ += int64_t(n_frames);

  const float* mono = in;
  if (channel_ >= 0 && channels_ > 1) {
    mono_.resize(n_frames);
    for (size_t f = 0; f < n_frames; ++f) mono_[f] = in[f * channels_ + channel_];
    mono = mono_.data();
  } else if (channels_ > 1) {
    mono_.resize(n_frames);
    const float scale = 1.0f / float(channels_);
    for (size_t f = 0; f < n_frames; ++f) {
      float sum = 0.0f;
      for (int c = 0; c < channels_; ++c) sum += in[f * channels_ + c];
      mono_[f] = sum * scale;
    }
    mono = mono_.data();
  }
  const size_t before = out->size();
  if (resampler_) {
    resampler_->process(mono, n_frames, out);
  } else {
    out->insert(out->end(), mono, mono + n_frames);
  }
  samples_out_ += int64_t(out->size() - before);
}

void Converter::finish(std::vector<float>* out) {
  if (finished_) return;
  finished_ = true;
  if (!resampler_) return;
  const size_t before = out->size();
  resampler_->process(nullptr, 0, out);
  samples_out_ += int64_t(out->size() - before);
  const int64_t want = scaled_length(frames_in_, rate_, kSampleRate);
  const int64_t extra = samples_out_ - want;
  // Only the tail this call produced may be adjusted; soxr's delay means that is always enough.
  if (extra > 0) {
    out->resize(out->size() - size_t(std::min<int64_t>(extra, int64_t(out->size() - before))));
  } else if (extra < 0) {
    out->insert(out->end(), size_t(-extra), 0.0f);
  }
  samples_out_ = want;
}

std::vector<float> resample(const float* mono, size_t n, int in_rate, int out_rate) {
  check_format("resample", in_rate, 1);
  check_format("resample", out_rate, 1);
  HARK_CHECK_AS(ResourceExhausted, "", int64_t(n) <= kMaxSeconds * in_rate,
                "resample: " + std::to_string(n) + " samples at " + std::to_string(in_rate) +
                    " Hz is longer than the " + std::to_string(kMaxSeconds / 3600) + " hour limit hark accepts");
  check_finite("resample", mono, n, 1, 0, in_rate);
  if (in_rate == out_rate || n == 0) return std::vector<float>(mono, mono + n);
  std::vector<float> out;
  out.reserve(size_t(scaled_length(int64_t(n), in_rate, out_rate)) + 16);
  detail::SoxrStream r(in_rate, out_rate);
  r.process(mono, n, &out);
  r.process(nullptr, 0, &out);
  out.resize(size_t(scaled_length(int64_t(n), in_rate, out_rate)), 0.0f);
  return out;
}

}  // namespace hark::audio
