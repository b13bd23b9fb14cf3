// StateImpl: one job's working memory and compute stream (the public hark::State): a backend with
// its own thread pool, and a WhisperRunner (KV cache + compute buffers) on the shared weights.
//
// run() and run_batched() are where a driver runs on this state: one job at a time, with the job's
// stop condition bound to the backend (polled between graph nodes). Which driver runs, and how its
// hooks become the public callbacks, is the job strategies' part (job_strategies.h).
#pragma once
#include <memory>
#include <mutex>

#include "backend/backend.h"
#include "hark/hark.hpp"
#include "hark/vad.hpp"
#include "model/whisper_runner.h"
#include "transcribe/job_control.h"
#include "transcribe/job_request.h"
#include "transcribe/loaded_model.h"
#include "transcribe/long_form.h"

namespace hark {

class StateImpl final : public State {
 public:
  StateImpl(std::shared_ptr<const LoadedModel> model, int n_threads);
  // The thread count of jobs that name none: new_state's count (0: the context's). Pool states
  // keep 0, so Context::transcribe follows the context's count as documented.
  void set_default_threads(int n) { default_threads_ = n; }
  int default_threads() const { return default_threads_; }
  ~StateImpl() override;

  size_t bytes() const override;
  Transcript transcribe(std::span<const float> samples, const TranscribeParams& params) override;
  LanguageDetection detect_language(std::span<const float> samples, const DetectLanguageParams& params) override;

  // Runs a checked request as (part of) the job behind ctl, one job at a time on this state.
  Transcript run(const JobRequest& req, const TranscribeParams& p, JobControl& ctl, const LongFormHooks& hooks);
  // The same for the batched pipeline (batch_size > 1), cut at `speech` (VAD segments of req.samples).
  Transcript run_batched(const JobRequest& req, const TranscribeParams& p, std::span<const VadSegment> speech,
                         JobControl& ctl, const LongFormHooks& hooks);

  WhisperRunner& runner() { return *runner_; }
  Backend& backend() { return *backend_; }
  const LoadedModel& model() const { return *model_; }

 private:
  std::shared_ptr<const LoadedModel> model_;
  int default_threads_ = 0;
  std::unique_ptr<Backend> backend_;
  std::unique_ptr<WhisperRunner> runner_;
  std::mutex busy_;  // held while a job runs here
};

}  // namespace hark
