/* hark: what every part of the C API shares (hark.h and hark_models.h include it): the status
 * codes every call returns, the message of the last failure, and the abort callback type. */
#ifndef HARK_COMMON_H
#define HARK_COMMON_H

#include <stdbool.h>

#include "hark/export.h"

#ifdef __cplusplus
extern "C" {
#endif

/* ---- errors ------------------------------------------------------------------------------- */

typedef enum hark_status {
  HARK_OK = 0,
  HARK_ERR_INVALID_ARGUMENT = 1, /* a NULL pointer, a value out of range, an unknown name */
  HARK_ERR_BAD_HANDLE = 2,       /* NULL, freed, or not a handle of the expected kind */
  HARK_ERR_IO = 3,               /* a file could not be opened or read */
  HARK_ERR_MODEL = 4,            /* the model file is not a valid Whisper model */
  HARK_ERR_AUDIO = 5,            /* the audio could not be decoded or converted */
  HARK_ERR_OUT_OF_MEMORY = 6,
  HARK_ERR_FAILED = 7,  /* the library could not do it; the message says why */
  HARK_ERR_INTERNAL = 8 /* an unexpected failure inside hark: a bug, please report */
} hark_status;

/* Thread-local: the message of the last call on this thread that failed ("" when none has).
 * Valid until the next failing call on this thread. Any thread. */
HARK_API const char* hark_last_error(void);
/* Thread-local: what kind of failure the last failing call on this thread was, in the words every
 * front end uses (hark::ErrorCode's names): "invalid_argument", "not_found", "unsupported",
 * "corrupt_data", "io", "resource_exhausted", "aborted", "internal"; "" when none has failed. A
 * status says what the caller can do; this says more finely what went wrong (a file that does not
 * exist is HARK_ERR_IO and "not_found"). Static string. Any thread. */
HARK_API const char* hark_last_error_code(void);
/* "HARK_OK", "HARK_ERR_BAD_HANDLE", ...; "HARK_ERR_UNKNOWN" for other values. Any thread. */
HARK_API const char* hark_status_name(hark_status status);

/* Polled between graph nodes and tokens; return true to stop the job (as if aborted). */
typedef bool (*hark_abort_callback)(void* user_data);

#ifdef __cplusplus
}
#endif

#endif /* HARK_COMMON_H */
