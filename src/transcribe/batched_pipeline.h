// The batched long-audio pipeline (TranscribeParams::batch_size > 1; faster-whisper's
// BatchedInferencePipeline idea): the VAD's speech segments are merged into chunks of at most 30 s
// of the caller's audio, and batch_size chunks at a time are encoded (each into its own
// cross-attention window) and decoded together, one decoder step for every chunk of the batch
// (decode/batched_search: greedy, best-of or beam search per chunk). Chunks are independent: no
// previous text as prompt, each chunk's text kept whole (a last segment without a closing timestamp ends at the chunk's end), times are the
// chunk's offset plus the model's timestamps, so they are exact on the caller's timeline.
//
// The rest follows the long-form loop: its DecodePolicy (rules, suppression, token limit), the
// chunks that fail the fallback checks decoded again (together, on their windows) at the next
// temperatures, silence skipped, token timestamps, max_len and single_segment, the language
// detected once on the first chunk, on_encoder_begin before each chunk, segments reported chunk by
// chunk in audio order, progress after each batch, aborts between graph nodes.
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

// Runs the pipeline on `model` over req.samples, cut at `speech` (VAD segments of req.samples).
Transcript run_batched(const LoadedModel& m, decode::Model& model, const JobRequest& req, const TranscribeParams& p,
                       std::span<const VadSegment> speech, JobControl& ctl, const LongFormHooks& hooks);

}  // namespace hark
