// The internal side of hark/log.hpp: HARK_LOG(level, message-expression) sends a message to the
// application's log callback. The message is built only when a callback is set and the level is
// enabled, so logging costs one atomic load when nobody listens.
#pragma once
#include <string>

#include "hark/log.hpp"

namespace hark::logging {

bool enabled(LogLevel level);
void send(LogLevel level, const std::string& message);

}  // namespace hark::logging

#define HARK_LOG(level, msg)                                                                \
  do {                                                                                      \
    if (::hark::logging::enabled(level)) ::hark::logging::send(level, std::string() + msg); \
  } while (0)
