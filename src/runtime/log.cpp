#include "runtime/log.h"

#include <atomic>
#include <memory>
#include <mutex>

namespace hark {

namespace {

// The callback is swapped under a mutex and held by shared_ptr, so a message being sent while
// another thread replaces the callback still calls a live function object.
std::mutex g_mutex;
std::shared_ptr<const LogCallback> g_callback;
std::atomic<bool> g_has_callback{false};
std::atomic<int> g_min_level{static_cast<int>(LogLevel::Info)};

}  // namespace

void set_log_callback(LogCallback cb) {
  std::lock_guard<std::mutex> lock(g_mutex);
  g_callback = cb ? std::make_shared<const LogCallback>(std::move(cb)) : nullptr;
  g_has_callback.store(g_callback != nullptr);
}

void set_log_level(LogLevel min_level) { g_min_level.store(static_cast<int>(min_level)); }

const char* log_level_name(LogLevel level) {
  switch (level) {
    case LogLevel::Debug: return "debug";
    case LogLevel::Info: return "info";
    case LogLevel::Warn: return "warn";
    case LogLevel::Error: return "error";
  }
  return "unknown";
}

namespace logging {

bool enabled(LogLevel level) {
  return g_has_callback.load(std::memory_order_relaxed) &&
         static_cast<int>(level) >= g_min_level.load(std::memory_order_relaxed);
}

void send(LogLevel level, const std::string& message) {
  std::shared_ptr<const LogCallback> cb;
  {
    std::lock_guard<std::mutex> lock(g_mutex);
    cb = g_callback;
  }
  if (!cb) return;
  // A throwing log callback must not take a job down with it: the message is simply lost.
  try {
    (*cb)(level, message);
  } catch (...) {
  }
}

}  // namespace logging
}  // namespace hark
