// hark: offline speech-to-text with Whisper models, the C++ API.
//
// A Context is one loaded model: its weights memory-mapped once, read-only, shared. A State is
// what one running job needs (KV cache, compute memory, a backend with its own threads). Every
// transcription is a Job with an id that any thread can abort. Errors throw hark::Error with a
// message naming what was wrong (file, field, offset, expected/found).
//
//   auto ctx = hark::Context::load("ggml-tiny.bin");
//   hark::Transcript t = ctx->transcribe(hark::load_audio("talk.mp3"));
//   for (const auto& s : t.segments) printf("%s\n", s.text.c_str());
//
// Thread safety: everything here may be called from any thread. A Context serves many jobs at
// once; a State runs one job at a time. Nothing prints to stderr unless set_log_callback says so.
// Everything the front ends (CLI, server, bindings) need is in this header; nothing internal is.
// The C API (hark.h) offers the same.
#pragma once
#include <cstdint>
#include <functional>
#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "hark/error.hpp"
#include "hark/export.h"
#include "hark/log.hpp"
#include "hark/models.hpp"  // official models by name: registry, models folder, download_model
#include "hark/quantize.hpp"  // model conversion: quantize_model
#include "hark/vad.hpp"  // voice activity detection: VadModel, VadStream, energy_vad

