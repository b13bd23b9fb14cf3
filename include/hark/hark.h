/* hark: offline speech-to-text with Whisper models, the C API.
 *
 * The same engine as the C++ API (hark.hpp), flat: opaque handles, plain structs, callbacks with a
 * user_data pointer, errors as return codes. Compiles as C11 and as C++; no C++ type crosses it.
 *
 *   hark_context* ctx = NULL;
 *   if (hark_context_load("ggml-tiny.bin", NULL, &ctx) != HARK_OK) {
 *     fprintf(stderr, "%s\n", hark_last_error());
 *     return 1;
 *   }
 *   hark_result* r = NULL;
 *   if (hark_transcribe_file(ctx, "talk.wav", NULL, &r) == HARK_OK) {
 *     for (int i = 0; i < hark_result_n_segments(r); ++i) printf("%s\n", hark_result_segment_text(r, i));
 *     hark_result_free(r);
 *   }
 *   hark_context_free(ctx);
 *
 * Errors. Every function that can fail returns a hark_status; HARK_OK is 0. The message of the
 * last failing call on the calling thread is hark_last_error() (names the argument or field, and
 * what was expected vs found). Getters that return a value directly return the sentinel the
 * comment names (NULL, -1) on a bad handle or index, and set the message too.
 * An aborted transcription is not an error: it returns HARK_OK and hark_result_aborted() says 1.
 *
 * Handles. hark_context, hark_state and hark_result (and sample buffers from hark_audio_*) are
 * checked on every call against a registry of live handles: NULL, freed, or never-issued pointers
 * give HARK_ERR_BAD_HANDLE, never a crash. (A freed handle whose memory was reused for a new
 * handle of the same kind cannot be told apart from that new handle; do not keep freed handles.)
 *
 * Threads. Stated per function. In short: contexts serve many jobs from many threads at once; a
 * state runs one job at a time (a second call waits); results are immutable and may be read from
 * any thread; callbacks run on the transcribing thread (or a worker thread of the same job), one
 * at a time per job.
 *
 * Growing without breaking binaries. Fields are only ever appended to the structs here. A params
 * struct carries its own size (struct_size, set by its hark_*_default_params()), so the library
 * reads only the fields the caller's header knew and gives the later ones their defaults. An
 * output struct is passed with its size (out_size = sizeof *out) and is filled that far. (Each
 * params struct ends on a pointer-sized field, so it has no tail padding a later field could
 * fall into: an older caller's struct_size then never covers a field it did not know.) */
#ifndef HARK_H
#define HARK_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "hark/export.h"
#include "hark/hark_common.h" /* hark_status, hark_last_error, hark_abort_callback */

