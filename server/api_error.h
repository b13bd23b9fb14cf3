// An error a request is answered with: the HTTP status and what the client is told, in the
// fields of OpenAI's error object ({"error": {"message", "type", "param", "code"}}). Everything
// in server/ that rejects a request throws one; the transport turns it into a response.
#pragma once
#include <stdexcept>
#include <string>

#include "hark/error.hpp"

namespace hark::server {

struct ApiError : std::runtime_error {
  int status;
  std::string type;       // "invalid_request_error", "authentication_error", "server_error", ...
  std::string param;      // the form field at fault, "" when none
  std::string code;       // machine-readable, "" when none
  int retry_after_s = 0;  // > 0: a Retry-After header (503 when the queue is full)

  ApiError(int status_, std::string message, std::string type_ = "invalid_request_error", std::string param_ = {},
           std::string code_ = {})
      : std::runtime_error(std::move(message)),
        status(status_),
        type(std::move(type_)),
        param(std::move(param_)),
        code(std::move(code_)) {}
};

// A 400 naming the field.
inline ApiError bad_field(const std::string& field, const std::string& message) {
  return ApiError(400, message, "invalid_request_error", field, "invalid_value");
}

// What the library's error means to a client, by its code: the request's fault (400: a bad or
// unsupported value, named as the library names the option), something that does not exist
// (404), the server's own fault (500: its files, I/O, a bug) or its limits (503). Corrupt data
// in a transcription is the server's (its model and VAD files); the upload's audio is answered
// where it is decoded (415/413).
inline ApiError api_error_of(const Error& e) {
  const std::string code = error_code_name(e.code());
  switch (e.code()) {
    case ErrorCode::InvalidArgument:
    case ErrorCode::Unsupported: return ApiError(400, e.what(), "invalid_request_error", e.field(), code);
    case ErrorCode::NotFound: return ApiError(404, e.what(), "invalid_request_error", e.field(), code);
    case ErrorCode::ResourceExhausted:
    case ErrorCode::Aborted: {
      ApiError a(503, e.what(), "server_error", "", code);
      a.retry_after_s = 1;
      return a;
    }
    case ErrorCode::CorruptData:
    case ErrorCode::Io:
    case ErrorCode::Internal: break;
  }
  return ApiError(500, e.what(), "server_error", "", code);
}

}  // namespace hark::server
