// hark's log: what the library does (model loaded, device chosen, fallbacks taken) goes to one
// process-wide callback that the application sets. The default is silence: a library that
// prints to stderr on its own is one an application cannot ship.
#pragma once
#include <functional>
#include <string>

#include "hark/export.h"

namespace hark {

enum class LogLevel { Debug = 0, Info = 1, Warn = 2, Error = 3 };

// May be called from any thread (jobs run on many), so it must be thread-safe itself.
using LogCallback = std::function<void(LogLevel level, const std::string& message)>;

HARK_API void set_log_callback(LogCallback cb);       // nullptr: silent (the default)
HARK_API void set_log_level(LogLevel min_level);      // below it nothing is built or sent (default Info)
HARK_API const char* log_level_name(LogLevel level);  // "debug", "info", "warn", "error"

}  // namespace hark
