/* The C API end to end, in C11: load, info, devices, every input form, callbacks with user_data,
 * aborts (from a callback, by job id from another thread, by freeing the context), two jobs at
 * once on one context, a state of one's own, result getters, and every bad handle and bad
 * argument returning its code and a message. The model is the micro preset (random weights: the
 * text is nonsense, but it is deterministic and there are segments), made with make-test-model.
 *
 *   hark_capi_test [MODEL]   without MODEL it runs make-test-model (HARK_MAKE_TEST_MODEL)
 *
 * Prints "N passed, M failed"; exits 1 when anything failed. */
#define _POSIX_C_SOURCE 200809L

#include "hark/hark.h"

#include <math.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

static int g_passed, g_failed;

#define CHECK(cond)                                                                                                    \
  do {                                                                                                                 \
    if (cond) {                                                                                                        \
      ++g_passed;                                                                                                      \
    } else {                                                                                                           \
      ++g_failed;                                                                                                      \
      fprintf(stderr, "%s:%d: CHECK(%s) failed; hark_last_error: %s\n", __FILE__, __LINE__, #cond, hark_last_error()); \
    }                                                                                                                  \
  } while (0)

#define CHECK_OK(expr)                                                                                \
  do {                                                                                                \
    hark_status s_ = (expr);                                                                          \
    if (s_ == HARK_OK) {                                                                              \
      ++g_passed;                                                                                     \
    } else {                                                                                          \
      ++g_failed;                                                                                     \
      fprintf(stderr, "%s:%d: %s returned %s: %s\n", __FILE__, __LINE__, #expr, hark_status_name(s_), \
              hark_last_error());                                                                     \
    }                                                                                                 \
  } while (0)

/* An error case: the expected status, and a message that contains `part` (the field or argument
 * it is about), which also proves the message is this call's and not an earlier one's. */
#define CHECK_ERR(expr, status, part)                                                                                 \
  do {                                                                                                                \
    hark_status s_ = (expr);                                                                                          \
    const char* m_ = hark_last_error();                                                                               \
    if (s_ == (status) && m_ && strstr(m_, (part))) {                                                                 \
      ++g_passed;                                                                                                     \
    } else {                                                                                                          \
      ++g_failed;                                                                                                     \
      fprintf(stderr, "%s:%d: %s returned %s (wanted %s), message '%s' (wanted one with '%s')\n", __FILE__, __LINE__, \
              #expr, hark_status_name(s_), hark_status_name(status), m_, (part));                                     \
    }                                                                                                                 \
  } while (0)

/* A getter's sentinel on error, with a message containing part. */
#define CHECK_SENTINEL(cond, part)                                                                                  \
  do {                                                                                                              \
    const int ok_ = (cond);                                                                                         \
    const char* m_ = hark_last_error();                                                                             \
    if (ok_ && strstr(m_, (part))) {                                                                                \
      ++g_passed;                                                                                                   \
    } else {                                                                                                        \
      ++g_failed;                                                                                                   \
      fprintf(stderr, "%s:%d: %s: wanted the sentinel and a message with '%s', message '%s'\n", __FILE__, __LINE__, \
              #cond, (part), m_);                                                                                   \
    }                                                                                                               \
  } while (0)

/* The library's defaults without temperature fallback: a random-weight model is never confident,
 * so with fallback every window would be decoded at six temperatures (five candidates each above
 * 0): the same checks at about 20x the time. */
static hark_transcribe_params quick_params(void) {
  hark_transcribe_params p = hark_transcribe_default_params();
  p.temperature_inc = 0.0f;
  return p;
}
static hark_transcribe_params g_quick; /* quick_params(), set first thing in main */

/* What hark_transcribe_params.fallback_callback was told: how often, and how often wrongly
 * (a window outside the first 3 s, or a temperature not in the fallback's 0.5, 1.0). */
struct fallback_log {
  int n, bad;
};
static void on_fallback(int64_t t0, int64_t t1, float temperature, double compression_ratio, double avg_logprob,
                        void* user_data) {
  struct fallback_log* log = (struct fallback_log*)user_data;
  ++log->n;
  if (t0 < 0 || t1 <= t0 || t1 > 300 || (temperature != 0.5f && temperature != 1.0f) || compression_ratio < 0 ||
      avg_logprob > 0)
    ++log->bad;
}

static void sleep_ms(int ms) {
  struct timespec ts = {ms / 1000, (long)(ms % 1000) * 1000000L};
  nanosleep(&ts, NULL);
}

/* ---- audio ------------------------------------------------------------------------------- */

static const double kPi = 3.14159265358979323846;

/* Speech-like test audio at any rate: tones gliding in pitch, 2.2 s on, 0.8 s off. */
static double synth_at(double t) {
  const double gate = fmod(t, 3.0) < 2.2 ? 1.0 : 0.0;
  const double f = 180.0 + 60.0 * sin(0.7 * t);
  return gate * (0.3 * sin(2 * kPi * f * t) + 0.1 * sin(2 * kPi * 3.1 * f * t));
}

static float* synth(double seconds, size_t* n) {
  *n = (size_t)(seconds * 16000);
  float* a = malloc(*n * sizeof *a);
  for (size_t i = 0; i < *n; ++i) a[i] = (float)synth_at((double)i / 16000);
  return a;
}

static void put_u32(unsigned char* p, uint32_t v) {
  for (int i = 0; i < 4; ++i) p[i] = (unsigned char)(v >> (8 * i));
}
static void put_u16(unsigned char* p, uint16_t v) {
  p[0] = (unsigned char)v;
  p[1] = (unsigned char)(v >> 8);
}

/* A 16-bit mono 16 kHz WAV file of the test audio, in memory. */
static unsigned char* make_wav(double seconds, size_t* size) {
  const uint32_t n = (uint32_t)(seconds * 16000);
  *size = 44 + (size_t)n * 2;
  unsigned char* w = malloc(*size);
  memcpy(w, "RIFF", 4);
  put_u32(w + 4, (uint32_t)(*size - 8));
  memcpy(w + 8, "WAVEfmt ", 8);
  put_u32(w + 16, 16);
  put_u16(w + 20, 1); /* PCM */
  put_u16(w + 22, 1); /* mono */
  put_u32(w + 24, 16000);
  put_u32(w + 28, 32000);
  put_u16(w + 32, 2);
  put_u16(w + 34, 16);
  memcpy(w + 36, "data", 4);
  put_u32(w + 40, n * 2);
  for (uint32_t i = 0; i < n; ++i) put_u16(w + 44 + 2 * i, (uint16_t)(int16_t)lrint(synth_at(i / 16000.0) * 32767));
  return w;
}

static char* data_uri(const unsigned char* data, size_t size) {
  static const char digits[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
  const char* head = "data:audio/wav;base64,";
  char* out = malloc(strlen(head) + (size + 2) / 3 * 4 + 1);
  char* o = out + strlen(head);
  strcpy(out, head);
  for (size_t i = 0; i < size; i += 3) {
    const uint32_t b =
        (uint32_t)data[i] << 16 | (i + 1 < size ? (uint32_t)data[i + 1] << 8 : 0) | (i + 2 < size ? data[i + 2] : 0);
    *o++ = digits[b >> 18 & 63];
    *o++ = digits[b >> 12 & 63];
    *o++ = i + 1 < size ? digits[b >> 6 & 63] : '=';
    *o++ = i + 2 < size ? digits[b & 63] : '=';
  }
  *o = '\0';
  return out;
}

/* Every segment's times and text, one line each: what "the same text" compares. */
static char* transcript_of(const hark_result* r) {
  size_t cap = 256, len = 0;
  char* s = malloc(cap);
  s[0] = '\0';
  for (int i = 0; i < hark_result_n_segments(r); ++i) {
    const char* text = hark_result_segment_text(r, i);
    const size_t need = len + strlen(text) + 64;
    if (need > cap) {
      cap = need * 2;
      s = realloc(s, cap);
    }
    len += (size_t)sprintf(s + len, "%lld-%lld:%s\n", (long long)hark_result_segment_t0(r, i),
                           (long long)hark_result_segment_t1(r, i), text);
  }
  return s;
}

/* ---- callbacks --------------------------------------------------------------------------- */

typedef struct {
  int progress_calls, last_progress, progress_decreased;
  int segment_calls, segments_seen, totals_consistent, views_consistent;
  int encoder_begins, abort_polls;
  int stop_after_segments;   /* > 0: the abort callback says stop once this many arrived */
  int encoder_stop;          /* encoder_begin returns false */
  hark_context* ctx_to_free; /* the new-segments callback tries to free it (must be refused) */
  hark_status free_in_callback;
} Watch;

static void on_progress(int percent, void* ud) {
  Watch* w = ud;
  if (percent < w->last_progress) w->progress_decreased = 1;
  w->last_progress = percent;
  ++w->progress_calls;
}

static void on_segments(const hark_result* segs, int n_new, int total, void* ud) {
  Watch* w = ud;
  ++w->segment_calls;
  w->segments_seen += n_new;
  if (total != w->segments_seen) w->totals_consistent = 0;
  /* The borrowed result holds exactly the new segments, readable with the ordinary getters. */
  if (hark_result_n_segments(segs) != n_new) w->views_consistent = 0;
  for (int i = 0; i < n_new; ++i) {
    const char* t = hark_result_segment_text(segs, i);
    if (!t || hark_result_segment_t0(segs, i) > hark_result_segment_t1(segs, i)) w->views_consistent = 0;
  }
  if (hark_result_free((hark_result*)segs) != HARK_ERR_INVALID_ARGUMENT) w->views_consistent = 0;
  if (w->ctx_to_free) {
    w->free_in_callback = hark_context_free(w->ctx_to_free);
    w->ctx_to_free = NULL;
  }
}

static bool on_encoder_begin(void* ud) {
  Watch* w = ud;
  ++w->encoder_begins;
  return !w->encoder_stop;
}

static bool on_abort_poll(void* ud) {
  Watch* w = ud;
  ++w->abort_polls;
  return w->stop_after_segments > 0 && w->segments_seen >= w->stop_after_segments;
}

static hark_transcribe_params watched_params(Watch* w) {
  memset(w, 0, sizeof *w);
  w->last_progress = -1;
  w->totals_consistent = 1;
  w->views_consistent = 1;
  hark_transcribe_params p = quick_params();
  p.progress_callback = on_progress;
  p.progress_user_data = w;
  p.new_segments_callback = on_segments;
  p.new_segments_user_data = w;
  p.encoder_begin_callback = on_encoder_begin;
  p.encoder_begin_user_data = w;
  p.abort_callback = on_abort_poll;
  p.abort_user_data = w;
  return p;
}

static atomic_int g_log_messages;
static void on_log(hark_log_level level, const char* message, void* ud) {
  if (level >= HARK_LOG_DEBUG && level <= HARK_LOG_ERROR && message && ud == &g_log_messages)
    atomic_fetch_add(&g_log_messages, 1);
}

/* ---- threads ----------------------------------------------------------------------------- */

typedef struct {
  hark_context* ctx;
  const float* samples;
  size_t n;
  hark_transcribe_params params;
  hark_status status;
  hark_result* result;
} Job;

static void* run_job(void* arg) {
  Job* j = arg;
  j->status = hark_transcribe(j->ctx, j->samples, j->n, &j->params, &j->result);
  return NULL;
}

/* A job that holds itself at its first progress report until the test lets it go: the abort
 * then lands while the job is surely running, however fast the machine. */
typedef struct {
  atomic_int started;
  atomic_int release;
} Gate;

static void gate_progress(int percent, void* ud) {
  (void)percent;
  Gate* g = ud;
  atomic_store(&g->started, 1);
  for (int i = 0; i < 10000 && !atomic_load(&g->release); ++i) sleep_ms(1);
}

static void wait_started(Gate* g) {
  for (int i = 0; i < 60000 && !atomic_load(&g->started); ++i) sleep_ms(1);
}

/* For the context-free case: the job's progress callback waits until the context is being freed
 * (its handle no longer answers), so the free surely finds the job running. */
typedef struct {
  hark_context* ctx;
  atomic_int started;
} FreeGate;

static void free_gate_progress(int percent, void* ud) {
  (void)percent;
  FreeGate* g = ud;
  atomic_store(&g->started, 1);
  for (int i = 0; i < 10000 && hark_context_describe(g->ctx) != NULL; ++i) sleep_ms(1);
}

/* ---- the tests --------------------------------------------------------------------------- */

static void test_library(void) {
  CHECK(hark_version() && strlen(hark_version()) > 0);
  CHECK(strstr(hark_system_info(), "SIMD = ") != NULL); /* AVX2 = ... on x86, NEON = ... on ARM */
  CHECK(hark_language_count() >= 99);
  CHECK(hark_language_id("en") == 0);
  CHECK(hark_language_id("de") > 0);
  CHECK_SENTINEL(hark_language_id("xx") == -1, "xx");
  CHECK_SENTINEL(hark_language_id(NULL) == -1, "NULL");
  CHECK(strcmp(hark_language_code(0), "en") == 0);
  CHECK_SENTINEL(hark_language_code(hark_language_count()) == NULL, "out of range");
  CHECK(strcmp(hark_language_name(hark_language_id("de")), "german") == 0);
  CHECK_SENTINEL(hark_language_name(-1) == NULL, "out of range");
  CHECK(strcmp(hark_status_name(HARK_ERR_BAD_HANDLE), "HARK_ERR_BAD_HANDLE") == 0);
  CHECK(strcmp(hark_status_name((hark_status)99), "HARK_ERR_UNKNOWN") == 0);

  const int n = hark_device_count();
  CHECK(n >= 1);
  hark_device_info d;
  int have_cpu = 0;
  for (int i = 0; i < n; ++i) {
    CHECK_OK(hark_device_get(i, &d, sizeof d));
    CHECK(d.name && d.description && d.reason_no_gpu);
    if (strcmp(d.name, "cpu") == 0) have_cpu = 1;
  }
  CHECK(have_cpu);
  CHECK_ERR(hark_device_get(n, &d, sizeof d), HARK_ERR_INVALID_ARGUMENT, "index");
  CHECK_ERR(hark_device_get(-1, &d, sizeof d), HARK_ERR_INVALID_ARGUMENT, "index");
  CHECK_ERR(hark_device_get(0, NULL, sizeof d), HARK_ERR_INVALID_ARGUMENT, "out");
  CHECK_ERR(hark_device_get(0, &d, 4), HARK_ERR_INVALID_ARGUMENT, "out_size");

  CHECK_ERR(hark_set_log_level((hark_log_level)7), HARK_ERR_INVALID_ARGUMENT, "min_level");
  char buf[32];
  CHECK_OK(hark_format_timestamp(6123456, false, buf, sizeof buf));
  CHECK(strcmp(buf, "17:00:34.560") == 0);
  CHECK_OK(hark_format_timestamp(150, true, buf, sizeof buf));
  CHECK(strcmp(buf, "00:00:01,500") == 0);
  CHECK_ERR(hark_format_timestamp(150, false, buf, 5), HARK_ERR_INVALID_ARGUMENT, "buf_size");
  CHECK_ERR(hark_format_timestamp(150, false, NULL, 32), HARK_ERR_INVALID_ARGUMENT, "buf");
  CHECK_ERR(hark_format_timestamp(-1, false, buf, 32), HARK_ERR_INVALID_ARGUMENT, "t must");

  hark_transcribe_params tp;
  CHECK_ERR(hark_transcribe_params_init(&tp, 8), HARK_ERR_INVALID_ARGUMENT, "params_size");
  CHECK_ERR(hark_transcribe_params_init(NULL, sizeof tp), HARK_ERR_INVALID_ARGUMENT, "params");
  tp = quick_params();
  CHECK(tp.struct_size == sizeof tp && strcmp(tp.language, "en") == 0 && tp.n_processors == 1 && tp.timestamps);
  hark_context_params cp = hark_context_default_params();
  CHECK(cp.struct_size == sizeof cp && cp.use_gpu && cp.flash_attn && cp.n_threads == 0 && cp.device == NULL &&
        cp.cross_kv_type == HARK_KV_F16);
}

static void on_load_progress(uint64_t done, uint64_t total, void* user_data) {
  uint64_t* last = (uint64_t*)user_data;
  last[0] = done;
  last[1] = total;
}

/* hark_models.h: the registry, the models folder, finding a model by name, download arguments,
 * a context loaded by name with its load progress. (Downloads themselves are tested against a
 * loopback server in tests/model_store/download_test.cpp.) */
static void test_models(const char* model) {
  CHECK(hark_model_count() >= 30);
  hark_model_entry e;
  CHECK_OK(hark_model_at(0, &e, sizeof e));
  CHECK(strcmp(e.name, "tiny") == 0 && strcmp(e.file_name, "ggml-tiny.bin") == 0 && strlen(e.sha1) == 40 && !e.vad);
  /* The Silero VAD models are in the list too, marked as such. */
  int vads = 0;
  for (int i = 0; i < hark_model_count(); ++i) {
    CHECK_OK(hark_model_at(i, &e, sizeof e));
    if (e.vad) {
      ++vads;
      CHECK(strncmp(e.name, "silero-", 7) == 0 && strstr(e.url, "whisper-vad") != NULL);
    }
  }
  CHECK(vads == 2);
  CHECK_OK(hark_model_at(0, &e, sizeof e));
  CHECK_ERR(hark_model_at(hark_model_count(), &e, sizeof e), HARK_ERR_INVALID_ARGUMENT, "out of range");
  CHECK(hark_models_dir() != NULL && strlen(hark_models_dir()) > 0);
  const char* path = NULL;
  CHECK_ERR(hark_find_model("base.en", "/nonexistent-models", &path), HARK_ERR_IO, "hark download base.en");
  CHECK(path == NULL);
  CHECK_OK(hark_find_model(model, NULL, &path));
  CHECK(path && strcmp(path, model) == 0);
  CHECK_ERR(hark_find_model(NULL, NULL, &path), HARK_ERR_INVALID_ARGUMENT, "name_or_path");
  hark_download_params dp = hark_download_default_params();
  CHECK(dp.connect_timeout_s > 0 && dp.low_speed_time_s > 0);
  CHECK_ERR(hark_download_model("tiny.fr", &dp, &path, NULL, 0), HARK_ERR_INVALID_ARGUMENT, "unknown model");
  dp.low_speed_time_s = -1;
  CHECK_ERR(hark_download_model("tiny", &dp, &path, NULL, 0), HARK_ERR_INVALID_ARGUMENT, "low_speed_time_s");

  /* A model by its file's name in a models folder, with the load's progress. */
  const char* slash = strrchr(model, '/');
  if (slash) {
    char dir[256];
    snprintf(dir, sizeof dir, "%.*s", (int)(slash - model), model);
    setenv("HARK_MODELS", dir, 1);
    hark_context_params cp = hark_context_default_params();
    uint64_t last[2] = {0, 0};
    cp.load_progress_callback = on_load_progress;
    cp.load_progress_user_data = last;
    hark_context* ctx = NULL;
    CHECK_OK(hark_context_load(slash + 1, &cp, &ctx));
    CHECK(last[0] > 0 && last[0] == last[1]);
    CHECK_OK(hark_context_free(ctx));
    CHECK_ERR(hark_context_load("medium.en", NULL, &ctx), HARK_ERR_IO, "hark download medium.en");
    unsetenv("HARK_MODELS");
  }
}

static void test_load_errors(const char* model, const char* not_a_model) {
  hark_context* ctx = (hark_context*)&ctx; /* must come back NULL */
  hark_context_params cp = hark_context_default_params();
  CHECK_ERR(hark_context_load(NULL, NULL, &ctx), HARK_ERR_INVALID_ARGUMENT, "model_path");
  CHECK(ctx == NULL);
  CHECK_ERR(hark_context_load(model, NULL, NULL), HARK_ERR_INVALID_ARGUMENT, "out");
  CHECK_ERR(hark_context_load("/nonexistent/ggml-tiny.bin", NULL, &ctx), HARK_ERR_IO, "ggml-tiny.bin");
  CHECK_ERR(hark_context_load(not_a_model, NULL, &ctx), HARK_ERR_MODEL, not_a_model);
  CHECK(ctx == NULL);
  cp.n_threads = -1;
  CHECK_ERR(hark_context_load(model, &cp, &ctx), HARK_ERR_INVALID_ARGUMENT, "n_threads");
  cp = hark_context_default_params();
  cp.device = "tpu-9000";
  CHECK_ERR(hark_context_load(model, &cp, &ctx), HARK_ERR_INVALID_ARGUMENT, "tpu-9000");
  hark_context_params zero;
  memset(&zero, 0, sizeof zero);
  CHECK_ERR(hark_context_load(model, &zero, &ctx), HARK_ERR_INVALID_ARGUMENT, "struct_size");
  cp = hark_context_default_params();
  cp.struct_size = sizeof cp + 64;
  CHECK_ERR(hark_context_load(model, &cp, &ctx), HARK_ERR_INVALID_ARGUMENT, "newer hark.h");
  cp = hark_context_default_params();
  cp.cross_kv_type = 7;
  CHECK_ERR(hark_context_load(model, &cp, &ctx), HARK_ERR_INVALID_ARGUMENT, "cross_kv_type");
  cp.cross_kv_type = HARK_KV_Q8_0;
  cp.flash_attn = false;
  CHECK_ERR(hark_context_load(model, &cp, &ctx), HARK_ERR_INVALID_ARGUMENT, "flash_attn");
  CHECK(ctx == NULL);
}

/* A q8_0 cross-attention cache: loads, transcribes, and says so in the bench's config line. */
static void test_cross_kv_q8(const char* model, const float* audio, size_t n) {
  hark_context_params cp = hark_context_default_params();
  cp.n_threads = 2;
  cp.cross_kv_type = HARK_KV_Q8_0;
  hark_context* ctx = NULL;
  CHECK_OK(hark_context_load(model, &cp, &ctx));
  if (!ctx) return;
  hark_result* r = NULL;
  CHECK_OK(hark_transcribe(ctx, audio, n, &g_quick, &r));
  CHECK(r && hark_result_n_segments(r) > 0);
  hark_result_free(r);
  hark_bench_result b;
  CHECK_OK(hark_bench(ctx, 1, &b, sizeof b));
  CHECK(strstr(b.config, "CROSS_KV = q8_0") != NULL);
  hark_context_free(ctx);
}

static void test_info(hark_context* ctx) {
  hark_model_info mi;
  CHECK_OK(hark_context_info(ctx, &mi, sizeof mi));
  CHECK(strncmp(mi.size_name, "custom", 6) == 0);
  CHECK(strcmp(mi.weight_type, "f16") == 0);
  CHECK(mi.n_vocab > 50000 && mi.n_audio_layer == 2 && mi.n_text_layer == 2 && mi.n_mels == 80);
  CHECK(mi.file_bytes > 0 && mi.tensor_bytes > 0 && mi.file_bytes >= mi.tensor_bytes);
  CHECK(mi.path && strlen(mi.path) > 0);
  const char* desc = hark_context_describe(ctx);
  CHECK(desc && strlen(desc) > 0);
  CHECK_ERR(hark_context_info(ctx, &mi, 3), HARK_ERR_INVALID_ARGUMENT, "out_size");
  CHECK_ERR(hark_context_info(ctx, NULL, sizeof mi), HARK_ERR_INVALID_ARGUMENT, "out");

  hark_device_info d;
  CHECK_OK(hark_context_device(ctx, &d, sizeof d));
  CHECK(d.name && strlen(d.name) > 0);
  /* use_gpu was asked for (the default): a GPU, or the reason there is none. */
  CHECK(d.gpu || strlen(d.reason_no_gpu) > 0);
}

static double g_audio_seconds = 10.0;

/* Float samples with every callback on; returns the transcript text (for comparisons). */
static char* test_transcribe_float(hark_context* ctx, const float* audio, size_t n) {
  Watch w;
  hark_transcribe_params p = watched_params(&w);
  hark_result* r = NULL;
  CHECK_OK(hark_transcribe(ctx, audio, n, &p, &r));
  if (!r) return NULL;
  CHECK(w.progress_calls > 0 && w.last_progress == 100 && !w.progress_decreased);
  CHECK(w.segment_calls > 0 && w.totals_consistent && w.views_consistent);
  CHECK(w.encoder_begins >= 1 && w.abort_polls > 0);

  const int ns = hark_result_n_segments(r);
  CHECK(ns > 0);
  CHECK(w.segments_seen == ns);
  CHECK(hark_result_job_id(r) > 0);
  CHECK(hark_result_aborted(r) == 0);
  CHECK(strcmp(hark_result_language(r), "en") == 0);
  const char* text = hark_result_text(r);
  CHECK(text && strlen(text) > 0);

  int64_t prev = 0;
  size_t joined = 0;
  for (int i = 0; i < ns; ++i) {
    const int64_t t0 = hark_result_segment_t0(r, i), t1 = hark_result_segment_t1(r, i);
    CHECK(t0 >= prev && t0 <= t1 && t1 <= (int64_t)(g_audio_seconds * 100));
    prev = t0;
    joined += strlen(hark_result_segment_text(r, i));
    const int nt = hark_result_segment_n_tokens(r, i);
    CHECK(nt > 0);
    for (int j = 0; j < nt; ++j) {
      hark_token_data td;
      CHECK_OK(hark_result_token(r, i, j, &td, sizeof td));
      CHECK(td.id >= 0 && td.text != NULL && td.p > 0.0f && td.p <= 1.0f);
    }
  }
  CHECK(joined == strlen(text));

  CHECK_SENTINEL(hark_result_segment_text(r, ns) == NULL, "segment index");
  CHECK_SENTINEL(hark_result_segment_t0(r, -1) == -1, "segment index");
  CHECK_SENTINEL(hark_result_segment_t1(r, ns) == -1, "segment index");
  CHECK_SENTINEL(hark_result_segment_n_tokens(r, ns) == -1, "segment index");
  hark_token_data td;
  CHECK_ERR(hark_result_token(r, 0, 100000, &td, sizeof td), HARK_ERR_INVALID_ARGUMENT, "token index");
  CHECK_ERR(hark_result_token(r, 0, 0, &td, 2), HARK_ERR_INVALID_ARGUMENT, "out_size");

  const int nw = hark_result_n_windows(r);
  CHECK(nw >= 1);
  hark_window win;
  CHECK_OK(hark_result_window(r, 0, &win, sizeof win));
  CHECK(win.t0 == 0 && win.t1 > win.t0);
  CHECK_ERR(hark_result_window(r, nw, &win, sizeof win), HARK_ERR_INVALID_ARGUMENT, "window index");

  hark_timings tm;
  CHECK_OK(hark_result_timings(r, &tm, sizeof tm));
  CHECK(tm.n_windows == nw && tm.encode_ms > 0 && tm.total_ms > 0 && tm.n_decode_tokens > 0);
  CHECK(fabs(tm.audio_seconds - g_audio_seconds) < 0.01 && tm.real_time_factor > 0);

  const char* srt = hark_result_format(r, HARK_FORMAT_SRT);
  CHECK(srt && strstr(srt, " --> ") != NULL);
  CHECK(hark_result_format(r, HARK_FORMAT_SRT) == srt); /* made once, kept */
  const char* json = hark_result_format(r, HARK_FORMAT_JSON);
  CHECK(json && json[0] == '{' && strstr(json, "\"segments\"") != NULL);
  CHECK(strstr(hark_result_format(r, HARK_FORMAT_VTT), "WEBVTT") != NULL);
  CHECK(strlen(hark_result_format(r, HARK_FORMAT_TXT)) > 0);
  CHECK_SENTINEL(hark_result_format(r, (hark_format)9) == NULL, "format");

  char* t = transcript_of(r);
  CHECK_OK(hark_result_free(r));
  /* Freed: every getter refuses it. */
  CHECK_SENTINEL(hark_result_n_segments(r) == -1, "not a live hark_result");
  CHECK_SENTINEL(hark_result_text(r) == NULL, "not a live hark_result");
  CHECK_ERR(hark_result_free(r), HARK_ERR_BAD_HANDLE, "not a live hark_result");

  /* The same again: the same text. */
  r = NULL;
  CHECK_OK(hark_transcribe(ctx, audio, n, &g_quick, &r));
  char* again = r ? transcript_of(r) : NULL;
  CHECK(again && strcmp(again, t) == 0);
  free(again);
  hark_result_free(r);
  return t;
}

static void test_inputs(hark_context* ctx, const char* wav_path) {
  /* 16-bit PCM at 44.1 kHz, stereo: converted, then transcribed. */
  const size_t frames = (size_t)(g_audio_seconds * 44100);
  int16_t* pcm = malloc(frames * 2 * sizeof *pcm);
  for (size_t i = 0; i < frames; ++i) {
    const int16_t v = (int16_t)lrint(synth_at((double)i / 44100) * 32767);
    pcm[2 * i] = v;
    pcm[2 * i + 1] = v;
  }
  hark_result* r = NULL;
  CHECK_OK(hark_transcribe_pcm16(ctx, pcm, frames * 2, 44100, 2, &g_quick, &r));
  CHECK(r && hark_result_n_segments(r) > 0);
  hark_result_free(r);
  float* conv = NULL;
  size_t n_conv = 0;
  CHECK_OK(hark_audio_pcm16_to_mono16k(pcm, frames * 2, 44100, 2, &conv, &n_conv));
  CHECK(conv && labs((long)n_conv - (long)(g_audio_seconds * 16000)) < 100);
  CHECK_OK(hark_audio_free(conv));
  CHECK_ERR(hark_audio_free(conv), HARK_ERR_BAD_HANDLE, "samples");
  CHECK_ERR(hark_transcribe_pcm16(ctx, pcm, frames * 2, 0, 2, NULL, &r), HARK_ERR_INVALID_ARGUMENT, "sample_rate");
  CHECK_ERR(hark_transcribe_pcm16(ctx, pcm, frames * 2, 44100, 0, NULL, &r), HARK_ERR_INVALID_ARGUMENT, "channels");
  CHECK_ERR(hark_transcribe_pcm16(ctx, pcm, 3, 44100, 2, NULL, &r), HARK_ERR_INVALID_ARGUMENT, "multiple");
  CHECK_ERR(hark_transcribe_pcm16(ctx, NULL, 10, 44100, 2, NULL, &r), HARK_ERR_INVALID_ARGUMENT, "samples");
  CHECK_ERR(hark_audio_pcm16_to_mono16k(pcm, frames * 2, 44100, 2, NULL, &n_conv), HARK_ERR_INVALID_ARGUMENT, "out");
  free(pcm);

  /* Float PCM at another rate. */
  const size_t n8 = (size_t)(2.0 * 8000);
  float* f8 = malloc(n8 * sizeof *f8);
  for (size_t i = 0; i < n8; ++i) f8[i] = (float)synth_at((double)i / 8000);
  CHECK_OK(hark_audio_pcm_f32_to_mono16k(f8, n8, 8000, 1, &conv, &n_conv));
  CHECK(labs((long)n_conv - 32000) < 100);
  hark_audio_free(conv);
  free(f8);

  /* A WAV file: from the file, from its bytes, from a data URI. Same bytes, same text. */
  size_t wav_size = 0;
  unsigned char* wav = make_wav(g_audio_seconds, &wav_size);
  FILE* f = fopen(wav_path, "wb");
  CHECK(f != NULL);
  if (!f) return;
  fwrite(wav, 1, wav_size, f);
  fclose(f);
  char *from_file = NULL, *from_bytes = NULL, *from_uri = NULL;
  CHECK_OK(hark_transcribe_file(ctx, wav_path, &g_quick, &r));
  if (r) from_file = transcript_of(r);
  hark_result_free(r);
  CHECK_OK(hark_transcribe_encoded(ctx, wav, wav_size, &g_quick, &r));
  if (r) from_bytes = transcript_of(r);
  hark_result_free(r);
  char* uri = data_uri(wav, wav_size);
  CHECK_OK(hark_transcribe_data_uri(ctx, uri, &g_quick, &r));
  if (r) from_uri = transcript_of(r);
  hark_result_free(r);
  CHECK(from_file && strlen(from_file) > 0);
  CHECK(from_file && from_bytes && strcmp(from_file, from_bytes) == 0);
  CHECK(from_file && from_uri && strcmp(from_file, from_uri) == 0);
  free(from_file);
  free(from_bytes);
  free(from_uri);

  CHECK_OK(hark_audio_load_file(wav_path, &conv, &n_conv));
  CHECK(n_conv == (size_t)(g_audio_seconds * 16000));
  hark_audio_free(conv);
  CHECK_OK(hark_audio_decode_data_uri(uri, &conv, &n_conv));
  CHECK(n_conv == (size_t)(g_audio_seconds * 16000));
  hark_audio_free(conv);
  CHECK_OK(hark_audio_decode(wav, wav_size, &conv, &n_conv));
  hark_audio_free(conv);

  /* Bad audio. */
  r = (hark_result*)&r;
  CHECK_ERR(hark_transcribe_file(ctx, "/nonexistent/talk.wav", NULL, &r), HARK_ERR_IO, "talk.wav");
  CHECK(r == NULL);
  CHECK_ERR(hark_transcribe_file(ctx, NULL, NULL, &r), HARK_ERR_INVALID_ARGUMENT, "path");
  CHECK_ERR(hark_transcribe_encoded(ctx, "not audio at all", 16, NULL, &r), HARK_ERR_AUDIO, "hark_transcribe_encoded");
  CHECK_ERR(hark_transcribe_encoded(ctx, NULL, 16, NULL, &r), HARK_ERR_INVALID_ARGUMENT, "data");
  CHECK_ERR(hark_transcribe_data_uri(ctx, "data:audio/wav;base64,!!!!", NULL, &r), HARK_ERR_AUDIO, "data URI");
  CHECK_ERR(hark_transcribe_data_uri(ctx, "http://example.com/a.wav", NULL, &r), HARK_ERR_AUDIO, "data:");
  CHECK_ERR(hark_transcribe_data_uri(ctx, NULL, NULL, &r), HARK_ERR_INVALID_ARGUMENT, "uri");
  CHECK_ERR(hark_audio_decode("xyz", 3, &conv, &n_conv), HARK_ERR_AUDIO, "hark_audio_decode");
  CHECK_ERR(hark_audio_load_file("/nonexistent/a.wav", &conv, &n_conv), HARK_ERR_IO, "a.wav");
  CHECK_ERR(hark_audio_load_file(wav_path, &conv, NULL), HARK_ERR_INVALID_ARGUMENT, "n_out");
  free(uri);
  free(wav);
}

static void test_bad_params(hark_context* ctx, const float* audio, size_t n, int multilingual) {
  hark_result* r = NULL;
  hark_transcribe_params p;
#define BAD(field_assignment, part)                                                     \
  do {                                                                                  \
    p = quick_params();                                                                 \
    field_assignment;                                                                   \
    r = (hark_result*)&p;                                                               \
    CHECK_ERR(hark_transcribe(ctx, audio, n, &p, &r), HARK_ERR_INVALID_ARGUMENT, part); \
    CHECK(r == NULL);                                                                   \
  } while (0)
  BAD(p.n_threads = -2, "n_threads");
  BAD(p.n_processors = 0, "n_processors");
  BAD(p.n_processors = 65, "n_processors");
  BAD(p.offset_ms = -1, "offset_ms");
  BAD(p.offset_ms = (int64_t)(g_audio_seconds * 1000) + 1, "past the end");
  BAD(p.duration_ms = -5, "duration_ms");
  BAD(p.max_tokens_per_window = -1, "max_tokens_per_window");
  BAD(p.language = "xx", "'xx'");
  BAD(p.job_id = 987654321, "987654321");
  BAD(p.job_id = -3, "job_id");
  BAD(p.temperature = -0.5f, "temperature");
  BAD(p.temperature = NAN, "temperature");
  BAD(p.temperature_inc = -0.2f, "temperature_inc");
  BAD(p.best_of = 0, "best_of");
  BAD(p.beam_size = 0, "beam_size");
  BAD(p.beam_size = 65, "beam_size");
  BAD(p.patience = 0.0f, "patience");
  BAD(p.patience = NAN, "patience");
  BAD(p.repetition_penalty = 0.0f, "repetition_penalty");
  BAD(p.no_repeat_ngram_size = -1, "no_repeat_ngram_size");
  BAD(p.n_temperatures = 2, "temperatures is NULL");
  BAD(p.logprob_low_threshold = NAN, "logprob_low_threshold");
  BAD(p.n_clip_timestamps = 1, "clip_timestamps");
  {
    static const int32_t not_text[] = {50257};
    BAD((p.initial_prompt_tokens = not_text, p.n_initial_prompt_tokens = 1), "initial_prompt_tokens");
  }
  BAD(p.max_context = -2, "max_context");
  BAD(p.suppress_regex = "([", "suppress_regex '(['");
  BAD(p.thold_pt = 1.5f, "thold_pt");
  BAD(p.thold_pt = NAN, "thold_pt");
  BAD(p.thold_ptsum = -0.1f, "thold_ptsum");
  BAD(p.max_len = -1, "max_len");
  BAD(p.n_suppress_tokens = 2, "suppress_tokens is NULL");
  {
    static const int32_t bad_ids[] = {5, -7};
    BAD((p.suppress_tokens = bad_ids, p.n_suppress_tokens = 2), "suppress_tokens[1]");
  }
  BAD(p.struct_size = 0, "struct_size is 0");
  BAD(p.struct_size = 4, "struct_size");
  BAD(p.struct_size = sizeof p + 8, "newer hark.h");
  if (!multilingual) {
    BAD(p.language = "de", "English-only");
    BAD(p.translate = true, "translate");
  }
#undef BAD
  CHECK_ERR(hark_transcribe(ctx, NULL, n, NULL, &r), HARK_ERR_INVALID_ARGUMENT, "samples is NULL");
  CHECK_ERR(hark_transcribe(ctx, audio, 0, NULL, &r), HARK_ERR_INVALID_ARGUMENT, "n_samples");
  CHECK_ERR(hark_transcribe(ctx, audio, n, NULL, NULL), HARK_ERR_INVALID_ARGUMENT, "out");
  float* nan_audio = malloc(n * sizeof *nan_audio);
  memcpy(nan_audio, audio, n * sizeof *nan_audio);
  nan_audio[1234] = NAN;
  CHECK_ERR(hark_transcribe(ctx, nan_audio, n, NULL, &r), HARK_ERR_INVALID_ARGUMENT, "samples[1234] is NaN");
  free(nan_audio);
  /* offset + duration work when valid. */
  p = quick_params();
  p.offset_ms = 2000;
  p.duration_ms = 5000;
  CHECK_OK(hark_transcribe(ctx, audio, n, &p, &r));
  hark_window w;
  if (r && hark_result_n_windows(r) > 0) {
    CHECK_OK(hark_result_window(r, 0, &w, sizeof w));
    CHECK(w.t0 == 200);
    CHECK(w.language && strcmp(w.language, hark_result_language(r)) == 0);
    CHECK_OK(hark_result_window(r, hark_result_n_windows(r) - 1, &w, sizeof w));
    CHECK(w.t1 == 700);
  }
  hark_result_free(r);
  /* The decoding policy's defaults (OpenAI's), and options that run: seeded sampling repeats. */
  p = hark_transcribe_default_params();
  CHECK(p.temperature == 0.0f && p.temperature_inc == 0.2f && p.best_of == 5 && p.suppress_blank && p.suppress_nst &&
        !p.carry_initial_prompt && !p.no_context && p.max_context == -1 && p.max_initial_timestamp == 1.0f &&
        p.length_penalty < 0 && p.compression_ratio_threshold == 2.4f && p.logprob_threshold == -1.0f &&
        p.no_speech_threshold == 0.6f && p.suppress_regex == NULL && p.beam_size == 1 && p.patience == 1.0f &&
        p.repetition_penalty == 1.0f && p.no_repeat_ngram_size == 0 && isinf(p.logprob_low_threshold) &&
        p.logprob_low_threshold < 0 && p.prompt_reset_temperature == 0.5f && p.temperatures == NULL &&
        p.n_temperatures == 0 && p.initial_prompt_tokens == NULL && p.n_initial_prompt_tokens == 0 &&
        p.clip_timestamps == NULL && p.n_clip_timestamps == 0 && !p.multilingual && !p.length_penalty_power &&
        p.hotwords == NULL && p.prefix == NULL);
  /* faster-whisper's prompt options: the prefix begins the text; hotwords, multilingual and the
   * CTranslate2 length penalty run. */
  p.prefix = "  Hello hark ";
  p.hotwords = "Kubernetes";
  p.length_penalty = 0.5f;
  p.length_penalty_power = true;
  p.no_speech_threshold = 1.0f; /* never skipped as silence: the prefix must show */
  p.duration_ms = 3000;
  CHECK_OK(hark_transcribe(ctx, audio, n, &p, &r));
  if (r) {
    CHECK(hark_result_n_segments(r) > 0);
    CHECK(strncmp(hark_result_segment_text(r, 0), " Hello hark", 11) == 0);
    hark_result_free(r);
    r = NULL;
  }
  p = quick_params();
  /* Beam search runs; a caller whose header predates beam_size gets the default (its
   * struct ends before the field, so what lies there is not read). */
  p.beam_size = 3;
  p.patience = 1.5f;
  p.duration_ms = 3000;
  {
    hark_result* r2 = NULL;
    CHECK_OK(hark_transcribe(ctx, audio, n, &p, &r));
    p.struct_size = offsetof(hark_transcribe_params, beam_size);
    p.beam_size = 0;
    CHECK_OK(hark_transcribe(ctx, audio, n, &p, &r2));
    if (r && r2) {
      char* a = transcript_of(r);
      CHECK(strlen(a) > 0 || hark_result_n_segments(r) == 0);
      free(a);
    }
    hark_result_free(r);
    hark_result_free(r2);
    p = quick_params();
  }
  p.temperature = 0.5f;
  p.best_of = 2;
  p.seed = 42;
  p.duration_ms = 4000;
  p.suppress_regex = "[0-9]+";
  {
    static const int32_t ids[] = {11, 13};
    p.suppress_tokens = ids;
    p.n_suppress_tokens = 2;
    hark_result* r2 = NULL;
    CHECK_OK(hark_transcribe(ctx, audio, n, &p, &r));
    CHECK_OK(hark_transcribe(ctx, audio, n, &p, &r2));
    if (r && r2) {
      char* a = transcript_of(r);
      char* b = transcript_of(r2);
      CHECK(strcmp(a, b) == 0);
      free(a);
      free(b);
      CHECK(hark_result_n_fallback_windows(r) >= 0);
      CHECK(hark_result_language_prob(r) == 0.0f); /* given, not detected */
      for (int i = 0; i < hark_result_n_segments(r); ++i) {
        hark_segment_decoding d;
        CHECK_OK(hark_result_segment_decoding(r, i, &d, sizeof d));
        CHECK(d.temperature >= 0.5f && d.temperature <= 1.0f);
        CHECK(d.no_speech_prob >= 0.0f && d.no_speech_prob <= 1.0f);
        CHECK(d.avg_logprob <= 0.0);
        CHECK(d.seek >= 0 && d.seek <= hark_result_segment_t0(r, i)); /* its window's start */
        for (int j = 0; j < hark_result_segment_n_tokens(r, i); ++j) {
          hark_token_data td;
          CHECK_OK(hark_result_token(r, i, j, &td, sizeof td));
          CHECK(td.id != 11 && td.id != 13);
          CHECK(fabsf(td.logp - logf(td.p)) < 1e-3f || td.p == 0.0f);
        }
      }
      hark_segment_decoding d;
      CHECK_ERR(hark_result_segment_decoding(r, -1, &d, sizeof d), HARK_ERR_INVALID_ARGUMENT, "-1");
    }
    hark_result_free(r);
    hark_result_free(r2);
  }
  /* Each fallback is told: the window on the audio's timeline and the next temperature. */
  p = quick_params();
  CHECK(p.fallback_callback == NULL && p.fallback_user_data == NULL);
  p.temperature_inc = 0.5f;
  p.best_of = 2;
  p.duration_ms = 3000;
  {
    struct fallback_log log = {0, 0};
    p.fallback_callback = on_fallback;
    p.fallback_user_data = &log;
    CHECK_OK(hark_transcribe(ctx, audio, n, &p, &r));
    if (r) {
      CHECK(hark_result_n_fallback_windows(r) > 0); /* random weights: unsure everywhere */
      CHECK(log.n >= hark_result_n_fallback_windows(r));
      CHECK(log.bad == 0);
      hark_result_free(r);
      r = NULL;
    }
  }
  /* Word timestamps: words in order inside the audio, their texts making up the segment's text
   * (OpenAI's bounds: a first word may start before its segment, a last one end after it). */
  p = quick_params();
  CHECK(!p.word_timestamps && p.hallucination_silence_threshold == 0.0f && p.dtw_preset == NULL &&
        p.prepend_punctuations == NULL);
  p.word_timestamps = true;
  p.hallucination_silence_threshold = 2.0f;
  p.duration_ms = 6000;
  CHECK_OK(hark_transcribe(ctx, audio, n, &p, &r));
  if (r) {
    int n_words = 0;
    for (int i = 0; i < hark_result_n_segments(r); ++i) {
      char joined[4096] = "";
      int64_t last = 0;
      for (int j = 0; j < hark_result_segment_n_words(r, i); ++j, ++n_words) {
        hark_word wd;
        CHECK_OK(hark_result_word(r, i, j, &wd, sizeof wd));
        CHECK(wd.t0 >= last && wd.t1 >= wd.t0 && wd.t1 <= 600);
        CHECK(wd.p >= 0.0f && wd.p <= 1.0f && strlen(wd.text) > 0);
        last = wd.t0;
        strncat(joined, wd.text, sizeof joined - strlen(joined) - 1);
      }
      if (hark_result_segment_n_words(r, i) > 0) CHECK(strcmp(joined, hark_result_segment_text(r, i)) == 0);
    }
    CHECK(n_words > 0);
    hark_word wd;
    CHECK_ERR(hark_result_word(r, 0, 100000, &wd, sizeof wd), HARK_ERR_INVALID_ARGUMENT, "word index");
    CHECK(hark_result_segment_n_words(r, -1) == -1);
  }
  hark_result_free(r);
  p.hallucination_silence_threshold = NAN;
  CHECK_ERR(hark_transcribe(ctx, audio, n, &p, &r), HARK_ERR_INVALID_ARGUMENT, "hallucination_silence_threshold");
  p.hallucination_silence_threshold = 0.0f;
  p.dtw_preset = "huge";
  CHECK_ERR(hark_transcribe(ctx, audio, n, &p, &r), HARK_ERR_INVALID_ARGUMENT, "unknown preset 'huge'");
  p.dtw_preset = "custom";
  p.dtw_heads = "0,0 99,0";
  CHECK_ERR(hark_transcribe(ctx, audio, n, &p, &r), HARK_ERR_INVALID_ARGUMENT, "(99,0)");
  /* Token timestamps, max_len and speaker turns (whisper.cpp's defaults); CSV and LRC. */
  p = quick_params();
  CHECK(!p.token_timestamps && p.thold_pt == 0.01f && p.thold_ptsum == 0.01f && p.max_len == 0 && !p.split_on_word &&
        !p.tdrz_enable);
  p.max_len = 8; /* turns token timestamps on */
  p.split_on_word = true;
  p.tdrz_enable = true;
  p.duration_ms = 4000;
  CHECK_OK(hark_transcribe(ctx, audio, n, &p, &r));
  if (r) {
    for (int i = 0; i < hark_result_n_segments(r); ++i) {
      const int64_t t0 = hark_result_segment_t0(r, i), t1 = hark_result_segment_t1(r, i);
      int64_t prev = t0;
      for (int j = 0; j < hark_result_segment_n_tokens(r, i); ++j) {
        hark_token_data td;
        CHECK_OK(hark_result_token(r, i, j, &td, sizeof td));
        CHECK(td.t0 >= prev && td.t0 <= td.t1 && td.t1 <= t1);
        prev = td.t1;
      }
      const int turn = hark_result_segment_speaker_turn_next(r, i);
      CHECK(turn == 0 || turn == 1);
    }
    CHECK_SENTINEL(hark_result_segment_speaker_turn_next(r, hark_result_n_segments(r)) == -1, "segment index");
    CHECK(strncmp(hark_result_format(r, HARK_FORMAT_CSV), "start,end,text\n", 15) == 0);
    CHECK(strncmp(hark_result_format(r, HARK_FORMAT_LRC), "[by:hark]\n", 10) == 0);
  }
  hark_result_free(r);
  /* language "auto" and NULL (detect) are fine. */
  p = quick_params();
  p.language = NULL;
  CHECK_OK(hark_transcribe(ctx, audio, n, &p, &r));
  CHECK(r && strlen(hark_result_language(r)) > 0);
  hark_result_free(r);
}

static void test_bad_handles(hark_context* live_ctx, const float* audio, size_t n) {
  /* NULL, a made-up address, a handle of another kind, a freed one: all bad handles, no crash. */
  int local = 0;
  hark_context* fake = (hark_context*)&local;
  hark_result* r = NULL;
  hark_state* st = NULL;
  hark_model_info mi;
  hark_device_info di;
  hark_bench_result br;
  size_t bytes = 0;
  CHECK_ERR(hark_context_info(NULL, &mi, sizeof mi), HARK_ERR_BAD_HANDLE, "ctx is NULL");
  CHECK_ERR(hark_context_info(fake, &mi, sizeof mi), HARK_ERR_BAD_HANDLE, "not a live hark_context");
  CHECK_ERR(hark_context_device(fake, &di, sizeof di), HARK_ERR_BAD_HANDLE, "ctx");
  CHECK_SENTINEL(hark_context_describe(fake) == NULL, "ctx");
  CHECK_ERR(hark_transcribe(NULL, audio, n, NULL, &r), HARK_ERR_BAD_HANDLE, "ctx");
  CHECK_ERR(hark_transcribe(fake, audio, n, NULL, &r), HARK_ERR_BAD_HANDLE, "ctx");
  CHECK_ERR(hark_transcribe_file(fake, "x.wav", NULL, &r), HARK_ERR_BAD_HANDLE, "ctx");
  CHECK_ERR(hark_transcribe_encoded(fake, "x", 1, NULL, &r), HARK_ERR_BAD_HANDLE, "ctx");
  CHECK_ERR(hark_transcribe_data_uri(fake, "data:", NULL, &r), HARK_ERR_BAD_HANDLE, "ctx");
  CHECK_ERR(hark_transcribe_pcm16(fake, (const int16_t*)audio, 2, 16000, 1, NULL, &r), HARK_ERR_BAD_HANDLE, "ctx");
  CHECK_ERR(hark_state_new(fake, 0, &st), HARK_ERR_BAD_HANDLE, "ctx");
  CHECK_ERR(hark_bench(fake, 0, &br, sizeof br), HARK_ERR_BAD_HANDLE, "ctx");
  int lid = -1;
  CHECK_ERR(hark_detect_language(fake, audio, n, 0, 0, &lid, NULL, NULL, 0), HARK_ERR_BAD_HANDLE, "ctx");
  CHECK_ERR(hark_context_free(fake), HARK_ERR_BAD_HANDLE, "ctx");
  CHECK_ERR(hark_context_free(NULL), HARK_ERR_BAD_HANDLE, "ctx is NULL");
  CHECK_ERR(hark_state_free((hark_state*)fake), HARK_ERR_BAD_HANDLE, "state");
  CHECK_ERR(hark_state_free(NULL), HARK_ERR_BAD_HANDLE, "state is NULL");
  CHECK_ERR(hark_state_bytes((hark_state*)fake, &bytes), HARK_ERR_BAD_HANDLE, "state");
  CHECK_ERR(hark_transcribe_with_state(NULL, audio, n, NULL, &r), HARK_ERR_BAD_HANDLE, "state");
  CHECK_ERR(hark_result_free((hark_result*)fake), HARK_ERR_BAD_HANDLE, "result");
  CHECK_ERR(hark_result_free(NULL), HARK_ERR_BAD_HANDLE, "result is NULL");
  CHECK_ERR(hark_result_token(NULL, 0, 0, &(hark_token_data){0}, sizeof(hark_token_data)), HARK_ERR_BAD_HANDLE,
            "result");
  CHECK_ERR(hark_result_window(NULL, 0, &(hark_window){0}, sizeof(hark_window)), HARK_ERR_BAD_HANDLE, "result");
  CHECK_ERR(hark_result_timings((hark_result*)fake, &(hark_timings){0}, sizeof(hark_timings)), HARK_ERR_BAD_HANDLE,
            "result");
  CHECK_SENTINEL(hark_result_job_id(NULL) == -1, "result");
  CHECK_SENTINEL(hark_result_aborted((hark_result*)fake) == -1, "result");
  CHECK_SENTINEL(hark_result_language(NULL) == NULL, "result");
  CHECK_SENTINEL(hark_result_n_windows(NULL) == -1, "result");
  CHECK_SENTINEL(hark_result_format(NULL, HARK_FORMAT_TXT) == NULL, "result");
  CHECK_ERR(hark_audio_free((float*)fake), HARK_ERR_BAD_HANDLE, "samples");
  CHECK_ERR(hark_audio_free(NULL), HARK_ERR_BAD_HANDLE, "samples is NULL");

  /* The wrong kind: a context where a state or a result belongs, and the other way round. */
  CHECK_ERR(hark_state_bytes((hark_state*)live_ctx, &bytes), HARK_ERR_BAD_HANDLE, "hark_state");
  CHECK_ERR(hark_result_free((hark_result*)live_ctx), HARK_ERR_BAD_HANDLE, "hark_result");
  CHECK_SENTINEL(hark_result_n_segments((hark_result*)live_ctx) == -1, "hark_result");
  CHECK_OK(hark_state_new(live_ctx, 1, &st));
  CHECK_ERR(hark_transcribe((hark_context*)st, audio, n, NULL, &r), HARK_ERR_BAD_HANDLE, "hark_context");
  CHECK_ERR(hark_context_free((hark_context*)st), HARK_ERR_BAD_HANDLE, "hark_context");
  CHECK_OK(hark_state_free(st));
  CHECK_ERR(hark_state_free(st), HARK_ERR_BAD_HANDLE, "state");
  CHECK_ERR(hark_transcribe_with_state(st, audio, n, NULL, &r), HARK_ERR_BAD_HANDLE, "state");

  /* Jobs by unknown id. */
  CHECK_ERR(hark_job_abort(-7), HARK_ERR_INVALID_ARGUMENT, "-7");
  CHECK_ERR(hark_job_remove(123456789), HARK_ERR_INVALID_ARGUMENT, "123456789");
}

static void test_state(hark_context* ctx, const float* audio, size_t n, const char* reference) {
  hark_state* st = NULL;
  CHECK_ERR(hark_state_new(ctx, -1, &st), HARK_ERR_INVALID_ARGUMENT, "n_threads");
  CHECK_ERR(hark_state_new(ctx, 0, NULL), HARK_ERR_INVALID_ARGUMENT, "out");
  CHECK_OK(hark_state_new(ctx, 0, &st));
  size_t bytes = 0;
  CHECK_OK(hark_state_bytes(st, &bytes));
  CHECK(bytes > 0);
  CHECK_ERR(hark_state_bytes(st, NULL), HARK_ERR_INVALID_ARGUMENT, "out");
  hark_result* r = NULL;
  CHECK_OK(hark_transcribe_with_state(st, audio, n, &g_quick, &r));
  char* t = r ? transcript_of(r) : NULL;
  CHECK(t && strcmp(t, reference) == 0);
  free(t);
  hark_result_free(r);
  hark_transcribe_params p = quick_params();
  p.n_threads = -1;
  CHECK_ERR(hark_transcribe_with_state(st, audio, n, &p, &r), HARK_ERR_INVALID_ARGUMENT, "n_threads");
  CHECK_OK(hark_state_free(st));
  /* A 1-thread state runs its jobs on 1 thread unless the params name a count. */
  CHECK_OK(hark_state_new(ctx, 1, &st));
  r = NULL;
  CHECK_OK(hark_transcribe_with_state(st, audio, n, &g_quick, &r));
  hark_timings tm;
  if (r) {
    CHECK_OK(hark_result_timings(r, &tm, sizeof tm));
    CHECK(tm.n_threads == 1);
    hark_result_free(r);
  }
  CHECK_OK(hark_state_free(st));
}

static void test_aborts(hark_context* ctx, const char* model) {
  size_t n_long = 0;
  float* longer = synth(75.0, &n_long); /* three windows at least */
  hark_result* r = NULL;

  /* From the abort callback, once the first segments are in. */
  Watch w;
  hark_transcribe_params p = watched_params(&w);
  w.stop_after_segments = 1;
  CHECK_OK(hark_transcribe(ctx, longer, n_long, &p, &r));
  CHECK(r && hark_result_aborted(r) == 1);
  CHECK(r && hark_result_n_windows(r) < 3);
  CHECK(w.last_progress < 100);
  hark_result_free(r);

  /* encoder_begin says no: nothing is decoded. */
  p = watched_params(&w);
  w.encoder_stop = 1;
  CHECK_OK(hark_transcribe(ctx, longer, n_long, &p, &r));
  CHECK(r && hark_result_aborted(r) == 1 && hark_result_n_segments(r) == 0);
  CHECK(w.encoder_begins == 1);
  hark_result_free(r);

  /* By job id from another thread, while it runs. */
  Gate gate;
  atomic_init(&gate.started, 0);
  atomic_init(&gate.release, 0);
  const int id = hark_job_new();
  CHECK(id > 0);
  Job job = {ctx, longer, n_long, quick_params(), HARK_ERR_INTERNAL, NULL};
  job.params.job_id = id;
  job.params.progress_callback = gate_progress;
  job.params.progress_user_data = &gate;
  pthread_t th;
  pthread_create(&th, NULL, run_job, &job);
  wait_started(&gate);
  CHECK(atomic_load(&gate.started) == 1);
  CHECK(hark_is_transcribing() == 1);
  CHECK(hark_job_is_running(id) == 1);
  CHECK_OK(hark_job_abort(id));
  atomic_store(&gate.release, 1);
  pthread_join(th, NULL);
  CHECK(job.status == HARK_OK);
  CHECK(job.result && hark_result_aborted(job.result) == 1 && hark_result_job_id(job.result) == id);
  hark_result_free(job.result);
  CHECK(hark_is_transcribing() == 0);
  CHECK(hark_job_is_running(id) == 0);
  /* The job stays registered (and aborted) until removed: another run as it stops at once. */
  p = quick_params();
  p.job_id = id;
  CHECK_OK(hark_transcribe(ctx, longer, n_long, &p, &r));
  CHECK(r && hark_result_aborted(r) == 1 && hark_result_n_segments(r) == 0);
  hark_result_free(r);
  CHECK_OK(hark_job_remove(id));
  CHECK_ERR(hark_job_remove(id), HARK_ERR_INVALID_ARGUMENT, "not a registered job");
  CHECK_ERR(hark_job_abort(id), HARK_ERR_INVALID_ARGUMENT, "not a registered job");
  CHECK_SENTINEL(hark_job_is_running(id) == -1, "not a registered job");
  CHECK_ERR(hark_transcribe(ctx, longer, n_long, &p, &r), HARK_ERR_INVALID_ARGUMENT, "job_id");

  /* hark_job_abort_all stops a running job that has no id of the caller's. */
  atomic_store(&gate.started, 0);
  atomic_store(&gate.release, 0);
  job.params = quick_params();
  job.params.progress_callback = gate_progress;
  job.params.progress_user_data = &gate;
  job.result = NULL;
  pthread_create(&th, NULL, run_job, &job);
  wait_started(&gate);
  hark_job_abort_all();
  atomic_store(&gate.release, 1);
  pthread_join(th, NULL);
  CHECK(job.status == HARK_OK && job.result && hark_result_aborted(job.result) == 1);
  hark_result_free(job.result);

  /* Freeing a context stops its running job and waits for it; the job returns HARK_OK, aborted. */
  hark_context* ctx2 = NULL;
  CHECK_OK(hark_context_load(model, NULL, &ctx2));
  if (ctx2) {
    FreeGate fg;
    fg.ctx = ctx2;
    atomic_init(&fg.started, 0);
    Job j2 = {ctx2, longer, n_long, quick_params(), HARK_ERR_INTERNAL, NULL};
    j2.params.progress_callback = free_gate_progress;
    j2.params.progress_user_data = &fg;
    pthread_create(&th, NULL, run_job, &j2);
    for (int i = 0; i < 60000 && !atomic_load(&fg.started); ++i) sleep_ms(1);
    CHECK_OK(hark_context_free(ctx2));
    pthread_join(th, NULL);
    CHECK(j2.status == HARK_OK && j2.result && hark_result_aborted(j2.result) == 1);
    hark_result_free(j2.result);
    hark_model_info mi;
    CHECK_ERR(hark_context_info(ctx2, &mi, sizeof mi), HARK_ERR_BAD_HANDLE, "ctx");
  }

  /* A callback may not free the context its job runs on (it would wait for itself). */
  CHECK_OK(hark_context_load(model, NULL, &ctx2));
  if (ctx2) {
    size_t n = 0;
    float* audio = synth(g_audio_seconds, &n);
    p = watched_params(&w);
    w.ctx_to_free = ctx2;
    CHECK_OK(hark_transcribe(ctx2, audio, n, &p, &r));
    CHECK(w.free_in_callback == HARK_ERR_INVALID_ARGUMENT);
    CHECK(r && hark_result_aborted(r) == 0);
    hark_result_free(r);
    /* A state outlives its context. */
    hark_state* st = NULL;
    CHECK_OK(hark_state_new(ctx2, 0, &st));
    CHECK_OK(hark_context_free(ctx2));
    CHECK_OK(hark_transcribe_with_state(st, audio, n, &g_quick, &r));
    CHECK(r && hark_result_n_segments(r) > 0);
    hark_result_free(r);
    CHECK_OK(hark_state_free(st));
    free(audio);
  }
  free(longer);
}

static void test_two_at_once(hark_context* ctx, const float* audio, size_t n, const char* reference) {
  Job a = {ctx, audio, n, quick_params(), HARK_ERR_INTERNAL, NULL};
  Job b = a;
  pthread_t ta, tb;
  pthread_create(&ta, NULL, run_job, &a);
  pthread_create(&tb, NULL, run_job, &b);
  pthread_join(ta, NULL);
  pthread_join(tb, NULL);
  CHECK(a.status == HARK_OK && b.status == HARK_OK);
  char* ta_text = a.result ? transcript_of(a.result) : NULL;
  char* tb_text = b.result ? transcript_of(b.result) : NULL;
  CHECK(ta_text && strcmp(ta_text, reference) == 0);
  CHECK(tb_text && strcmp(tb_text, reference) == 0);
  CHECK(a.result && b.result && hark_result_job_id(a.result) != hark_result_job_id(b.result));
  free(ta_text);
  free(tb_text);
  hark_result_free(a.result);
  hark_result_free(b.result);

  /* n_processors: parts in parallel, segments in order. */
  size_t n12 = 0;
  float* a12 = synth(12.0, &n12);
  Watch w;
  hark_transcribe_params p = watched_params(&w);
  p.n_processors = 2;
  hark_result* r = NULL;
  CHECK_OK(hark_transcribe(ctx, a12, n12, &p, &r));
  CHECK(r && hark_result_n_segments(r) > 0 && w.segments_seen == hark_result_n_segments(r));
  CHECK(w.totals_consistent && w.views_consistent && w.last_progress == 100);
  hark_result_free(r);
  free(a12);
}

static void test_bench(hark_context* ctx) {
  hark_bench_result b;
  const hark_status s = hark_bench(ctx, 1, &b, sizeof b);
  CHECK(s == HARK_OK);
  CHECK(b.n_threads == 1 && strlen(b.config) > 0);
  CHECK(isfinite(b.encode_ms) && b.encode_ms > 0 && isfinite(b.decode_ms) && b.decode_ms > 0);
  CHECK(isfinite(b.batch_ms) && b.batch_ms > 0 && isfinite(b.prompt_ms) && b.prompt_ms > 0);
  CHECK_ERR(hark_bench(ctx, -1, &b, sizeof b), HARK_ERR_INVALID_ARGUMENT, "n_threads");
  CHECK_ERR(hark_bench(ctx, 1, NULL, sizeof b), HARK_ERR_INVALID_ARGUMENT, "out");
}

static void test_detect_language(hark_context* ctx, const float* audio, size_t n) {
  float probs[128];
  float top = -1.0f;
  int id = -1;
  CHECK_OK(hark_detect_language(ctx, audio, n, 0, 0, &id, &top, probs, 128));
  CHECK(id >= 0 && id < hark_language_count() && hark_language_code(id) != NULL);
  double sum = 0.0;
  int best = 0;
  for (int i = 0; i < 128; ++i) {
    sum += probs[i];
    if (probs[i] > probs[best]) best = i;
  }
  CHECK(fabs(sum - 1.0) < 1e-3 && best == id && top == probs[id]);
  for (int i = hark_language_count(); i < 128; ++i) CHECK(probs[i] == 0.0f);
  /* The same language as a transcription with language "auto". */
  hark_transcribe_params p = quick_params();
  p.language = "auto";
  p.max_tokens_per_window = 2;
  hark_result* r = NULL;
  CHECK_OK(hark_transcribe(ctx, audio, n, &p, &r));
  CHECK(r && strcmp(hark_result_language(r), hark_language_code(id)) == 0 && hark_result_language_prob(r) == top);
  hark_result_free(r);
  /* probs and probability are optional. */
  int again = -1;
  CHECK_OK(hark_detect_language(ctx, audio, n, 0, 1, &again, NULL, NULL, 0));
  CHECK(again == id);
  CHECK_ERR(hark_detect_language(ctx, audio, n, 0, 0, NULL, NULL, NULL, 0), HARK_ERR_INVALID_ARGUMENT, "lang_id");
  CHECK_ERR(hark_detect_language(ctx, audio, n, 0, 0, &id, NULL, NULL, 5), HARK_ERR_INVALID_ARGUMENT, "probs");
  CHECK_ERR(hark_detect_language(ctx, audio, n, 0, -2, &id, NULL, NULL, 0), HARK_ERR_INVALID_ARGUMENT, "n_threads");
  CHECK_ERR(hark_detect_language(ctx, audio, n, 999999, 0, &id, NULL, NULL, 0), HARK_ERR_INVALID_ARGUMENT,
            "past the end");
  CHECK_ERR(hark_detect_language(ctx, audio, n, -1, 0, &id, NULL, NULL, 0), HARK_ERR_INVALID_ARGUMENT, "offset_ms");
  CHECK_ERR(hark_detect_language(ctx, NULL, n, 0, 0, &id, NULL, NULL, 0), HARK_ERR_INVALID_ARGUMENT, "samples");
  /* From a log-mel (here a flat one: the value of padding): an answer summing to 1; n_mels must be
   * the model's. */
  hark_model_info info;
  CHECK_OK(hark_context_info(ctx, &info, sizeof info));
  float* mel = calloc((size_t)info.n_mels * 200, sizeof *mel);
  CHECK_OK(hark_detect_language_mel(ctx, mel, info.n_mels, 200, 0, &id, &top, probs, 128));
  sum = 0.0;
  for (int i = 0; i < 128; ++i) sum += probs[i];
  CHECK(fabs(sum - 1.0) < 1e-3 && top == probs[id]);
  CHECK_ERR(hark_detect_language_mel(ctx, mel, info.n_mels + 1, 100, 0, &id, NULL, NULL, 0), HARK_ERR_INVALID_ARGUMENT,
            "n_mels");
  CHECK_ERR(hark_detect_language_mel(ctx, NULL, info.n_mels, 100, 0, &id, NULL, NULL, 0), HARK_ERR_INVALID_ARGUMENT,
            "mel");
  free(mel);
}

/* The shared Silero model and speech clip (../shared/vad, or $HARK_SHARED_DIR/vad) into model and
 * wav (size bytes each); 0, saying that `what` is skipped, when the model is not there. */
static int shared_vad_files(char* model, char* wav, size_t size, const char* what) {
  const char* shared = getenv("HARK_SHARED_DIR");
  if (!shared || !*shared) shared = HARK_SHARED_DIR_DEFAULT;
  snprintf(model, size, "%s/vad/silero-v6.2.0-ggml.bin", shared);
  snprintf(wav, size, "%s/vad/vad-three-clips.wav", shared);
  FILE* probe = fopen(model, "rb");
  if (!probe) {
    printf("%s: skipped, no %s\n", what, model);
    return 0;
  }
  fclose(probe);
  return 1;
}

/* The Silero VAD from C: the shared model and clip (../shared/vad), whisper.cpp's segments, a
 * stream in odd chunks equal to the whole buffer, the energy VAD, and bad arguments/handles. */
static void test_vad(const char* not_a_model) {
  char model[512], wav[512];
  if (!shared_vad_files(model, wav, sizeof model, "vad")) return;

  hark_vad_context* vctx = (hark_vad_context*)1;
  CHECK_ERR(hark_vad_context_load(not_a_model, NULL, &vctx), HARK_ERR_MODEL, "magic");
  CHECK(vctx == NULL);
  CHECK_ERR(hark_vad_context_load("/nonexistent/silero.bin", NULL, &vctx), HARK_ERR_IO, "cannot open");
  hark_vad_context_params cp = hark_vad_context_default_params();
  CHECK(cp.n_threads == 1 && cp.device == NULL);
  cp.n_threads = 0;
  CHECK_ERR(hark_vad_context_load(model, &cp, &vctx), HARK_ERR_INVALID_ARGUMENT, "n_threads");
  cp.n_threads = 1;
  cp.device = "gpu7";
  CHECK_ERR(hark_vad_context_load(model, &cp, &vctx), HARK_ERR_INVALID_ARGUMENT, "gpu7");
  cp.device = NULL;
  CHECK_OK(hark_vad_context_load(model, &cp, &vctx));
  if (!vctx) return;

  float* audio = NULL;
  size_t n = 0;
  CHECK_OK(hark_audio_load_file(wav, &audio, &n));
  hark_vad_params vp = hark_vad_default_params();
  CHECK(vp.threshold == 0.5f && vp.min_speech_duration_ms == 250 && vp.min_silence_duration_ms == 100 &&
        vp.speech_pad_ms == 30 && fabsf(vp.samples_overlap - 0.1f) < 1e-6f && vp.max_speech_duration_s > 1e30);
  hark_vad_result* r = NULL;
  CHECK_OK(hark_vad_detect_speech(vctx, audio, n, &vp, &r));
  CHECK(hark_vad_result_n_segments(r) == 3);
  CHECK(hark_vad_result_segment_t0(r, 0) == 32 && hark_vad_result_segment_t1(r, 0) == 691);
  CHECK(hark_vad_result_segment_t0(r, 2) == 1418 && hark_vad_result_segment_t1(r, 2) == 1725);
  CHECK_SENTINEL(hark_vad_result_segment_t0(r, 3) == -1, "out of range");
  const int n_probs = hark_vad_result_n_probs(r);
  CHECK(n_probs == 547);
  const float* probs = hark_vad_result_probs(r);
  CHECK(probs != NULL);

  /* a stream fed in chunks of 1000 samples gives the same probabilities */
  hark_vad_stream* st = NULL;
  CHECK_OK(hark_vad_stream_new(vctx, &st));
  float got[600];
  size_t n_got = 0, k = 0;
  float buf[4];
  CHECK_ERR(hark_vad_stream_push(st, audio, 2048, buf, 3, &k), HARK_ERR_INVALID_ARGUMENT, "probs_cap");
  for (size_t at = 0; at < n && n_got < 600; at += 1000) {
    const size_t len = n - at < 1000 ? n - at : 1000;
    CHECK_OK(hark_vad_stream_push(st, audio + at, len, got + n_got, 600 - n_got, &k));
    n_got += k;
  }
  bool ran = false;
  CHECK_OK(hark_vad_stream_flush(st, got + n_got, &ran));
  CHECK(ran);
  n_got += ran ? 1 : 0;
  CHECK(n_got == (size_t)n_probs);
  int same = probs != NULL && n_got == (size_t)n_probs;
  for (size_t i = 0; same && i < n_got; ++i) same = got[i] == probs[i];
  CHECK(same);
  CHECK_OK(hark_vad_stream_reset(st));
  CHECK_OK(hark_vad_stream_free(st));
  CHECK_ERR(hark_vad_stream_push(st, audio, 10, got, 600, &k), HARK_ERR_BAD_HANDLE, "stream");

  /* bad arguments */
  vp.threshold = 2.0f;
  hark_vad_result* bad = NULL;
  CHECK_ERR(hark_vad_detect_speech(vctx, audio, n, &vp, &bad), HARK_ERR_INVALID_ARGUMENT, "threshold");
  vp = hark_vad_default_params();
  vp.struct_size = 0;
  CHECK_ERR(hark_vad_detect_speech(vctx, audio, n, &vp, &bad), HARK_ERR_INVALID_ARGUMENT, "struct_size");
  CHECK_ERR(hark_vad_detect_speech(vctx, NULL, 5, NULL, &bad), HARK_ERR_INVALID_ARGUMENT, "samples");
  CHECK_ERR(hark_vad_detect_speech((hark_vad_context*)r, audio, n, NULL, &bad), HARK_ERR_BAD_HANDLE,
            "hark_vad_context");

  /* the energy VAD: the second after 7.9 s is the pause after the first clip */
  hark_energy_vad_params ep = hark_energy_vad_default_params();
  CHECK(ep.vad_ms == 2000 && ep.last_ms == 1000 && fabsf(ep.vad_thold - 0.6f) < 1e-6f && ep.freq_thold == 100.0);
  hark_energy_vad_result er;
  CHECK_OK(hark_energy_vad(audio, (size_t)(7.9 * 16000), &ep, &er, sizeof er));
  CHECK(er.detected && er.energy_last < er.energy_all);
  CHECK_OK(hark_energy_vad(audio, 5 * 16000, NULL, &er, sizeof er));
  CHECK(!er.detected);
  ep.last_ms = 0;
  CHECK_ERR(hark_energy_vad(audio, n, &ep, &er, sizeof er), HARK_ERR_INVALID_ARGUMENT, "last_ms");

  CHECK_OK(hark_vad_result_free(r));
  CHECK_ERR(hark_vad_result_free(r), HARK_ERR_BAD_HANDLE, "result");
  CHECK_OK(hark_vad_context_free(vctx));
  CHECK_ERR(hark_vad_context_free(vctx), HARK_ERR_BAD_HANDLE, "ctx");
  hark_audio_free(audio);
}

/* ---- realtime stream: pushed audio in odd chunks, stop mid-slice, the events' shape ---------- */
typedef struct StreamWatch {
  pthread_mutex_t mu;
  int n_events, n_final, last_code, last_stopped, last_capturing, saw_json;
  double last_recording_ms;
  hark_state* free_from_callback; /* freed (tried) from the first event, its status kept */
  hark_status free_status;
} StreamWatch;

static void on_stream_event(const hark_stream_event* e, void* ud) {
  StreamWatch* w = (StreamWatch*)ud;
  pthread_mutex_lock(&w->mu);
  if (w->n_events == 0 && w->free_from_callback) w->free_status = hark_state_free(w->free_from_callback);
  ++w->n_events;
  if (e->slice_final && e->slice_index + 1 > w->n_final)
    w->n_final = e->slice_index + 1; /* the closing event repeats the last */
  w->last_code = e->code;
  w->last_stopped = e->is_stopped_by_action;
  w->last_capturing = e->is_capturing;
  w->last_recording_ms = e->recording_time_ms;
  if (e->json && strstr(e->json, "\"isStoppedByAction\"") && e->result && e->error) w->saw_json = 1;
  pthread_mutex_unlock(&w->mu);
}

/* Params of the tests' streams: 1 s slices, no partials, pushes wait for room, events to w. */
static hark_stream_params slice_params(StreamWatch* w) {
  hark_stream_params p = hark_stream_default_params();
  p.audio_slice_sec = 1.0;
  p.audio_min_sec = 0.5;
  p.partial_sec = 0;
  p.live = false;
  p.on_event = on_stream_event;
  p.user_data = w;
  return p;
}

static void test_stream(hark_context* ctx, const float* audio, size_t n) {
  StreamWatch w;
  memset(&w, 0, sizeof w);
  pthread_mutex_init(&w.mu, NULL);
  const hark_stream_params defaults = hark_stream_default_params();
  CHECK(defaults.audio_sec == 30 && defaults.audio_min_sec == 1 && defaults.vad_ms == 2000 && !defaults.use_vad);
  CHECK(defaults.audio_output_bits == 32 && defaults.vad_threshold == 0.5f && defaults.vad_silence_ms == 500 &&
        defaults.ring_sec == 0);
  hark_stream_params p = slice_params(&w);
  hark_stream* s = NULL;
  CHECK_OK(hark_stream_create(ctx, &p, &s));
  if (!s) return;
  size_t pushed = 0, k = 1;
  const size_t upto = n < 40000 ? n : 40000; /* 2.5 s: two full slices and half of one */
  while (pushed < upto) {
    const size_t c = upto - pushed < k ? upto - pushed : k;
    CHECK_OK(hark_stream_push(s, audio + pushed, c));
    pushed += c;
    k = k * 5 % 3001 + 1;
  }
  CHECK_OK(hark_stream_stop(s));
  CHECK_OK(hark_stream_wait(s));
  CHECK(w.n_final == (upto > 32000 ? 3 : (int)((upto + 15999) / 16000)));
  CHECK(w.last_code == 0);
  CHECK(w.last_stopped == 1 && w.last_capturing == 0);
  CHECK(w.last_recording_ms == (double)upto / 16.0);
  CHECK(w.saw_json);
  CHECK(hark_stream_push(NULL, audio, 1) == HARK_ERR_BAD_HANDLE);
  CHECK_OK(hark_stream_free(s));
  CHECK(hark_stream_stop(s) == HARK_ERR_BAD_HANDLE);
  hark_stream_params bad = hark_stream_default_params();
  bad.struct_size = 3;
  hark_stream* s2 = NULL;
  CHECK(hark_stream_create(ctx, &bad, &s2) != HARK_OK && s2 == NULL);
  bad = hark_stream_default_params();
  bad.audio_output_bits = 24;
  CHECK_ERR(hark_stream_create(ctx, &bad, &s2), HARK_ERR_INVALID_ARGUMENT, "audio_output_bits");
  CHECK(s2 == NULL);

  /* hark_stream_next_slice: the open slice closes at what was pushed so far. */
  memset(&w, 0, sizeof w);
  pthread_mutex_init(&w.mu, NULL);
  p = slice_params(&w);
  p.audio_slice_sec = 20;
  CHECK_OK(hark_stream_create(ctx, &p, &s));
  if (!s) return;
  CHECK_OK(hark_stream_push(s, audio, 8000));
  CHECK_OK(hark_stream_next_slice(s));
  CHECK_OK(hark_stream_push(s, audio, 8000));
  CHECK_OK(hark_stream_stop(s));
  CHECK_OK(hark_stream_wait(s));
  CHECK(w.n_final == 2);
  CHECK_OK(hark_stream_free(s));
  CHECK(hark_stream_next_slice(s) == HARK_ERR_BAD_HANDLE);
  pthread_mutex_destroy(&w.mu);
}

/* A stream on a state of the caller's (hark_stream_create_on_state): the state is lent to it until
 * the stream is freed (transcriptions and a second stream on it are refused meanwhile), the
 * stream transcribes as one on a context does, freeing the state ends a running stream (its last
 * event says so, the handle stays valid until freed), and freeing the state from the stream's own
 * callback is refused. */
static void reset_watch(StreamWatch* w) {
  pthread_mutex_destroy(&w->mu);
  memset(w, 0, sizeof *w);
  pthread_mutex_init(&w->mu, NULL);
}

static void push_slices(hark_stream* s, const float* audio, size_t n) {
  for (size_t at = 0; at < n; at += 1234) CHECK_OK(hark_stream_push(s, audio + at, n - at < 1234 ? n - at : 1234));
}

static void test_stream_on_state(hark_context* ctx, const float* audio, size_t n) {
  if (n < 40000) return;
  StreamWatch w;
  memset(&w, 0, sizeof w);
  pthread_mutex_init(&w.mu, NULL);
  hark_stream_params p = slice_params(&w);
  hark_stream* s = NULL;
  CHECK_ERR(hark_stream_create_on_state(NULL, &p, &s), HARK_ERR_BAD_HANDLE, "state");
  CHECK(s == NULL);
  hark_state* st = NULL;
  CHECK_OK(hark_state_new(ctx, 1, &st));
  if (!st) return;
  CHECK_OK(hark_stream_create_on_state(st, &p, &s));
  if (!s) return;
  hark_result* r = NULL;
  CHECK_ERR(hark_transcribe_with_state(st, audio, n, &g_quick, &r), HARK_ERR_INVALID_ARGUMENT, "lent to a stream");
  CHECK(r == NULL);
  hark_stream* s2 = NULL;
  CHECK_ERR(hark_stream_create_on_state(st, &p, &s2), HARK_ERR_INVALID_ARGUMENT, "already lent");
  CHECK(s2 == NULL);
  push_slices(s, audio, 40000); /* 2.5 s: two full slices and half of one */
  CHECK_OK(hark_stream_stop(s));
  CHECK_OK(hark_stream_wait(s));
  CHECK(w.n_final == 3 && w.last_code == 0 && w.last_stopped == 1);
  CHECK(w.last_recording_ms == 2500.0);
  /* Ended, but lent until freed. */
  CHECK_ERR(hark_transcribe_with_state(st, audio, n, &g_quick, &r), HARK_ERR_INVALID_ARGUMENT, "lent to a stream");
  CHECK_OK(hark_stream_free(s));
  CHECK_OK(hark_transcribe_with_state(st, audio, n, &g_quick, &r));
  CHECK(r != NULL);
  hark_result_free(r);

  /* Freeing the state ends a running stream; the stream handle lives on until freed. */
  reset_watch(&w);
  s = NULL;
  CHECK_OK(hark_stream_create_on_state(st, &p, &s));
  if (s) {
    push_slices(s, audio, 24000);
    CHECK_OK(hark_state_free(st));
    CHECK(w.n_events >= 1 && w.last_stopped == 1 && w.last_capturing == 0);
    const int events = w.n_events;
    CHECK_OK(hark_stream_push(s, audio, 1000)); /* ignored: the stream has ended */
    CHECK_OK(hark_stream_wait(s));
    CHECK(w.n_events == events);
    CHECK_OK(hark_stream_free(s));
  }
  CHECK_ERR(hark_stream_create_on_state(st, &p, &s), HARK_ERR_BAD_HANDLE, "state");

  /* Not from the stream's own callback: it would wait for itself. */
  reset_watch(&w);
  st = NULL;
  CHECK_OK(hark_state_new(ctx, 1, &st));
  w.free_from_callback = st;
  w.free_status = HARK_OK;
  s = NULL;
  if (st) CHECK_OK(hark_stream_create_on_state(st, &p, &s));
  if (s) {
    push_slices(s, audio, 20000);
    CHECK_OK(hark_stream_stop(s));
    CHECK_OK(hark_stream_wait(s));
    CHECK(w.n_events >= 1 && w.free_status == HARK_ERR_INVALID_ARGUMENT);
    CHECK_OK(hark_stream_free(s));
  }
  if (st) CHECK_OK(hark_state_free(st));
  pthread_mutex_destroy(&w.mu);
}

/* Pushed audio at another rate and channel count: 1 s of 44.1 kHz stereo is one 1 s slice and
 * 1000 ms of recording (one slice: the stream decodes with temperature fallback, slow on random
 * weights); bad rates, channel counts and part frames are refused. */
static void test_stream_rate(hark_context* ctx, const float* audio, size_t n) {
  CHECK(hark_stream_default_params().sample_rate == 16000 && hark_stream_default_params().channels == 1);
  if (n < 16000) return;
  const size_t frames = 44100; /* 1 s */
  float* stereo = (float*)malloc(frames * 2 * sizeof(float));
  for (size_t f = 0; f < frames; ++f) { /* linear interpolation of the 16 kHz audio; left louder */
    const double x = (double)f * 16000.0 / 44100.0;
    const size_t i = (size_t)x;
    const double fr = x - (double)i;
    const float v = (float)((1 - fr) * audio[i] + fr * audio[i + 1 < n ? i + 1 : i]);
    stereo[2 * f] = 1.5f * v;
    stereo[2 * f + 1] = 0.5f * v;
  }
  StreamWatch w;
  memset(&w, 0, sizeof w);
  pthread_mutex_init(&w.mu, NULL);
  hark_stream_params p = slice_params(&w);
  p.sample_rate = 44100;
  p.channels = 2;
  hark_stream* s = NULL;
  CHECK_OK(hark_stream_create(ctx, &p, &s));
  if (s) {
    CHECK_ERR(hark_stream_push(s, stereo, 3), HARK_ERR_INVALID_ARGUMENT, "whole number of frames");
    for (size_t f = 0; f < frames; f += 4410)
      CHECK_OK(hark_stream_push(s, stereo + 2 * f, 2 * (frames - f < 4410 ? frames - f : 4410)));
    CHECK_OK(hark_stream_stop(s));
    CHECK_OK(hark_stream_wait(s));
    CHECK(w.n_final == 1 && w.last_code == 0);
    CHECK(w.last_recording_ms == 1000.0);
    CHECK_OK(hark_stream_free(s));
  }
  hark_stream* s2 = NULL;
  p.sample_rate = 0;
  CHECK_ERR(hark_stream_create(ctx, &p, &s2), HARK_ERR_INVALID_ARGUMENT, "sample_rate");
  CHECK(s2 == NULL);
  p.sample_rate = 48000;
  p.channels = 0;
  CHECK_ERR(hark_stream_create(ctx, &p, &s2), HARK_ERR_INVALID_ARGUMENT, "channels");
  CHECK(s2 == NULL);
  free(stereo);
  pthread_mutex_destroy(&w.mu);
}

/* VAD-assisted transcription from C: the shared clip between silences transcribed with the vad_*
 * fields; fewer encoder windows, times inside the speech (the caller's timeline), silence gives
 * an empty result, and bad VAD settings are refused before any compute. */
static void test_vad_transcribe(hark_context* ctx, const char* not_a_model) {
  char model[512], wav[512];
  if (!shared_vad_files(model, wav, sizeof model, "vad transcribe")) return;
  float* clip = NULL;
  size_t n_clip = 0;
  CHECK_OK(hark_audio_load_file(wav, &clip, &n_clip));
  if (!clip) return;
  /* 20 s of silence, the clip (~17.5 s), 30 s of silence */
  const size_t lead = 20 * 16000, tail = 30 * 16000, n = lead + n_clip + tail;
  float* audio = (float*)calloc(n, sizeof(float));
  memcpy(audio + lead, clip, n_clip * sizeof(float));

  hark_transcribe_params p = hark_transcribe_default_params();
  CHECK(!p.vad && p.vad_model_path == NULL && p.vad_threshold == 0.5f && p.vad_min_speech_duration_ms == 250 &&
        p.vad_min_silence_duration_ms == 100 && p.vad_speech_pad_ms == 30 &&
        fabsf(p.vad_samples_overlap - 0.1f) < 1e-6f && p.vad_max_speech_duration_s > 1e30);
  p.temperature_inc = 0.0f; /* the random-weight model would fall back on every window */
  p.max_tokens_per_window = 32;
  hark_result* plain = NULL;
  CHECK_OK(hark_transcribe(ctx, audio, n, &p, &plain));
  p.vad = true;
  p.vad_model_path = model;
  hark_result* r = NULL;
  CHECK_OK(hark_transcribe(ctx, audio, n, &p, &r));
  if (plain && r) {
    hark_timings tp, tv;
    CHECK_OK(hark_result_timings(plain, &tp, sizeof tp));
    CHECK_OK(hark_result_timings(r, &tv, sizeof tv));
    CHECK(tp.vad_ms == 0 && tv.vad_ms > 0 && tv.vad_ms < tv.total_ms);
    hark_timings old; /* a caller built before vad_ms: filled up to its size, the rest untouched */
    old.vad_ms = -7;
    CHECK_OK(hark_result_timings(r, &old, offsetof(hark_timings, vad_ms)));
    CHECK(old.vad_ms == -7 && old.total_ms == tv.total_ms);
    CHECK(hark_result_n_windows(r) < hark_result_n_windows(plain));
    CHECK(hark_result_n_segments(r) > 0);
    for (int i = 0; i < hark_result_n_segments(r); ++i) {
      /* the clip's speech is 0.32 .. 17.25 s into it; 0.1 s of overlap may follow */
      CHECK(hark_result_segment_t0(r, i) >= 2000 + 32);
      CHECK(hark_result_segment_t1(r, i) <= 2000 + 1725 + 10);
    }
  }
  /* The speech found beforehand (vad_speech): the same transcript without a second VAD run;
   * stretches out of order are refused, naming the field. */
  {
    hark_vad_context* vctx = NULL;
    hark_vad_result* found = NULL;
    CHECK(p.vad_speech == NULL && p.n_vad_speech == 0);
    CHECK_OK(hark_vad_context_load(model, NULL, &vctx));
    CHECK_OK(hark_vad_detect_speech(vctx, audio, n, NULL, &found));
    if (found && r) {
      const int k = hark_vad_result_n_segments(found);
      int64_t* stretches = (int64_t*)calloc((size_t)(2 * k + 2), sizeof(int64_t));
      for (int i = 0; i < k; ++i) {
        stretches[2 * i] = hark_vad_result_segment_t0(found, i);
        stretches[2 * i + 1] = hark_vad_result_segment_t1(found, i);
      }
      hark_transcribe_params g = p;
      g.vad_speech = stretches;
      g.n_vad_speech = k;
      hark_result* given = NULL;
      CHECK_OK(hark_transcribe(ctx, audio, n, &g, &given));
      if (given) {
        char* a = transcript_of(r);
        char* b = transcript_of(given);
        CHECK(strcmp(a, b) == 0);
        free(a);
        free(b);
        hark_result_free(given);
      }
      if (k >= 2) {
        int64_t swapped[4] = {stretches[2], stretches[3], stretches[0], stretches[1]};
        g.vad_speech = swapped;
        g.n_vad_speech = 2;
        given = NULL;
        CHECK_ERR(hark_transcribe(ctx, audio, n, &g, &given), HARK_ERR_INVALID_ARGUMENT, "vad_speech");
      }
      g.vad_speech = NULL;
      g.n_vad_speech = 1;
      CHECK_ERR(hark_transcribe(ctx, audio, n, &g, &given), HARK_ERR_INVALID_ARGUMENT, "vad_speech");
      free(stretches);
    }
    hark_vad_result_free(found);
    hark_vad_context_free(vctx);
  }
  hark_result_free(plain);
  hark_result_free(r);

  /* silence only: an empty result, not an error */
  hark_result* quiet = NULL;
  CHECK_OK(hark_transcribe(ctx, audio, lead, &p, &quiet));
  CHECK(quiet && hark_result_n_segments(quiet) == 0 && hark_result_n_windows(quiet) == 0);
  hark_result_free(quiet);

  /* bad settings */
  hark_result* bad = NULL;
  hark_transcribe_params q = p;
  q.vad_model_path = NULL;
  CHECK_ERR(hark_transcribe(ctx, audio, n, &q, &bad), HARK_ERR_INVALID_ARGUMENT, "vad_model_path");
  q = p;
  q.vad_threshold = 1.5f;
  CHECK_ERR(hark_transcribe(ctx, audio, n, &q, &bad), HARK_ERR_INVALID_ARGUMENT, "vad_threshold");
  q = p;
  q.vad_min_silence_duration_ms = -1;
  CHECK_ERR(hark_transcribe(ctx, audio, n, &q, &bad), HARK_ERR_INVALID_ARGUMENT, "vad_min_silence_duration_ms");
  q = p;
  q.vad_speech_pad_ms = -1;
  CHECK_ERR(hark_transcribe(ctx, audio, n, &q, &bad), HARK_ERR_INVALID_ARGUMENT, "vad_speech_pad_ms");
  q = p;
  q.vad_model_path = "/nonexistent/silero.bin";
  CHECK_ERR(hark_transcribe(ctx, audio, n, &q, &bad), HARK_ERR_IO, "/nonexistent/silero.bin");
  q.vad_model_path = not_a_model;
  CHECK_ERR(hark_transcribe(ctx, audio, n, &q, &bad), HARK_ERR_FAILED, "not a whisper.cpp VAD model");
  CHECK(bad == NULL);

  /* the batched pipeline: the same speech, chunks decoded together; times inside the clip */
  CHECK(hark_transcribe_default_params().batch_size == 1);
  hark_transcribe_params b = p;
  b.vad = false; /* batch_size > 1 uses the VAD model by itself */
  b.batch_size = 4;
  hark_result* batched = NULL;
  CHECK_OK(hark_transcribe(ctx, audio, n, &b, &batched));
  if (batched) {
    CHECK(hark_result_n_windows(batched) > 0);
    for (int i = 0; i < hark_result_n_segments(batched); ++i) {
      CHECK(hark_result_segment_t0(batched, i) >= 2000);
      CHECK(hark_result_segment_t1(batched, i) <= 2000 + 1750 + 10);
    }
  }
  hark_result_free(batched);
  /* with word timestamps: every word inside its segment */
  q = b;
  q.word_timestamps = true;
  hark_result* worded = NULL;
  CHECK_OK(hark_transcribe(ctx, audio, n, &q, &worded));
  if (worded) {
    for (int i = 0; i < hark_result_n_segments(worded); ++i) {
      for (int j = 0; j < hark_result_segment_n_words(worded, i); ++j) {
        hark_word w;
        CHECK_OK(hark_result_word(worded, i, j, &w, sizeof w));
        CHECK(w.t0 <= w.t1 && w.t0 >= 2000 && w.t1 <= 2000 + 3000);
      }
    }
  }
  hark_result_free(worded);
  q = b;
  q.batch_size = 0;
  CHECK_ERR(hark_transcribe(ctx, audio, n, &q, &bad), HARK_ERR_INVALID_ARGUMENT, "batch_size");
  q.batch_size = 33;
  CHECK_ERR(hark_transcribe(ctx, audio, n, &q, &bad), HARK_ERR_INVALID_ARGUMENT, "batch_size");
  q = b;
  q.vad_model_path = NULL;
  CHECK_ERR(hark_transcribe(ctx, audio, n, &q, &bad), HARK_ERR_INVALID_ARGUMENT, "vad_model_path");
  q = b;
  q.word_timestamps = true;
  q.hallucination_silence_threshold = 2.0f;
  CHECK_ERR(hark_transcribe(ctx, audio, n, &q, &bad), HARK_ERR_INVALID_ARGUMENT, "hallucination_silence_threshold");
  q = b;
  q.n_processors = 2;
  CHECK_ERR(hark_transcribe(ctx, audio, n, &q, &bad), HARK_ERR_INVALID_ARGUMENT, "n_processors");
  CHECK(bad == NULL);
  free(audio);
  hark_audio_free(clip);
}

static void on_quantize_progress(uint64_t done, uint64_t total, void* user_data) {
  int* calls = (int*)user_data;
  CHECK(done <= total);
  ++*calls;
}

/* hark_quantize_model: a q8_0 copy of the test model loads; bad arguments are named, and a
 * failed conversion leaves no output file. */
static void test_quantize(const char* model, const char* not_a_model) {
  char out[300];
  const char* tmp = getenv("TMPDIR");
  snprintf(out, sizeof out, "%s/hark-capi-%d-q8.bin", tmp && *tmp ? tmp : "/tmp", (int)getpid());
  hark_quantize_result r;
  int calls = 0;
  CHECK_OK(hark_quantize_model(model, out, "q8_0", on_quantize_progress, &calls, &r, sizeof r));
  CHECK(calls == r.n_tensors && r.n_converted > 0 && r.n_kept_f16 == 0);
  CHECK(strcmp(r.from_type, "f16") == 0 && strcmp(r.to_type, "q8_0") == 0);
  CHECK(r.output_bytes > 0 && r.output_bytes < r.input_bytes);
  hark_context* q = NULL;
  CHECK_OK(hark_context_load(out, NULL, &q));
  if (q) {
    hark_model_info mi;
    CHECK_OK(hark_context_info(q, &mi, sizeof mi));
    CHECK(strcmp(mi.weight_type, "q8_0") == 0);
    hark_context_free(q);
  }
  remove(out);
  CHECK_OK(hark_quantize_model(model, out, "q5_0", NULL, NULL, NULL, 0)); /* no callback, no result */
  remove(out);
  CHECK_ERR(hark_quantize_model(NULL, out, "q5_0", NULL, NULL, NULL, 0), HARK_ERR_INVALID_ARGUMENT, "input_path");
  CHECK_ERR(hark_quantize_model(model, "", "q5_0", NULL, NULL, NULL, 0), HARK_ERR_INVALID_ARGUMENT, "output_path");
  CHECK_ERR(hark_quantize_model(model, out, "q3_k", NULL, NULL, NULL, 0), HARK_ERR_INVALID_ARGUMENT, "q3_k");
  CHECK_ERR(hark_quantize_model(model, out, "q5_0", NULL, NULL, &r, 4), HARK_ERR_INVALID_ARGUMENT, "out_size");
  CHECK_ERR(hark_quantize_model(not_a_model, out, "q5_0", NULL, NULL, NULL, 0), HARK_ERR_MODEL, not_a_model);
  CHECK(fopen(out, "rb") == NULL);
  CHECK_ERR(hark_quantize_model(model, model, "q5_0", NULL, NULL, NULL, 0), HARK_ERR_INVALID_ARGUMENT, "is the input");
  CHECK(strcmp(hark_last_error_code(), "invalid_argument") == 0);
}

int main(int argc, char** argv) {
  g_quick = quick_params();
  char model[256], not_a_model[256], wav_path[256];
  const char* tmp = getenv("TMPDIR");
  if (!tmp || !*tmp) tmp = "/tmp";
  snprintf(not_a_model, sizeof not_a_model, "%s/hark-capi-%d-not-a-model.bin", tmp, (int)getpid());
  snprintf(wav_path, sizeof wav_path, "%s/hark-capi-%d.wav", tmp, (int)getpid());
  int made_model = 0;
  if (argc > 1) {
    snprintf(model, sizeof model, "%s", argv[1]);
  } else {
#ifdef HARK_MAKE_TEST_MODEL
    snprintf(model, sizeof model, "%s/hark-capi-%d-micro.bin", tmp, (int)getpid());
    char cmd[1024];
    snprintf(cmd, sizeof cmd, "'%s' -o '%s' --preset micro --type f16 >/dev/null", HARK_MAKE_TEST_MODEL, model);
    if (system(cmd) != 0) {
      fprintf(stderr, "could not make the test model: %s\n", cmd);
      return 1;
    }
    made_model = 1;
#else
    fprintf(stderr, "usage: %s MODEL\n", argv[0]);
    return 2;
#endif
  }
  FILE* f = fopen(not_a_model, "wb");
  if (f) {
    fputs("this is not a ggml model file, just some text\n", f);
    fclose(f);
  }

  hark_set_log_callback(on_log, &g_log_messages);
  CHECK_OK(hark_set_log_level(HARK_LOG_DEBUG));

  test_library();
  test_load_errors(model, not_a_model);
  test_models(model);
  test_vad(not_a_model);
  test_quantize(model, not_a_model);

  hark_context* ctx = NULL;
  hark_context_params cp = hark_context_default_params();
  cp.n_threads = 2;
  CHECK_OK(hark_context_load(model, &cp, &ctx));
  CHECK(atomic_load(&g_log_messages) > 0); /* the load logs where the model went */
  CHECK_OK(hark_set_log_callback(NULL, NULL));
  CHECK_OK(hark_set_log_level(HARK_LOG_INFO));
  if (ctx) {
    hark_model_info mi;
    hark_context_info(ctx, &mi, sizeof mi);
    size_t n = 0;
    float* audio = synth(g_audio_seconds, &n);
    test_info(ctx);
    char* reference = test_transcribe_float(ctx, audio, n);
    if (reference) {
      test_state(ctx, audio, n, reference);
      test_two_at_once(ctx, audio, n, reference);
    }
    test_inputs(ctx, wav_path);
    test_bad_params(ctx, audio, n, mi.multilingual);
    test_bad_handles(ctx, audio, n);
    test_aborts(ctx, model);
    test_bench(ctx);
    test_cross_kv_q8(model, audio, n);
    test_stream(ctx, audio, n);
    test_stream_rate(ctx, audio, n);
    test_stream_on_state(ctx, audio, n);
    if (mi.multilingual) test_detect_language(ctx, audio, n);
    test_vad_transcribe(ctx, not_a_model);
    CHECK_OK(hark_context_free(ctx));
    CHECK_ERR(hark_context_free(ctx), HARK_ERR_BAD_HANDLE, "ctx");
    free(reference);
    free(audio);
  }

  remove(not_a_model);
  remove(wav_path);
  if (made_model) remove(model);
  printf("%d passed, %d failed\n", g_passed, g_failed);
  return g_failed == 0 ? 0 : 1;
}
