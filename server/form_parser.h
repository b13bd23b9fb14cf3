// The parts of a request hark parses itself (Boost.Beast parses the HTTP framing): bodies in
// multipart/form-data (RFC 7578) and application/x-www-form-urlencoded, and query strings. All of
// it is a client's bytes: bad input throws ApiError 400 saying what is wrong, limits bound what a
// body may hold, and nothing large is copied (the file stays a view into the body).
#pragma once
#include <cstddef>
#include <string>
#include <string_view>

#include "request.h"

namespace hark::server {

struct FormLimits {
  size_t max_fields = 256;              // parts of a multipart body, pairs of a form or a query
  size_t max_field_bytes = 1 << 20;     // one text field's value (prompts are small)
  size_t max_part_header_bytes = 8192;  // the headers of one multipart part
};

// The body of a request with this Content-Type as a Form: multipart/form-data (the first part
// named "file" is Form::file, a view into `body`; the others are text fields), a urlencoded
// form; any other body (or none) has no fields.
Form parse_form(std::string_view content_type, std::string_view body, const FormLimits& limits = {});

// Appends the fields of a query string ("a=1&b=x%20y", '+' a space) to `form`.
void parse_query(std::string_view query, Form& form, const FormLimits& limits = {});

// %XX escapes decoded (and '+' as a space when plus_space). A bad escape: ApiError 400.
std::string percent_decode(std::string_view s, bool plus_space);

// The value of parameter `name` of a header value such as `multipart/form-data; boundary=X` or
// `form-data; name="file"; filename="a.wav"` (quotes and backslash escapes removed; the name
// compared without case); false when it is not there.
bool header_param(std::string_view value, std::string_view name, std::string* out);

}  // namespace hark::server
