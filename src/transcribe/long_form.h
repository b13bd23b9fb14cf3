// The long-form transcription loop (Whisper's): cut the log-mel of the whole input into 30 s
// windows, decode each one, keep its complete segments, and start the next window at the last
// complete timestamp, with the text so far as the prompt. It only schedules: what a decoded window
// yields comes from the window pipeline (window_pipeline.h), which the batched pipeline shares. It
// runs on one state's runner; the caller (the job strategies) prepares the request and reports
// through the hooks.
#pragma once
#include <functional>
#include <vector>

#include "decode/search_model.h"
#include "hark/hark.hpp"
#include "transcribe/decode_policy.h"
#include "transcribe/job_control.h"
#include "transcribe/job_language.h"
#include "transcribe/job_request.h"
#include "transcribe/loaded_model.h"

namespace hark {

// The drivers call these directly; whoever sets them wraps user code in JobControl::call.
struct LongFormHooks {
  std::function<void(std::vector<Segment>&& segments)> on_segments;  // each window's new segments, in order
  std::function<void(int percent)> on_progress;                      // of this request's audio
  std::function<bool()> on_encoder_begin;                            // false: stop before the window
  std::function<void(const Fallback&)> on_fallback;                  // times on the request's timeline
};

// Runs the loop on `model` (decode::WhisperSearchModel over a state's runner; a scripted one in tests).
// Stops (Transcript::aborted) when ctl says so.
Transcript run_long_form(const LoadedModel& m, decode::SearchModel& model, const JobRequest& req,
                         const TranscribeParams& p, JobControl& ctl, const LongFormHooks& hooks);

}  // namespace hark
