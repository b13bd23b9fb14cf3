// The batched long-audio pipeline (TranscribeParams::batch_size > 1; faster-whisper's
// BatchedInferencePipeline idea): the VAD's speech segments are merged into chunks of at most 30 s
// of the caller's audio and decoded batch_size at a time with continuous batching
// (decode::BatchDecoder): each of batch_size lanes encodes a chunk into its own cross-attention
// window and searches it (greedy, best-of or beam search), all lanes' rows one decoder step, and a
// lane whose chunk is done takes the next one while the others go on. Chunks are independent: no
// previous text as prompt, each chunk's text kept whole (a last segment without a closing
// timestamp ends at the chunk's end), times are the chunk's offset plus the model's timestamps, so
// they are exact on the caller's timeline.
//
// It only schedules: each finished chunk goes through the window pipeline the long-form loop uses
// (window_pipeline.h), and the rest follows that loop too: its DecodePolicy (rules, suppression, token limit), a chunk
// that fails the fallback checks decoded again on its window at the next temperature, silence
// skipped, token timestamps, max_len and single_segment, the language detected once on the first
// chunk, on_encoder_begin before each chunk, segments reported chunk by chunk in audio order,
// progress after each, aborts between graph nodes. With word timestamps (aligned in slot 0, which
// running lanes use) the lanes are filled and emptied together, batch by batch.
#pragma once
#include <cstdint>
#include <span>
#include <vector>

#include "hark/vad.hpp"
#include "transcribe/long_form.h"

namespace hark {

// A chunk of the caller's audio: [t0, t1) in 10 ms units from samples[0].
struct AudioChunk {
  int64_t t0 = 0, t1 = 0;
  bool operator==(const AudioChunk&) const = default;
};

// Speech segments (ascending, 10 ms units) merged into chunks: a segment joins the chunk before it
// while the chunk (from its first start to this end) stays within max_units; a segment longer
// than max_units is cut into max_units pieces. Segments are clamped to [0, n_units]; empty ones are
// skipped.
std::vector<AudioChunk> merge_speech_chunks(std::span<const VadSegment> speech, int64_t n_units, int64_t max_units);

// Runs the pipeline on `model` over req.samples, cut at `speech` (VAD segments of req.samples);
// `req` and `p` as check_request left them (batch_size among what it checked).
Transcript run_batched(const LoadedModel& m, decode::SearchModel& model, const JobRequest& req,
                       const TranscribeParams& p, std::span<const VadSegment> speech, JobControl& ctl,
                       const LongFormHooks& hooks);

}  // namespace hark
