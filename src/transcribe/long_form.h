// The long-form transcription loop (Whisper's): cut the log-mel of the whole input into 30 s
// windows, decode each one, keep its complete segments, and start the next window at the last
// complete timestamp, with the text so far as the prompt. It runs on one state's runner; the
// caller (State) prepares the request and reports through the hooks.
#pragma once
#include <cstdint>
#include <functional>
#include <span>
#include <vector>

#include "backend/backend.h"
#include "hark/hark.hpp"
#include "decode/fallback.h"
#include "decode/greedy.h"
#include "decode/model.h"
#include "decode/segments.h"
#include "transcribe/job_control.h"
#include "transcribe/loaded_model.h"

namespace hark {

// A checked request: what the params ask for, resolved against the model and the audio.
struct JobRequest {
  std::span<const float> samples;  // the part to transcribe (offset and duration applied)
  int64_t offset_units = 0;        // where `samples` starts in the caller's audio, 10 ms units
  int lang = 0;                    // language index (when not auto)
  bool auto_language = false;
  std::vector<int32_t> prompt;     // initial prompt tokens
  std::vector<int32_t> suppress;   // never produced: special tokens, non-speech (suppress_nst),
                                   // the user's ids and the tokens suppress_regex matches
  int32_t speaker_turn = -1;       // tinydiarize's turn token when tdrz_enable, else -1
  int n_threads = 1;
  std::vector<decode::AlignmentHead> alignment_heads;  // word timestamps: the heads DTW reads
};

// The part of the caller's audio a request covers: offset and duration (0: to the end) applied,
// checked to be non-empty and finite; a hark::Error starting with `what` names the bad value.
std::span<const float> checked_audio(std::span<const float> samples, int64_t offset_ms, int64_t duration_ms,
                                     const char* what);

// Validates params against the model and the audio (every decoding option too: a bad temperature,
// best_of or regex fails here, before any compute); throws hark::Error naming what is wrong.
JobRequest check_request(const LoadedModel& m, std::span<const float> samples, const TranscribeParams& p);

// How every window of a job is decoded: the search request (rules, suppression, token limit,
// best_of, beams; prompt, start and temperature are set per window), the fallback temperatures
// (the first, then up by temperature_inc to 1.0) and the fallback thresholds. Shared by the
// long-form loop and the batched pipeline, so both decode by the same rules.
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

// Token t0/t1 of one segment (token_timestamps) from the probabilities recorded at each token's step.
void set_token_times(const SpecialTokens& st, const decode::WindowTokens& w, const decode::RawSegment& rs,
                     int64_t window_offset, const TranscribeParams& p, Segment* seg);

// The job's language, decided once for the whole job (as Whisper does): the one asked for, or with
// "auto" what the first window's logits say. Keeps the transcript's language fields and the
// window start sequence ([sot, language, task, (notimestamps)]) that follows from it.
class JobLanguage {
 public:
  JobLanguage(const LoadedModel& m, const JobRequest& req, const TranscribeParams& p, Transcript& out);
  // With the job's first window encoded in `model`: when still unknown, guesses it (one decoder
  // step, counted in the transcript's timings). False when the guess was aborted.
  bool settle(decode::Model& model);
  bool known() const { return known_; }
  int id() const { return lang_; }
  const std::vector<int32_t>& start() const { return start_; }

 private:
  const LoadedModel& m_;
  const TranscribeParams& p_;
  Transcript& out_;
  int lang_;
  bool known_;
  std::vector<int32_t> start_;
};

// The public segments of one decoded window: text, the window's decoding figures, each token's
// id/text/p/logp, and token times when asked (token_time_offset: the window's start in the
// caller's audio, 10 ms units). The long-form loop and the batched pipeline both build them here.
std::vector<Segment> window_segments(const LoadedModel& m, const decode::WindowTokens& w,
                                     std::span<const decode::RawSegment> raw, double compression_ratio,
                                     int64_t token_time_offset, const TranscribeParams& p, bool token_timestamps);
// After word timestamps moved segment bounds: every token time clamped inside its segment.
void keep_token_times_inside(std::vector<Segment>& segments);
// Segments cut to at most p.max_len characters (max_len.h), parts' texts decoded from their tokens.
std::vector<Segment> wrap_to_max_len(const LoadedModel& m, std::vector<Segment> segments, const TranscribeParams& p);

// A job's empty result: its job id, the model's load time and the request's audio length, which
// every way of running a request (long_form, batched_pipeline) reports the same way.
Transcript start_transcript(const LoadedModel& m, const JobRequest& req, JobControl& ctl);

// The loop calls these directly; whoever sets them wraps user code in JobControl::call.
struct LongFormHooks {
  std::function<void(std::vector<Segment>&& segments)> on_segments;  // each window's new segments, in order
  std::function<void(int percent)> on_progress;                      // of this request's audio
  std::function<bool()> on_encoder_begin;                            // false: stop before the window
};

// Runs the loop on `model` (decode::RunnerModel over a state's runner; a scripted one in tests).
// Stops (Transcript::aborted) when ctl says so.
Transcript run_long_form(const LoadedModel& m, decode::Model& model, const JobRequest& req,
                         const TranscribeParams& p, JobControl& ctl, const LongFormHooks& hooks);

}  // namespace hark
