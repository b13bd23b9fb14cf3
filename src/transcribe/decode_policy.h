// How every window of a job is decoded, shared by the long-form loop and the batched pipeline so
// both decode by the same rules: the search request, the fallback temperatures and thresholds, the
// compression ratio the fallback checks, and the sampling seed of each pass.
#pragma once
#include <cstdint>
#include <vector>

#include "decode/fallback.h"
#include "decode/window_search.h"
#include "hark/hark.hpp"
#include "transcribe/job_request.h"
#include "transcribe/loaded_model.h"

namespace hark {

// The search request (rules, suppression, token limit, best_of, beams; prompt, start and
// temperature are set per window), the fallback temperatures (the first, then up by
// temperature_inc to 1.0) and the fallback thresholds.
struct DecodePolicy {
  decode::WindowRequest request;
  std::vector<float> temperatures;
  decode::Thresholds thresholds;
};
DecodePolicy decode_policy(const LoadedModel& m, const JobRequest& req, const TranscribeParams& p, int n_text_ctx);

// The gzip compression ratio of a window's text tokens (the fallback check's input).
double text_compression_ratio(const LoadedModel& m, const decode::WindowTokens& w);

// The sampling seed of one pass (fallback step) of the window at `seek` (10 ms units): splitmix64
// of the three, so a window draws the same tokens however the job is cut or batched.
uint64_t mix_seed(uint64_t seed, int64_t seek, int pass);

}  // namespace hark
