// hark: the options of one transcription (TranscribeParams, with whisper.cpp's and whisper.rn's
// names and defaults) and of a language detection, the C++ API. The library checks every option
// once, before any compute, and throws hark::Error naming a bad one.
#pragma once
#include <cstdint>
#include <functional>
#include <limits>
#include <memory>
#include <string>
#include <vector>

#include "hark/jobs.hpp"
#include "hark/results.hpp"
#include "hark/vad.hpp"

namespace hark {

// ---- language detection (OpenAI's detect_language, whisper.cpp's whisper_lang_auto_detect) ----
struct DetectLanguageParams {
  int64_t offset_ms = 0;               // the 30 s of audio from here are listened to
  int n_threads = 0;                   // 0: the context's
  std::function<bool()> should_abort;  // returns true to stop; polled as in transcribe
  // A log-mel spectrogram to listen to instead of the samples (faster-whisper's features=): the
  // model's n_mels rows of frames, row-major, normalised as Whisper's log_mel_spectrogram is; its
  // first 3000 frames (30 s) are used, fewer padded with zeros as Whisper's pad_or_trim pads them.
  // Empty: the log-mel of the samples (offset_ms applies to the samples only).
  std::vector<float> mel;
};

// ---- one transcription ----
// A window decoded again at a higher temperature (OpenAI's decode_with_fallback): its text was too
// repetitive (compression_ratio above the threshold) or too unsure (avg_logprob below it). Told
// so a caller waiting on a slow window knows why it is slow.
struct Fallback {
  int64_t t0 = 0;  // the window, 10 ms units on the caller's timeline (as Segment's)
  int64_t t1 = 0;
  float temperature = 0.0f;        // the temperature it is decoded at next
  double compression_ratio = 0.0;  // of the text that failed
  double avg_logprob = 0.0;
};

// The largest TranscribeParams::batch_size (chunks decoded together; beyond this a step is
// compute-bound and each chunk's cross-attention cache only costs memory).
inline constexpr int kMaxBatchSize = 32;

struct TranscribeParams {
  std::string language = "en";  // a language code, or "auto" to detect (multilingual models)
  bool translate = false;       // into English (multilingual models)
  int n_threads = 0;            // 0: the state's (new_state's count), else the context's
  int n_processors = 1;         // > 1: the audio is cut into this many parts decoded in parallel, each on
                                // its own state (whisper.cpp's whisper_full_parallel); threads are shared out
  int64_t offset_ms = 0;        // start here in the audio
  int64_t duration_ms = 0;      // 0: to the end
  // Only these clips are transcribed (OpenAI's and faster-whisper's clip_timestamps): seconds
  // from offset_ms, start, end, start, end, ... (an odd count: the last clip runs to the end);
  // each clip in windows of at most 30 s that stop at its end, the previous text still the prompt
  // across clips; the times stay the audio's. Empty: all of it. Not with vad or batch_size > 1.
  std::vector<float> clip_timestamps;
  bool timestamps = true;         // false: one segment per window, no timestamp tokens
  int max_tokens_per_window = 0;  // 0: the model's limit (n_text_ctx / 2)
  std::string initial_prompt;     // text the model sees as previous context
  // The same as token ids (faster-whisper's initial_prompt as ids): text tokens (below
  // end-of-text); not with initial_prompt.
  std::vector<int32_t> initial_prompt_tokens;
  // Words the model should expect (faster-whisper's hotwords): " " + the text, stripped, goes
  // after <|startofprev|> in front of every window's prompt (the previous text then keeps its
  // most recent tokens in what room is left; at most n_text_ctx / 2 - 1 tokens in all). Not used
  // in the window that has a prefix. Empty: none.
  std::string hotwords;
  // The first window's text begins with this (faster-whisper's prefix): " " + the text, stripped,
  // forced after the start sequence (after <|0.00|> when timestamps are on), part of the
  // window's text, the search going on from its end. Not with batch_size > 1 (each chunk is a
  // first window). Empty: none.
  std::string prefix;
  // The language is detected in every window, and the window decoded in it (faster-whisper's
  // multilingual: for audio that changes language); the transcript's language is the first
  // window's, each window record says its own. With translate, the windows not in English are
  // translated and the English ones transcribed (faster-whisper's output_language "en"; without
  // translate, its "hybrid"). Multilingual models only.
  bool multilingual = false;

