// Small text helpers every layer may use.
#pragma once
#include <string_view>

namespace hark {

// ASCII white space (as C's isspace in the "C" locale, without its locale dependence).
inline bool is_space(char c) { return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\f' || c == '\v'; }

// `s` without white space at either end (Python's str.strip()).
inline std::string_view trim(std::string_view s) {
  while (!s.empty() && is_space(s.front())) s.remove_prefix(1);
  while (!s.empty() && is_space(s.back())) s.remove_suffix(1);
  return s;
}

}  // namespace hark
