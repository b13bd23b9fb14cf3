// The C API: errors (hark_last_error, its code, status names).
#include "capi/capi_internal.h"

using namespace hark::capi;  // NOLINT(google-build-using-namespace): this layer's own helpers

extern "C" {

const char* hark_last_error(void) { return t_last_error.c_str(); }

const char* hark_last_error_code(void) { return t_last_code; }

const char* hark_status_name(hark_status status) {
  switch (enum_value(status)) {
    case HARK_OK: return "HARK_OK";
    case HARK_ERR_INVALID_ARGUMENT: return "HARK_ERR_INVALID_ARGUMENT";
    case HARK_ERR_BAD_HANDLE: return "HARK_ERR_BAD_HANDLE";
    case HARK_ERR_IO: return "HARK_ERR_IO";
    case HARK_ERR_MODEL: return "HARK_ERR_MODEL";
    case HARK_ERR_AUDIO: return "HARK_ERR_AUDIO";
    case HARK_ERR_OUT_OF_MEMORY: return "HARK_ERR_OUT_OF_MEMORY";
    case HARK_ERR_FAILED: return "HARK_ERR_FAILED";
    case HARK_ERR_INTERNAL: return "HARK_ERR_INTERNAL";
  }
  return "HARK_ERR_UNKNOWN";
}

}  // extern "C"
