// The realtime WebSocket endpoint (GET /v1/realtime) end to end, in-process, with Boost.Beast's
// WebSocket client: PCM frames in, partial and final events out in order; options from the query
// and from session.update; garbage frames and messages answered with error events while the
// session goes on; refusals before the upgrade (bad option, unknown model, no key, every state
// busy); a client that vanishes gives its state back.
#include <gtest/gtest.h>

#include <boost/asio.hpp>
#include <boost/beast.hpp>
#include <chrono>
#include <cmath>
#include <cstring>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include <nlohmann/json.hpp>

#include "server_test_util.h"

namespace hark::server::testing {
namespace {

namespace asio = boost::asio;
namespace beast = boost::beast;
namespace http = beast::http;
namespace websocket = beast::websocket;
using tcp = asio::ip::tcp;
using nlohmann::json;

// A WebSocket client whose every wait is bounded, so a server that misbehaves fails the test
// instead of hanging it.
class WsClient {
 public:
  // Connects and upgrades; `error` says why not (empty when connected).
  WsClient(int port, const std::string& target, const std::string& bearer = "", const std::string& origin = "")
      : ws_(ioc_) {
    beast::error_code ec;
    beast::get_lowest_layer(ws_).connect(
        tcp::endpoint(asio::ip::make_address("127.0.0.1"), static_cast<unsigned short>(port)), ec);
    if (ec) {
      error = ec.message();
      return;
    }
    ws_.set_option(websocket::stream_base::decorator([bearer, origin](websocket::request_type& r) {
      if (!bearer.empty()) r.set(http::field::authorization, "Bearer " + bearer);
      if (!origin.empty()) r.set(http::field::origin, origin);
    }));
    websocket::response_type res;
    ws_.handshake(res, "127.0.0.1:" + std::to_string(port), target, ec);
    if (ec) error = ec.message() + " (status " + std::to_string(res.result_int()) + ")";
  }
  bool ok() const { return error.empty(); }

  void send_binary(const void* data, size_t n) {
    ws_.binary(true);
    beast::error_code ec;
    ws_.write(asio::buffer(data, n), ec);
  }
  void send_text(const std::string& s) {
    ws_.text(true);
    beast::error_code ec;
    ws_.write(asio::buffer(s), ec);
  }
  void send_pcm16(const std::vector<float>& a, size_t frame_samples = 1600) {
    for (size_t off = 0; off < a.size(); off += frame_samples) {
      std::vector<int16_t> pcm;
      for (size_t i = off; i < std::min(a.size(), off + frame_samples); ++i)
        pcm.push_back(static_cast<int16_t>(std::lround(std::clamp(a[i], -1.0f, 1.0f) * 32767)));
      send_binary(pcm.data(), pcm.size() * 2);
    }
  }

  // The next message as JSON; nullopt when the connection closed or nothing came in time.
  std::optional<json> next(std::chrono::seconds within = std::chrono::seconds(120)) {
    beast::flat_buffer buf;
    bool done = false;
    beast::error_code ec;
    ws_.async_read(buf, [&](beast::error_code e, size_t) {
      ec = e;
      done = true;
    });
    ioc_.restart();
    ioc_.run_for(within);
    if (!done) {
      beast::get_lowest_layer(ws_).cancel();
      ioc_.restart();
      ioc_.run();
      return std::nullopt;
    }
    if (ec) {
      closed_reason = ws_.reason();
      return std::nullopt;
    }
    return json::parse(beast::buffers_to_string(buf.data()));
  }
  // Messages until `type` (included) or the end.
  std::vector<json> until(const std::string& type) {
    std::vector<json> got;
    while (auto m = next()) {
      got.push_back(*m);
      if ((*m)["type"] == type) break;
    }
    return got;
  }
  void drop() {  // vanish without a close frame
    beast::error_code ec;
    beast::get_lowest_layer(ws_).socket().close(ec);
  }

  std::string error;
  websocket::close_reason closed_reason;

