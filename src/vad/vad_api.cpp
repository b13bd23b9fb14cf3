// The public VAD API (hark/vad.hpp) over the Silero runner, the segment rules and the energy VAD.
#include <algorithm>
#include <cmath>
#include <mutex>

#include "backend/device.h"
#include "backend/device_registry.h"
#include "hark/vad.hpp"
#include "runtime/error.h"
#include "vad/energy.h"
#include "vad/silero_vad.h"
#include "vad/speech_segments.h"

namespace hark {

namespace {

constexpr int kSampleRate = 16000;

void check_samples(std::span<const float> samples) {
  for (float v : samples) HARK_CHECK(std::isfinite(v), "vad: the samples hold NaN or infinity");
}

class StreamImpl final : public VadStream {
 public:
  StreamImpl(std::shared_ptr<const vad::SileroFile> file, const VadModelParams& p, Device* device)
      : vad_(std::move(file), p.n_threads, device, p.upstream_context),
        pending_(static_cast<size_t>(vad_.n_window())) {}

  std::vector<float> push(std::span<const float> samples) override {
    check_samples(samples);
    std::vector<float> out;
    const size_t w = pending_.size();
    size_t i = 0;
    // finish the pending frame first, then whole frames straight from the caller's buffer
    if (n_pending_ > 0) {
      const size_t take = std::min(w - n_pending_, samples.size());
      std::copy_n(samples.begin(), take, pending_.begin() + static_cast<std::ptrdiff_t>(n_pending_));
      n_pending_ += take;
      i = take;
      if (n_pending_ == w) {
        out.push_back(run(pending_.data()));
        n_pending_ = 0;
      }
    }
    const size_t whole = (samples.size() - i) / w;
    if (whole > 0) {
      out.resize(out.size() + whole);
      vad_.process(samples.data() + i, whole, out.data() + out.size() - whole);
      frames_ += static_cast<int64_t>(whole);
      i += whole * w;
    }
    std::copy(samples.begin() + static_cast<std::ptrdiff_t>(i), samples.end(),
              pending_.begin() + static_cast<std::ptrdiff_t>(n_pending_));
    n_pending_ += samples.size() - i;
    return out;
  }

  float process(std::span<const float> frame) override {
    HARK_CHECK(frame.size() == pending_.size(), "vad stream: process() takes frames of " +
                                                    std::to_string(pending_.size()) + " samples, got " +
                                                    std::to_string(frame.size()));
    HARK_CHECK(n_pending_ == 0, "vad stream: " + std::to_string(n_pending_) +
                                    " pushed samples are pending; flush() or push() the rest first");
    check_samples(frame);
    return run(frame.data());
  }

  std::vector<float> flush() override {
    if (n_pending_ == 0) return {};
    std::fill(pending_.begin() + static_cast<std::ptrdiff_t>(n_pending_), pending_.end(), 0.0f);
    n_pending_ = 0;
    return {run(pending_.data())};
  }

  void reset() override {
    vad_.reset();
    n_pending_ = 0;
    frames_ = 0;
  }
  int64_t frames() const override { return frames_; }
  size_t pending_samples() const override { return n_pending_; }
  int frame_samples() const override { return vad_.n_window(); }

 private:
  float run(const float* frame) {
    ++frames_;
    return vad_.process(frame);
  }
  vad::SileroVad vad_;
  std::vector<float> pending_;
  size_t n_pending_ = 0;
  int64_t frames_ = 0;
};

class ModelImpl final : public VadModel {
 public:
  ModelImpl(std::shared_ptr<const vad::SileroFile> file, const VadModelParams& p, Device* device)
      : file_(std::move(file)), params_(p), device_(device), vad_(file_, p.n_threads, device, p.upstream_context) {}

  std::string model_type() const override { return file_->hparams().model_type; }
  std::string version() const override { return file_->hparams().version_str(); }
  int frame_samples() const override { return file_->hparams().n_window; }

  VadResult detect_speech(std::span<const float> samples, const VadOptions& options) override {
    vad::check_segment_options(options);
    VadResult r;
    r.frame_samples = frame_samples();
    r.probs = probabilities(samples);
    r.segments = vad_segments_from_probs(r.probs, options, r.frame_samples);
    return r;
  }

  std::vector<float> probabilities(std::span<const float> samples) override {
    check_samples(samples);
    std::lock_guard<std::mutex> lock(mu_);
    return vad_.detect(samples.data(), samples.size());
  }

  std::unique_ptr<VadStream> stream() override { return std::make_unique<StreamImpl>(file_, params_, device_); }

 private:
  std::shared_ptr<const vad::SileroFile> file_;
  VadModelParams params_;
  Device* device_;
  std::mutex mu_;  // one network state: whole-buffer calls take turns
  vad::SileroVad vad_;
};

}  // namespace

std::vector<VadSegment> vad_segments_from_probs(std::span<const float> probs, const VadOptions& options,
                                                int frame_samples) {
  vad::check_segment_options(options);
  HARK_CHECK(frame_samples > 0, "vad: frame_samples must be > 0, got " + std::to_string(frame_samples));
  const std::vector<float> p(probs.begin(), probs.end());
  std::vector<VadSegment> out;
  for (const vad::SampleRange& r : vad::speech_ranges(p, frame_samples, kSampleRate, options))
    out.push_back({vad::samples_to_cs(r.start, kSampleRate), vad::samples_to_cs(r.end, kSampleRate)});
  return out;
}

std::shared_ptr<VadModel> VadModel::load(const std::string& path, const VadModelParams& params) {
  HARK_CHECK_AS(InvalidArgument, "n_threads", params.n_threads >= 1,
                "vad: n_threads must be >= 1, got " + std::to_string(params.n_threads));
  const std::string name = params.device.empty() ? kCpuDeviceName : params.device;
  Device* device = Registry::global().find(name);
  HARK_CHECK_AS(InvalidArgument, "device", device != nullptr && device->type() == DeviceType::CPU,
                "vad: unknown device '" + name + "' (the VAD runs on \"cpu\" or \"cpu-ref\")");
  std::shared_ptr<const vad::SileroFile> file = vad::SileroFile::open(path);
  return std::make_shared<ModelImpl>(std::move(file), params, device);
}

EnergyVadResult energy_vad(std::span<const float> samples, const EnergyVadOptions& options) {
  return vad::energy_vad(samples.data(), samples.size(), kSampleRate, options);
}

}  // namespace hark
