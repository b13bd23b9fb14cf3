// An error a request is answered with: the HTTP status and what the client is told, in the
// fields of OpenAI's error object ({"error": {"message", "type", "param", "code"}}). Everything
// in server/ that rejects a request throws one; the transport turns it into a response.
#pragma once
#include <stdexcept>
#include <string>

namespace hark::server {

struct ApiError : std::runtime_error {
  int status;
  std::string type;   // "invalid_request_error", "authentication_error", "server_error", ...
  std::string param;  // the form field at fault, "" when none
  std::string code;   // machine-readable, "" when none
  int retry_after_s = 0;  // > 0: a Retry-After header (503 when the queue is full)

  ApiError(int status_, std::string message, std::string type_ = "invalid_request_error",
           std::string param_ = {}, std::string code_ = {})
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

}  // namespace hark::server
