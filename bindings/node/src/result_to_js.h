// hark's results as the JavaScript objects whisper.rn returns.
//
//   TranscribeResult  { result, language, segments: [{ text, t0, t1 }], isAborted }
// plus hark's: languageProb, timings, and per segment `words` (wordTimestamps) and `tokens`
// (tokenTimestamps). Times are 10 ms units, as whisper.rn's. A tinydiarize speaker turn shows as
// " [SPEAKER_TURN]" after the segment's text, as whisper.rn writes it.
#pragma once
#include <napi.h>

#include <span>

#include "hark/hark.hpp"

namespace hark_node {

struct ResultShape {
  bool tokens = false;         // tokenTimestamps: each segment's tokens with their times
  bool speaker_turns = false;  // tdrzEnable
};

Napi::Object transcript_to_js(Napi::Env env, const hark::Transcript& t, const ResultShape& shape);
// onNewSegments' argument: { nNew, totalNNew, result, segments }.
Napi::Object new_segments_to_js(Napi::Env env, std::span<const hark::Segment> segments, int n_new, int total,
                                const ResultShape& shape);
// bench(): { config, nThreads, encodeMs, decodeMs, batchMs, promptMs }.
Napi::Object bench_to_js(Napi::Env env, const hark::BenchResult& b);
// VAD: [{ t0, t1 }].
Napi::Array vad_segments_to_js(Napi::Env env, const std::vector<hark::VadSegment>& segments);

}  // namespace hark_node
