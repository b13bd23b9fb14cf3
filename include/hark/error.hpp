// hark::Error: the one exception type hark throws, from the numeric core up to the public API.
// Every message names what was wrong and, where it applies, expected vs found (and the file and
// byte offset for bad input), so a user can act on it without a debugger.
#pragma once
#include <stdexcept>
#include <string>

#include "hark/export.h"

namespace hark {

// Exported (typeinfo, vtable), so a program catches what libhark.so throws as this same type.
class HARK_API Error : public std::runtime_error {
 public:
  explicit Error(const std::string& what) : std::runtime_error(what) {}
};

}  // namespace hark
