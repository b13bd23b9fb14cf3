// The transcript as files and console lines: plain text, SubRip (.srt), WebVTT (.vtt), JSON, and
// whisper.cpp's CSV and LRC.
//
// Whisper's segment texts carry their leading space (the space belongs to the first word's token),
// so the subtitle and line formats trim each segment; Transcript::text() keeps the spaces between
// segments, because that is where the words are separated.
#include <cinttypes>
#include <cstdio>
#include <string>
#include <string_view>

#include <nlohmann/json.hpp>

#include "hark/hark.hpp"
#include "runtime/text.h"

namespace hark {

namespace {

// Cue text for SRT/VTT: a blank line would end the cue early, so runs of line breaks (and the
// spaces around them) collapse to a single "\n".
std::string cue_text(std::string_view s) {
  std::string out;
  out.reserve(s.size());
  for (size_t i = 0; i < s.size();) {
    if (s[i] == '\n' || s[i] == '\r') {
      while (!out.empty() && is_space(out.back())) out.pop_back();
      while (i < s.size() && is_space(s[i])) ++i;
      out.push_back('\n');
    } else {
      out.push_back(s[i++]);
    }
  }
  return out;
}

// WebVTT cue payloads are markup: '&' and '<' start entities and tags, and "-->" may not occur.
std::string vtt_escape(std::string_view s) {
  std::string out;
  out.reserve(s.size());
  for (char c : s) {
    switch (c) {
      case '&': out += "&amp;"; break;
      case '<': out += "&lt;"; break;
      case '>': out += "&gt;"; break;  // also breaks up any "-->"
      default: out.push_back(c);
    }
  }
  return out;
}

double seconds(int64_t t_10ms) { return static_cast<double>(t_10ms) / 100.0; }

}  // namespace

std::string format_timestamp(int64_t t_10ms, bool comma) {
  // Timestamps before the start can come from an offset or rounding; no format has negative times.
  const int64_t ms = t_10ms > 0 ? t_10ms * 10 : 0;
  const int64_t h = ms / 3600000, m = ms / 60000 % 60, s = ms / 1000 % 60, frac = ms % 1000;
  char buf[48];
  std::snprintf(buf, sizeof buf, "%02" PRId64 ":%02" PRId64 ":%02" PRId64 "%c%03" PRId64, h, m, s, comma ? ',' : '.',
                frac);
  return buf;
}

std::string Transcript::text() const {
  std::string all;
  for (const Segment& s : segments) all += s.text;
  return std::string(trim(all));
}

std::string to_txt(const Transcript& t) {
  std::string out;
  for (const Segment& s : t.segments) {
    const std::string_view line = trim(s.text);
    if (line.empty()) continue;
    out.append(line);
    out.push_back('\n');
  }
  return out;
}

std::string to_srt(const Transcript& t) {
  std::string out;
  int index = 0;
  for (const Segment& s : t.segments) {
    const std::string text = cue_text(trim(s.text));
    if (text.empty()) continue;  // an empty cue would read as the end of the one before
    out += std::to_string(++index) + "\n";
    out += format_timestamp(s.t0, true) + " --> " + format_timestamp(s.t1, true) + "\n";
    out += text + "\n\n";
  }
  return out;
}

std::string to_vtt(const Transcript& t) {
  std::string out = "WEBVTT\n\n";
  for (const Segment& s : t.segments) {
    const std::string text = vtt_escape(cue_text(trim(s.text)));
    if (text.empty()) continue;
    out += format_timestamp(s.t0) + " --> " + format_timestamp(s.t1) + "\n";
    out += text + "\n\n";
  }
  return out;
}

std::string to_json(const Transcript& t) { return to_json(t, /*full=*/true); }

std::string to_json(const Transcript& t, bool full) {
  using nlohmann::ordered_json;
  ordered_json segments = ordered_json::array();
  for (const Segment& s : t.segments) {
    ordered_json tokens = ordered_json::array();
    for (const TokenData& tok : s.tokens) {
      ordered_json j = {{"id", tok.id}, {"text", tok.text}, {"p", tok.p}, {"logp", tok.logp}};
      if (tok.t0 >= 0 && tok.t1 >= 0) {
        j["t0"] = tok.t0;
        j["t1"] = tok.t1;
      }
      tokens.push_back(std::move(j));
    }
    segments.push_back({{"start", seconds(s.t0)},
                        {"end", seconds(s.t1)},
                        {"t0", s.t0},
                        {"t1", s.t1},
                        {"text", s.text},
                        {"temperature", s.temperature},
                        {"avg_logprob", s.avg_logprob},
                        {"compression_ratio", s.compression_ratio},
                        {"no_speech_prob", s.no_speech_prob},
                        {"speaker_turn_next", s.speaker_turn_next}});
    if (full) segments.back()["tokens"] = std::move(tokens);
    // OpenAI's word dicts (word, start, end, probability), with hark's 10 ms units beside.
    if (!s.words.empty()) {
      ordered_json words = ordered_json::array();
      for (const Word& w : s.words)
        words.push_back({{"word", w.text},
                         {"start", seconds(w.t0)},
                         {"end", seconds(w.t1)},
                         {"probability", w.p},
                         {"t0", w.t0},
                         {"t1", w.t1}});
      segments.back()["words"] = std::move(words);
    }
  }
  const Timings& tm = t.timings;
  const ordered_json timings = {{"load_ms", tm.load_ms},
                                {"mel_ms", tm.mel_ms},
                                {"encode_ms", tm.encode_ms},
                                {"decode_ms", tm.decode_ms},
                                {"total_ms", tm.total_ms},
                                {"n_windows", tm.n_windows},
                                {"n_threads", tm.n_threads},
                                {"n_decode_tokens", tm.n_decode_tokens},
                                {"decode_ms_per_token", tm.decode_ms_per_token()},
                                {"audio_seconds", tm.audio_seconds},
                                {"real_time_factor", tm.real_time_factor()}};
  const ordered_json doc = {
      {"language", t.language}, {"language_prob", t.language_prob}, {"n_fallback_windows", t.n_fallback_windows},
      {"text", t.text()},       {"segments", std::move(segments)},  {"timings", timings}};
  // A token's text may be part of a UTF-8 character (a character split over tokens): JSON strings
  // must be valid UTF-8, so such bytes are written as U+FFFD rather than failing the whole file.
  return doc.dump(2, ' ', false, ordered_json::error_handler_t::replace) + "\n";
}

std::string to_csv(const Transcript& t) {
  // As whisper.cpp writes it: every text quoted (it keeps its leading space), times in ms.
  std::string out = "start,end,text\n";
  for (const Segment& s : t.segments) {
    out += std::to_string(s.t0 * 10) + "," + std::to_string(s.t1 * 10) + ",\"";
    for (char c : s.text) {
      if (c == '"') out.push_back('"');
      out.push_back(c);
    }
    out += "\"\n";
  }
  return out;
}

std::string to_lrc(const Transcript& t) {
  std::string out = "[by:hark]\n";
  for (const Segment& s : t.segments) {
    // [minutes:seconds.hundredths]; minutes grow past two digits rather than wrap.
    const int64_t cs = s.t0 > 0 ? s.t0 : 0;
    char stamp[48];
    std::snprintf(stamp, sizeof stamp, "[%02" PRId64 ":%02" PRId64 ".%02" PRId64 "]", cs / 6000, cs / 100 % 60,
                  cs % 100);
    out += stamp;
    out += s.text;
    out += '\n';
  }
  return out;
}

std::string format_segment_line(const Segment& s) {
  // Appended piece by piece: GCC 12 warns falsely (-Wrestrict) on a chain starting with "[" + string.
  std::string line = "[";
  line += format_timestamp(s.t0);
  line += " --> ";
  line += format_timestamp(s.t1);
  line += "]  ";
  line += trim(s.text);
  line += '\n';
  return line;
}

}  // namespace hark
