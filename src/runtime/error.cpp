#include "runtime/error.h"

namespace hark {

const char* error_code_name(ErrorCode code) {
  switch (code) {
    case ErrorCode::InvalidArgument: return "invalid_argument";
    case ErrorCode::NotFound: return "not_found";
    case ErrorCode::Unsupported: return "unsupported";
    case ErrorCode::CorruptData: return "corrupt_data";
    case ErrorCode::Io: return "io";
    case ErrorCode::ResourceExhausted: return "resource_exhausted";
    case ErrorCode::Aborted: return "aborted";
    case ErrorCode::Internal: return "internal";
  }
  return "unknown";
}

}  // namespace hark