  // ---- decoding policy: OpenAI's transcribe()/decode() and whisper.cpp's whisper_full meanings ----
  // Temperatures tried per window: temperature, temperature + temperature_inc, ... up to 1.0
  // (always the first). temperature_inc 0: no fallback (whisper.cpp's -nf). A window is decoded
  // again at the next one when its text's gzip compression ratio > compression_ratio_threshold or
  // its average log-probability < logprob_threshold (unless it is silence, see below).
  // The defaults are OpenAI's, whisper.cpp's and whisper.rn's: 0, 0.2, 0.4, ... 1.0.
  float temperature = 0.0f;
  float temperature_inc = 0.2f;
  // When not empty, the temperatures tried per window, in order (faster-whisper's temperature
  // list); temperature and temperature_inc are then not used. Each finite and >= 0; at most 32.
  std::vector<float> temperatures;
  int best_of = 5;               // candidates sampled at temperature > 0, the best kept
  float length_penalty = -1.0f;  // ranking: < 0 divide by length; else alpha of ((5 + len) / 6)^alpha
  // length_penalty as CTranslate2's exponent instead (faster-whisper's length_penalty):
  // score = sum of log-probs / length^length_penalty (1: by length, the same as -1 above).
  bool length_penalty_power = false;
  // Beam search at temperature 0 (1..64; at T > 0, as in OpenAI, best_of sampling runs instead):
  // beam_size beams decoded as one batch per step, finished candidates gathered until
  // round(beam_size * patience). Default 1 (greedy), the default of OpenAI's transcribe()
  // (DecodingOptions.beam_size None) and of whisper.rn; whisper.cpp's and OpenAI's command lines
  // use 5 (about 2x the decoding time here: opt in).
  int beam_size = 1;
  float patience = 1.0f;  // > 0; OpenAI's default 1.0
  // Penalties on what the window has produced so far (CTranslate2's, as faster-whisper offers
  // them; off by default, as there): a produced token's logit is divided by repetition_penalty
  // when positive and multiplied when negative (> 1: repeats less likely), and with
  // no_repeat_ngram_size n no n-gram of tokens occurs twice in a window.
  float repetition_penalty = 1.0f;
  int no_repeat_ngram_size = 0;
  float compression_ratio_threshold = 2.4f;
  float logprob_threshold = -1.0f;
  // A window whose average log-probability is below this is skipped, whatever its P(no speech)
  // (faster-whisper's log_prob_low_threshold). -infinity: off (the default).
  float logprob_low_threshold = -std::numeric_limits<float>::infinity();
  // A window with P(no speech) > no_speech_threshold and average log-prob not above
  // logprob_threshold is skipped as silence.
  float no_speech_threshold = 0.6f;
  uint64_t seed = 0;                      // sampling at temperature > 0: same seed, same text
  bool suppress_blank = true;             // no blank or end-of-text as a window's first text token
  bool suppress_nst = true;               // non-speech tokens (symbols, music notes; OpenAI's "-1") never produced
  std::string suppress_regex;             // ECMAScript regex: tokens whose whole text matches are never produced
  std::vector<int32_t> suppress_tokens;   // token ids never produced
  bool carry_initial_prompt = false;      // initial_prompt in front of every window's prompt, not only the first
  bool no_context = false;                // do not use the previous windows' text as prompt
  float prompt_reset_temperature = 0.5f;  // a window decoded above this temperature does not
                                          // condition the next (OpenAI's 0.5; faster-whisper's
                                          // prompt_reset_on_temperature)
  int max_context = -1;                   // previous-text tokens kept as prompt at most; -1: the model's
                                          // (n_text_ctx / 2 - 1); 0: as no_context (whisper.cpp's -mc)
  float max_initial_timestamp = 1.0f;     // seconds; the first timestamp of a window at most this; < 0: no limit
  bool single_segment = false;            // one segment per window (whisper.cpp's single_segment)