 private:
  asio::io_context ioc_;
  websocket::stream<beast::tcp_stream> ws_;
};

// Gliding tones with pauses at 16 kHz (what sox's synth would make), `seconds` long.
std::vector<float> tones(double seconds, int rate = 16000) {
  std::vector<float> a(static_cast<size_t>(seconds * rate));
  for (size_t i = 0; i < a.size(); ++i) {
    const double t = static_cast<double>(i) / rate;
    a[i] = static_cast<float>((std::fmod(t, 1.0) < 0.7 ? 0.3 : 0.0) * std::sin(2 * M_PI * (220 + 40 * t) * t));
  }
  return a;
}

std::vector<std::string> types_of(const std::vector<json>& msgs) {
  std::vector<std::string> t;
  for (const json& m : msgs) t.push_back(m["type"]);
  return t;
}

// An upgrade request through httplib, for refusals: their status and OpenAI error body.
httplib::Result upgrade_with_httplib(const Running& s, const std::string& target, const std::string& bearer = "",
                                     const std::string& origin = "") {
  auto c = s.client();
  httplib::Headers h{{"Connection", "Upgrade"},
                     {"Upgrade", "websocket"},
                     {"Sec-WebSocket-Version", "13"},
                     {"Sec-WebSocket-Key", "dGhlIHNhbXBsZSBub25jZQ=="}};
  if (!origin.empty()) h.emplace("Origin", origin);
  if (!bearer.empty()) h.emplace("Authorization", "Bearer " + bearer);
  return c.Get(target, h);
}

void expect_refused(const httplib::Result& r, int status, const std::string& param, const std::string& code) {
  ASSERT_TRUE(r) << httplib::to_string(r.error());
  EXPECT_EQ(r->status, status) << r->body;
  const json j = json::parse(r->body, nullptr, false);
  ASSERT_TRUE(j.is_object() && j.contains("error")) << r->body;
  if (!param.empty()) {
    EXPECT_EQ(j["error"]["param"], param) << r->body;
  }
  if (!code.empty()) {
    EXPECT_EQ(j["error"]["code"], code) << r->body;
  }
}

int jobs_running(const Running& s) {
  auto r = s.client().Get("/health");
  return r ? json::parse(r->body)["jobs_running"].get<int>() : -1;
}

// Waits (boundedly) until no session or job holds a state.
void wait_until_idle(const Running& s) {
  for (int i = 0; i < 1500 && jobs_running(s) != 0; ++i) std::this_thread::sleep_for(std::chrono::milliseconds(20));
}

TEST(Realtime, PartialThenFinalEventsInOrder) {
  Running s(test_options());
  WsClient ws(s.port(), "/v1/realtime?model=micro&language=en&slice_sec=1.5&min_sec=0.5&partial_sec=0.5");
  ASSERT_TRUE(ws.ok()) << ws.error;
  auto started = ws.next();
  ASSERT_TRUE(started);
  EXPECT_EQ((*started)["type"], "session.started");
  EXPECT_EQ((*started)["model"], "micro");
  EXPECT_EQ((*started)["format"], "s16le");

  const std::vector<float> audio = tones(3.2);
  // One second, then wait: the transcriber catches up with it and reports the open slice.
  ws.send_pcm16(std::vector<float>(audio.begin(), audio.begin() + 16000));
  std::vector<json> msgs = ws.until("transcript.partial");
  ASSERT_FALSE(msgs.empty());
  ASSERT_EQ(msgs.back()["type"], "transcript.partial") << msgs.back().dump();
  ws.send_pcm16(std::vector<float>(audio.begin() + 16000, audio.end()));
  ws.send_text(R"({"type":"stop"})");
  std::vector<json> rest = ws.until("session.done");
  msgs.insert(msgs.end(), rest.begin(), rest.end());
  ASSERT_EQ(msgs.back()["type"], "session.done") << json(types_of(msgs)).dump();
  EXPECT_FALSE(ws.next(std::chrono::seconds(30)));  // then the close frame
  EXPECT_EQ(ws.closed_reason.code, websocket::close_code::normal);

  // Slices of 1.5 s over 3.2 s: finals for slices 0, 1, 2, in order; a slice's partials come
  // before its final and none after it.
  std::vector<int> finals;
  for (const json& m : msgs) {
    if (m["type"] == "transcript.partial") {
      const int i = m["sliceIndex"];
      EXPECT_TRUE(finals.empty() || i > finals.back()) << "partial of a finished slice " << i;
    }
    if (m["type"] == "transcript.final") {
      finals.push_back(m["sliceIndex"]);
      EXPECT_TRUE(m["data"]["result"].is_string());
      EXPECT_TRUE(m["data"]["segments"].is_array());
    }
    EXPECT_NE(m["type"], "error") << m.dump();
  }
  EXPECT_EQ(finals, (std::vector<int>{0, 1, 2}));
  EXPECT_NEAR(msgs.back()["recordingTime"].get<double>(), 3200.0, 1.0);
  wait_until_idle(s);  // the state goes back to the pool
  EXPECT_EQ(jobs_running(s), 0);
  // The session's audio counts in /metrics as a request's does (reported once it has ended).
  std::string metrics;
  for (int i = 0; i < 500; ++i) {
    auto m = s.client().Get("/metrics");
    ASSERT_TRUE(m);
    metrics = m->body;
    if (metrics.find("hark_audio_seconds_total 3.2") != std::string::npos) break;
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  EXPECT_NE(metrics.find("hark_audio_seconds_total 3.2"), std::string::npos) << metrics;
}

TEST(Realtime, FloatFramesAtAnotherRateConfiguredByMessage) {
  Running s(test_options());
  WsClient ws(s.port(), "/realtime");
  ASSERT_TRUE(ws.ok()) << ws.error;
  ASSERT_TRUE(ws.next());  // session.started
  ws.send_text(R"({"type":"session.update","format":"f32le","sample_rate":8000,"partial_sec":0})");
  auto updated = ws.next();
  ASSERT_TRUE(updated);
  EXPECT_EQ((*updated)["type"], "session.updated") << updated->dump();
  const std::vector<float> audio = tones(2.0, 8000);
  for (size_t off = 0; off < audio.size(); off += 800) ws.send_binary(audio.data() + off, 800 * sizeof(float));
  ws.send_text(R"({"type":"stop"})");
  std::vector<json> msgs = ws.until("session.done");
  ASSERT_FALSE(msgs.empty());
  ASSERT_EQ(msgs.back()["type"], "session.done");
  EXPECT_NEAR(msgs.back()["recordingTime"].get<double>(), 2000.0, 1.0);
  int finals = 0;
  for (const json& m : msgs) {
    EXPECT_NE(m["type"], "transcript.partial");  // partial_sec 0: none
    finals += m["type"] == "transcript.final";
  }
  EXPECT_EQ(finals, 1);
}

TEST(Realtime, GarbageGetsErrorEventsAndTheSessionGoesOn) {
  Running s(test_options());
  // With whisper.rn's energy VAD on (per session): slices may end at the pauses.
  WsClient ws(s.port(), "/v1/realtime?partial_sec=0&vad=true&vad_ms=300&vad_thold=0.5&vad_freq_thold=100");
  ASSERT_TRUE(ws.ok()) << ws.error;
  ASSERT_TRUE(ws.next());
  auto expect_error = [&](const std::string& code, const std::string& param = "") {
    auto m = ws.next();
    ASSERT_TRUE(m);
    ASSERT_EQ((*m)["type"], "error") << m->dump();
    EXPECT_FALSE((*m)["error"]["message"].get<std::string>().empty());
    if (!code.empty()) {
      EXPECT_EQ((*m)["error"]["code"], code) << m->dump();
    }
    if (!param.empty()) {
      EXPECT_EQ((*m)["error"]["param"], param) << m->dump();
    }
  };
  ws.send_text("this is not json");
  expect_error("invalid_json");
  ws.send_text(R"({"type":"dance"})");
  expect_error("", "type");
  ws.send_text(R"({"type":5})");  // not a string: an error event too, never a dropped session
  expect_error("", "type");
  ws.send_text(R"({"type":null})");
  expect_error("", "type");
  ws.send_text(R"({"no_type":1})");
  expect_error("", "type");
  ws.send_text(R"({"type":"session.update","sample_rate":"fast"})");
  expect_error("invalid_value", "sample_rate");
  ws.send_text(R"({"type":"session.update","model":"other"})");
  expect_error("", "model");
  const char odd[3] = {1, 2, 3};  // not a whole 16-bit sample
  ws.send_binary(odd, sizeof odd);
  expect_error("invalid_audio_frame");
  ws.send_pcm16(tones(1.0));
  ws.send_text(R"({"type":"session.update","language":"de"})");  // too late: audio came
  expect_error("", "type");
  ws.send_text(R"({"type":"stop"})");
  std::vector<json> msgs = ws.until("session.done");
  ASSERT_FALSE(msgs.empty());
  EXPECT_EQ(msgs.back()["type"], "session.done");
  EXPECT_NEAR(msgs.back()["recordingTime"].get<double>(), 1000.0, 1.0);
}

TEST(Realtime, NonFiniteFloatSamplesAreRefused) {
  Running s(test_options());
  WsClient ws(s.port(), "/v1/realtime?format=f32le");
  ASSERT_TRUE(ws.ok()) << ws.error;
  ASSERT_TRUE(ws.next());
  const float bad[4] = {0.1f, NAN, 0.2f, INFINITY};
  ws.send_binary(bad, sizeof bad);
  auto m = ws.next();
  ASSERT_TRUE(m);
  EXPECT_EQ((*m)["type"], "error");
  EXPECT_EQ((*m)["error"]["code"], "invalid_audio_frame");
  ws.send_text(R"({"type":"stop"})");
  auto done = ws.until("session.done");
  ASSERT_FALSE(done.empty());
  EXPECT_EQ(done.back()["type"], "session.done");
}

TEST(Realtime, AnOversizedFrameEndsTheSessionAndTheServerGoesOn) {
  Running s(test_options());
  WsClient ws(s.port(), "/v1/realtime");
  ASSERT_TRUE(ws.ok()) << ws.error;
  ASSERT_TRUE(ws.next());
  const std::vector<char> huge(5 << 20, 0);  // over the 4 MB a message may have
  ws.send_binary(huge.data(), huge.size());
  while (ws.next()) {
  }
  EXPECT_EQ(ws.closed_reason.code, websocket::close_code::too_big);
  wait_until_idle(s);
  EXPECT_EQ(jobs_running(s), 0);
  WsClient again(s.port(), "/v1/realtime");
  EXPECT_TRUE(again.ok()) << again.error;
}

TEST(Realtime, RefusedBeforeTheUpgrade) {
  Running s(test_options());
  expect_refused(upgrade_with_httplib(s, "/v1/realtime?sample_rate=abc"), 400, "sample_rate", "invalid_value");
  expect_refused(upgrade_with_httplib(s, "/v1/realtime?colour=blue"), 400, "colour", "invalid_value");
  expect_refused(upgrade_with_httplib(s, "/v1/realtime?format=mp3"), 400, "format", "invalid_value");
  expect_refused(upgrade_with_httplib(s, "/v1/realtime?silero_vad=true"), 400, "silero_vad", "");  // no --vad-model
  expect_refused(upgrade_with_httplib(s, "/v1/realtime?vad_thold=2"), 400, "vad_thold", "invalid_value");
  expect_refused(upgrade_with_httplib(s, "/v1/realtime?max_sec=-1"), 400, "max_sec", "invalid_value");
  expect_refused(upgrade_with_httplib(s, "/v1/realtime?model=nope"), 404, "model", "model_not_found");
  auto plain = s.client().Get("/v1/realtime");  // no Upgrade header
  expect_refused(plain, 426, "", "upgrade_required");
  WsClient bad(s.port(), "/v1/realtime?channels=0");
  EXPECT_FALSE(bad.ok());
  EXPECT_EQ(jobs_running(s), 0);
}

TEST(Realtime, ApiKeyIsRequired) {
  ServerOptions o = test_options();
  o.api_keys = {"sekrit"};
  Running s(o);
  expect_refused(upgrade_with_httplib(s, "/v1/realtime"), 401, "", "invalid_api_key");
  expect_refused(upgrade_with_httplib(s, "/v1/realtime", "wrong"), 401, "", "invalid_api_key");
  {
    WsClient ws(s.port(), "/v1/realtime", "sekrit");
    ASSERT_TRUE(ws.ok()) << ws.error;
    auto m = ws.next();
    ASSERT_TRUE(m);
    EXPECT_EQ((*m)["type"], "session.started");
  }
  wait_until_idle(s);
  WsClient in_query(s.port(), "/v1/realtime?api_key=sekrit");  // browsers cannot set headers
  EXPECT_TRUE(in_query.ok()) << in_query.error;
}

TEST(Realtime, OnlyAllowedBrowserOriginsMayConnect) {
  ServerOptions o = test_options();
  {
    Running s(o);
    expect_refused(upgrade_with_httplib(s, "/v1/realtime", "", "http://evil.example"), 403, "", "origin_not_allowed");
    WsClient own(s.port(), "/v1/realtime", "", "http://127.0.0.1:" + std::to_string(s.port()));
    EXPECT_TRUE(own.ok()) << own.error;  // the server's own pages may
  }
  o.cors_origin = "https://app.example";
  Running s(o);
  expect_refused(upgrade_with_httplib(s, "/v1/realtime", "", "http://evil.example"), 403, "", "origin_not_allowed");
  WsClient allowed(s.port(), "/v1/realtime", "", "https://app.example");
  EXPECT_TRUE(allowed.ok()) << allowed.error;
}

TEST(Realtime, SessionsShareTheStatesAndTheNextIsRefusedWhenAllAreBusy) {
  Running s(test_options());  // one state
  auto first = std::make_unique<WsClient>(s.port(), "/v1/realtime");
  ASSERT_TRUE(first->ok()) << first->error;
  ASSERT_TRUE(first->next());
  auto r = upgrade_with_httplib(s, "/v1/realtime");
  expect_refused(r, 503, "", "server_busy");
  ASSERT_TRUE(r);
  EXPECT_EQ(r->get_header_value("Retry-After"), "1");
  EXPECT_EQ(jobs_running(s), 1);
  first->send_text(R"({"type":"stop"})");
  ASSERT_FALSE(first->until("session.done").empty());
  first.reset();
  wait_until_idle(s);
  WsClient second(s.port(), "/v1/realtime");
  EXPECT_TRUE(second.ok()) << second.error;
}

TEST(Realtime, AClientThatVanishesGivesItsStateBack) {
  Running s(test_options());
  {
    WsClient ws(s.port(), "/v1/realtime?slice_sec=30&partial_sec=0.2&min_sec=0.1");
    ASSERT_TRUE(ws.ok()) << ws.error;
    ASSERT_TRUE(ws.next());
    ws.send_pcm16(tones(8.0));
    ws.drop();
  }
  // The session notices, aborts the transcription and returns the state; then a new one fits.
  wait_until_idle(s);
  EXPECT_EQ(jobs_running(s), 0);
  WsClient again(s.port(), "/v1/realtime");
  EXPECT_TRUE(again.ok()) << again.error;
  auto c = s.client();
  EXPECT_EQ(c.Get("/health")->status, 200);
}

TEST(Realtime, ShutdownEndsASessionWithGoingAway) {
  auto s = std::make_unique<Running>(test_options());
  WsClient ws(s->port(), "/v1/realtime?partial_sec=0");
  ASSERT_TRUE(ws.ok()) << ws.error;
  ASSERT_TRUE(ws.next());
  ws.send_pcm16(tones(1.0));
  std::thread stopper([&] { s->http->stop(); });
  std::vector<json> msgs = ws.until("session.done");
  ASSERT_FALSE(msgs.empty());
  EXPECT_EQ(msgs.back()["type"], "session.done");
  EXPECT_FALSE(ws.next(std::chrono::seconds(30)));
  EXPECT_EQ(ws.closed_reason.code, websocket::close_code::going_away);
  stopper.join();
}

}  // namespace
}  // namespace hark::server::testing
