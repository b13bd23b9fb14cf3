// A whole transcription (all of TranscribeParams) as one of three named strategies over the
// drivers, each reporting through the same callbacks (segments in audio order, progress):
//   batched      batch_size > 1: the VAD's speech merged into chunks, decoded in lanes
//                (batched_pipeline.h)
//   speech only  vad: the VAD's speech cut out and joined (vad_audio.h), transcribed as below,
//                its times mapped back to the caller's audio
//   parts        the long-form loop (long_form.h) over n_processors parts side by side on extra
//                states (1: the plain sequential run)
// transcribe_job checks the request once, registers the job and picks the strategy.
#pragma once
#include <functional>
#include <memory>
#include <span>

#include "hark/hark.hpp"
#include "transcribe/state.h"

namespace hark {

// Lends a state for each extra part of an n_processors run.
using StateLender = std::function<std::shared_ptr<StateImpl>(int n_threads)>;
Transcript transcribe_job(StateImpl& main, const StateLender& acquire, std::span<const float> samples,
                          const TranscribeParams& p);

}  // namespace hark
