// `hark serve`'s HTTP API end to end, in-process: a Service and HttpServer on a free loopback port
// with a micro model, driven with httplib's client and raw sockets. Each response format of both
// APIs, the SSE stream, every refusal with its status and error shape, garbage that must not
// stop the server, switching models, admission (queue full, timeout, client gone), metrics.
#include <gtest/gtest.h>

#include <chrono>
#include <string>
#include <thread>
#include <vector>

#include <nlohmann/json.hpp>

#include "server/connection_probe.h"
#include "server/realtime_config.h"
#include "server/responses.h"
#include "server_test_util.h"
#include "vad/vad_test_util.h"

namespace hark::server::testing {
namespace {

using nlohmann::json;

bool contains(const std::string& s, const std::string& part) { return s.find(part) != std::string::npos; }

// OpenAI's error object: {"error": {"message", "type", "param", "code"}}.
void expect_openai_error(const httplib::Result& r, int status, const std::string& param, const std::string& code) {
  ASSERT_TRUE(r) << httplib::to_string(r.error());
  EXPECT_EQ(r->status, status) << r->body;
  const json j = json::parse(r->body);
  ASSERT_TRUE(j.contains("error")) << r->body;
  const json& e = j["error"];
  EXPECT_TRUE(e["message"].is_string() && !e["message"].get<std::string>().empty()) << r->body;
  EXPECT_TRUE(e["type"].is_string()) << r->body;
  if (param.empty()) {
    EXPECT_TRUE(e["param"].is_null()) << r->body;
  } else {
    EXPECT_EQ(e["param"], param) << r->body;
  }
  if (!code.empty()) {
    EXPECT_EQ(e["code"], code) << r->body;
  }
}

// The server answers a proper request after whatever came before.
void expect_still_serving(const Running& s) {
  auto c = s.client();
  auto h = c.Get("/health");
  ASSERT_TRUE(h);
  EXPECT_EQ(h->status, 200);
  auto r = c.Post("/v1/audio/transcriptions", form(tones_wav(), {{"model", "micro"}}));
  ASSERT_TRUE(r);
  EXPECT_EQ(r->status, 200) << r->body;
}

struct SseEvent {
  std::string event;
  json data;
};

std::vector<SseEvent> parse_sse(const std::string& body) {
  std::vector<SseEvent> out;
  size_t pos = 0;
  while (pos < body.size()) {
    size_t end = body.find("\n\n", pos);
    if (end == std::string::npos) end = body.size();
    const std::string block = body.substr(pos, end - pos);
    pos = end + 2;
    SseEvent ev;
    std::istringstream lines(block);
    std::string line;
    while (std::getline(lines, line)) {
      if (line.rfind("event: ", 0) == 0) ev.event = line.substr(7);
      if (line.rfind("data: ", 0) == 0) ev.data = json::parse(line.substr(6));
    }
    if (!ev.event.empty() || !ev.data.is_null()) out.push_back(ev);
  }
  return out;
}

TEST(Server, TranscriptionJsonHasTheText) {
  Running s(test_options());
  auto c = s.client();
  auto r = c.Post("/v1/audio/transcriptions", form(tones_wav(), {{"model", "micro"}}));
  ASSERT_TRUE(r);
  ASSERT_EQ(r->status, 200) << r->body;
  EXPECT_TRUE(contains(r->get_header_value("Content-Type"), "application/json"));
  const json j = json::parse(r->body);
  ASSERT_TRUE(j["text"].is_string());
  EXPECT_EQ(j["usage"]["type"], "duration");
  EXPECT_EQ(j["usage"]["seconds"], 4);
  // The same audio through the library directly gives the same text.
  auto ctx = Context::load(micro_model());
  TranscribeParams p = test_options().decoding;
  const std::string wav = tones_wav();
  const Transcript t = ctx->transcribe(decode_audio(wav.data(), wav.size()), p);
  EXPECT_EQ(j["text"], plain_text(t));
}

TEST(Server, OpenAiIdsAndNoModelPickTheDefault) {
  Running s(test_options());
  auto c = s.client();
  for (const char* m : {"whisper-1", ""}) {
    auto r = c.Post("/v1/audio/transcriptions", m[0] ? form(tones_wav(), {{"model", m}}) : form(tones_wav()));
    ASSERT_TRUE(r);
    EXPECT_EQ(r->status, 200) << m << ": " << r->body;
  }
}

TEST(Server, EveryResponseFormat) {
  Running s(test_options());
  auto c = s.client();
  auto get = [&](const std::string& fmt) {
    auto r = c.Post("/v1/audio/transcriptions", form(tones_wav(), {{"model", "micro"}, {"response_format", fmt}}));
    EXPECT_TRUE(r);
    EXPECT_EQ(r->status, 200) << fmt << ": " << r->body;
    return r;
  };
  const std::string text = json::parse(get("json")->body)["text"];

  auto txt = get("text");
  EXPECT_TRUE(contains(txt->get_header_value("Content-Type"), "text/plain"));
  EXPECT_EQ(txt->body, text + "\n");

  auto srt = get("srt");
  EXPECT_EQ(srt->get_header_value("Content-Type"), "application/x-subrip");
  EXPECT_EQ(srt->body.rfind("1\n00:00:", 0), 0u) << srt->body;
  EXPECT_TRUE(contains(srt->body, " --> ")) << srt->body;

  auto vtt = get("vtt");
  EXPECT_TRUE(contains(vtt->get_header_value("Content-Type"), "text/vtt"));
  EXPECT_EQ(vtt->body.rfind("WEBVTT", 0), 0u) << vtt->body;

  const json v = json::parse(get("verbose_json")->body);
  EXPECT_EQ(v["task"], "transcribe");
  EXPECT_TRUE(v["language"].is_string() && v["language"].get<std::string>().size() > 2) << v["language"];  // a name
  EXPECT_DOUBLE_EQ(v["duration"].get<double>(), 4.0);
  EXPECT_EQ(v["text"], text);
  ASSERT_TRUE(v["segments"].is_array());
  ASSERT_FALSE(v["segments"].empty());
  EXPECT_FALSE(v.contains("words"));
  int id = 0;
  for (const json& seg : v["segments"]) {
    EXPECT_EQ(seg["id"], id++);
    for (const char* k : {"seek", "start", "end", "text", "tokens", "temperature", "avg_logprob", "compression_ratio",
                          "no_speech_prob"})
      EXPECT_TRUE(seg.contains(k)) << k << " missing in " << seg;
    EXPECT_LE(seg["start"].get<double>(), seg["end"].get<double>());
    EXPECT_TRUE(seg["tokens"].is_array());
  }
}

TEST(Server, WordGranularityAddsWords) {
  Running s(test_options());
  auto c = s.client();
  httplib::MultipartFormDataItems f = form(tones_wav(), {{"model", "micro"}, {"response_format", "verbose_json"}});
  f.push_back({"timestamp_granularities[]", "word", "", ""});
  f.push_back({"timestamp_granularities[]", "segment", "", ""});
  auto r = c.Post("/v1/audio/transcriptions", f);
  ASSERT_TRUE(r);
  ASSERT_EQ(r->status, 200) << r->body;
  const json v = json::parse(r->body);
  ASSERT_TRUE(v["words"].is_array());
  ASSERT_TRUE(v["segments"].is_array());
  std::string joined;
  for (const json& w : v["words"]) {
    EXPECT_TRUE(w["word"].is_string());
    EXPECT_LE(w["start"].get<double>(), w["end"].get<double>());
  }
  // Only words asked for: no segments.
  httplib::MultipartFormDataItems g = form(tones_wav(), {{"response_format", "verbose_json"}});
  g.push_back({"timestamp_granularities[]", "word", "", ""});
  auto r2 = c.Post("/v1/audio/transcriptions", g);
  ASSERT_TRUE(r2);
  const json v2 = json::parse(r2->body);
  EXPECT_TRUE(v2.contains("words"));
  EXPECT_FALSE(v2.contains("segments"));
}

TEST(Server, TranslationsReportTheTask) {
  Running s(test_options());
  auto c = s.client();
  auto r = c.Post("/v1/audio/translations", form(tones_wav(), {{"response_format", "verbose_json"}}));
  ASSERT_TRUE(r);
  ASSERT_EQ(r->status, 200) << r->body;
  EXPECT_EQ(json::parse(r->body)["task"], "translate");
}

TEST(Server, StreamSendsDeltasThenDone) {
  Running s(test_options());
  auto c = s.client();
  const std::string text = json::parse(c.Post("/v1/audio/transcriptions", form(tones_wav()))->body)["text"];
  auto r = c.Post("/v1/audio/transcriptions", form(tones_wav(), {{"model", "micro"}, {"stream", "true"}}));
  ASSERT_TRUE(r);
  ASSERT_EQ(r->status, 200) << r->body;
  EXPECT_TRUE(contains(r->get_header_value("Content-Type"), "text/event-stream"));
  const std::vector<SseEvent> events = parse_sse(r->body);
  ASSERT_GE(events.size(), 1u) << r->body;
  std::string deltas;
  for (size_t i = 0; i + 1 < events.size(); ++i) {
    EXPECT_EQ(events[i].event, "transcript.text.delta");
    EXPECT_EQ(events[i].data["type"], "transcript.text.delta");
    deltas += events[i].data["delta"].get<std::string>();
  }
  const SseEvent& done = events.back();
  EXPECT_EQ(done.event, "transcript.text.done");
  EXPECT_EQ(done.data["type"], "transcript.text.done");
  EXPECT_EQ(done.data["text"], text);
  if (!text.empty()) {
    EXPECT_GT(events.size(), 1u);
  }
  EXPECT_EQ(deltas.substr(0, text.size()), text);
}

// hark's addition: with response_format verbose_json each delta carries its segment and the done
// event is the whole verbose_json (the page at / shows segments with times as they come). 70 s
// of audio: three windows, so several events are written while the next ones are announced
// (a wake-up that came during a write was once lost, and the stream never ended). Five times.
TEST(Server, StreamVerboseJsonCarriesEachSegment) {
  Running s(test_options());
  auto c = s.client();
  c.set_read_timeout(60, 0);
  const std::string wav = tones_wav(70);
  auto plain = c.Post("/v1/audio/transcriptions", form(wav, {{"response_format", "verbose_json"}}));
  ASSERT_TRUE(plain);
  ASSERT_EQ(plain->status, 200) << plain->body;
  const json want = json::parse(plain->body)["segments"];
  ASSERT_GE(want.size(), 2u) << plain->body;
  for (int round = 0; round < 5; ++round) {
    auto r = c.Post("/v1/audio/transcriptions", form(wav, {{"stream", "true"}, {"response_format", "verbose_json"}}));
    ASSERT_TRUE(r) << "round " << round << ": the stream did not end";
    ASSERT_EQ(r->status, 200) << r->body;
    const std::vector<SseEvent> events = parse_sse(r->body);
    ASSERT_EQ(events.size(), want.size() + 1) << r->body;
    for (size_t i = 0; i < want.size(); ++i) {
      const json& seg = events[i].data["segment"];
      EXPECT_EQ(seg["id"], i);
      EXPECT_EQ(seg["start"], want[i]["start"]);
      EXPECT_EQ(seg["end"], want[i]["end"]);
      EXPECT_EQ(seg["text"], want[i]["text"]);
    }
    const json& done = events.back().data;
    EXPECT_EQ(done["type"], "transcript.text.done");
    EXPECT_EQ(done["segments"], want);
    EXPECT_EQ(done["text"], json::parse(plain->body)["text"]);
  }
}

// The page at / and its files: no key needed (the page asks for it), a strict CSP; --no-ui: 404.
TEST(Server, ServesThePageWithoutAKeyUnlessNoUi) {
  ServerOptions o = test_options();
  o.api_keys = {"secret"};
  {
    Running s(o);
    auto c = s.client();
    auto page = c.Get("/");
    ASSERT_TRUE(page);
    EXPECT_EQ(page->status, 200);
    EXPECT_TRUE(contains(page->get_header_value("Content-Type"), "text/html"));
    const std::string csp = page->get_header_value("Content-Security-Policy");
    EXPECT_TRUE(contains(csp, "script-src 'self'")) << csp;
    EXPECT_FALSE(contains(csp, "unsafe-inline")) << csp;
    EXPECT_TRUE(contains(page->body, "/ui/app.js"));
    auto js = c.Get("/ui/app.js");
    ASSERT_TRUE(js);
    EXPECT_EQ(js->status, 200);
    EXPECT_TRUE(contains(js->get_header_value("Content-Type"), "text/javascript"));
    EXPECT_EQ(c.Get("/ui/nothing.js")->status, 401);  // not a file of the page: an API route, keyed
    EXPECT_EQ(c.Post("/", "x", "text/plain")->status, 401);
    EXPECT_EQ(c.Get("/v1/models")->status, 401);
  }
  o.ui = false;
  Running s(o);
  auto c = s.client();
  c.set_bearer_token_auth("secret");
  EXPECT_EQ(c.Get("/")->status, 404);
  EXPECT_EQ(c.Get("/ui/app.js")->status, 404);
}

// What a client needs to offer a model's options: its languages, translation, VAD.
TEST(Server, ModelsSayTheirLanguagesAndVad) {
  Running s(test_options());
  auto c = s.client();
  const json m = json::parse(c.Get("/v1/models/micro")->body);
  EXPECT_EQ(m["id"], "micro");
  EXPECT_EQ(m["multilingual"], true);
  ASSERT_GT(m["languages"].size(), 50u);
  EXPECT_EQ(m["languages"][0], (json{{"code", "en"}, {"name", "english"}}));
  EXPECT_EQ(m["vad"], false);
  // OpenAI's route takes vad as whisper.cpp's does; this server has no VAD model.
  expect_openai_error(c.Post("/v1/audio/transcriptions", form(tones_wav(), {{"vad", "true"}})), 400, "vad", "");
}

// faster-whisper's decoding options as hark's fields, on both routes.
TEST(Server, FasterWhisperOptionsAsFields) {
  Running s(test_options());
  auto c = s.client();
  auto r = c.Post("/v1/audio/transcriptions",
                  form(tones_wav(), {{"language", "en"}, {"prefix", "Hello hark"}, {"hotwords", "Kubernetes"}}));
  ASSERT_TRUE(r);
  ASSERT_EQ(r->status, 200) << r->body;
  const std::string text = json::parse(r->body)["text"];
  EXPECT_EQ(text.rfind("Hello hark", 0), 0u) << text;
  EXPECT_EQ(text.find("Kubernetes"), std::string::npos) << text;
  // Only the clip [1, 2] s is transcribed.
  r = c.Post("/inference", form(tones_wav(), {{"response_format", "verbose_json"},
                                              {"clip_timestamps", "1,2"},
                                              {"repetition_penalty", "1.2"},
                                              {"no_repeat_ngram_size", "3"},
                                              {"multilingual", "true"}}));
  ASSERT_TRUE(r);
  ASSERT_EQ(r->status, 200) << r->body;
  for (const json& seg : json::parse(r->body)["segments"]) {
    EXPECT_GE(seg["start"].get<double>(), 1.0 - 1e-6) << seg;
    EXPECT_LE(seg["end"].get<double>(), 2.0 + 1e-6) << seg;
  }
  expect_openai_error(c.Post("/v1/audio/transcriptions", form(tones_wav(), {{"repetition_penalty", "lots"}})), 400,
                      "repetition_penalty", "");
  expect_openai_error(c.Post("/v1/audio/transcriptions", form(tones_wav(), {{"repetition_penalty", "0"}})), 400,
                      "repetition_penalty", "");
  expect_openai_error(c.Post("/v1/audio/transcriptions", form(tones_wav(), {{"clip_timestamps", "1,x"}})), 400,
                      "clip_timestamps", "");
  expect_openai_error(c.Post("/v1/audio/transcriptions", form(tones_wav(), {{"multilingual", "maybe"}})), 400,
                      "multilingual", "");
}

TEST(Server, BadFieldsAre400NamingTheField) {
  Running s(test_options());
  auto c = s.client();
  httplib::MultipartFormDataItems no_file{{"model", "micro", "", ""}};
  expect_openai_error(c.Post("/v1/audio/transcriptions", no_file), 400, "file", "");
  expect_openai_error(c.Post("/v1/audio/transcriptions", form("", {})), 400, "file", "");
  expect_openai_error(c.Post("/v1/audio/transcriptions", form(tones_wav(), {{"response_format", "xml"}})), 400,
                      "response_format", "");
  expect_openai_error(c.Post("/v1/audio/transcriptions", form(tones_wav(), {{"temperature", "hot"}})), 400,
                      "temperature", "");
  // The library's range (finite, >= 0; no cap at 1: a temperature above 1 is a valid sampling
  // temperature), checked once for every front end, its message naming the field.
  expect_openai_error(c.Post("/v1/audio/transcriptions", form(tones_wav(), {{"temperature", "-1"}})), 400,
                      "temperature", "");
  expect_openai_error(c.Post("/v1/audio/transcriptions", form(tones_wav(), {{"language", "klingon"}})), 400, "language",
                      "");
  expect_openai_error(c.Post("/v1/audio/transcriptions", form(tones_wav(), {{"stream", "maybe"}})), 400, "stream", "");
  expect_openai_error(
      c.Post("/v1/audio/transcriptions", form(tones_wav(), {{"stream", "true"}, {"response_format", "srt"}})), 400,
      "stream", "");
  httplib::MultipartFormDataItems g = form(tones_wav());
  g.push_back({"timestamp_granularities[]", "sentence", "", ""});
  expect_openai_error(c.Post("/v1/audio/transcriptions", g), 400, "timestamp_granularities[]", "");
  // Not a form at all.
  expect_openai_error(c.Post("/v1/audio/transcriptions", "{}", "application/json"), 400, "file", "");
  expect_still_serving(s);
}

TEST(Server, UnknownModelIs404) {
  Running s(test_options());
  auto c = s.client();
  expect_openai_error(c.Post("/v1/audio/transcriptions", form(tones_wav(), {{"model", "large-v9"}})), 404, "model",
                      "model_not_found");
  auto m = c.Get("/v1/models/large-v9");
  ASSERT_TRUE(m);
  EXPECT_EQ(m->status, 404);
}

TEST(Server, GarbageAudioIs415AndTheServerGoesOn) {
  Running s(test_options());
  auto c = s.client();
  std::string noise(20000, '\0');
  uint32_t x = 12345;
  for (char& ch : noise) ch = static_cast<char>((x = x * 1664525u + 1013904223u) >> 24);
  expect_openai_error(c.Post("/v1/audio/transcriptions", form(noise)), 415, "file", "invalid_file_format");
  // A WAV cut in the middle of its header is no audio either.
  expect_openai_error(c.Post("/v1/audio/transcriptions", form(tones_wav().substr(0, 30))), 415, "file",
                      "invalid_file_format");
  expect_still_serving(s);
}

TEST(Server, TruncatedAndMalformedRequestsDoNotStopTheServer) {
  Running s(test_options());
  const std::string wav = tones_wav();
  const std::string boundary = "----harktest";
  std::string body = "--" + boundary + "\r\nContent-Disposition: form-data; name=\"file\"; filename=\"a.wav\"\r\n" +
                     "Content-Type: audio/wav\r\n\r\n" + wav + "\r\n--" + boundary + "--\r\n";
  {  // The body stops halfway although Content-Length promised all of it; the client then leaves.
    RawConnection raw(s.port());
    ASSERT_GE(raw.fd, 0);
    raw.send_all(
        "POST /v1/audio/transcriptions HTTP/1.1\r\nHost: x\r\nContent-Type: multipart/form-data; boundary=" + boundary +
        "\r\nContent-Length: " + std::to_string(body.size()) + "\r\n\r\n" + body.substr(0, body.size() / 2));
  }
  {  // A multipart body without its closing boundary.
    RawConnection raw(s.port());
    const std::string cut = body.substr(0, body.size() - boundary.size() - 8);
    raw.send_all(
        "POST /v1/audio/transcriptions HTTP/1.1\r\nHost: x\r\nConnection: close\r\nContent-Type: "
        "multipart/form-data; boundary=" +
        boundary + "\r\nContent-Length: " + std::to_string(cut.size()) + "\r\n\r\n" + cut);
    const std::string answer = raw.read_all();
    EXPECT_EQ(answer.rfind("HTTP/1.1 400", 0), 0u) << answer.substr(0, 200);
  }
  {  // Not HTTP.
    RawConnection raw(s.port());
    raw.send_all(std::string("\x16\x03\x01 hello? \r\n\r\n", 16));
    const std::string answer = raw.read_all();
    EXPECT_EQ(answer.rfind("HTTP/1.1 400", 0), 0u) << answer.substr(0, 200);
  }
  auto nf = s.client().Get("/no/such/route");
  ASSERT_TRUE(nf);
  EXPECT_EQ(nf->status, 404);
  EXPECT_TRUE(json::parse(nf->body).contains("error"));
  expect_still_serving(s);
}

TEST(Server, LimitsAre413) {
  ServerOptions o = test_options();
  o.max_upload_mb = 0.05;  // 52 KB: the 4 s WAV (128 KB) is too large
  {
    Running s(o);
    auto r = s.client().Post("/v1/audio/transcriptions", form(tones_wav()));
    ASSERT_TRUE(r);
    EXPECT_EQ(r->status, 413);
    EXPECT_TRUE(json::parse(r->body).contains("error")) << r->body;
  }
  o = test_options();
  o.max_audio_sec = 2;
  Running s(o);
  expect_openai_error(s.client().Post("/v1/audio/transcriptions", form(tones_wav())), 413, "file", "audio_too_long");
  auto r = s.client().Post("/v1/audio/transcriptions", form(tones_wav(1.5)));
  ASSERT_TRUE(r);
  EXPECT_EQ(r->status, 200) << r->body;
}

TEST(Server, ApiKeysGuardEveryRouteButHealth) {
  ServerOptions o = test_options();
  o.api_keys = {"sk-one", "sk-two"};
  Running s(o);
  auto c = s.client();
  expect_openai_error(c.Post("/v1/audio/transcriptions", form(tones_wav())), 401, "", "invalid_api_key");
  c.set_bearer_token_auth("sk-wrong");
  expect_openai_error(c.Post("/v1/audio/transcriptions", form(tones_wav())), 401, "", "invalid_api_key");
  auto models = c.Get("/v1/models");
  ASSERT_TRUE(models);
  EXPECT_EQ(models->status, 401);
  c.set_bearer_token_auth("sk-two");
  auto ok = c.Post("/v1/audio/transcriptions", form(tones_wav()));
  ASSERT_TRUE(ok);
  EXPECT_EQ(ok->status, 200) << ok->body;
  httplib::Client anon("127.0.0.1", s.port());
  auto h = anon.Get("/health");
  ASSERT_TRUE(h);
  EXPECT_EQ(h->status, 200);
}

TEST(Server, CorsHeadersWhenEnabled) {
  ServerOptions o = test_options();
  o.cors_origin = "*";
  o.api_keys = {"sk-one"};
  Running s(o);
  auto c = s.client();
  auto pre = c.Options("/v1/audio/transcriptions");  // a browser's preflight carries no key
  ASSERT_TRUE(pre);
  EXPECT_EQ(pre->status, 204);
  EXPECT_EQ(pre->get_header_value("Access-Control-Allow-Origin"), "*");
  EXPECT_TRUE(contains(pre->get_header_value("Access-Control-Allow-Headers"), "Authorization"));
  auto h = c.Get("/health");
  EXPECT_EQ(h->get_header_value("Access-Control-Allow-Origin"), "*");
  Running plain(test_options());
  EXPECT_FALSE(plain.client().Get("/health")->has_header("Access-Control-Allow-Origin"));
}

// The only state is held by a request the test prepared itself, so an HTTP request can only wait.
TEST(Server, FullQueueIs503WithRetryAfter) {
  ServerOptions o = test_options();
  o.queue_size = 0;
  Running s(o);
  TranscriptionRequest held;
  const std::string wav = tones_wav();
  held.audio = wav;
  Prepared p = s.service->prepare(held, Clock::time_point::max(), {});
  auto r = s.client().Post("/v1/audio/transcriptions", form(wav));
  expect_openai_error(r, 503, "", "queue_full");
  EXPECT_EQ(r->get_header_value("Retry-After"), "1");
  p.lease.reset();
  expect_still_serving(s);
}

TEST(Server, AQueuedRequestPastItsTimeoutIs504) {
  ServerOptions o = test_options();
  o.timeout_sec = 0.2;
  Running s(o);
  TranscriptionRequest held;
  const std::string wav = tones_wav();
  held.audio = wav;
  Prepared p = s.service->prepare(held, Clock::time_point::max(), {});
  expect_openai_error(s.client().Post("/v1/audio/transcriptions", form(wav)), 504, "", "timeout");
  p.lease.reset();
  EXPECT_EQ(s.client().Get("/health")->status, 200);  // (a transcription would outlast 0.2 s)
}

// Polls the metrics until `line` shows up (the server notices a closed connection within ~20 ms).
bool metrics_show(const Running& s, const std::string& line) {
  for (int i = 0; i < 500; ++i) {
    auto m = s.client().Get("/metrics");
    if (m && contains(m->body, line)) return true;
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  return false;
}

TEST(Server, AClientThatLeavesWhileQueuedIsDropped) {
  Running s(test_options());
  TranscriptionRequest held;
  const std::string wav = tones_wav();
  held.audio = wav;
  Prepared p = s.service->prepare(held, Clock::time_point::max(), {});
  {
    RawConnection raw(s.port());
    const std::string boundary = "----harktest";
    const std::string body = "--" + boundary +
                             "\r\nContent-Disposition: form-data; name=\"file\"; filename=\"a.wav\"\r\n\r\n" + wav +
                             "\r\n--" + boundary + "--\r\n";
    raw.send_all("POST /v1/audio/transcriptions HTTP/1.1\r\nHost: x\r\nContent-Type: multipart/form-data; boundary=" +
                 boundary + "\r\nContent-Length: " + std::to_string(body.size()) + "\r\n\r\n" + body);
    // Wait until it is queued, then leave.
    for (int i = 0; i < 500 && s.service->health().queued == 0; ++i)
      std::this_thread::sleep_for(std::chrono::milliseconds(10));
    ASSERT_EQ(s.service->health().queued, 1);
  }
  EXPECT_TRUE(metrics_show(s, "hark_requests_rejected_total{reason=\"client_closed\"} 1"));
  EXPECT_EQ(s.service->health().queued, 0);
  p.lease.reset();
  expect_still_serving(s);
}

// Five minutes of audio keep the micro model busy for many windows: the client leaves while
// its job runs, and the job is aborted (counted as client_closed, no transcription completed).
TEST(Server, AClientThatLeavesMidJobAbortsIt) {
  Running s(test_options());
  const std::string wav = tones_wav(300);
  {
    RawConnection raw(s.port());
    const std::string boundary = "----harktest";
    const std::string body = "--" + boundary +
                             "\r\nContent-Disposition: form-data; name=\"file\"; filename=\"a.wav\"\r\n\r\n" + wav +
                             "\r\n--" + boundary + "--\r\n";
    raw.send_all("POST /v1/audio/transcriptions HTTP/1.1\r\nHost: x\r\nContent-Type: multipart/form-data; boundary=" +
                 boundary + "\r\nContent-Length: " + std::to_string(body.size()) + "\r\n\r\n" + body);
    for (int i = 0; i < 3000 && s.service->health().running == 0; ++i)
      std::this_thread::sleep_for(std::chrono::milliseconds(10));
    ASSERT_EQ(s.service->health().running, 1);
  }
  EXPECT_TRUE(metrics_show(s, "hark_requests_rejected_total{reason=\"client_closed\"} 1"));
  for (int i = 0; i < 500 && s.service->health().running > 0; ++i)
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  EXPECT_EQ(s.service->health().running, 0);
  auto m = s.client().Get("/metrics");
  EXPECT_TRUE(contains(m->body, "hark_transcriptions_total 0")) << m->body;
  expect_still_serving(s);
}

TEST(Server, ModelsListAndLoad) {
  ServerOptions o = test_options();
  const std::string second = micro_model("ggml-second.bin");
  o.models.push_back({"other", micro_model("other.bin")});
  o.load_allow = {scratch().string()};
  Running s(o);
  auto c = s.client();
  const json list = json::parse(c.Get("/v1/models")->body);
  EXPECT_EQ(list["object"], "list");
  ASSERT_EQ(list["data"].size(), 2u);
  EXPECT_EQ(list["data"][0]["id"], "micro");
  EXPECT_EQ(list["data"][1]["id"], "other");
  EXPECT_EQ(json::parse(c.Get("/v1/models/other")->body)["object"], "model");
  // The model field picks a model.
  auto r = c.Post("/v1/audio/transcriptions", form(tones_wav(), {{"model", "other"}}));
  EXPECT_EQ(r->status, 200) << r->body;

  auto load = [&](const std::string& model) {
    return c.Post("/load", httplib::MultipartFormDataItems{{"model", model, "", ""}});
  };
  // whisper.cpp's /load: a loaded model by name becomes the default.
  auto l1 = load("other");
  ASSERT_TRUE(l1);
  EXPECT_EQ(l1->status, 200) << l1->body;
  EXPECT_EQ(l1->body, "Load was successful!");
  EXPECT_EQ(json::parse(c.Get("/health")->body)["default_model"], "other");
  // A path inside --load-allow loads (named after the file).
  auto l2 = load(second);
  EXPECT_EQ(l2->status, 200) << l2->body;
  EXPECT_EQ(json::parse(c.Get("/health")->body)["default_model"], "second");
  EXPECT_EQ(c.Post("/v1/audio/transcriptions", form(tones_wav()))->status, 200);
  // Paths elsewhere, or through "..", are refused; whisper.cpp's error shape.
  for (const std::string& bad :
       {std::string("/etc/passwd"), (scratch() / ".." / "x.bin").string(), std::string("/dev/zero")}) {
    auto l = load(bad);
    ASSERT_TRUE(l);
    EXPECT_EQ(l->status, 403) << bad;
    EXPECT_TRUE(json::parse(l->body)["error"].is_string()) << l->body;
  }
  auto none = c.Post("/load", httplib::MultipartFormDataItems{});
  EXPECT_EQ(none->status, 400);
  // A file in the allowed folder that is not a model: 400, the server keeps its models.
  std::ofstream(scratch() / "junk.bin") << "not a model";
  EXPECT_EQ(load((scratch() / "junk.bin").string())->status, 400);
  // Named by a relative path: the error says it that way, never with the server's absolute path.
  const std::string rel = fs::relative(scratch() / "junk.bin").string();
  auto lr = load(rel);
  ASSERT_TRUE(lr);
  EXPECT_EQ(lr->status, 400) << lr->body;
  EXPECT_NE(lr->body.find(rel), std::string::npos) << lr->body;
  EXPECT_EQ(lr->body.find(" " + scratch().string()), std::string::npos) << lr->body;  // (rel may end in it)
  EXPECT_EQ(json::parse(c.Get("/health")->body)["default_model"], "second");
}

TEST(Server, LoadRefusesEveryPathByDefault) {
  Running s(test_options());
  auto l = s.client().Post("/load", httplib::MultipartFormDataItems{{"model", micro_model(), "", ""}});
  ASSERT_TRUE(l);
  EXPECT_EQ(l->status, 403);
}

TEST(Server, WhisperCppInference) {
  Running s(test_options());
  auto c = s.client();
  auto r = c.Post("/inference",
                  form(tones_wav(), {{"temperature", "0.0"}, {"temperature_inc", "0.0"}, {"response_format", "json"}}));
  ASSERT_TRUE(r);
  ASSERT_EQ(r->status, 200) << r->body;
  const json j = json::parse(r->body);
  EXPECT_TRUE(j["text"].is_string());
  EXPECT_FALSE(j.contains("usage"));
  auto t = c.Post(
      "/inference",
      form(tones_wav(),
           {{"response_format", "text"}, {"no_timestamps", "true"}, {"beam_size", "-1"}, {"translate", "false"}}));
  ASSERT_EQ(t->status, 200) << t->body;
  auto v = c.Post("/inference", form(tones_wav(), {{"response_format", "verbose_json"}}));
  EXPECT_TRUE(json::parse(v->body).contains("segments"));
  for (const char* fmt : {"srt", "vtt"})
    EXPECT_EQ(c.Post("/inference", form(tones_wav(), {{"response_format", fmt}}))->status, 200);
  // Errors in whisper.cpp's shape: {"error": "message"}.
  auto bad = c.Post("/inference", form(tones_wav(), {{"beam_size", "many"}}));
  EXPECT_EQ(bad->status, 400);
  EXPECT_TRUE(contains(json::parse(bad->body)["error"].get<std::string>(), "beam_size")) << bad->body;
  auto nofile = c.Post("/inference", httplib::MultipartFormDataItems{{"temperature", "0", "", ""}});
  EXPECT_EQ(nofile->status, 400);
  EXPECT_TRUE(json::parse(nofile->body)["error"].is_string());
  auto vad = c.Post("/inference", form(tones_wav(), {{"vad", "true"}}));
  EXPECT_EQ(vad->status, 400) << vad->body;  // no --vad-model on this server
}

// The shared speech clip twice, 31 s of silence between (so the VAD makes at least two chunks),
// as WAV bytes; "" without ../shared/vad.
std::string two_clips_wav() {
  const std::string clip_path = hark::testing::shared_vad_path("vad-three-clips.wav");
  if (clip_path.empty()) return {};
  const fs::path p = scratch() / "two-clips.wav";
  if (!fs::exists(p)) {
    const std::vector<float> clip = audio::load_file(clip_path);
    std::vector<float> a(audio::kSampleRate, 0.0f);
    a.insert(a.end(), clip.begin(), clip.end());
    a.insert(a.end(), static_cast<size_t>(31 * audio::kSampleRate), 0.0f);
    a.insert(a.end(), clip.begin(), clip.end());
    audio::WavWriter w(p.string(), audio::kSampleRate);
    w.write(a.data(), a.size());
    w.close();
  }
  return read_bytes(p);
}

// batch_size: the batched pipeline on the server's VAD model, on both APIs, the same segments at
// any batch size (chunks are independent); refused above --max-batch-size or without a VAD model.
TEST(Server, BatchSizeRunsTheBatchedPipeline) {
  const std::string vad_model = hark::testing::silero_model_path();
  const std::string wav = two_clips_wav();
  if (vad_model.empty() || wav.empty()) GTEST_SKIP() << "../shared/vad (Silero model and clip) not found";
  ServerOptions o = test_options();
  o.vad_model = vad_model;
  o.max_batch_size = 3;
  Running s(o);
  auto c = s.client();
  auto segments_at = [&](const char* batch) {
    auto r = c.Post("/inference", form(wav, {{"batch_size", batch}, {"response_format", "verbose_json"}}));
    EXPECT_TRUE(r);
    if (!r) return json();
    EXPECT_EQ(r->status, 200) << r->body;
    return json::parse(r->body)["segments"];
  };
  const json two = segments_at("2");
  ASSERT_TRUE(two.is_array());
  ASSERT_FALSE(two.empty());
  // Chunk times are on the upload's timeline: the second clip starts past the 31 s pause.
  EXPECT_GT(two.back()["end"].get<double>(), 31.0) << two.dump();
  EXPECT_EQ(segments_at("3"), two);
  auto openai = c.Post("/v1/audio/transcriptions", form(wav, {{"model", "micro"}, {"batch_size", "2"}}));
  ASSERT_TRUE(openai);
  EXPECT_EQ(openai->status, 200) << openai->body;
  expect_openai_error(c.Post("/v1/audio/transcriptions", form(wav, {{"batch_size", "4"}})), 400, "batch_size", "");
  expect_openai_error(c.Post("/v1/audio/transcriptions", form(wav, {{"batch_size", "0"}})), 400, "batch_size", "");
  expect_openai_error(c.Post("/v1/audio/transcriptions", form(wav, {{"batch_size", "two"}})), 400, "batch_size", "");
  auto over = c.Post("/inference", form(wav, {{"batch_size", "4"}}));
  ASSERT_TRUE(over);
  EXPECT_EQ(over->status, 400);
  EXPECT_TRUE(contains(over->body, "--max-batch-size")) << over->body;
  expect_still_serving(s);

  Running plain(test_options());  // no --vad-model
  auto c2 = plain.client();
  expect_openai_error(c2.Post("/v1/audio/transcriptions", form(wav, {{"batch_size", "2"}})), 400, "batch_size", "");
  auto novad = c2.Post("/inference", form(wav, {{"batch_size", "2"}}));
  ASSERT_TRUE(novad);
  EXPECT_EQ(novad->status, 400);
  EXPECT_TRUE(contains(novad->body, "--vad-model")) << novad->body;
}

// Many uploads at once on 4 states: every request is answered exactly once, none is lost, and
// each text equals what the same file gives alone (same model, options and threads).
TEST(Server, ConcurrentUploadsAllAnsweredWithTheirOwnText) {
  ServerOptions o = test_options();
  o.parallel = 4;
  o.queue_size = 64;
  Running s(o);
  const std::vector<std::string> clips = {tones_wav(1.0), tones_wav(1.5), tones_wav(2.0)};
  std::vector<std::string> alone;
  for (const std::string& c : clips) {
    auto r = s.client().Post("/v1/audio/transcriptions", form(c));
    ASSERT_EQ(r->status, 200) << r->body;
    alone.push_back(json::parse(r->body)["text"]);
  }
  constexpr int kRequests = 24;
  std::vector<int> status(kRequests, 0);
  std::vector<std::string> text(kRequests);
  std::vector<std::thread> threads;
  for (int i = 0; i < kRequests; ++i)
    threads.emplace_back([&, i] {
      auto r = s.client().Post("/v1/audio/transcriptions", form(clips[i % clips.size()]));
      if (!r) return;
      status[i] = r->status;
      if (r->status == 200) text[i] = json::parse(r->body)["text"];
    });
  for (auto& t : threads) t.join();
  for (int i = 0; i < kRequests; ++i) {
    EXPECT_EQ(status[i], 200) << "request " << i;
    EXPECT_EQ(text[i], alone[i % clips.size()]) << "request " << i;
  }
  // A request is counted once its answer is written, which may be just after the client has it.
  for (const std::string& line : {"hark_transcriptions_total " + std::to_string(kRequests + clips.size()),
                                  std::string("hark_queue_length 0"), std::string("hark_jobs_running 0")})
    EXPECT_TRUE(metrics_show(s, line)) << "missing: " << line << "\n" << s.client().Get("/metrics")->body;
}

TEST(Server, HealthAndMetrics) {
  Running s(test_options());
  auto c = s.client();
  const json h = json::parse(c.Get("/health")->body);
  EXPECT_EQ(h["status"], "ok");
  EXPECT_EQ(h["ready"], true);
  EXPECT_EQ(h["models"], json::array({"micro"}));
  EXPECT_EQ(h["jobs_running"], 0);
  EXPECT_EQ(h["jobs_queued"], 0);
  ASSERT_EQ(c.Post("/v1/audio/transcriptions", form(tones_wav()))->status, 200);
  ASSERT_EQ(c.Post("/v1/audio/transcriptions", form("x"))->status, 415);
  c.Get("/some/garbage/path");
  auto m = c.Get("/metrics");
  ASSERT_TRUE(m);
  EXPECT_TRUE(contains(m->get_header_value("Content-Type"), "text/plain"));
  // A request is counted once its answer is written, which may be just after the client has it.
  for (const char* line : {"hark_requests_total{route=\"/v1/audio/transcriptions\",status=\"200\"} 1",
                           "hark_requests_total{route=\"/v1/audio/transcriptions\",status=\"415\"} 1",
                           "hark_requests_total{route=\"other\",status=\"404\"} 1", "hark_request_errors_total 2",
                           "hark_audio_seconds_total 4", "hark_transcriptions_total 1", "hark_windows_total 1",
                           "hark_fallback_windows_total 0", "hark_jobs_running 0", "hark_queue_length 0",
                           "hark_models_loaded 1", "# TYPE hark_real_time_factor gauge"})
    EXPECT_TRUE(metrics_show(s, line)) << "missing: " << line << "\n" << c.Get("/metrics")->body;
  // With fallback (whisper.cpp's route, temperature_inc), the random model's window falls back.
  ASSERT_EQ(c.Post("/inference", form(tones_wav(), {{"temperature_inc", "0.5"}, {"best_of", "1"}}))->status, 200);
  for (const char* line : {"hark_windows_total 2", "hark_fallback_windows_total 1"})
    EXPECT_TRUE(metrics_show(s, line)) << "missing: " << line << "\n" << c.Get("/metrics")->body;
}

TEST(Server, StopsGracefullyWithNothingRunning) {
  auto s = std::make_unique<Running>(test_options());
  const int port = s->port();
  s.reset();
  httplib::Client c("127.0.0.1", port);
  c.set_connection_timeout(1, 0);
  EXPECT_FALSE(c.Get("/health"));  // nobody listens any more
}

TEST(Server, StartFailsClearlyOnABadAddress) {
  ServerOptions o = test_options();
  o.host = "203.0.113.7";  // TEST-NET-3: not an address of this machine, nothing is sent
  Service svc(o);
  HttpServer http(svc);
  try {
    http.start();
    FAIL() << "bound to a foreign address";
  } catch (const Error& e) {
    EXPECT_TRUE(contains(e.what(), "203.0.113.7")) << e.what();
  }
}

TEST(Server, ServiceRefusesBadOptions) {
  ServerOptions o = test_options();
  o.models.clear();
  EXPECT_THROW(Service{o}, Error);
  o = test_options();
  o.models.push_back({"micro", micro_model()});
  EXPECT_THROW(Service{o}, Error);  // two models of one name
  o = test_options();
  o.models = {{"x", (scratch() / "missing.bin").string()}};
  EXPECT_THROW(Service{o}, Error);
  o = test_options();
  o.decoding.batch_size = 2;
  EXPECT_THROW(Service{o}, Error);  // batching without --vad-model
  o.vad_model = "silero.bin";
  o.max_batch_size = 1;
  EXPECT_THROW(Service{o}, Error);  // above --max-batch-size
  // A server-wide --batch-size is for uploads; realtime slices stay single windows.
  o = test_options();
  o.decoding.batch_size = 4;
  EXPECT_EQ(default_realtime_config(o).transcribe.batch_size, 1);
  for (int bad : {0, kMaxBatchSize + 1}) {
    o = test_options();
    o.max_batch_size = bad;
    EXPECT_THROW(Service{o}, Error);
  }
}

TEST(ServerProbe, SeesAConnectionClose) {
  int sv[2];
  ASSERT_EQ(socketpair(AF_UNIX, SOCK_STREAM, 0, sv), 0);
  const ConnectionProbe probe(sv[0]);
  EXPECT_FALSE(probe.closed());
  ASSERT_EQ(::write(sv[1], "GET", 3), 3);  // bytes sent ahead: still there
  EXPECT_FALSE(probe.closed());
  ::close(sv[1]);
  char b[3];
  ASSERT_EQ(::read(sv[0], b, 3), 3);
  EXPECT_TRUE(probe.closed());
  ::close(sv[0]);
  EXPECT_FALSE(ConnectionProbe(-1).closed());
}

}  // namespace
}  // namespace hark::server::testing
