#include "field_values.h"

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <cmath>
#include <cstdlib>

#include "api_error.h"
#include "hark/hark.hpp"

namespace hark::server {

std::string lower(std::string s) {
  std::transform(s.begin(), s.end(), s.begin(), [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  return s;
}

std::string shown(const std::string& v) { return "'" + (v.size() > 40 ? v.substr(0, 40) + "..." : v) + "'"; }

double number(const std::string& field, const std::string& v, double lo, double hi) {
  errno = 0;
  char* end = nullptr;
  const double x = v.empty() ? 0 : std::strtod(v.c_str(), &end);
  if (v.empty() || end != v.c_str() + v.size() || errno == ERANGE || !std::isfinite(x))
    throw bad_field(field, field + ": " + shown(v) + " is not a number");
  if (x < lo || x > hi)
    throw bad_field(field,
                    field + ": " + shown(v) + " is outside [" + std::to_string(lo) + ", " + std::to_string(hi) + "]");
  return x;
}

int integer(const std::string& field, const std::string& v, int lo, int hi) {
  const double x = number(field, v, lo, hi);
  if (x != std::floor(x)) throw bad_field(field, field + ": " + shown(v) + " is not a whole number");
  return static_cast<int>(x);
}

bool boolean(const std::string& field, const std::string& v) {
  const std::string l = lower(v);
  if (l == "true" || l == "1" || l == "yes" || l == "on") return true;
  if (l == "false" || l == "0" || l == "no" || l == "off" || l.empty()) return false;
  throw bad_field(field, field + ": " + shown(v) + " is not true or false");
}

// A language code ("de"), OpenAI's name of one ("german"), or "auto".
std::string language_of(const std::string& v) {
  const std::string l = lower(v);
  for (int i = 0; i < language_count(); ++i)
    if (l == language_name_at(i)) return language_code_at(i);
  return l;  // a code, "auto", or what the library refuses (naming the language)
}

}  // namespace hark::server