namespace hark {

inline constexpr int kSampleRate = 16000;  // what transcribe() expects

// "0.1.0": the library's version (the same as HARK_VERSION_STRING of the headers it was built with).
HARK_API const char* version();
// The machine and build as hark sees them: "AVX512 = 1 | AVX2 = 1 | ... | BLAS = 1".
HARK_API std::string system_info();

// Whisper's languages, by the index of their token: 0 "en", 1 "zh", ... language_count() - 1.
HARK_API int language_count();
HARK_API int language_id(std::string_view code);  // -1 when unknown
HARK_API const char* language_code_at(int id);    // nullptr when out of range
HARK_API const char* language_name_at(int id);    // "english", "chinese", ... (OpenAI's names); nullptr when out of range

// ---- audio ----
// All of these return 16 kHz mono float, downmixed by averaging channels and resampled (libsoxr).
// Decodes WAV, FLAC, OGG Vorbis/Opus or MP3 (any rate, any channel count).
HARK_API std::vector<float> load_audio(const std::string& path);
// The same from a whole encoded file in memory.
HARK_API std::vector<float> decode_audio(const void* data, size_t size);
// A data URI holding an encoded file, whisper.rn's form: "data:audio/wav;base64,UklGR...".
HARK_API std::vector<float> decode_audio_data_uri(std::string_view uri);
// Raw interleaved PCM at any rate and channel count; n_values counts over all channels.
HARK_API std::vector<float> pcm16_to_mono16k(const int16_t* samples, size_t n_values, int sample_rate, int channels);
HARK_API std::vector<float> pcm_f32_to_mono16k(const float* samples, size_t n_values, int sample_rate, int channels);

// ---- the model ----
// The element type of the cross-attention K/V cache, which every decode step reads whole, once
// per window its rows attend to (tiny 9.2 MB, base 18.4 MB per window in f16).
enum class KvCacheType {
  F16,   // the reference's results (logits within ~2e-4 of whisper.cpp's)
  Q8_0,  // 0.53x the memory and the bytes read per window: batched decoding (batch_size > 1,
         // every row its own window) gains most; logits move by ~1e-3 relative. Needs flash_attn.
};
// "f16", "q8_0" (the names the CLI, server and bindings take); parse throws hark::Error naming
// the accepted ones for any other.
HARK_API const char* kv_cache_type_name(KvCacheType t);
HARK_API KvCacheType parse_kv_cache_type(std::string_view name);

struct ContextParams {
  int n_threads = 0;    // compute threads of each job; 0: the machine's cores (at most 8)
  bool use_gpu = true;  // the best device in the registry; the CPU (with a reason) when none is usable
  std::string device;   // a device by name ("cpu", "cpu-ref"); set, it overrides use_gpu
  bool flash_attn = true;  // fused attention; false: the plain softmax(QK^T)V graph
  KvCacheType cross_kv_type = KvCacheType::F16;  // see KvCacheType
  // Called while the model file is read in (bytes so far, file size; from (0, size) to (size,
  // size)), on the loading thread: a large model's load can show progress.
  std::function<void(uint64_t done, uint64_t total)> on_load_progress;
};

struct ModelInfo {
  std::string path;
  std::string size_name;    // "tiny", "base.en", "large-v3", ... or "custom"
  std::string weight_type;  // "f16", "q5_0", ...
  bool multilingual = false;
  int n_vocab = 0, n_audio_ctx = 0, n_audio_state = 0, n_audio_head = 0, n_audio_layer = 0;
  int n_text_ctx = 0, n_text_state = 0, n_text_head = 0, n_text_layer = 0, n_mels = 0;
  int ftype = 0;
  uint64_t file_bytes = 0;    // size of the model file
  uint64_t tensor_bytes = 0;  // bytes of weights
  bool mapped = false;        // weights are read from the file's memory mapping, not copied
  double load_ms = 0.0;
  HARK_API std::string describe() const;  // several lines, for `hark info`
};

// ---- results ----
struct TokenData {
  int32_t id = 0;
  std::string text;  // the token's bytes (may be part of a UTF-8 character) or a special name
  float p = 0.0f;    // probability the model gave it
  int64_t t0 = -1, t1 = -1;  // 10 ms units, when token timestamps are on
  float logp = 0.0f;  // log p (of the rule-filtered distribution at temperature 1)
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
  double vad_ms = 0;        // TranscribeParams::vad: finding the speech (the VAD network and the cut)
  int n_windows = 0;        // encoder runs
  int n_threads = 0;        // compute threads the job ran with
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

// ---- language detection (OpenAI's detect_language, whisper.cpp's whisper_lang_auto_detect) ----
struct DetectLanguageParams {
  int64_t offset_ms = 0;  // the 30 s of audio from here are listened to
  int n_threads = 0;      // 0: the context's
  std::function<bool()> should_abort;  // returns true to stop; polled as in transcribe
};

struct LanguageDetection {
  std::string language;     // code of the most likely language ("de", ...)
  float probability = 0.0f;  // its probability
  // One per language of the model, by id (language_code_at(i)); they sum to 1.
  std::vector<float> probs;
  bool aborted = false;      // stopped by should_abort: nothing else is set
};

// ---- jobs ----
// Every transcription runs as a Job with an id, kept in a process-wide registry while it exists,
// so a front end can stop a job by id from any thread (whisper.rn's `stop()`). A job made with
// jobs::create() and passed in TranscribeParams::job can be stopped before its transcription has
// even started; without one, transcribe() makes its own and reports its id in the Transcript.
class HARK_API Job {
 public:
  virtual ~Job() = default;
  virtual int id() const = 0;
  // Asks the job to stop; thread-safe, returns at once. The transcription returns within one graph
  // node's compute (well under 100 ms), with the segments finished before the stop.
  virtual void abort() = 0;
  virtual bool abort_requested() const = 0;
  virtual bool running() const = 0;  // a transcription is executing it now
};

namespace jobs {
// All thread-safe.
HARK_API std::shared_ptr<Job> create();           // a new job with a fresh id (never reused), registered
HARK_API std::shared_ptr<Job> get(int id);        // nullptr when no such job is registered
HARK_API bool remove(int id);                     // forgets the id; a running job runs on. false: unknown id
HARK_API bool abort(int id);                      // false: unknown id
HARK_API void abort_all();                        // every registered job, running or not yet started
HARK_API bool is_transcribing();                  // some registered job is running
}  // namespace jobs

// What on_new_segments reports, as whisper.rn's onNewSegments: the segments that just became
// final, how many they are, and how many the job has produced so far (them included).
struct NewSegments {
  std::span<const Segment> segments;  // the new ones; valid during the callback only
  int n_new = 0;
  int total = 0;
  std::string text;  // the new segments' text joined
};

// ---- one transcription ----
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
  bool timestamps = true;       // false: one segment per window, no timestamp tokens
  int max_tokens_per_window = 0;  // 0: the model's limit (n_text_ctx / 2)
  std::string initial_prompt;     // text the model sees as previous context

