#include "responses.h"

#include <cmath>

#include <nlohmann/json.hpp>

namespace hark::server {
namespace {

using nlohmann::json;

double seconds(int64_t t_10ms) { return static_cast<double>(t_10ms) / 100.0; }

std::string trimmed(const std::string& s) {
  const size_t b = s.find_first_not_of(" \t\r\n");
  if (b == std::string::npos) return {};
  return s.substr(b, s.find_last_not_of(" \t\r\n") - b + 1);
}

// OpenAI reports the language by name ("english"); a code hark has no name for stays a code.
std::string language_name(const std::string& code) {
  const int id = language_id(code);
  const char* name = id >= 0 ? language_name_at(id) : nullptr;
  return name ? name : code;
}

// One segment of verbose_json.
json segment_json(size_t id, const Segment& s) {
  json tokens = json::array();
  for (const TokenData& tok : s.tokens) tokens.push_back(tok.id);
  return {{"id", id},
          {"seek", s.seek},
          {"start", seconds(s.t0)},
          {"end", seconds(s.t1)},
          {"text", s.text},
          {"tokens", tokens},
          {"temperature", s.temperature},
          {"avg_logprob", s.avg_logprob},
          {"compression_ratio", s.compression_ratio},
          {"no_speech_prob", s.no_speech_prob}};
}

void add_words(const Segment& s, json& words) {
  for (const Word& w : s.words)
    words.push_back({{"word", trimmed(w.text)}, {"start", seconds(w.t0)}, {"end", seconds(w.t1)}});
}

json verbose_json(const TranscriptionRequest& r, const Transcript& t, double duration_s) {
  json j;
  j["task"] = r.params.translate ? "translate" : "transcribe";
  j["language"] = language_name(t.language);
  j["duration"] = std::round(duration_s * 100.0) / 100.0;
  j["text"] = plain_text(t);
  if (r.segments) {
    json segs = json::array();
    for (size_t i = 0; i < t.segments.size(); ++i) segs.push_back(segment_json(i, t.segments[i]));
    j["segments"] = segs;
  }
  if (r.words) {
    json words = json::array();
    for (const Segment& s : t.segments) add_words(s, words);
    j["words"] = words;
  }
  j["usage"] = {{"type", "duration"}, {"seconds", static_cast<int64_t>(std::ceil(duration_s))}};
  return j;
}

std::string event(const std::string& type, const json& data) {
  return "event: " + type + "\ndata: " + data.dump(-1, ' ', false, json::error_handler_t::replace) + "\n\n";
}

std::string dump(const json& j) { return j.dump(-1, ' ', false, json::error_handler_t::replace); }

}  // namespace

std::string plain_text(const Transcript& t) { return trimmed(t.text()); }

Body render_transcript(const TranscriptionRequest& r, const Transcript& t, double duration_s) {
  switch (r.format) {
    case Format::Text: return {"text/plain; charset=utf-8", r.api == Api::OpenAI ? plain_text(t) + "\n" : to_txt(t)};
    case Format::Srt: return {"application/x-subrip", to_srt(t)};
    case Format::Vtt: return {"text/vtt; charset=utf-8", to_vtt(t)};
    case Format::VerboseJson: return {"application/json", dump(verbose_json(r, t, duration_s))};
    case Format::Json: break;
  }
  json j{{"text", plain_text(t)}};
  if (r.api == Api::OpenAI)
    j["usage"] = {{"type", "duration"}, {"seconds", static_cast<int64_t>(std::ceil(duration_s))}};
  return {"application/json", dump(j)};
}

std::string openai_error_json(const ApiError& e) {
  json err{{"message", e.what()},
           {"type", e.type},
           {"param", e.param.empty() ? json(nullptr) : json(e.param)},
           {"code", e.code.empty() ? json(nullptr) : json(e.code)}};
  return dump(json{{"error", err}});
}

std::string whisper_cpp_error_json(const ApiError& e) {
  json j{{"error", e.what()}};
  if (!e.code.empty()) j["code"] = e.code;  // beyond whisper.cpp's form: what kind of failure it is
  return dump(j);
}

std::string sse_delta(const std::string& delta) {
  return event("transcript.text.delta", {{"type", "transcript.text.delta"}, {"delta", delta}});
}

std::string sse_done(const std::string& text) {
  return event("transcript.text.done", {{"type", "transcript.text.done"}, {"text", text}});
}

std::string sse_segment_delta(const TranscriptionRequest& r, const std::string& delta, size_t id, const Segment& s) {
  json seg = segment_json(id, s);
  if (r.words) {
    json words = json::array();
    add_words(s, words);
    seg["words"] = words;
  }
  return event("transcript.text.delta", {{"type", "transcript.text.delta"}, {"delta", delta}, {"segment", seg}});
}

std::string sse_done_verbose(const TranscriptionRequest& r, const Transcript& t, double duration_s) {
  json j = verbose_json(r, t, duration_s);
  j["type"] = "transcript.text.done";
  return event("transcript.text.done", j);
}

std::string sse_error(const ApiError& e) { return event("error", json::parse(openai_error_json(e))); }

}  // namespace hark::server
