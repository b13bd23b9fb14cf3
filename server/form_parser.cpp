#include "form_parser.h"

#include <algorithm>
#include <cctype>

#include "api_error.h"
#include "http_text.h"

namespace hark::server {

namespace {

int hex_value(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}

// The media type of a Content-Type value, lower case, without its parameters.
std::string media_type(std::string_view content_type) {
  std::string t(trim_ows(content_type.substr(0, content_type.find(';'))));
  for (char& c : t) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return t;
}

ApiError bad_body(const std::string& what) { return ApiError(400, "malformed request body: " + what); }

void add_field(Form& form, std::string name, std::string value, const FormLimits& limits) {
  if (form.fields.size() >= limits.max_fields)
    throw bad_body("more than " + std::to_string(limits.max_fields) + " fields");
  form.fields.emplace(std::move(name), std::move(value));
}

// "a=1&b=2" into form (both query strings and urlencoded bodies).
void parse_pairs(std::string_view s, Form& form, const FormLimits& limits) {
  while (!s.empty()) {
    const size_t amp = s.find('&');
    const std::string_view pair = s.substr(0, amp);
    s = amp == std::string_view::npos ? std::string_view() : s.substr(amp + 1);
    if (pair.empty()) continue;
    const size_t eq = pair.find('=');
    const std::string_view value = eq == std::string_view::npos ? std::string_view() : pair.substr(eq + 1);
    if (value.size() > limits.max_field_bytes * 3)  // (an escaped byte takes three)
      throw bad_body("a field is longer than " + std::to_string(limits.max_field_bytes) + " bytes");
    add_field(form, percent_decode(pair.substr(0, eq), true), percent_decode(value, true), limits);
  }
}

// multipart/form-data (RFC 7578 on RFC 2046's multipart): a preamble, then parts each opened by
// CRLF "--" boundary CRLF (the first may start the body), each headers, an empty line and its
// content, the last closed by "--" boundary "--".
Form parse_multipart(std::string_view content_type, std::string_view body, const FormLimits& limits) {
  std::string boundary;
  if (!header_param(content_type, "boundary", &boundary) || boundary.empty() || boundary.size() > 200)
    throw bad_body("multipart/form-data without a boundary parameter (1..200 characters)");
  const std::string delim = "--" + boundary;
  Form form;
  // The first delimiter: at the very start, or after a preamble's CRLF.
  size_t at;
  if (body.substr(0, delim.size()) == delim) {
    at = delim.size();
  } else {
    const size_t p = body.find("\r\n" + delim);
    if (p == std::string_view::npos) throw bad_body("no multipart boundary '" + boundary + "' in the body");
    at = p + 2 + delim.size();
  }
  const std::string next = "\r\n" + delim;
  size_t n_parts = 0;
  for (;;) {
    // After a delimiter: "--" closes the body, else (transport padding, then) CRLF opens a part.
    if (body.substr(at, 2) == "--") return form;
    while (at < body.size() && (body[at] == ' ' || body[at] == '\t')) ++at;
    if (body.substr(at, 2) != "\r\n") throw bad_body("a multipart boundary is not followed by a line break");
    at += 2;
    if (++n_parts > limits.max_fields) throw bad_body("more than " + std::to_string(limits.max_fields) + " parts");
    // The part's headers, up to an empty line.
    const size_t head_end = body.find("\r\n\r\n", at);
    const size_t head_len = head_end == std::string_view::npos ? body.size() - at : head_end - at;
    if (head_len > limits.max_part_header_bytes)
      throw bad_body("a part's headers are longer than " + std::to_string(limits.max_part_header_bytes) + " bytes");
    // (A part with no headers at all starts with the empty line itself.)
    const bool no_headers = body.substr(at, 2) == "\r\n";
    if (head_end == std::string_view::npos && !no_headers) throw bad_body("a part's headers never end");
    std::string_view head = no_headers ? std::string_view() : body.substr(at, head_len);
    at = no_headers ? at + 2 : head_end + 4;
    std::string name, filename;
    bool disposition = false;
    while (!head.empty()) {
      const size_t eol = head.find("\r\n");
      const std::string_view line = head.substr(0, eol);
      head = eol == std::string_view::npos ? std::string_view() : head.substr(eol + 2);
      if (!line.empty() && (line[0] == ' ' || line[0] == '\t')) throw bad_body("a folded part header");
      const size_t colon = line.find(':');
      if (colon == std::string_view::npos || colon == 0) throw bad_body("a part header without a name");
      if (!iequals(trim_ows(line.substr(0, colon)), "content-disposition")) continue;
      const std::string_view value = trim_ows(line.substr(colon + 1));
      if (!iequals(trim_ows(value.substr(0, value.find(';'))), "form-data"))
        throw bad_body("a part's Content-Disposition is not form-data");
      disposition = true;
      if (!header_param(value, "name", &name)) throw bad_body("a part without a name");
      header_param(value, "filename", &filename);
    }
    if (!disposition) throw bad_body("a part without Content-Disposition: form-data");
    // Its content runs to the next delimiter.
    const size_t end = body.find(next, at);
    if (end == std::string_view::npos) throw bad_body("the body ends before its closing multipart boundary");
    const std::string_view content = body.substr(at, end - at);
    at = end + next.size();
    if (name == "file" && !form.has_file) {
      form.has_file = true;
      form.file = content;
      form.filename = filename;
    } else {  // another file part is a field like any other
      if (content.size() > limits.max_field_bytes)
        throw bad_body("field '" + name + "' is longer than " + std::to_string(limits.max_field_bytes) + " bytes");
      add_field(form, name, std::string(content), limits);
    }
  }
}

}  // namespace

std::string percent_decode(std::string_view s, bool plus_space) {
  std::string out;
  out.reserve(s.size());
  for (size_t i = 0; i < s.size(); ++i) {
    if (s[i] == '+' && plus_space) {
      out += ' ';
    } else if (s[i] == '%') {
      if (i + 2 >= s.size() || hex_value(s[i + 1]) < 0 || hex_value(s[i + 2]) < 0)
        throw ApiError(400, "malformed request: a '%' that is not followed by two hex digits");
      out += static_cast<char>(hex_value(s[i + 1]) * 16 + hex_value(s[i + 2]));
      i += 2;
    } else {
      out += s[i];
    }
  }
  return out;
}

bool header_param(std::string_view value, std::string_view name, std::string* out) {
  size_t at = value.find(';');
  while (at != std::string_view::npos && at < value.size()) {
    ++at;  // past ';'
    while (at < value.size() && (value[at] == ' ' || value[at] == '\t')) ++at;
    const size_t eq = value.find('=', at);
    const size_t semi = value.find(';', at);
    if (eq == std::string_view::npos || (semi != std::string_view::npos && semi < eq)) {
      at = semi;  // a parameter without a value
      continue;
    }
    const std::string_view key = trim_ows(value.substr(at, eq - at));
    size_t v = eq + 1;
    while (v < value.size() && (value[v] == ' ' || value[v] == '\t')) ++v;
    std::string got;
    if (v < value.size() && value[v] == '"') {  // a quoted string, with \-escapes
      ++v;
      while (v < value.size() && value[v] != '"') {
        if (value[v] == '\\' && v + 1 < value.size()) ++v;
        got += value[v++];
      }
      if (v >= value.size()) return false;  // never closed
      at = value.find(';', v + 1);
    } else {
      const size_t end = value.find(';', v);
      got = std::string(trim_ows(value.substr(v, end == std::string_view::npos ? std::string_view::npos : end - v)));
      at = end;
    }
    if (iequals(key, name)) {
      *out = std::move(got);
      return true;
    }
  }
  return false;
}

void parse_query(std::string_view query, Form& form, const FormLimits& limits) { parse_pairs(query, form, limits); }

Form parse_form(std::string_view content_type, std::string_view body, const FormLimits& limits) {
  const std::string type = media_type(content_type);
  if (type == "multipart/form-data") return parse_multipart(content_type, body, limits);
  Form form;
  if (type == "application/x-www-form-urlencoded") {
    parse_pairs(body, form, limits);
    return form;
  }
  // Another type (or none): no fields, so the route says what it lacks (e.g. 400 naming "file").
  return form;
}

}  // namespace hark::server
