// hark::Error: the one exception type the numeric core throws.
// Every message names what was wrong and, where it applies, expected vs found, so a user can act
// on it without a debugger. Public APIs above the core turn it into a result/error value.
#pragma once
#include <stdexcept>
#include <string>

namespace hark {

class Error : public std::runtime_error {
 public:
  explicit Error(const std::string& what) : std::runtime_error(what) {}
};

// HARK_CHECK(cond, message-expression): throws hark::Error with the message when cond is false.
// The message is only built on failure, so checks cost nothing on the hot path beyond the branch.
#define HARK_CHECK(cond, msg)                                   \
  do {                                                          \
    if (!(cond)) throw ::hark::Error(std::string() + msg);      \
  } while (0)

}  // namespace hark