  // ---- decoding policy: OpenAI's transcribe()/decode() and whisper.cpp's whisper_full meanings ----
  // Temperatures tried per window: temperature, temperature + temperature_inc, ... up to 1.0
  // (always the first). temperature_inc 0: no fallback (whisper.cpp's -nf). A window is decoded
  // again at the next one when its text's gzip compression ratio > compression_ratio_threshold or
  // its average log-probability < logprob_threshold (unless it is silence, see below).
  // The defaults are OpenAI's, whisper.cpp's and whisper.rn's: 0, 0.2, 0.4, ... 1.0.
  float temperature = 0.0f;
  float temperature_inc = 0.2f;
  int best_of = 5;                  // candidates sampled at temperature > 0, the best kept
  float length_penalty = -1.0f;     // ranking: < 0 divide by length; else alpha of ((5 + len) / 6)^alpha
  // Beam search at temperature 0 (1..64; at T > 0, as in OpenAI, best_of sampling runs instead):
  // beam_size beams decoded as one batch per step, finished candidates gathered until
  // round(beam_size * patience). Default 1 (greedy), the default of OpenAI's transcribe()
  // (DecodingOptions.beam_size None) and of whisper.rn; whisper.cpp's and OpenAI's command lines
  // use 5 (about 2x the decoding time here: opt in).
  int beam_size = 1;
  float patience = 1.0f;            // > 0; OpenAI's default 1.0
  float compression_ratio_threshold = 2.4f;
  float logprob_threshold = -1.0f;
  // A window with P(no speech) > no_speech_threshold and average log-prob not above
  // logprob_threshold is skipped as silence.
  float no_speech_threshold = 0.6f;
  uint64_t seed = 0;                // sampling at temperature > 0: same seed, same text
  bool suppress_blank = true;       // no blank or end-of-text as a window's first text token
  bool suppress_nst = true;         // non-speech tokens (symbols, music notes; OpenAI's "-1") never produced
  std::string suppress_regex;       // ECMAScript regex: tokens whose whole text matches are never produced
  std::vector<int32_t> suppress_tokens;  // token ids never produced
  bool carry_initial_prompt = false;  // initial_prompt in front of every window's prompt, not only the first
  bool no_context = false;          // do not use the previous windows' text as prompt
  int max_context = -1;             // previous-text tokens kept as prompt at most; -1: the model's
                                    // (n_text_ctx / 2 - 1); 0: as no_context (whisper.cpp's -mc)
  float max_initial_timestamp = 1.0f;  // seconds; the first timestamp of a window at most this; < 0: no limit
  bool single_segment = false;      // one segment per window (whisper.cpp's single_segment)

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
  float thold_pt = 0.01f;           // in [0, 1] (whisper.rn's wordThold, whisper.cpp's -wt)
  float thold_ptsum = 0.01f;        // in [0, 1]
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
  // Returns true to stop; polled between graph nodes and tokens, like Job::abort.
  std::function<bool()> should_abort;
};

// One job's working memory and compute stream: the KV cache, the compute buffers, and a backend
// with its own thread pool. Jobs on different states of one Context run at the same time and share
// the weights. A State may outlive its Context (it keeps the model's memory alive). One job at a
// time on a State: a second concurrent call waits for the first.
class HARK_API State {
 public:
  virtual ~State() = default;
  // Bytes this state holds beyond the shared weights (KV cache + compute buffers).
  virtual size_t bytes() const = 0;
  virtual Transcript transcribe(std::span<const float> samples, const TranscribeParams& params = {}) = 0;
  // The spoken language of the 30 s from params.offset_ms: the same probabilities transcribe()
  // with language "auto" and that offset computes. Throws hark::Error on an English-only model.
  virtual LanguageDetection detect_language(std::span<const float> samples,
                                            const DetectLanguageParams& params = {}) = 0;
};

// ---- bench (whisper.rn's bench(maxThreads), whisper.cpp's whisper-bench) ----
struct BenchResult {
  std::string config;  // system info: SIMD levels, device
  int n_threads = 0;
  double encode_ms = 0;  // one 30 s encoder window
  double decode_ms = 0;  // per token: 256 single-token steps
  double batch_ms = 0;   // per token: 64 steps of a 5-row batch, logits for every row
  double prompt_ms = 0;  // per token: 16 prompts of 256 tokens
  // whisper.rn's form: ["<config>", n_threads, encode_ms, decode_ms, batch_ms, prompt_ms]
  HARK_API std::string to_json() const;
};

// The device a Context computes on, and why it is not a GPU when one was asked for.
struct DeviceChoice {
  std::string name;         // registry name: "cpu", "cpu-ref", ...
  std::string description;  // e.g. the CPU's SIMD level
  bool gpu = false;
  std::string reason_no_gpu;  // empty when gpu, or when no GPU was asked for
};

// Devices this build can compute on, best first.
HARK_API std::vector<DeviceChoice> devices();

class HARK_API Context {
 public:
  // Maps and validates a ggml .bin model. A bare name that is no file here ("tiny.en") is looked
  // up in the models folder (hark/models.hpp: find_model). Throws hark::Error.
  static std::unique_ptr<Context> load(const std::string& model_path, const ContextParams& params = {});
  virtual ~Context() = default;

