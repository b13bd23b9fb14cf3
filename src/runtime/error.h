// HARK_CHECK and hark::Error (defined in the public include/hark/error.hpp, so the exception a
// caller catches is the same type the numeric core throws).
#pragma once
#include <string>

#include "hark/error.hpp"

namespace hark {

// HARK_CHECK(cond, message-expression): throws hark::Error with the message when cond is false.
// The message is only built on failure, so checks cost nothing on the hot path beyond the branch.
#define HARK_CHECK(cond, msg)                                   \
  do {                                                          \
    if (!(cond)) throw ::hark::Error(std::string() + msg);      \
  } while (0)

}  // namespace hark
