#include "request.h"

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <cmath>
#include <cstdlib>
#include <limits>

#include "api_error.h"
#include "field_values.h"

namespace hark::server {

const std::string* Form::get(const std::string& name) const {
  auto it = fields.find(name);
  return it == fields.end() ? nullptr : &it->second;
}

namespace {

// The widest values the fields' C++ types take: the front end parses, the library checks ranges.
constexpr double kHuge = std::numeric_limits<float>::max();
constexpr int kIntMin = std::numeric_limits<int>::min();
constexpr int kIntMax = std::numeric_limits<int>::max();

Format format_of(const std::string& v) {
  if (v == "json") return Format::Json;
  if (v == "text") return Format::Text;
  if (v == "srt") return Format::Srt;
  if (v == "verbose_json") return Format::VerboseJson;
  if (v == "vtt") return Format::Vtt;
  throw bad_field("response_format",
                  "response_format: " + shown(v) + " is not one of json, text, srt, verbose_json, vtt");
}

// What both APIs share: the file, model, language, prompt, format, temperature, batch size.
TranscriptionRequest common(const Form& form, const TranscribeParams& defaults) {
  if (!form.has_file) throw bad_field("file", "file: no audio file in the request (a multipart field named 'file')");
  if (form.file.empty()) throw bad_field("file", "file: the uploaded file is empty");
  TranscriptionRequest r;
  r.params = defaults;
  r.audio = form.file;
  r.filename = form.filename;
  if (const auto* v = form.get("model")) r.model = *v;
  if (const auto* v = form.get("language"); v && !v->empty()) r.params.language = language_of(*v);
  if (const auto* v = form.get("prompt")) r.params.initial_prompt = *v;
  if (const auto* v = form.get("response_format"); v && !v->empty()) r.format = format_of(*v);
  if (const auto* v = form.get("temperature"); v && !v->empty())
    r.params.temperature = static_cast<float>(number("temperature", *v, -kHuge, kHuge));
  // Not OpenAI's, but what a long upload gains most from (faster-whisper's batched pipeline); the
  // server's limit (--max-batch-size) and VAD model are checked when the request is admitted.
  if (const auto* v = form.get("batch_size"); v && !v->empty())
    r.params.batch_size = integer("batch_size", *v, kIntMin, kIntMax);
  // VAD: the model is the server's (--vad-model); a request only switches it on (and, on
  // whisper.cpp's route, tunes it).
  if (const auto* v = form.get("vad")) r.params.vad = boolean("vad", *v);
  // faster-whisper's decoding options, hark's own fields on both routes (the library checks
  // their ranges and how they combine).
  TranscribeParams& p = r.params;
  if (const auto* v = form.get("hotwords")) p.hotwords = *v;
  if (const auto* v = form.get("prefix")) p.prefix = *v;
  if (const auto* v = form.get("multilingual")) p.multilingual = boolean("multilingual", *v);
  if (const auto* v = form.get("repetition_penalty"); v && !v->empty())
    p.repetition_penalty = static_cast<float>(number("repetition_penalty", *v, -kHuge, kHuge));
  if (const auto* v = form.get("no_repeat_ngram_size"); v && !v->empty())
    p.no_repeat_ngram_size = integer("no_repeat_ngram_size", *v, kIntMin, kIntMax);
  if (const auto* v = form.get("clip_timestamps"); v && !v->empty() && *v != "0") {
    // "start,end,start,..." in seconds, as faster-whisper takes them ("0": the whole audio).
    size_t at = 0;
    while (at <= v->size()) {
      const size_t comma = std::min(v->find(',', at), v->size());
      p.clip_timestamps.push_back(static_cast<float>(number("clip_timestamps", v->substr(at, comma - at), 0, kHuge)));
      at = comma + 1;
    }
  }
  return r;
}

}  // namespace

TranscriptionRequest parse_openai_form(const Form& form, bool translate, const TranscribeParams& defaults) {
  TranscriptionRequest r = common(form, defaults);
  r.api = Api::OpenAI;
  r.params.translate = translate;
  if (const auto* v = form.get("stream")) r.stream = boolean("stream", *v);
  if (r.stream && r.format != Format::Json && r.format != Format::Text && r.format != Format::VerboseJson)
    throw bad_field("stream",
                    "stream: server-sent events are sent for response_format json, text or verbose_json only");
  // OpenAI's SDKs send "timestamp_granularities[]"; a plain form may drop the brackets.
  bool any = false, segment = false, word = false;
  for (const char* name : {"timestamp_granularities[]", "timestamp_granularities"}) {
    auto [b, e] = form.fields.equal_range(name);
    for (auto it = b; it != e; ++it) {
      any = true;
      if (it->second == "segment")
        segment = true;
      else if (it->second == "word")
        word = true;
      else
        throw bad_field("timestamp_granularities[]",
                        "timestamp_granularities[]: " + shown(it->second) + " is not segment or word");
    }
  }
  if (any) {
    r.segments = segment;
    r.words = word;
  }
  // Words cost a pass per window: only for the format that shows them.
  r.params.word_timestamps = r.words && r.format == Format::VerboseJson;
  return r;
}

TranscriptionRequest parse_inference_form(const Form& form, const TranscribeParams& defaults) {
  TranscriptionRequest r = common(form, defaults);
  r.api = Api::WhisperCpp;
  TranscribeParams& p = r.params;
  // Only parsed here (a number, an integer that fits); the library checks every value's range
  // once, and its message names the option (TranscribeParams' name for it).
  auto num = [&](const char* f, auto apply) {
    if (const auto* v = form.get(f); v && !v->empty()) apply(number(f, *v, -kHuge, kHuge));
  };
  auto whole = [&](const char* f, auto apply) {
    if (const auto* v = form.get(f); v && !v->empty()) apply(integer(f, *v, kIntMin, kIntMax));
  };
  auto flag = [&](const char* f, auto apply) {
    if (const auto* v = form.get(f)) apply(boolean(f, *v));
  };
  num("temperature_inc", [&](double x) { p.temperature_inc = static_cast<float>(x); });
  whole("offset_t", [&](int x) { p.offset_ms = x; });
  whole("duration", [&](int x) { p.duration_ms = x; });
  whole("max_context", [&](int x) { p.max_context = x; });
  whole("max_len", [&](int x) { p.max_len = x; });
  // whisper.cpp's beam_size -1 means "greedy".
  whole("beam_size", [&](int x) { p.beam_size = x == -1 ? 1 : x; });
  whole("best_of", [&](int x) { p.best_of = x; });
  num("word_thold", [&](double x) { p.thold_pt = static_cast<float>(x); });
  num("logprob_thold", [&](double x) { p.logprob_threshold = static_cast<float>(x); });
  num("no_speech_thold", [&](double x) { p.no_speech_threshold = static_cast<float>(x); });
  flag("translate", [&](bool b) { p.translate = b; });
  flag("tinydiarize", [&](bool b) { p.tdrz_enable = b; });
  flag("split_on_word", [&](bool b) { p.split_on_word = b; });
  flag("no_timestamps", [&](bool b) { p.timestamps = !b; });
  flag("token_timestamps", [&](bool b) { p.token_timestamps = b; });
  flag("detect_language", [&](bool b) {
    if (b) p.language = "auto";
  });
  flag("carry_initial_prompt", [&](bool b) { p.carry_initial_prompt = b; });
  flag("no_context", [&](bool b) { p.no_context = b; });
  flag("suppress_non_speech", [&](bool b) { p.suppress_nst = b; });
  flag("suppress_nst", [&](bool b) { p.suppress_nst = b; });
  num("vad_threshold", [&](double x) { p.vad_params.threshold = static_cast<float>(x); });
  whole("vad_min_speech_duration_ms", [&](int x) { p.vad_params.min_speech_duration_ms = x; });
  whole("vad_min_silence_duration_ms", [&](int x) { p.vad_params.min_silence_duration_ms = x; });
  num("vad_max_speech_duration_s", [&](double x) { p.vad_params.max_speech_duration_s = static_cast<float>(x); });
  whole("vad_speech_pad_ms", [&](int x) { p.vad_params.speech_pad_ms = x; });
  num("vad_samples_overlap", [&](double x) { p.vad_params.samples_overlap = static_cast<float>(x); });
  return r;
}

}  // namespace hark::server
