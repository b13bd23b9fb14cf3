#include "transcribe/state.h"

#include "decode/whisper_search_model.h"
#include "runtime/error.h"
#include "transcribe/batched_pipeline.h"
#include "transcribe/job_strategies.h"
#include "transcribe/language_detect.h"

namespace hark {

StateImpl::StateImpl(std::shared_ptr<const LoadedModel> model, int n_threads) : model_(std::move(model)) {
  backend_ = model_->device->init_backend({n_threads > 0 ? n_threads : model_->n_threads});
  RunnerOptions ro;
  ro.flash_attn = model_->flash_attn;
  ro.cross_kv_type = model_->cross_kv_type;
  runner_ = std::make_unique<WhisperRunner>(*model_->file, *backend_, ro);
}

StateImpl::~StateImpl() = default;

size_t StateImpl::bytes() const {
  return runner_->kv_cache_bytes() + runner_->encoder_compute_bytes() + runner_->decoder_compute_bytes();
}

namespace {

// Binds a job's stop condition to the runner for one call (the backends poll it between graph
// nodes, so an abort lands within one node's compute) and unbinds it however the call ends.
class StopBinding {
 public:
  StopBinding(WhisperRunner& r, std::function<bool()> stop) : r_(r) { r_.set_abort_callback(std::move(stop)); }
  ~StopBinding() { r_.set_abort_callback(nullptr); }
  StopBinding(const StopBinding&) = delete;
  StopBinding& operator=(const StopBinding&) = delete;

 private:
  WhisperRunner& r_;
};

}  // namespace

Transcript StateImpl::run(const JobRequest& req, const TranscribeParams& p, JobControl& ctl,
                          const LongFormHooks& hooks) {
  std::lock_guard<std::mutex> lock(busy_);
  backend_->set_n_threads(req.n_threads);
  const StopBinding bind(*runner_, [&ctl] { return ctl.should_stop(); });
  decode::WhisperSearchModel model(*runner_);
  return run_long_form(*model_, model, req, p, ctl, hooks);
}

Transcript StateImpl::run_batched(const JobRequest& req, const TranscribeParams& p, std::span<const VadSegment> speech,
                                  JobControl& ctl, const LongFormHooks& hooks) {
  std::lock_guard<std::mutex> lock(busy_);
  backend_->set_n_threads(req.n_threads);
  const StopBinding bind(*runner_, [&ctl] { return ctl.should_stop(); });
  decode::WhisperSearchModel model(*runner_);
  return hark::run_batched(*model_, model, req, p, speech, ctl, hooks);
}

LanguageDetection StateImpl::detect_language(std::span<const float> samples, const DetectLanguageParams& p) {
  std::lock_guard<std::mutex> lock(busy_);
  const std::function<bool()> stop = [&p] { return p.should_abort && p.should_abort(); };
  backend_->set_n_threads(p.n_threads > 0         ? p.n_threads
                          : default_threads() > 0 ? default_threads()
                                                  : model_->n_threads);
  const StopBinding bind(*runner_, stop);
  decode::WhisperSearchModel model(*runner_);
  return detect_language_on(*model_, model, samples, p, stop);
}

Transcript StateImpl::transcribe(std::span<const float> samples, const TranscribeParams& params) {
  // Extra parts of an n_processors run get states of their own, dropped afterwards.
  const StateLender fresh = [this](int n_threads) { return std::make_shared<StateImpl>(model_, n_threads); };
  return transcribe_job(*this, fresh, samples, params);
}

}  // namespace hark
