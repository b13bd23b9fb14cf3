// hark::Error: the one exception type hark throws, from the numeric core up to the public API.
// Every message names what was wrong and, where it applies, expected vs found (and the file and
// byte offset for bad input), so a user can act on it without a debugger. Its code says what kind
// of failure it is, so each front end answers it in its own terms (the C API's status, the
// server's HTTP status, the Node error's `code`) without reading the message.
#pragma once
#include <stdexcept>
#include <string>

#include "hark/export.h"

namespace hark {

enum class ErrorCode {
  InvalidArgument,    // a value out of range, an unknown name, audio that is not finite: the caller's to fix
  NotFound,           // a file, model or job that does not exist
  Unsupported,        // a valid request this model, build or combination of options cannot do
  CorruptData,        // a model, VAD or audio file that is not what it claims to be
  Io,                 // reading or writing failed (permissions, a full disk, the network)
  ResourceExhausted,  // out of memory, or a limit reached
  Aborted,            // stopped on request where a result cannot be returned
  Internal,           // a broken invariant inside hark: a bug, please report it
};

// "invalid_argument", "not_found", "unsupported", "corrupt_data", "io", "resource_exhausted",
// "aborted", "internal": the names every front end uses for the codes.
HARK_API const char* error_code_name(ErrorCode code);

// Exported (typeinfo, vtable), so a program catches what libhark.so throws as this same type.
class HARK_API Error : public std::runtime_error {
 public:
  // A plain Error is InvalidArgument: most of what the library checks is its caller's input.
  explicit Error(const std::string& what) : std::runtime_error(what) {}
  // field: the option, argument or file the error is about ("temperature", a path), "" for none.
  Error(ErrorCode code, const std::string& what, std::string field = {})
      : std::runtime_error(what), code_(code), field_(std::move(field)) {}

  ErrorCode code() const noexcept { return code_; }
  const std::string& field() const noexcept { return field_; }

 private:
  ErrorCode code_ = ErrorCode::InvalidArgument;
  std::string field_;
};

}  // namespace hark
