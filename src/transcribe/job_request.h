// A transcription request as the drivers run it: TranscribeParams checked once against the model
// and the audio, and resolved (language index, prompt and suppressed tokens, alignment heads,
// threads). Every way of running a job (the long-form loop, the batched pipeline, the parts of an
// n_processors run) starts from one of these, so an option is checked in one place.
#pragma once
#include <cstdint>
#include <span>
#include <vector>

#include "decode/alignment_heads.h"
#include "hark/hark.hpp"
#include "transcribe/loaded_model.h"

namespace hark {

// A checked request: what the params ask for, resolved against the model and the audio.
struct JobRequest {
  std::span<const float> samples;  // the part to transcribe (offset and duration applied)
  int64_t offset_units = 0;        // where `samples` starts in the caller's audio, 10 ms units
  int lang = 0;                    // language index (when not auto)
  bool auto_language = false;
  std::vector<int32_t> prompt;    // initial prompt tokens
  std::vector<int32_t> hotwords;  // in front of every window's prompt (but the prefixed one's)
  std::vector<int32_t> prefix;    // the first window's text begins with these (and <|0.00|> before)
  std::vector<int32_t> suppress;  // never produced: special tokens, non-speech (suppress_nst),
                                  // the user's ids and the tokens suppress_regex matches
  int32_t speaker_turn = -1;      // tinydiarize's turn token when tdrz_enable, else -1
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

// A window's prompt (fed after <|startofprev|>): the hotwords in front unless the window has a
// prefix, then `context` (initial prompt and earlier text, oldest first) keeping its most recent
// tokens in the room left; n_text_ctx / 2 - 1 tokens in all, as Whisper's prompts.
std::vector<int32_t> window_prompt(const JobRequest& req, std::span<const int32_t> context, int n_text_ctx,
                                   bool has_prefix = false);

// A job's result before any window: its job id, the model's load time, the request's audio length,
// its thread count and its language as far as the request says (the one asked for, "en" for an
// English-only model, "" while auto has not decided). Every way of running a request starts here.
Transcript empty_transcript(const LoadedModel& m, const JobRequest& req, int job_id);

}  // namespace hark
