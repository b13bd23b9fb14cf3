// The JSON text messages a realtime session sends: OpenAI-shaped error events, and the realtime
// transcriber's events typed for the client. A slice's results are transcript.partial until the
// event that first reports it final (transcript.final); later repeats of a final slice (the
// transcriber's last event restates it) are not sent again; the transcriber's errors become
// error events.
#pragma once
#include <set>
#include <string>

#include <nlohmann/json.hpp>

#include "api_error.h"
#include "hark/hark.hpp"

namespace hark::server {

// {"type": "error", "error": {"message", "type", "param", "code"}}.
std::string error_event(const ApiError& e);
// JSON text, invalid UTF-8 replaced (an event must always go out).
std::string dump_event(const nlohmann::json& j);

class EventTyper {  // used on the transcriber's thread only
 public:
  // The message for `e`, or "" when it repeats what was sent.
  std::string message(const RealtimeEvent& e);
  // The whisper.rn event without its list of every slice so far (one event is about one slice;
  // the list would make a long session's messages grow without bound).
  static nlohmann::json event_json(const RealtimeEvent& e);

 private:
  std::set<int> finals_sent_;
};

}  // namespace hark::server
