#include "realtime_events.h"

#include "responses.h"

namespace hark::server {

std::string dump_event(const nlohmann::json& j) {
  return j.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
}

std::string error_event(const ApiError& e) {
  return dump_event({{"type", "error"}, {"error", nlohmann::json::parse(openai_error_json(e))["error"]}});
}

std::string EventTyper::message(const RealtimeEvent& e) {
  if (e.code != 0) {
    const char* code = e.code == kCodeOverflow       ? "audio_dropped"
                       : e.code == kCodeSourceFailed ? "audio_failed"
                                                     : "transcription_failed";
    return error_event(ApiError(e.code == kCodeOverflow ? 400 : 500, e.error,
                                e.code == kCodeOverflow ? "invalid_request_error" : "server_error", "", code));
  }
  bool final = false;
  for (const RealtimeSlice& s : e.slices)
    if (s.index == e.slice_index) final = s.final;
  if (e.slices.empty()) return "";
  if (final && !finals_sent_.insert(e.slice_index).second) return "";
  nlohmann::json j = event_json(e);
  j["type"] = final ? "transcript.final" : "transcript.partial";
  return dump_event(j);
}

nlohmann::json EventTyper::event_json(const RealtimeEvent& e) {
  nlohmann::json j = nlohmann::json::parse(to_json(e));
  j.erase("slices");
  return j;
}

}  // namespace hark::server
