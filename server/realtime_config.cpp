#include "realtime_config.h"

#include <nlohmann/json.hpp>

#include "api_error.h"
#include "field_values.h"
#include "form_parser.h"

namespace hark::server {

std::multimap<std::string, std::string> query_of(std::string_view target) {
  Form f;
  const size_t at = target.find('?');
  if (at != std::string_view::npos) parse_query(target.substr(at + 1), f);
  return std::move(f.fields);
}

// A session.update message's keys as text, the way the query gives them.
std::multimap<std::string, std::string> config_values_of(const nlohmann::json& msg) {
  std::multimap<std::string, std::string> v;
  for (const auto& [k, x] : msg.items()) {
    if (x.is_string())
      v.emplace(k, x.get<std::string>());
    else if (x.is_boolean() || x.is_number())
      v.emplace(k, x.dump());
    else
      throw bad_field(k, k + ": must be a string, number or boolean");
  }
  return v;
}

RealtimeConfig default_realtime_config(const ServerOptions& o) {
  RealtimeConfig c;
  c.transcribe = o.decoding;
  // --batch-size is for uploads: a live slice is one short window, decoded on its own (the
  // batched pipeline would also need the VAD model a session may not ask for).
  c.transcribe.batch_size = 1;
  c.realtime.audio_sec = o.max_audio_sec > 0 ? o.max_audio_sec : 3600;
  c.realtime.audio_slice_sec = 10;
  c.realtime.audio_min_sec = 1;
  c.realtime.partial_sec = 1;
  return c;
}

void apply_realtime_config(RealtimeConfig& c, const std::multimap<std::string, std::string>& values,
                           const ServerOptions& o, bool initial) {
  RealtimeOptions& r = c.realtime;
  const double max_sec = o.max_audio_sec > 0 ? o.max_audio_sec : 1e9;
  for (const auto& [key, v] : values) {
    if (key == "model") {
      if (!initial) {
        if (v != c.model)
          throw bad_field(key, "model: a session's model is chosen in the upgrade request (?model=NAME)");
        continue;
      }
      c.model = v;
    } else if (key == "api_key") {
      // Browsers cannot set headers on a WebSocket; the key may come in the query instead.
      continue;
    } else if (key == "language") {
      c.transcribe.language = v.empty() ? "auto" : language_of(v);
    } else if (key == "prompt") {
      c.transcribe.initial_prompt = v;
    } else if (key == "translate") {
      c.transcribe.translate = boolean(key, v);
    } else if (key == "format") {
      const std::string f = lower(v);
      if (f == "s16le" || f == "pcm16" || f == "s16")
        c.format = PcmFormat::S16LE;
      else if (f == "f32le" || f == "float32" || f == "f32")
        c.format = PcmFormat::F32LE;
      else
        throw bad_field(key, "format: " + shown(v) + " is not s16le (16-bit PCM) or f32le (32-bit float PCM)");
    } else if (key == "sample_rate") {
      c.sample_rate = integer(key, v, 1000, 768000);
    } else if (key == "channels") {
      c.channels = integer(key, v, 1, 32);
    } else if (key == "live") {
      c.live = boolean(key, v);
    } else if (key == "max_sec") {
      r.audio_sec = number(key, v, 1, max_sec);
    } else if (key == "slice_sec") {
      r.audio_slice_sec = number(key, v, 0.5, 600);
    } else if (key == "min_sec") {
      r.audio_min_sec = number(key, v, 0, 600);
    } else if (key == "partial_sec") {
      r.partial_sec = number(key, v, 0, 600);
    } else if (key == "vad") {  // whisper.rn's energy VAD: a slice ends early at a pause
      r.use_vad = boolean(key, v);
    } else if (key == "vad_ms") {
      r.vad_ms = integer(key, v, 0, 60000);
    } else if (key == "vad_thold") {
      r.vad_thold = static_cast<float>(number(key, v, 0, 1));
    } else if (key == "vad_freq_thold") {
      r.vad_freq_thold = static_cast<float>(number(key, v, 0, 8000));
    } else if (key == "silero_vad") {  // the server's --vad-model; never a path from the client
      if (!boolean(key, v)) {
        r.vad_model_path.clear();
        continue;
      }
      if (o.vad_model.empty()) throw bad_field(key, "silero_vad: this server has no VAD model (--vad-model)");
      r.vad_model_path = o.vad_model;
    } else if (key == "vad_threshold") {
      r.vad_threshold = static_cast<float>(number(key, v, 0, 1));
    } else if (key == "vad_silence_ms") {
      r.vad_silence_ms = integer(key, v, 0, 60000);
    } else if (key != "type") {
      throw bad_field(key, key +
                               ": not a realtime session option (model, language, prompt, translate, format, "
                               "sample_rate, channels, live, max_sec, slice_sec, min_sec, partial_sec, vad, vad_ms, "
                               "vad_thold, vad_freq_thold, silero_vad, vad_threshold, vad_silence_ms)");
    }
  }
}

}  // namespace hark::server
