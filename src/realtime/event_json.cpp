// RealtimeEvent as one line of JSON, whisper.rn's TranscribeRealtimeEvent keys.
#include <nlohmann/json.hpp>

#include "hark/hark.hpp"

namespace hark {
namespace {

nlohmann::json data_json(const RealtimeData& d) {
  nlohmann::json segs = nlohmann::json::array();
  for (const Segment& s : d.segments) segs.push_back({{"text", s.text}, {"t0", s.t0}, {"t1", s.t1}});
  return {{"result", d.result}, {"segments", segs}};
}

}  // namespace

std::string to_json(const RealtimeEvent& e) {
  nlohmann::json slices = nlohmann::json::array();
  for (const RealtimeSlice& s : e.slices) {
    nlohmann::json j = {{"index", s.index},
                        {"final", s.final},
                        {"t0", s.t0},
                        {"t1", s.t1},
                        {"data", data_json(s.data)},
                        {"code", s.code},
                        {"processTime", s.process_time_ms}};
    if (!s.error.empty()) j["error"] = s.error;
    slices.push_back(std::move(j));
  }
  nlohmann::json j = {{"jobId", e.job_id},
                      {"code", e.code},
                      {"isCapturing", e.is_capturing},
                      {"isStoppedByAction", e.is_stopped_by_action},
                      {"sliceIndex", e.slice_index},
                      {"data", data_json(e.data)},
                      {"processTime", e.process_time_ms},
                      {"recordingTime", e.recording_time_ms},
                      {"droppedSamples", e.dropped_samples},
                      {"slices", slices}};
  if (!e.error.empty()) j["error"] = e.error;
  if (!e.vad.empty()) j["vad"] = {{"type", e.vad}, {"confidence", e.vad_confidence}, {"t", e.vad_t}};
  // Replace, not throw, on invalid UTF-8: an event must always print.
  return j.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
}

}  // namespace hark
