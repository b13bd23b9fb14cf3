/* hark: getting a model, the C API (part of hark.h; the C++ side is hark/models.hpp).
 *
 * The official whisper.cpp model files by name, the folder they are kept in, finding one by name,
 * and downloading one with its SHA-1 checked before it gets its final name. hark_context_load
 * takes a name ("tiny.en") too and finds it in the models folder. */
#ifndef HARK_MODELS_H
#define HARK_MODELS_H

#include <stddef.h>
#include <stdint.h>

#include "hark/hark_common.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct hark_model_entry {
  const char* name;      /* "tiny.en"; strings are static, valid for the life of the process */
  const char* file_name; /* "ggml-tiny.en.bin" */
  const char* url;       /* where it is downloaded from by default */
  uint64_t size;         /* bytes; 0 when not published */
  const char* disk;      /* the published size as people read it ("75 MiB"); "" when none */
  const char* sha1;      /* 40 hex digits; "" when no digest is published */
  /* Added later (an older caller's smaller out_size gets the fields above): a Silero VAD model
   * (vad_model_path), not a Whisper model. */
  bool vad;
} hark_model_entry;

/* How many official models there are. Any thread. */
HARK_API int hark_model_count(void);
/* The i-th (0 .. hark_model_count() - 1; out_size = sizeof *out). HARK_ERR_INVALID_ARGUMENT for
 * an index out of range. Any thread. */
HARK_API hark_status hark_model_at(int i, hark_model_entry* out, size_t out_size);

/* The models folder: $HARK_MODELS, else $XDG_CACHE_HOME/hark/models, else ~/.cache/hark/models.
 * The string is the calling thread's, valid until its next hark_models_dir/hark_find_model call. */
HARK_API const char* hark_models_dir(void);

/* A model path from a file path or a name found in dir (NULL or "": the models folder); *out_path
 * as for hark_models_dir. HARK_ERR_IO when neither (for an official name the message says how
 * to download it); HARK_ERR_INVALID_ARGUMENT for NULL arguments. Any thread. */
HARK_API hark_status hark_find_model(const char* name_or_path, const char* dir, const char** out_path);

typedef void (*hark_download_progress_callback)(uint64_t bytes_done, uint64_t bytes_total, double bytes_per_second,
                                                double seconds_left, bool verifying, void* user_data);

typedef struct hark_download_params {
  size_t struct_size;        /* set by hark_download_default_params() */
  const char* dir;           /* NULL or "": the models folder (created when missing) */
  const char* base_url;      /* NULL or "": the model's own URL; else base_url/ggml-NAME.bin */
  const char* expected_sha1; /* NULL or "": the published digest */
  uint64_t expected_size;    /* 0: the published size */
  bool force;                /* download again when the file is there */
  long connect_timeout_s;    /* default 30 */
  long low_speed_time_s;     /* a stall: under low_speed_bytes per second this long (default 60; 0: none) */
  long low_speed_bytes;      /* default 1 */
  hark_download_progress_callback progress_callback; /* NULL: none; on the calling thread */
  void* progress_user_data;
  hark_abort_callback abort_callback; /* returns true to stop (HARK_ERR_FAILED; the partial file is kept) */
  void* abort_user_data;
} hark_download_params;

HARK_API hark_status hark_download_params_init(hark_download_params* params, size_t params_size);
static inline hark_download_params hark_download_default_params(void) {
  hark_download_params p;
  hark_download_params_init(&p, sizeof p);
  return p;
}

typedef struct hark_download_result {
  bool downloaded;         /* false: it was already there */
  bool verified;           /* its SHA-1 (or the server's SHA-256) matched */
  uint64_t bytes;          /* its size */
  uint64_t bytes_resumed;  /* kept from an earlier attempt's partial file */
  bool verified_by_server; /* verified against the SHA-256 the server announced (Hugging Face's
                              X-Linked-Etag), for files with no published SHA-1 */
} hark_download_result;

/* Downloads an official model by name. On success, *out_path (may be NULL) is the file, as for
 * hark_models_dir, and *out (may be NULL) says what happened (out_size = sizeof *out).
 * HARK_ERR_INVALID_ARGUMENT: an unknown name or bad params; HARK_ERR_FAILED: the download failed
 * (no network, an HTTP error, a stall, a full disk, a digest mismatch, stopped by abort_callback:
 * hark_last_error() says which). Any thread; blocks until done. */
HARK_API hark_status hark_download_model(const char* name, const hark_download_params* params, const char** out_path,
                                         hark_download_result* out, size_t out_size);

#ifdef __cplusplus
}
#endif

#endif /* HARK_MODELS_H */