  virtual const ModelInfo& info() const = 0;
  virtual const DeviceChoice& device() const = 0;

  // Transcribes on a state from the context's pool (made when none is idle): safe to call from
  // several threads at once; each call runs in parallel with the others on shared weights.
  // samples: 16 kHz mono float in [-1, 1]. Throws hark::Error for bad input (NaN, empty...).
  virtual Transcript transcribe(std::span<const float> samples, const TranscribeParams& params = {}) = 0;
  // A state of one's own (whisper.cpp's whisper_init_state). Its jobs compute on n_threads unless
  // their params name a count; 0: the context's.
  virtual std::unique_ptr<State> new_state(int n_threads = 0) = 0;
  // State::detect_language on a state from the pool; thread-safe like transcribe().
  virtual LanguageDetection detect_language(std::span<const float> samples,
                                            const DetectLanguageParams& params = {}) = 0;

  // Measures the loaded model as whisper-bench does (see BenchResult). n_threads 0: the context's.
  virtual BenchResult bench(int n_threads = 0) = 0;
};

// ---- output formats (each ends with a newline when not empty) ----
// "hh:mm:ss.mmm" (or with a comma for SRT), from 10 ms units.
HARK_API std::string format_timestamp(int64_t t_10ms, bool comma = false);
HARK_API std::string to_txt(const Transcript& t);   // segment texts, one per line
HARK_API std::string to_srt(const Transcript& t);
HARK_API std::string to_vtt(const Transcript& t);
// {"language", "language_prob", "n_fallback_windows", "text", "segments":[{start, end, t0, t1, text,
// temperature, avg_logprob, compression_ratio, no_speech_prob, speaker_turn_next,
// tokens:[{id, text, p, logp[, t0, t1]}], words}], "timings"} (token t0/t1 when token timestamps are on)
HARK_API std::string to_json(const Transcript& t);
// full = false: the same without each segment's tokens (whisper.cpp's -oj against -ojf). Segments
// with words carry them either way: "words":[{word, start, end, probability, t0, t1}].
HARK_API std::string to_json(const Transcript& t, bool full);
// whisper.cpp's -ocsv: "start,end,text" then one row per segment: start and end in milliseconds,
// the text in double quotes (a quote in it doubled, RFC 4180).
HARK_API std::string to_csv(const Transcript& t);
// whisper.cpp's -olrc (lyrics): "[by:hark]" then "[mm:ss.xx]text" per segment, at its start.
HARK_API std::string to_lrc(const Transcript& t);
// The CLI's console line: "[00:00:00.000 --> 00:00:02.500]  text".
HARK_API std::string format_segment_line(const Segment& s);

}  // namespace hark

#include "hark/realtime.hpp"  // streaming transcription of live audio
