// hark results -> JS objects (see the header).
#include "result_to_js.h"

namespace hark_node {
namespace {

std::string segment_text(const hark::Segment& s, const ResultShape& shape) {
  return shape.speaker_turns && s.speaker_turn_next ? s.text + " [SPEAKER_TURN]" : s.text;
}

Napi::Object segment_to_js(Napi::Env env, const hark::Segment& s, const ResultShape& shape) {
  Napi::Object o = Napi::Object::New(env);
  o.Set("text", segment_text(s, shape));
  o.Set("t0", Napi::Number::New(env, double(s.t0)));
  o.Set("t1", Napi::Number::New(env, double(s.t1)));
  if (!s.words.empty()) {
    Napi::Array words = Napi::Array::New(env, s.words.size());
    for (size_t i = 0; i < s.words.size(); ++i) {
      Napi::Object w = Napi::Object::New(env);
      w.Set("word", s.words[i].text);
      w.Set("t0", Napi::Number::New(env, double(s.words[i].t0)));
      w.Set("t1", Napi::Number::New(env, double(s.words[i].t1)));
      w.Set("p", Napi::Number::New(env, s.words[i].p));
      words.Set(uint32_t(i), w);
    }
    o.Set("words", words);
  }
  if (shape.tokens) {
    Napi::Array tokens = Napi::Array::New(env, s.tokens.size());
    for (size_t i = 0; i < s.tokens.size(); ++i) {
      const hark::TokenData& tk = s.tokens[i];
      Napi::Object t = Napi::Object::New(env);
      t.Set("id", Napi::Number::New(env, tk.id));
      t.Set("text", tk.text);
      t.Set("p", Napi::Number::New(env, tk.p));
      t.Set("t0", Napi::Number::New(env, double(tk.t0)));
      t.Set("t1", Napi::Number::New(env, double(tk.t1)));
      tokens.Set(uint32_t(i), t);
    }
    o.Set("tokens", tokens);
  }
  return o;
}

Napi::Array segments_to_js(Napi::Env env, std::span<const hark::Segment> segments, const ResultShape& shape,
                           std::string* joined) {
  Napi::Array arr = Napi::Array::New(env, segments.size());
  for (size_t i = 0; i < segments.size(); ++i) {
    arr.Set(uint32_t(i), segment_to_js(env, segments[i], shape));
    *joined += segment_text(segments[i], shape);
  }
  return arr;
}

}  // namespace

Napi::Object transcript_to_js(Napi::Env env, const hark::Transcript& t, const ResultShape& shape) {
  Napi::Object o = Napi::Object::New(env);
  std::string text;
  Napi::Array segs = segments_to_js(env, t.segments, shape, &text);
  o.Set("result", text);
  o.Set("language", t.language);
  o.Set("segments", segs);
  o.Set("isAborted", Napi::Boolean::New(env, t.aborted));
  o.Set("languageProb", Napi::Number::New(env, t.language_prob));
  Napi::Object tm = Napi::Object::New(env);
  tm.Set("totalMs", Napi::Number::New(env, t.timings.total_ms));
  tm.Set("encodeMs", Napi::Number::New(env, t.timings.encode_ms));
  tm.Set("decodeMs", Napi::Number::New(env, t.timings.decode_ms));
  tm.Set("melMs", Napi::Number::New(env, t.timings.mel_ms));
  tm.Set("audioSeconds", Napi::Number::New(env, t.timings.audio_seconds));
  tm.Set("nThreads", Napi::Number::New(env, t.timings.n_threads));
  o.Set("timings", tm);
  return o;
}

Napi::Object new_segments_to_js(Napi::Env env, std::span<const hark::Segment> segments, int n_new, int total,
                                const ResultShape& shape) {
  Napi::Object o = Napi::Object::New(env);
  std::string text;
  Napi::Array segs = segments_to_js(env, segments, shape, &text);
  o.Set("nNew", Napi::Number::New(env, n_new));
  o.Set("totalNNew", Napi::Number::New(env, total));
  o.Set("result", text);
  o.Set("segments", segs);
  return o;
}

Napi::Object bench_to_js(Napi::Env env, const hark::BenchResult& b) {
  Napi::Object o = Napi::Object::New(env);
  o.Set("config", b.config);
  o.Set("nThreads", Napi::Number::New(env, b.n_threads));
  o.Set("encodeMs", Napi::Number::New(env, b.encode_ms));
  o.Set("decodeMs", Napi::Number::New(env, b.decode_ms));
  o.Set("batchMs", Napi::Number::New(env, b.batch_ms));
  o.Set("promptMs", Napi::Number::New(env, b.prompt_ms));
  return o;
}

Napi::Array vad_segments_to_js(Napi::Env env, const std::vector<hark::VadSegment>& segments) {
  Napi::Array arr = Napi::Array::New(env, segments.size());
  for (size_t i = 0; i < segments.size(); ++i) {
    Napi::Object s = Napi::Object::New(env);
    s.Set("t0", Napi::Number::New(env, double(segments[i].t0)));
    s.Set("t1", Napi::Number::New(env, double(segments[i].t1)));
    arr.Set(uint32_t(i), s);
  }
  return arr;
}

}  // namespace hark_node
