// What a realtime (WebSocket) session is configured with: the model, how the client's PCM frames
// are laid out, and the realtime transcriber's options (slices, partial results, VAD), read from
// the upgrade request's query parameters and from `session.update` messages sent before the
// first audio frame. Every key is checked; a bad one is ApiError 400 naming it.
#pragma once
#include <map>
#include <string>
#include <string_view>

#include <nlohmann/json_fwd.hpp>

#include "hark/hark.hpp"
#include "options.h"

namespace hark::server {

enum class PcmFormat { S16LE, F32LE };

struct RealtimeConfig {
  std::string model;  // "": the default; only the upgrade request may name one
  PcmFormat format = PcmFormat::S16LE;
  int sample_rate = 16000;
  int channels = 1;
  // Audio the transcriber cannot take yet is dropped (and reported) instead of holding back the
  // client: for clients that stream a microphone and prefer losing audio to falling behind.
  bool live = false;
  RealtimeOptions realtime;
  TranscribeParams transcribe;

  size_t bytes_per_frame() const { return (format == PcmFormat::S16LE ? 2u : 4u) * static_cast<size_t>(channels); }
};

// The defaults a session starts from on this server: its decoding defaults, partial results
// every second, and a session length of --max-audio-sec (an hour when that is 0).
RealtimeConfig default_realtime_config(const ServerOptions& o);

// Applies `values` (key -> value as text) to `c`. initial: the upgrade request, which alone may
// pick the model. Unknown keys are refused too, so a misspelt option does not go unnoticed.
void apply_realtime_config(RealtimeConfig& c, const std::multimap<std::string, std::string>& values,
                           const ServerOptions& o, bool initial);

// The query parameters of a request target ("/v1/realtime?a=1&b=x%20y"), URL-decoded.
std::multimap<std::string, std::string> query_of(std::string_view target);
// A session.update message's keys as text, the way a query gives them (strings, numbers and
// booleans; anything else is a 400 naming the key).
std::multimap<std::string, std::string> config_values_of(const nlohmann::json& msg);

}  // namespace hark::server
