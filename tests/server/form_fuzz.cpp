// libFuzzer entry point for what hark serve parses of a request itself (Beast parses the HTTP
// framing): multipart/form-data and urlencoded bodies, and query strings (server/form_parser.h).
// The first line of the input is the Content-Type, the rest the body; the body is also read as a
// query string. ApiError is a correct rejection; a crash, hang or sanitizer report is a bug.
// Built in the ordinary build when clang's libFuzzer is there (build/fuzz/form_fuzz); ctest
// fuzz.server_parsers runs it briefly from tests/server/fuzz_seeds/form (README: Fuzzing).
#include <cstddef>
#include <cstdint>
#include <string_view>

#include "server/api_error.h"
#include "server/form_parser.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string_view in(reinterpret_cast<const char*>(data), size);
  const size_t eol = in.find('\n');
  const std::string_view type = in.substr(0, eol);
  const std::string_view body = eol == std::string_view::npos ? std::string_view() : in.substr(eol + 1);
  using hark::server::ApiError;
  try {
    const hark::server::Form f = hark::server::parse_form(type, body);
    // What a route then reads: views must stay inside the body.
    if (f.has_file && !f.file.empty() &&
        (f.file.data() < body.data() || f.file.data() + f.file.size() > body.data() + body.size()))
      __builtin_trap();
  } catch (const ApiError&) {
  }
  try {
    hark::server::Form q;
    hark::server::parse_query(body, q);
  } catch (const ApiError&) {
  }
  std::string v;
  hark::server::header_param(type, "boundary", &v);
  return 0;
}
