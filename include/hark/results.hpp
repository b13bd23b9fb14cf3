// hark: what a transcription gives back, the C++ API: a Transcript of segments (text, times,
// decoding figures, tokens, words), the windows it decoded and its timings; a language detection;
// and the batch of new segments a callback receives while a job runs.
#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include "hark/export.h"

namespace hark {

// ---- results ----
struct TokenData {
  int32_t id = 0;
  std::string text;          // the token's bytes (may be part of a UTF-8 character) or a special name
  float p = 0.0f;            // probability the model gave it
  int64_t t0 = -1, t1 = -1;  // 10 ms units, when token timestamps are on
  float logp = 0.0f;         // log p (of the rule-filtered distribution at temperature 1)
};

// A word timed by DTW over the alignment heads' cross-attention (TranscribeParams::word_timestamps),
// OpenAI's word dict: text with its leading space and merged punctuation, start and end, and the
// mean probability of its tokens.
struct Word {
  std::string text;
  int64_t t0 = 0, t1 = 0;  // 10 ms units from the start of the audio
  float p = 0.0f;
};

struct Segment {
  int64_t t0 = 0;  // start, 10 ms units from the start of the audio
  int64_t t1 = 0;  // end
  // The start of the window it was decoded in (OpenAI's and faster-whisper's "seek"), 10 ms units
  // from the start of the audio: segments of one window share it.
  int64_t seek = 0;
  std::string text;  // valid UTF-8
  std::vector<TokenData> tokens;
  // How the window this segment came from was decoded (OpenAI's segment fields): the temperature
  // of the pass that was kept, its average log-probability (end-of-text included), the gzip
  // compression ratio of the window's text, and P(no speech) at its start.
  float temperature = 0.0f;
  double avg_logprob = 0.0;
  double compression_ratio = 0.0;
  float no_speech_prob = 0.0f;
  std::vector<Word> words;  // with word_timestamps; their texts joined are the segment's text
  // tinydiarize models (TranscribeParams::tdrz_enable): the model marked a change of speaker right
  // after this segment. whisper.rn's text gets " [SPEAKER_TURN]" for it: the front ends add that.
  bool speaker_turn_next = false;
};

struct Timings {
  // load_ms: the model's load (once per Context); total_ms: this transcribe call, load excluded.
  double load_ms = 0, mel_ms = 0, encode_ms = 0, decode_ms = 0, total_ms = 0;
  double vad_ms = 0;  // TranscribeParams::vad: finding the speech (the VAD network and the cut)
  int n_windows = 0;  // encoder runs
  int n_threads = 0;  // compute threads the job ran with
  // Tokens chosen, each from one decoder step's logits: every candidate (best_of) and every
  // fallback pass counted; prefix passes and language detection are not tokens.
  int n_decode_tokens = 0;
  // Decoder graph runs: prefix passes, language detection and token steps; a batch step of many
  // sequences (beam search, best-of) counts once.
  int n_decode_steps = 0;
  double audio_seconds = 0;
  double decode_ms_per_token() const { return n_decode_tokens ? decode_ms / n_decode_tokens : 0.0; }
  double decode_ms_per_step() const { return n_decode_steps ? decode_ms / n_decode_steps : 0.0; }
  // Seconds of work per second of audio (< 1: faster than real time), load excluded.
  double real_time_factor() const { return audio_seconds > 0 ? total_ms / 1000.0 / audio_seconds : 0.0; }
};

// The stretch of audio one encoder window decoded, 10 ms units. Windows follow each other from
// the start of the audio to its end; one starts where the last complete segment of the one before
// ended, so they may overlap.
struct Window {
  int64_t t0 = 0, t1 = 0;
  bool skipped_as_silence = false;
  // The language it was decoded in: the job's, or with TranscribeParams::multilingual its own.
  std::string language;
};

struct Transcript {
  int job_id = 0;  // the job it ran as
  std::vector<Segment> segments;
  // Code of the language transcribed ("en", ...): the one asked for, the one detected (auto), or
  // "en" for English-only models; "" when auto detection never ran (aborted before the first window).
  std::string language;
  float language_prob = 0.0f;  // the detected language's probability; 0 when not detected
  int n_fallback_windows = 0;  // windows decoded again at a higher temperature
  Timings timings;
  std::vector<Window> windows;
  // The caller stopped the job (Job::abort, jobs::abort_all, should_abort or on_encoder_begin);
  // segments hold what was finished before (whisper.rn's isAborted).
  bool aborted = false;
  HARK_API std::string text() const;  // all segments' text joined
};

struct LanguageDetection {
  std::string language;      // code of the most likely language ("de", ...)
  float probability = 0.0f;  // its probability
  // One per language of the model, by id (language_code_at(i)); they sum to 1.
  std::vector<float> probs;
  bool aborted = false;  // stopped by should_abort: nothing else is set
};

// What on_new_segments reports, as whisper.rn's onNewSegments: the segments that just became
// final, how many they are, and how many the job has produced so far (them included).
struct NewSegments {
  std::span<const Segment> segments;  // the new ones; valid during the callback only
  int n_new = 0;
  int total = 0;
  std::string text;  // the new segments' text joined
};

}  // namespace hark