  // ---- word timestamps (OpenAI's word_timestamps; whisper.cpp's -dtw) ----
  // Words by DTW over the alignment heads' cross-attention, one extra decoder pass per window;
  // segment bounds are refined from the words and the next window starts after the last word.
  bool word_timestamps = false;
  // Heads: "" = the model's own preset (from its size); a preset name ("tiny", "tiny.en", "base",
  // ..., "large-v3", "large-v3-turbo"); "top-n" = every head of the dtw_n_top last text layers;
  // "custom" = dtw_heads, "layer,head" pairs separated by spaces or ';'.
  std::string dtw_preset;
  int dtw_n_top = 0;
  std::string dtw_heads;
  // Joined to the next / previous word (OpenAI's defaults).
  std::string prepend_punctuations = "\"'\u201c\u00bf([{-";
  std::string append_punctuations = "\"'.\u3002,\uff0c!\uff01?\uff1f:\uff1a\u201d)]}\u3001";
  // Seconds; > 0 (with word_timestamps): skip silences longer than this around a suspected
  // hallucination (OpenAI's hallucination_silence_threshold). <= 0: off.
  float hallucination_silence_threshold = 0.0f;
  // ---- token timestamps, segment length, speaker turns (whisper.cpp's whisper_full) ----
  // Token t0/t1 from the timestamp tokens' probabilities at each step: a token starts at its
  // step's most likely timestamp when that one has probability > thold_pt within the timestamps
  // and the timestamps together > thold_ptsum; the others share the time between by text length.
  bool token_timestamps = false;
  float thold_pt = 0.01f;     // in [0, 1] (whisper.rn's wordThold, whisper.cpp's -wt)
  float thold_ptsum = 0.01f;  // in [0, 1]
  // > 0: segments are cut to at most this many bytes of text (whisper.cpp's max_len: UTF-8 bytes,
  // never inside a character); the new segments take their times from the token times, so this
  // turns token_timestamps on. split_on_word: cut only before a token that starts a word.
  int max_len = 0;
  bool split_on_word = false;
  // tinydiarize models (e.g. small.en-tdrz): the speaker-turn token ends a segment and sets its
  // speaker_turn_next. Off, that token is never produced (as whisper.cpp's tdrz_enable). On, each
  // window's last segment reaches on_new_segments with the next window's (which may open with the
  // turn that ends it).
  bool tdrz_enable = false;

  // ---- VAD-assisted transcription (whisper.cpp's vad, vad_model_path, vad_params) ----
  // The Silero VAD finds the speech; only the speech is transcribed (laid end to end, 0.1 s of
  // silence at each join, vad_params.samples_overlap seconds of context after each stretch), and
  // every time in the Transcript (segments, tokens, words, windows) is mapped back to the audio
  // given. No speech: an empty transcript. The model is loaded once per Context and path.
  bool vad = false;
  std::string vad_model_path;  // the Silero model in whisper.cpp's format (ggml-silero-*.bin)
  VadOptions vad_params;       // its threshold, durations, padding and samples_overlap
  // With vad: the speech as the caller already found it (the same model and vad_params, e.g. to
  // report its length before transcribing, as faster-whisper's API does), used instead of running
  // the VAD a second time. In order, not overlapping, within the samples transcribed (10 ms
  // units). Empty: the VAD runs. Not used by the batched pipeline, which cuts its own chunks.
  std::vector<VadSegment> vad_speech;

  // ---- batched long-audio pipeline (faster-whisper's BatchedInferencePipeline) ----
  // > 1: the Silero VAD (vad_model_path, required; `vad` need not be set; vad_params apply,
  // max_speech_duration_s at most 30 s) cuts the audio at pauses into chunks of at most 30 s
  // (neighbouring speech merged up to 30 s, the pauses inside a chunk kept), and batch_size chunks
  // are decoded together, one decoder step for all of them; when a chunk is done, the next one is
  // encoded and joins while the others go on (continuous batching). Chunks are independent: no
  // previous text as prompt (initial_prompt goes before every chunk), and each chunk's text is
  // kept whole (its last segment ends at the chunk's end). Every search is batched: greedy,
  // best_of candidates and beam search step all chunks' rows together, and a chunk that fails the
  // fallback checks is decoded again on its window at the next temperature, beside the others.
  // Word timestamps come from each chunk's own window (then batch_size chunks at a time, filled
  // and emptied together). 1..32; 1: the sequential long-form loop. Not with
  // n_processors > 1, nor hallucination_silence_threshold (it re-decodes from a new seek).
  // Memory: one cross-attention cache per chunk of a batch (tiny 9 MB, base 18 MB, large 245 MB),
  // and a self-attention cache per row (batch_size x beam_size or best_of rows).
  int batch_size = 1;

  std::shared_ptr<Job> job;  // run as this job (see jobs::create); nullptr: a new one

  // Callbacks run on the transcribing thread. One that throws stops the job, and transcribe()
  // rethrows its exception once the state is clean again.
  // Segments as soon as they are final, in order.
  std::function<void(const NewSegments&)> on_new_segments;
  // Percentage of the audio done: 0..100, never decreasing, 100 at the end unless aborted.
  std::function<void(int percent)> on_progress;
  // Before each encoder window; return false to stop the job there (as if aborted).
  std::function<bool()> on_encoder_begin;
  // Each time a window's text fails the fallback checks and is decoded again (not after the
  // last temperature: that text is kept).
  std::function<void(const Fallback&)> on_fallback;
  // Returns true to stop; polled between graph nodes and tokens, like Job::abort.
  std::function<bool()> should_abort;
};

}  // namespace hark