#ifdef __cplusplus
extern "C" {
#endif

/* ---- library ------------------------------------------------------------------------------ */

/* "0.1.0". Static string. Any thread. */
HARK_API const char* hark_version(void);
/* The machine and build: "AVX512 = 1 | AVX2 = 1 | ... | DEVICES = cpu,cpu-ref". Static string.
 * Any thread. */
HARK_API const char* hark_system_info(void);

/* Whisper's languages, by the index of their token: 0 "en", 1 "zh", ... hark_language_count()-1.
 * Whether a given model knows a language: multilingual models know them (large-v3 one more, "yue"),
 * English-only ones only "en". Any thread. */
HARK_API int hark_language_count(void);
HARK_API int hark_language_id(const char* code); /* -1 when unknown or NULL */
HARK_API const char* hark_language_code(int id); /* static string; NULL when out of range */
HARK_API const char* hark_language_name(int id); /* "english", ... (OpenAI's names); NULL when out of range */

/* ---- logging ------------------------------------------------------------------------------ */

typedef enum hark_log_level {
  HARK_LOG_DEBUG = 0,
  HARK_LOG_INFO = 1,
  HARK_LOG_WARN = 2,
  HARK_LOG_ERROR = 3
} hark_log_level;

/* Called from any thread the library logs on (jobs run on many), so it must be thread-safe.
 * message is valid during the call only. */
typedef void (*hark_log_callback)(hark_log_level level, const char* message, void* user_data);

/* Where the library's log goes; NULL: nowhere (the default: hark prints nothing by itself).
 * Any thread; a message being sent while the callback is replaced goes to the old one or the new. */
HARK_API hark_status hark_set_log_callback(hark_log_callback callback, void* user_data);
/* Messages below min_level are not built or sent (default HARK_LOG_INFO). Any thread.
 * HARK_ERR_INVALID_ARGUMENT for a level outside the enum. */
HARK_API hark_status hark_set_log_level(hark_log_level min_level);

/* ---- devices ------------------------------------------------------------------------------ */

typedef struct hark_device_info {
  const char* name;        /* registry name: "cpu", "cpu-ref", ... */
  const char* description; /* e.g. the CPU's SIMD level */
  bool gpu;
  const char* reason_no_gpu; /* for a context's device: why it is not a GPU when one was asked
                                for; "" otherwise */
} hark_device_info;

/* Devices this build can compute on, best first. Strings are static. Any thread. */
HARK_API int hark_device_count(void);
HARK_API hark_status hark_device_get(int index, hark_device_info* out, size_t out_size);

/* ---- the model: hark_context -------------------------------------------------------------- */

typedef struct hark_context hark_context; /* one loaded model, shared by every job on it */
typedef struct hark_state hark_state;     /* one job's working memory and threads */
typedef struct hark_result hark_result;   /* a finished transcription (or, in a new-segments
                                             callback, the segments just finished) */

/* Progress of reading a model file in: bytes so far and the file's size. */
typedef void (*hark_load_progress_callback)(uint64_t bytes_done, uint64_t bytes_total, void* user_data);

/* The element type of the cross-attention K/V cache (hark_context_params.cross_kv_type), which
 * every decode step reads whole, once per window its rows attend to (tiny 9.2 MB, base 18.4 MB
 * per window in f16). */
typedef enum hark_kv_type {
  HARK_KV_F16 = 0, /* the reference's results (the default) */
  HARK_KV_Q8_0 = 1 /* 0.53x the memory and the bytes read per window: batched decoding gains
                      most; logits move by ~1e-3 relative. Needs flash_attn. */
} hark_kv_type;

typedef struct hark_context_params {
  size_t struct_size; /* set by hark_context_default_params(); see "Growing" at the top */
  int n_threads;      /* compute threads of each job; 0: the machine's cores (at most 8) */
  bool use_gpu;       /* the best device there is; the CPU (with a reason) when no GPU is usable */
  bool flash_attn;    /* fused attention (default); false: the plain softmax(QK^T)V graph */
  const char* device; /* a device by name ("cpu", "cpu-ref"); NULL or "": chosen by use_gpu.
                         Set, it overrides use_gpu. Read during hark_context_load only. */
  hark_load_progress_callback load_progress_callback; /* NULL: none; called during hark_context_load */
  void* load_progress_user_data;
  /* ---- added after the batched pipeline ---- */
  int64_t cross_kv_type; /* a hark_kv_type (int64_t: the struct ends on a pointer-sized field).
                            HARK_KV_Q8_0 without flash_attn, or another value, is
                            HARK_ERR_INVALID_ARGUMENT. Default HARK_KV_F16 */
} hark_context_params;

/* Fills *params with the defaults for a struct of params_size bytes. Any thread.
 * Use hark_context_default_params() below, which passes the size for you. */
HARK_API hark_status hark_context_params_init(hark_context_params* params, size_t params_size);

/* The defaults: n_threads 0, use_gpu true, device NULL, flash_attn true, cross_kv_type
 * HARK_KV_F16. (Inline, so that the size passed is the one of the struct this program was
 * compiled with.) */
static inline hark_context_params hark_context_default_params(void) {
  hark_context_params p;
  hark_context_params_init(&p, sizeof p);
  return p;
}

/* Maps and validates a ggml .bin Whisper model; a bare official name ("tiny.en") that is no file
 * here is found in the models folder (hark_models.h). params NULL: the defaults. On success *out is a
 * new context, freed with hark_context_free; on failure *out is NULL.
 * HARK_ERR_IO: the file cannot be opened; HARK_ERR_MODEL: it is not a valid model;
 * HARK_ERR_INVALID_ARGUMENT: bad params (negative n_threads, unknown device, ...). Any thread. */
HARK_API hark_status hark_context_load(const char* model_path, const hark_context_params* params, hark_context** out);

/* Aborts the jobs running on the context, waits for them to return (they return HARK_OK with
 * hark_result_aborted() 1), then frees it. States made from it live on. Any thread, but not
 * from a callback of a job on this context (it would wait for itself): that gives
 * HARK_ERR_INVALID_ARGUMENT. Calls on the context that start after this one get
 * HARK_ERR_BAD_HANDLE. */
HARK_API hark_status hark_context_free(hark_context* ctx);

typedef struct hark_model_info {
  const char* path;        /* strings: valid until the context is freed */
  const char* size_name;   /* "tiny", "base.en", "large-v3", ... or "custom" */
  const char* weight_type; /* "f16", "q5_0", ... */
  bool multilingual;
  int n_vocab, n_audio_ctx, n_audio_state, n_audio_head, n_audio_layer;
  int n_text_ctx, n_text_state, n_text_head, n_text_layer, n_mels;
  int ftype;
  uint64_t file_bytes;   /* size of the model file */
  uint64_t tensor_bytes; /* bytes of weights */
  bool mapped;           /* weights are read from the file's memory mapping, not copied */
  double load_ms;
} hark_model_info;

/* The model's description (out_size = sizeof *out). Any thread. */
HARK_API hark_status hark_context_info(const hark_context* ctx, hark_model_info* out, size_t out_size);
/* The same as several lines of text, as `hark info` prints it; valid until the context is freed,
 * NULL on a bad handle. Any thread. */
HARK_API const char* hark_context_describe(const hark_context* ctx);
/* The device the context computes on, and why it is not a GPU when one was asked for; strings
 * valid until the context is freed. Any thread. */
HARK_API hark_status hark_context_device(const hark_context* ctx, hark_device_info* out, size_t out_size);

/* ---- jobs --------------------------------------------------------------------------------- */
/* Every transcription runs as a job with an id (> 0, never reused). To be able to stop one from
 * another thread before it returns, make the job first and pass its id in
 * hark_transcribe_params.job_id. All of these: any thread, return at once. */

/* A new registered job; its id, or 0 when it could not be made (hark_last_error says why). The
 * id stays registered until hark_job_remove(). */
HARK_API int hark_job_new(void);
/* Asks the job to stop: a running transcription returns within one graph node's compute (well
 * under 100 ms) with what it finished; one not started yet returns at once. It stays aborted.
 * HARK_ERR_INVALID_ARGUMENT: no such job registered. */
HARK_API hark_status hark_job_abort(int job_id);
/* Forgets the id (a transcription running as it runs on). HARK_ERR_INVALID_ARGUMENT: unknown id. */
HARK_API hark_status hark_job_remove(int job_id);
/* Aborts every registered job, running or not yet started, and every transcription running now. */
HARK_API void hark_job_abort_all(void);
/* 1 when a transcription is running as the job now, 0 when not (yet, or any more), -1 for an
 * unknown id. */
HARK_API int hark_job_is_running(int job_id);
/* 1 when some transcription is running now, else 0. */
HARK_API int hark_is_transcribing(void);

/* ---- one transcription -------------------------------------------------------------------- */

/* Percentage of the audio done: 0..100, never decreasing, 100 at the end unless aborted. */
typedef void (*hark_progress_callback)(int percent, void* user_data);
/* Segments as soon as they are final, in order: new_segments holds just those n_new segments
 * (read it with the hark_result_* getters; it is valid during the call only and must not be
 * freed), total is how many the job has produced so far, them included. */
typedef void (*hark_new_segments_callback)(const hark_result* new_segments, int n_new, int total, void* user_data);
/* Before each 30 s encoder window; return false to stop the job there (as if aborted). */
typedef bool (*hark_encoder_begin_callback)(void* user_data);
/* A window whose text failed the fallback checks (compression ratio above its threshold, or
 * average log-probability below it) is decoded again at `temperature`: the window [t0, t1) in
 * 10 ms units on the audio's timeline (as hark_result_segment_t0), and the failed text's figures.
 * Not called after the last temperature (that text is kept). */
typedef void (*hark_fallback_callback)(int64_t t0, int64_t t1, float temperature, double compression_ratio,
                                       double avg_logprob, void* user_data);
/* hark_abort_callback (hark_common.h): polled between graph nodes and tokens; return true to stop
 * the job (as if aborted). */

typedef struct hark_transcribe_params {
  size_t struct_size;         /* set by hark_transcribe_default_params(); see "Growing" at the top */
  const char* language;       /* a code ("en", "de", ...) or "auto" to detect; NULL or "" also
                                 detect. English-only models take "en" or auto. Default "en". */
  bool translate;             /* into English (multilingual models) */
  int n_threads;              /* 0: the context's (the state's for hark_transcribe_with_state) */
  int n_processors;           /* 1..64; > 1: the audio is cut into this many parts decoded in
                                 parallel, each on its own state; threads are shared out */
  int64_t offset_ms;          /* start here in the audio (>= 0, inside the audio) */
  int64_t duration_ms;        /* 0: to the end */
  bool timestamps;            /* false: one segment per window, no timestamp tokens */
  int max_tokens_per_window;  /* 0: the model's limit (n_text_ctx / 2) */
  const char* initial_prompt; /* text the model sees as previous context; NULL or "": none */
  int job_id;                 /* run as this job (from hark_job_new()); 0: a new one, removed
                                 from the registry when the call returns */

  /* Callbacks: NULL for none. Each gets its own user_data. They run on the transcribing thread
   * or a worker thread of the same job, one at a time. They may call any hark function except
   * freeing the context or state the job runs on. */
  hark_progress_callback progress_callback;
  void* progress_user_data;
  hark_new_segments_callback new_segments_callback;
  void* new_segments_user_data;
  hark_encoder_begin_callback encoder_begin_callback;
  void* encoder_begin_user_data;
  hark_abort_callback abort_callback;
  void* abort_user_data;

  /* ---- decoding policy (added after the first release; the meanings and defaults of
   * TranscribeParams in hark.hpp: OpenAI's transcribe() and whisper.cpp's whisper_full) ---- */
  float temperature;                 /* first temperature (>= 0; 0: greedy). Default 0 */
  float temperature_inc;             /* fallback step up to 1.0 (>= 0; 0: no fallback). Default 0
                                        (OpenAI's and whisper.cpp's: 0.2) */
  int best_of;                       /* candidates sampled at temperature > 0 (1..64). Default 5 */
  float length_penalty;              /* < 0: score / length; else ((5 + len) / 6)^alpha. Default -1 */
  float compression_ratio_threshold; /* fallback above this gzip ratio. Default 2.4 */
  float logprob_threshold;           /* fallback below this average log-prob. Default -1 */
  float no_speech_threshold;         /* silence above this P(no speech) (text unsure). Default 0.6 */
  bool suppress_blank;               /* default true */
  bool suppress_nst;                 /* non-speech tokens never produced. Default true */
  bool carry_initial_prompt;         /* initial_prompt before every window's prompt. Default false */
  bool no_context;                   /* no previous text as prompt. Default false */
  bool single_segment;               /* one segment per window. Default false */
  int max_context;                   /* previous-text tokens kept as prompt; -1: the model's; 0: none */
  float max_initial_timestamp;       /* seconds (< 0: no limit). Default 1.0 */
  uint64_t seed;                     /* sampling seed (same seed, same text). Default 0 */
  const int32_t* suppress_tokens;    /* n_suppress_tokens token ids never produced; NULL for none */
  size_t n_suppress_tokens;
  const char* suppress_regex; /* ECMAScript; tokens whose whole text matches are never
                                 produced; NULL or "": none. One that does not compile is
                                 HARK_ERR_INVALID_ARGUMENT before any compute. */
  /* ---- word timestamps (TranscribeParams in hark.hpp; OpenAI's word_timestamps) ---- */
  bool word_timestamps;                  /* words by DTW over the alignment heads. Default false */
  int dtw_n_top;                         /* dtw_preset "top-n": heads of this many last text layers */
  float hallucination_silence_threshold; /* seconds, with word_timestamps; <= 0: off. Default 0 */
  const char* dtw_preset;                /* NULL or "": the model's own; "tiny" ... "large-v3-turbo"
                                            (or whisper.cpp's "large.v3"), "top-n", "custom" */
  const char* dtw_heads;                 /* "custom": "layer,head" pairs, e.g. "2,4 3,0" */
  const char* prepend_punctuations;      /* joined to the next word; NULL: OpenAI's default */
  const char* append_punctuations;       /* joined to the previous word; NULL: OpenAI's default */
  /* ---- token timestamps, segment length, speaker turns (whisper.cpp's whisper_full; added after
   * the decoding policy) ---- */
  float thold_pt;        /* token timestamp trusted above this probability among the timestamps,
                            in [0, 1] (whisper.rn's wordThold). Default 0.01 */
  float thold_ptsum;     /* ... and when the timestamps together are above this, in [0, 1]. Default 0.01 */
  bool token_timestamps; /* t0/t1 per token (hark_token_data). Default false */
  bool split_on_word;    /* max_len cuts only before a token that starts a word. Default false */
  bool tdrz_enable;      /* tinydiarize models: speaker turns end segments
                            (hark_result_segment_speaker_turn_next); refused before any compute
                            on a model without the turn token. Default false */
  int64_t max_len;       /* > 0: segments of at most this many bytes of text, cut at token times
                            (turns token timestamps on); 0: no limit. Default 0 */
  int beam_size;         /* beam search at temperature 0 (1..64; 1: greedy). Default 1 */
  float patience;        /* beam search: round(beam_size * patience) finished candidates
                            (> 0). Default 1. (beam_size + patience: 8 bytes, no tail
                            padding for a later field to fall into.) */
  /* ---- VAD-assisted transcription (whisper.cpp's vad, vad_model_path, vad_params; TranscribeParams
   * in hark.hpp): the Silero VAD finds the speech, only the speech is transcribed, and every time in
   * the result is on the original audio's timeline. No speech: an empty result. The VAD model is
   * loaded once per context and path. Added after beam search; ends on a pointer. ---- */
  bool vad;                         /* Default false */
  float vad_threshold;              /* in [0, 1]: P(speech) that starts speech. Default 0.5 */
  int vad_min_speech_duration_ms;   /* >= 0: shorter speech is dropped. Default 250 */
  int vad_min_silence_duration_ms;  /* >= 0: a pause must last this long to end speech. Default 100 */
  int vad_speech_pad_ms;            /* >= 0: added on both sides of the speech. Default 30 */
  float vad_samples_overlap;        /* >= 0 seconds of audio kept after each stretch of speech. Default 0.1 */
  double vad_max_speech_duration_s; /* > 0: longer speech is cut. Default FLT_MAX (no limit) */
  const char* vad_model_path;       /* the Silero model (ggml-silero-*.bin); required with vad.
                                       Before any compute, a file that cannot be opened is HARK_ERR_IO,
                                       one that is not a VAD model HARK_ERR_FAILED. */
  /* ---- batched long-audio pipeline (TranscribeParams::batch_size in hark.hpp; added after VAD) ---- */
  int64_t batch_size; /* 1..32; > 1: the Silero VAD (vad_model_path, required; vad need
                         not be on; the vad_* options apply) cuts the audio at pauses
                         into independent chunks of at most 30 s, and batch_size of them
                         are decoded together, one decoder step for all (greedy,
                         best_of, beams, fallback); a finished chunk's place goes to
                         the next one at once. Not with n_processors > 1 nor
                         hallucination_silence_threshold. Default 1 (sequential) */
  /* ---- penalties on what a window has produced (CTranslate2's, as faster-whisper offers them;
   * TranscribeParams in params.hpp; added after the batched pipeline; ends on a 64-bit field) ---- */
  float repetition_penalty;     /* > 0: a produced token's logit divided by it when positive,
                                   multiplied when negative (> 1: fewer repeats). Default 1 (none) */
  int64_t no_repeat_ngram_size; /* n > 0: no n-gram of tokens twice in a window. Default 0 (none) */
  /* ---- faster-whisper's fallback and prompt options (TranscribeParams in params.hpp; added after
   * the penalties; ends on a 64-bit field) ---- */
  float logprob_low_threshold;          /* a window whose average log-probability is below this is
                                           skipped. Default -INFINITY (off) */
  float prompt_reset_temperature;       /* a window decoded above this temperature does not condition
                                           the next. Default 0.5 (OpenAI's) */
  const float* temperatures;            /* n_temperatures values (<= 32, each >= 0): the temperatures
                                           tried per window, in order, instead of temperature and
                                           temperature_inc. Default NULL */
  const int32_t* initial_prompt_tokens; /* n_initial_prompt_tokens text token ids: the initial
                                           prompt as ids (not with initial_prompt). Default NULL */
  int32_t n_temperatures;
  int32_t reserved_0; /* 0 */
  int64_t n_initial_prompt_tokens;
  /* ---- clips (TranscribeParams::clip_timestamps; added after the prompt tokens) ---- */
  const float* clip_timestamps; /* n_clip_timestamps seconds from offset_ms: start, end, start,
                                   ... (odd: the last clip runs to the end); only these are
                                   transcribed, times stay the audio's. Not with vad or
                                   batch_size > 1. Default NULL (all of it) */
  int64_t n_clip_timestamps;
  /* ---- faster-whisper's prefix, hotwords, multilingual and length penalty (TranscribeParams in
   * params.hpp; added after the clips; ends on a pointer) ---- */
  bool multilingual;         /* the language detected in every window (multilingual models).
                                Default false */
  bool length_penalty_power; /* length_penalty as CTranslate2's exponent: score / length^alpha
                                (faster-whisper's meaning). Default false */
  uint16_t reserved_1;       /* 0 */
  int32_t reserved_2;        /* 0 */
  const char* hotwords;      /* words to expect, before every window's prompt. Default NULL */
  const char* prefix;        /* the first window's text begins with this (not with
                                batch_size > 1). Default NULL */
  /* ---- the fallback callback (TranscribeParams::on_fallback; added after the prefix; runs as the
   * other callbacks do) ---- */
  hark_fallback_callback fallback_callback; /* Default NULL */
  void* fallback_user_data;
  /* ---- speech found beforehand (TranscribeParams::vad_speech; added after the fallback callback;
   * ends on a 64-bit field) ---- */
  const int64_t* vad_speech; /* with vad: n_vad_speech stretches of speech as the caller already found
                                them (hark_vad_detect_speech with the same model and vad_* settings),
                                t0, t1, t0, t1, ... in 10 ms units of the samples transcribed: in
                                order, not overlapping, inside them. The VAD is not run again.
                                Default NULL (the VAD runs) */
  int64_t n_vad_speech;
} hark_transcribe_params;

/* Fills *params with the defaults for a struct of params_size bytes. Any thread.
 * Use hark_transcribe_default_params() below, which passes the size for you. */
HARK_API hark_status hark_transcribe_params_init(hark_transcribe_params* params, size_t params_size);

/* The defaults: language "en", translate false, n_threads 0, n_processors 1, offset 0,
 * duration 0, timestamps true, max_tokens_per_window 0, no prompt, job_id 0, no callbacks, and the
 * decoding defaults named at each field above. */
static inline hark_transcribe_params hark_transcribe_default_params(void) {
  hark_transcribe_params p;
  hark_transcribe_params_init(&p, sizeof p);
  return p;
}

/* Transcribes 16 kHz mono float samples in [-1, 1] (finite, n_samples > 0) on a state from the
 * context's pool: safe from many threads at once, each call running in parallel with the others
 * on the shared weights. params NULL: the defaults; params and the strings it points to are read
 * until the call returns. On HARK_OK *out is a new result (free it with hark_result_free), also
 * when the job was aborted; on failure *out is NULL. Any thread. */
HARK_API hark_status hark_transcribe(hark_context* ctx, const float* samples, size_t n_samples,
                                     const hark_transcribe_params* params, hark_result** out);
/* The same on a state of one's own. A state runs one job at a time: a second call waits. */
HARK_API hark_status hark_transcribe_with_state(hark_state* state, const float* samples, size_t n_samples,
                                                const hark_transcribe_params* params, hark_result** out);
/* Decodes a file (WAV, FLAC, OGG Vorbis/Opus, MP3; any rate and channel count) and transcribes it.
 * HARK_ERR_IO: cannot be opened; HARK_ERR_AUDIO: cannot be decoded. Any thread. */
HARK_API hark_status hark_transcribe_file(hark_context* ctx, const char* path, const hark_transcribe_params* params,
                                          hark_result** out);
/* The same from a whole encoded file in memory. */
HARK_API hark_status hark_transcribe_encoded(hark_context* ctx, const void* data, size_t size,
                                             const hark_transcribe_params* params, hark_result** out);
/* The same from a data URI holding an encoded file: "data:audio/wav;base64,UklGR...". */
HARK_API hark_status hark_transcribe_data_uri(hark_context* ctx, const char* uri, const hark_transcribe_params* params,
                                              hark_result** out);
/* Raw interleaved 16-bit PCM at any rate and channel count; n_values counts over all channels. */
HARK_API hark_status hark_transcribe_pcm16(hark_context* ctx, const int16_t* samples, size_t n_values, int sample_rate,
                                           int channels, const hark_transcribe_params* params, hark_result** out);

/* ---- states ------------------------------------------------------------------------------- */

/* A state of one's own: KV cache, compute memory and threads (n_threads 0: the context's). It
 * keeps the model in memory and may outlive the context. Any thread. */
HARK_API hark_status hark_state_new(hark_context* ctx, int n_threads, hark_state** out);
/* Aborts the job running on it (and ends a stream it is lent to: hark_stream_create_on_state),
 * waits for it, frees the state. Any thread, not from a callback of a job or stream on this state
 * (HARK_ERR_INVALID_ARGUMENT). */
HARK_API hark_status hark_state_free(hark_state* state);
/* Bytes the state holds beyond the shared weights (KV cache + compute buffers). Any thread. */
HARK_API hark_status hark_state_bytes(const hark_state* state, size_t* out);

/* ---- audio -------------------------------------------------------------------------------- */
/* Each makes 16 kHz mono float samples (channels averaged, resampled) in a new buffer: *out
 * points to *n_out samples, freed with hark_audio_free. For hark_transcribe_with_state, or to
 * transcribe one input several times. Any thread. */
HARK_API hark_status hark_audio_load_file(const char* path, float** out, size_t* n_out);
HARK_API hark_status hark_audio_decode(const void* data, size_t size, float** out, size_t* n_out);
HARK_API hark_status hark_audio_decode_data_uri(const char* uri, float** out, size_t* n_out);
HARK_API hark_status hark_audio_pcm16_to_mono16k(const int16_t* samples, size_t n_values, int sample_rate, int channels,
                                                 float** out, size_t* n_out);
HARK_API hark_status hark_audio_pcm_f32_to_mono16k(const float* samples, size_t n_values, int sample_rate, int channels,
                                                   float** out, size_t* n_out);
/* Frees a buffer from the functions above; HARK_ERR_BAD_HANDLE for any other pointer. */
HARK_API hark_status hark_audio_free(float* samples);

/* ---- results ------------------------------------------------------------------------------ */
/* A result is immutable: every getter may be called from any thread at once. Strings it returns
 * are valid until hark_result_free. Times are in 10 ms units from the start of the audio. */

/* Any thread. A getter running on another thread at the same time finishes first; strings the
 * result gave out become invalid. HARK_ERR_BAD_HANDLE for a freed one; HARK_ERR_INVALID_ARGUMENT
 * for the one a new-segments callback was given (the library frees that). */
HARK_API hark_status hark_result_free(hark_result* result);

HARK_API int hark_result_job_id(const hark_result* result); /* -1 on a bad handle */
/* 1: the job was stopped (hark_job_abort, abort_all, a callback, hark_context_free); the segments
 * are what was finished before. 0: it ran to the end. -1: bad handle. */
HARK_API int hark_result_aborted(const hark_result* result);
/* The language transcribed ("en", ...); "" when none was decided (aborted before the first
 * window). NULL on a bad handle. */
HARK_API const char* hark_result_language(const hark_result* result);
/* All segments' text joined. NULL on a bad handle. */
HARK_API const char* hark_result_text(const hark_result* result);

HARK_API int hark_result_n_segments(const hark_result* result);                  /* -1 on a bad handle */
HARK_API int64_t hark_result_segment_t0(const hark_result* result, int i);       /* -1 on a bad handle or i */
HARK_API int64_t hark_result_segment_t1(const hark_result* result, int i);       /* -1 on a bad handle or i */
HARK_API const char* hark_result_segment_text(const hark_result* result, int i); /* UTF-8; NULL on error */
HARK_API int hark_result_segment_n_tokens(const hark_result* result, int i);     /* -1 on error */

typedef struct hark_token_data {
  int32_t id;
  const char* text; /* the token's bytes (may be part of a UTF-8 character) or a special name */
  float p;          /* probability the model gave it */
  int64_t t0, t1;   /* when token timestamps are on; -1 otherwise */
  float logp;       /* log p (added after the first release) */
} hark_token_data;

/* Token j of segment i (out_size = sizeof *out). */
HARK_API hark_status hark_result_token(const hark_result* result, int i, int j, hark_token_data* out, size_t out_size);

/* How segment i's window was decoded (OpenAI's segment fields). */
typedef struct hark_segment_decoding {
  float temperature;        /* of the pass kept (after any fallback) */
  double avg_logprob;       /* of the window's tokens, end-of-text included */
  double compression_ratio; /* gzip compression ratio of the window's text */
  float no_speech_prob;     /* P(no speech) at the window's start */
  /* Added later (a caller built against an older hark.h passes the smaller size and gets the
   * fields above): the start of the window it was decoded in (OpenAI's "seek"), 10 ms units. */
  int64_t seek;
} hark_segment_decoding;

HARK_API hark_status hark_result_segment_decoding(const hark_result* result, int i, hark_segment_decoding* out,
                                                  size_t out_size);
/* The detected language's probability; 0 when the language was given (not detected); -1 on a bad
 * handle. */
HARK_API float hark_result_language_prob(const hark_result* result);
/* Windows decoded again at a higher temperature (fallback); -1 on a bad handle. */
HARK_API int hark_result_n_fallback_windows(const hark_result* result);

/* Words of segment i (with word_timestamps; 0 otherwise); -1 on error. */
HARK_API int hark_result_segment_n_words(const hark_result* result, int i);

typedef struct hark_word {
  const char* text; /* UTF-8, with its leading space and merged punctuation */
  int64_t t0, t1;   /* 10 ms units from the start of the audio */
  float p;          /* mean probability of its tokens */
} hark_word;

/* Word j of segment i (out_size = sizeof *out). */
HARK_API hark_status hark_result_word(const hark_result* result, int i, int j, hark_word* out, size_t out_size);

/* 1: a tinydiarize model marked a change of speaker right after segment i (tdrz_enable);
 * whisper.rn shows it as " [SPEAKER_TURN]" after the text. 0: not; -1 on a bad handle or i. */
HARK_API int hark_result_segment_speaker_turn_next(const hark_result* result, int i);

typedef struct hark_window {
  int64_t t0, t1; /* the stretch of audio one encoder window decoded */
  bool skipped_as_silence;
  const char* language; /* static: the language it was decoded in (multilingual: its own) */
} hark_window;

HARK_API int hark_result_n_windows(const hark_result* result); /* -1 on a bad handle */
HARK_API hark_status hark_result_window(const hark_result* result, int i, hark_window* out, size_t out_size);

typedef struct hark_timings {
  double load_ms; /* the model's load (once per context) */
  double mel_ms, encode_ms, decode_ms;
  double total_ms;     /* this transcription, load excluded */
  int n_windows;       /* encoder runs */
  int n_decode_tokens; /* decoder steps */
  double audio_seconds;
  double real_time_factor; /* seconds of work per second of audio, load excluded */
  double vad_ms;           /* VAD-assisted transcription (vad): finding the speech; 0 without */
  int n_threads;           /* compute threads the job ran with */
} hark_timings;

HARK_API hark_status hark_result_timings(const hark_result* result, hark_timings* out, size_t out_size);

typedef enum hark_format {
  HARK_FORMAT_TXT = 0, /* segment texts, one per line */
  HARK_FORMAT_SRT = 1,
  HARK_FORMAT_VTT = 2,
  HARK_FORMAT_JSON = 3, /* {"language", "segments":[{t0,t1,text,tokens}], "timings"} */
  HARK_FORMAT_CSV = 4,  /* whisper.cpp's -ocsv: "start,end,text", times in ms, text quoted */
  HARK_FORMAT_LRC = 5   /* whisper.cpp's -olrc: "[mm:ss.xx]text" per segment */
} hark_format;

/* The result as a subtitle or text file's contents (ends with a newline when not empty); valid
 * until hark_result_free. NULL on a bad handle or format. Any thread. */
HARK_API const char* hark_result_format(const hark_result* result, hark_format format);

/* "hh:mm:ss.mmm" (comma: "hh:mm:ss,mmm", SRT's) for t in 10 ms units, written to buf with its
 * terminating zero. HARK_ERR_INVALID_ARGUMENT when buf is NULL or buf_size too small (16 is
 * always enough below 1000 hours). Any thread. */
HARK_API hark_status hark_format_timestamp(int64_t t, bool comma, char* buf, size_t buf_size);

/* ---- bench -------------------------------------------------------------------------------- */

typedef struct hark_bench_result {
  char config[256]; /* system info: SIMD levels, device (cut short if longer) */
  int n_threads;
  double encode_ms; /* one 30 s encoder window */
  double decode_ms; /* per token: 256 single-token steps */
  double batch_ms;  /* per token: 64 steps of a 5-row batch */
  double prompt_ms; /* per token: 16 prompts of 256 tokens */
} hark_bench_result;

/* Measures the loaded model as whisper-bench does (n_threads 0: the context's). Any thread; runs
 * on a state of its own. */
HARK_API hark_status hark_bench(hark_context* ctx, int n_threads, hark_bench_result* out, size_t out_size);

/* ---- language detection ------------------------------------------------------------------ */

/* The spoken language of the 30 s of audio from offset_ms (whisper.cpp's whisper_lang_auto_detect):
 * the same probabilities a transcription with language "auto" and that offset computes.
 * lang_id gets the most likely language (hark_language_code(*lang_id) names it), probability (may
 * be NULL) its probability; probs (NULL when n_probs is 0) gets n_probs values by language id,
 * 0 for ids the model does not have (hark_language_count() values hold them all).
 * HARK_ERR_INVALID_ARGUMENT for an English-only model (hark_last_error_code() "unsupported"). Any
 * thread; runs on a state from the context's pool. */
HARK_API hark_status hark_detect_language(hark_context* ctx, const float* samples, size_t n_samples, int64_t offset_ms,
                                          int n_threads, int* lang_id, float* probability, float* probs, int n_probs);
/* The same from a log-mel spectrogram instead of audio (faster-whisper's features, whisper.cpp's
 * whisper_set_mel): n_mels rows (the model's: hark_model_info) of n_frames values, row-major,
 * normalised as Whisper's log_mel_spectrogram; the first 3000 frames (30 s) are used, fewer padded
 * with zeros. */
HARK_API hark_status hark_detect_language_mel(hark_context* ctx, const float* mel, int n_mels, size_t n_frames,
                                              int n_threads, int* lang_id, float* probability, float* probs,
                                              int n_probs);

/* ---- voice activity detection ------------------------------------------------------------ */
/* The Silero VAD (hark/vad.hpp): one speech probability per 512-sample frame (32 ms at 16 kHz)
 * and speech segments from them, whisper.cpp's whisper_vad_* for the same model and options;
 * and whisper.rn's energy VAD. Audio is 16 kHz mono float; times are in 10 ms units. */

typedef struct hark_vad_context hark_vad_context; /* a loaded Silero VAD model */
typedef struct hark_vad_stream hark_vad_stream;   /* one live stream's VAD state */
typedef struct hark_vad_result hark_vad_result;   /* segments and probabilities of one buffer */

typedef struct hark_vad_context_params {
  size_t struct_size;    /* set by hark_vad_context_default_params(); see "Growing" at the top */
  int n_threads;         /* compute threads (default 1: the network is small) */
  bool upstream_context; /* false (default): whisper.cpp's front end, whose numbers hark matches;
                            true: the upstream Silero one (the previous frame's last 64 samples
                            in front of each frame) */
  const char* device;    /* "cpu" (default, NULL or "") or "cpu-ref". Read during the load only. */
} hark_vad_context_params;

HARK_API hark_status hark_vad_context_params_init(hark_vad_context_params* params, size_t params_size);
static inline hark_vad_context_params hark_vad_context_default_params(void) {
  hark_vad_context_params p;
  hark_vad_context_params_init(&p, sizeof p);
  return p;
}

/* Maps and validates a Silero VAD model in whisper.cpp's layout. *out is freed with
 * hark_vad_context_free. HARK_ERR_IO: cannot open; HARK_ERR_MODEL: not a valid VAD model (the
 * message names the field, its offset, expected vs found). Any thread. */
HARK_API hark_status hark_vad_context_load(const char* model_path, const hark_vad_context_params* params,
                                           hark_vad_context** out);
/* Waits for calls running on it, then frees it. Streams made from it live on. Any thread. */
HARK_API hark_status hark_vad_context_free(hark_vad_context* ctx);

/* Segment options: whisper.cpp's whisper_vad_params with its defaults. */
typedef struct hark_vad_params {
  size_t struct_size;           /* set by hark_vad_default_params() */
  float threshold;              /* 0.5: P(speech) at or above which a frame starts speech */
  int min_speech_duration_ms;   /* 250: shorter segments are dropped */
  int min_silence_duration_ms;  /* 100: a pause (below threshold - 0.15) must last this long */
  int speech_pad_ms;            /* 30: added on both sides of each segment */
  float samples_overlap;        /* 0.1 s: kept around segments when speech is cut out for
                                   transcription; does not change the segments */
  double max_speech_duration_s; /* FLT_MAX (no limit): longer speech is cut */
} hark_vad_params;

HARK_API hark_status hark_vad_params_init(hark_vad_params* params, size_t params_size);
static inline hark_vad_params hark_vad_default_params(void) {
  hark_vad_params p;
  hark_vad_params_init(&p, sizeof p);
  return p;
}

/* The whole buffer from a fresh state (params NULL: the defaults). *out is freed with
 * hark_vad_result_free. Any thread (calls on one context take turns). */
HARK_API hark_status hark_vad_detect_speech(hark_vad_context* ctx, const float* samples, size_t n_samples,
                                            const hark_vad_params* params, hark_vad_result** out);
HARK_API hark_status hark_vad_result_free(hark_vad_result* result);
HARK_API int hark_vad_result_n_segments(const hark_vad_result* result);            /* -1 on a bad handle */
HARK_API int64_t hark_vad_result_segment_t0(const hark_vad_result* result, int i); /* -1 on a bad handle or i */
HARK_API int64_t hark_vad_result_segment_t1(const hark_vad_result* result, int i); /* -1 on a bad handle or i */
HARK_API int hark_vad_result_n_probs(const hark_vad_result* result);               /* -1 on a bad handle */
/* n_probs values, one per frame of 512 samples (the last zero-padded); valid until the result is
 * freed. NULL on a bad handle. */
HARK_API const float* hark_vad_result_probs(const hark_vad_result* result);

/* A live stream: samples in chunks of any size, each complete frame run at once with the
 * network state carried from frame to frame (the same probabilities as hark_vad_detect_speech
 * over the whole audio). One thread at a time per stream. */
HARK_API hark_status hark_vad_stream_new(hark_vad_context* ctx, hark_vad_stream** out);
HARK_API hark_status hark_vad_stream_free(hark_vad_stream* stream);
/* Runs the frames this chunk completes; their probabilities go to probs (room for probs_cap
 * values; n_samples / 512 + 1 is always enough) and their count to *n_probs. */
HARK_API hark_status hark_vad_stream_push(hark_vad_stream* stream, const float* samples, size_t n_samples, float* probs,
                                          size_t probs_cap, size_t* n_probs);
/* Runs the pending partial frame zero-padded: *ran 1 and *prob its probability, or *ran 0 when
 * nothing was pending. */
HARK_API hark_status hark_vad_stream_flush(hark_vad_stream* stream, float* prob, bool* ran);
/* A fresh state; pending samples dropped. */
HARK_API hark_status hark_vad_stream_reset(hark_vad_stream* stream);

/* whisper.rn's energy VAD over the last vad_ms of the audio (no model, no state). */
typedef struct hark_energy_vad_params {
  size_t struct_size; /* set by hark_energy_vad_default_params() */
  int vad_ms;         /* 2000: the window (at least 2000) */
  int last_ms;        /* 1000: its last part, compared with the whole */
  float vad_thold;    /* 0.6: the last part's mean |x| must be at most this times the window's */
  double freq_thold;  /* 100 Hz: high-pass cutoff applied first; 0: none */
} hark_energy_vad_params;

HARK_API hark_status hark_energy_vad_params_init(hark_energy_vad_params* params, size_t params_size);
static inline hark_energy_vad_params hark_energy_vad_default_params(void) {
  hark_energy_vad_params p;
  hark_energy_vad_params_init(&p, sizeof p);
  return p;
}

typedef struct hark_energy_vad_result {
  bool detected;     /* the window is full and its end is quiet: the speaker paused */
  float energy_all;  /* mean |x| of the high-passed window */
  float energy_last; /* mean |x| of its last last_ms */
} hark_energy_vad_result;

/* params NULL: the defaults. out_size = sizeof *out. Any thread. */
HARK_API hark_status hark_energy_vad(const float* samples, size_t n_samples, const hark_energy_vad_params* params,
                                     hark_energy_vad_result* out, size_t out_size);

/* ---- realtime: a stream of pushed audio transcribed in slices (hark/realtime.hpp) ------------ */
typedef struct hark_stream hark_stream; /* one live transcription: free it before its context */

/* whisper.rn's TranscribeRealtimeEvent; every pointer is valid during the callback only. */
typedef struct hark_stream_event {
  int job_id;
  int code;          /* 0 ok; -1 transcription failed, -2 capture ring overflow, -3 source or recording failed */
  const char* error; /* "" when code is 0 */
  bool is_capturing;
  bool is_stopped_by_action; /* the last event after hark_stream_stop() */
  bool slice_final;          /* the slice below is closed: its text will not change */
  int slice_index;
  const char* result; /* that slice's text */
  double process_time_ms;
  double recording_time_ms;
  int64_t dropped_samples; /* lost to ring overflow so far */
  const char* json;        /* the whole event, every slice with its segments, as one line of JSON */
} hark_stream_event;

typedef void (*hark_stream_event_callback)(const hark_stream_event* event, void* user_data);

typedef struct hark_stream_params {
  size_t struct_size;            /* set by hark_stream_default_params() */
  double audio_sec;              /* 30: realtimeAudioSec, capture ends after this much audio */
  double audio_slice_sec;        /* 0: realtimeAudioSliceSec (0: audio_sec) */
  double audio_min_sec;          /* 1: realtimeAudioMinSec */
  double partial_sec;            /* 1: partial results at most every this much new audio; 0 none */
  const char* audio_output_path; /* NULL: no recording; else a WAV of everything pushed (audio_output_bits) */
  bool use_vad;                  /* false: whisper.rn's energy VAD ends slices at pauses */
  bool live;                     /* true: audio that finds the ring full is dropped (reported); false: push waits */
  int vad_ms;                    /* 2000 */
  float vad_thold;               /* 0.6 */
  float vad_freq_thold;          /* 100 */
  const char* vad_model_path;    /* NULL, or a Silero VAD model instead of the energy VAD */
  const char* language;          /* "en" */
  int n_threads;                 /* 0: the context's */
  hark_stream_event_callback on_event; /* runs on the stream's own thread */
  void* user_data;
  int sample_rate;       /* 16000: the rate of what hark_stream_push() takes (1000..768000 Hz) */
  int channels;          /* 1: interleaved channels of what hark_stream_push() takes (1..256) */
  int audio_output_bits; /* 32: the recording's samples are f32, exactly as pushed; 16: 16-bit PCM */
  float vad_threshold;   /* 0.5: with vad_model_path, a frame is speech at this probability */
  int vad_silence_ms;    /* 500: with vad_model_path, a slice ends after this much non-speech */
  float ring_sec;        /* 0: capture buffer of 2 slices + 5 s; audio finding it full is dropped (live) */
} hark_stream_params;

HARK_API hark_status hark_stream_params_init(hark_stream_params* params, size_t params_size);
static inline hark_stream_params hark_stream_default_params(void) {
  hark_stream_params p;
  hark_stream_params_init(&p, sizeof p);
  return p;
}

/* Starts transcribing what hark_stream_push() delivers, on a state of the stream's own. */
HARK_API hark_status hark_stream_create(hark_context* ctx, const hark_stream_params* params, hark_stream** out);
/* The same on the caller's state (one from a fixed pool, say: the stream then costs no memory
 * beyond it); params->n_threads 0 keeps the state's thread count. The state is lent to the stream
 * until hark_stream_free: meanwhile hark_transcribe_with_state and a second stream on it are
 * refused (HARK_ERR_INVALID_ARGUMENT). hark_state_free while it is lent ends the stream first, as
 * hark_job_abort(event->job_id) would (its last event is delivered; later pushes are ignored),
 * then frees the state; the stream handle stays valid until hark_stream_free. */
HARK_API hark_status hark_stream_create_on_state(hark_state* state, const hark_stream_params* params,
                                                 hark_stream** out);
/* Interleaved float at the params' sample_rate and channels (converted to 16 kHz mono), any
 * number of whole frames: n_samples counts values over all channels. Any thread. */
HARK_API hark_status hark_stream_push(hark_stream* stream, const float* samples, size_t n_samples);
/* Ends capture; a transcription in progress runs to its end, what was pushed is still transcribed,
 * the last event says is_stopped_by_action. Returns at once. hark_job_abort(event->job_id) ends
 * the stream at once instead, without transcribing what is left. */
HARK_API hark_status hark_stream_stop(hark_stream* stream);
/* Closes the open slice at what was pushed so far: it is transcribed as final (whisper.rn's
 * nextSlice). Nothing happens when it holds no audio. Returns at once. */
HARK_API hark_status hark_stream_next_slice(hark_stream* stream);
/* Until the last event has been delivered (after stop, or once audio_sec was pushed). */
HARK_API hark_status hark_stream_wait(hark_stream* stream);
/* Stops, waits, frees. Not from the stream's own callback. */
HARK_API hark_status hark_stream_free(hark_stream* stream);

/* ---- model conversion ---------------------------------------------------------------------- */
/* Rewrites a Whisper model file with its weight matrices in `type` ("f32", "f16", "q4_0", "q4_1",
 * "q5_0", "q5_1", "q8_0"), in whisper.cpp's layout (see hark/quantize.hpp for what changes). The
 * output is written under a temporary name and renamed at the end: on failure there is no output
 * file. HARK_ERR_INVALID_ARGUMENT: NULL or empty paths, an unknown type, the output is the input;
 * HARK_ERR_MODEL: the input is not a valid model; HARK_ERR_IO: a file cannot be opened, read or
 * written (the message names the file). `progress` (may be NULL) gets the bytes converted after each tensor; `out`
 * (may be NULL) the sizes. Any thread. */
typedef void (*hark_quantize_progress_callback)(uint64_t done_bytes, uint64_t total_bytes, void* user_data);
typedef struct hark_quantize_result {
  const char* from_type; /* static strings: "f16", "q5_0", ... */
  const char* to_type;
  uint64_t input_bytes; /* file sizes */
  uint64_t output_bytes;
  int n_tensors;   /* tensors in the file */
  int n_converted; /* tensors whose type changed */
  int n_kept_f16;  /* matrices left f16: rows not whole 32-value blocks */
} hark_quantize_result;
HARK_API hark_status hark_quantize_model(const char* input_path, const char* output_path, const char* type,
                                         hark_quantize_progress_callback progress, void* user_data,
                                         hark_quantize_result* out, size_t out_size);

#ifdef __cplusplus
}
#endif

#endif /* HARK_H */

#include "hark/hark_models.h" /* models by name, the models folder, downloads */
