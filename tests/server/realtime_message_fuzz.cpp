// libFuzzer entry point for the realtime WebSocket's client messages and upgrade query: a text
// message parsed as JSON and applied as a session.update (server/realtime_config.h), and the same
// bytes as the upgrade request's query string. ApiError (and a JSON parse failure) is a correct
// rejection; a crash, hang or sanitizer report is a bug. Built and run as form_fuzz is.
#include <cstddef>
#include <cstdint>
#include <string>

#include <nlohmann/json.hpp>

#include "server/api_error.h"
#include "server/realtime_config.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace hark::server;
  static const ServerOptions options = [] {
    ServerOptions o;
    o.models = {{"micro", "/nonexistent/micro.bin"}};
    return o;
  }();
  const std::string in(reinterpret_cast<const char*>(data), size);
  const nlohmann::json msg = nlohmann::json::parse(in, nullptr, false);
  if (!msg.is_discarded() && msg.is_object()) {
    try {
      RealtimeConfig c = default_realtime_config(options);
      apply_realtime_config(c, config_values_of(msg), options, false);
    } catch (const ApiError&) {
    }
  }
  try {
    RealtimeConfig c = default_realtime_config(options);
    apply_realtime_config(c, query_of("/v1/realtime?" + in), options, true);
  } catch (const ApiError&) {
  }
  return 0;
}
