// What a hostile client sends, from a raw socket, and what the server must do with it (issue 36):
// limits enforced as the bytes arrive (the key before the body, Content-Length over the limit at
// once, chunked bodies counted), the head's limits (431/414), the request-smuggling shapes
// (400 and close), pipelined requests answered in order with bytes inside a body never read as a
// request, POSTs without a body answered at once, Host and Origin rules, hundreds of idle and slow
// connections that starve no one, a port in use, and a stop bounded by the grace.
#include <gtest/gtest.h>
#include <poll.h>
#include <sndfile.h>

#include <chrono>
#include <fstream>
#include <string>
#include <thread>
#include <vector>

#include <nlohmann/json.hpp>

#include "server_test_util.h"

namespace hark::server::testing {
namespace {

using Ms = std::chrono::milliseconds;

std::string status_line(const std::string& answer) { return answer.substr(0, answer.find("\r\n")); }

// The process's resident memory (the server runs in it), bytes.
size_t rss_bytes() {
  std::ifstream f("/proc/self/statm");
  size_t pages = 0, resident = 0;
  f >> pages >> resident;
  return resident * static_cast<size_t>(::sysconf(_SC_PAGESIZE));
}

// The process's peak resident memory so far (VmHWM), bytes.
size_t peak_bytes() {
  std::ifstream f("/proc/self/status");
  std::string line;
  while (std::getline(f, line))
    if (line.rfind("VmHWM:", 0) == 0) return std::stoull(line.substr(6)) * 1024;
  return 0;
}

// A decompression bomb: `seconds` of constant samples at 8 kHz as FLAC (a few hundred KB for an
// hour), encoded here with libsndfile.
std::string flac_bomb(double seconds) {
  const fs::path p = scratch() / "bomb.flac";
  if (!fs::exists(p)) {
    SF_INFO info{};
    info.samplerate = 8000;
    info.channels = 1;
    info.format = SF_FORMAT_FLAC | SF_FORMAT_PCM_16;
    SNDFILE* f = sf_open(p.c_str(), SFM_WRITE, &info);
    if (!f) return {};
    std::vector<short> block(8000 * 60, 1000);
    for (double done = 0; done < seconds; done += 60) sf_write_short(f, block.data(), sf_count_t(block.size()));
    sf_close(f);
  }
  return read_bytes(p);
}

// The head of a multipart POST with this Content-Length (or chunked when cl < 0).
std::string post_head(const std::string& path, long long cl, const std::string& extra = "") {
  std::string h = "POST " + path + " HTTP/1.1\r\nHost: x\r\nContent-Type: multipart/form-data; boundary=b\r\n" + extra;
  h += cl < 0 ? "Transfer-Encoding: chunked\r\n" : "Content-Length: " + std::to_string(cl) + "\r\n";
  return h + "\r\n";
}

// Sends `head`, then `body_bytes` of filler as fast as the server takes them (chunked when
// `chunked`), stopping once the server answers or closes. Returns the answer and how much of the
// body went out.
std::string upload(int port, const std::string& head, size_t body_bytes, bool chunked, size_t* sent) {
  RawConnection c(port);
  *sent = 0;
  if (c.fd < 0 || !c.send_all(head)) return {};
  const std::string piece(65536, 'x');
  char size[32];
  std::snprintf(size, sizeof size, "%zx\r\n", piece.size());
  while (*sent < body_bytes) {
    pollfd p{c.fd, POLLIN, 0};
    if (::poll(&p, 1, 0) > 0) break;  // an answer already
    if (!c.send_all(chunked ? size + piece + "\r\n" : piece)) break;
    *sent += piece.size();
  }
  return c.read_all(1 << 16);
}

TEST(HostileClients, TheKeyIsCheckedBeforeTheBody) {
  ServerOptions o = test_options();
  o.api_keys = {"sekrit"};
  Running s(o);
  const size_t before = rss_bytes();
  size_t sent = 0;
  // 300 MB announced, none of it read: 401 at once.
  std::string a = upload(s.port(), post_head("/v1/audio/transcriptions", 300 << 20), 300u << 20, false, &sent);
  EXPECT_EQ(status_line(a), "HTTP/1.1 401 Unauthorized") << a.substr(0, 300);
  EXPECT_LT(sent, 100u << 20) << "the server read the body before refusing it";
  // Chunked, no length: the same.
  a = upload(s.port(), post_head("/v1/audio/transcriptions", -1), 300u << 20, true, &sent);
  EXPECT_EQ(status_line(a), "HTTP/1.1 401 Unauthorized") << a.substr(0, 300);
  EXPECT_LT(rss_bytes(), before + (40u << 20)) << "refused uploads grew memory";
}

TEST(HostileClients, UploadLimitsAsTheBytesArrive) {
  ServerOptions o = test_options();
  o.max_upload_mb = 1;
  Running s(o);
  size_t sent = 0;
  // A Content-Length over the limit: 413 before any body byte.
  RawConnection big(s.port());
  big.send_all(post_head("/v1/audio/transcriptions", 99999999999LL));
  std::string a = big.read_all();
  EXPECT_EQ(status_line(a), "HTTP/1.1 413 Payload Too Large") << a.substr(0, 300);
  // Bad lengths: 400.
  for (const std::string cl : {"-5", "abc", "1 2", ""}) {
    RawConnection c(s.port());
    c.send_all("POST /v1/audio/transcriptions HTTP/1.1\r\nHost: x\r\nContent-Length: " + cl + "\r\n\r\n");
    a = c.read_all();
    EXPECT_EQ(status_line(a), "HTTP/1.1 400 Bad Request") << "Content-Length '" << cl << "': " << a.substr(0, 300);
  }
  // Chunked: counted as it arrives and cut at the limit.
  const size_t before = rss_bytes();
  a = upload(s.port(), post_head("/v1/audio/transcriptions", -1), 64u << 20, true, &sent);
  EXPECT_EQ(status_line(a), "HTTP/1.1 413 Payload Too Large") << a.substr(0, 300);
  EXPECT_LT(rss_bytes(), before + (40u << 20));
  // A chunked upload within the limit is transcribed.
  const std::string wav = tones_wav(1.5);
  const std::string body =
      "--b\r\nContent-Disposition: form-data; name=\"file\"; filename=\"a.wav\"\r\n\r\n" + wav +
      "\r\n--b\r\nContent-Disposition: form-data; name=\"response_format\"\r\n\r\ntext\r\n--b--\r\n";
  RawConnection ok(s.port());
  std::string chunked = post_head("/v1/audio/transcriptions", -1, "Connection: close\r\n");
  for (size_t at = 0; at < body.size(); at += 10000) {
    const std::string part = body.substr(at, 10000);
    char size[32];
    std::snprintf(size, sizeof size, "%zx\r\n", part.size());
    chunked += size + part + "\r\n";
  }
  chunked += "0\r\n\r\n";
  ok.send_all(chunked);
  a = ok.read_all();
  EXPECT_EQ(status_line(a), "HTTP/1.1 200 OK") << a.substr(0, 300);
}

TEST(HostileClients, ADecompressionBombIsCutAtMaxAudioSec) {
  ServerOptions o = test_options();
  o.max_audio_sec = 30;
  o.queue_size = 1;
  Running s(o);
  const std::string bomb = flac_bomb(3600);  // an hour: 230 MB of samples at 16 kHz, were it decoded whole
  ASSERT_FALSE(bomb.empty());
  ASSERT_LT(bomb.size(), 5u << 20);
  const size_t before = peak_bytes();
  std::vector<std::thread> clients;
  std::vector<int> status(3, 0);
  for (int i = 0; i < 3; ++i)
    clients.emplace_back([&, i] {
      auto r = s.client().Post("/v1/audio/transcriptions", form(bomb));
      status[static_cast<size_t>(i)] = r ? r->status : -1;
    });
  for (auto& t : clients) t.join();
  for (int st : status) EXPECT_TRUE(st == 413 || st == 503) << st;  // 503: no place, so never decoded
  // Per request at most the upload, 30 s of samples (2 MB) and the decoder's buffers.
  EXPECT_LT(peak_bytes(), before + (48u << 20)) << "peak " << (peak_bytes() >> 20) << " MB";
  auto r = s.client().Post("/v1/audio/transcriptions", form(tones_wav(1.5)));
  ASSERT_TRUE(r);
  EXPECT_EQ(r->status, 200);
}

TEST(HostileClients, HeadLimitsAre431And414) {
  ServerOptions o = test_options();
  o.max_headers = 20;
  o.max_header_bytes = 4096;
  o.max_uri_bytes = 256;
  Running s(o);
  std::string many = "GET /health HTTP/1.1\r\nHost: x\r\n";
  for (int i = 0; i < 30; ++i) many += "X: y\r\n";
  RawConnection c1(s.port());
  c1.send_all(many + "\r\n");
  EXPECT_EQ(status_line(c1.read_all()), "HTTP/1.1 431 Request Header Fields Too Large");
  // A head that never ends: cut at the byte limit (not read to the end: 40 MB would be).
  RawConnection c2(s.port());
  std::string endless = "GET /health HTTP/1.1\r\nHost: x\r\n";
  bool refused = false;
  for (int i = 0; i < 100000 && !refused; ++i) refused = !c2.send_all("X-Long: " + std::string(400, 'y') + "\r\n");
  (void)refused;
  EXPECT_EQ(status_line(c2.read_all()), "HTTP/1.1 431 Request Header Fields Too Large");
  RawConnection c3(s.port());
  c3.send_all("GET /health?" + std::string(1000, 'a') + " HTTP/1.1\r\nHost: x\r\n\r\n");
  EXPECT_EQ(status_line(c3.read_all()), "HTTP/1.1 414 URI Too Long");
  auto h = s.client().Get("/health");
  ASSERT_TRUE(h);
  EXPECT_EQ(h->status, 200);
}

TEST(HostileClients, SmugglingShapesAre400AndClose) {
  Running s(test_options());
  const std::vector<std::pair<std::string, std::string>> cases = {
      {"CL and TE",
       "POST /load HTTP/1.1\r\nHost: x\r\nContent-Length: 5\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\n"},
      {"two CLs", "POST /load HTTP/1.1\r\nHost: x\r\nContent-Length: 5\r\nContent-Length: 6\r\n\r\nhello!"},
      {"two equal CLs", "POST /load HTTP/1.1\r\nHost: x\r\nContent-Length: 5\r\nContent-Length: 5\r\n\r\nhello"},
      {"obs-fold", "GET /health HTTP/1.1\r\nHost: x\r\nX-A: 1\r\n  folded\r\n\r\n"},
      {"TE not chunked", "POST /load HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: gzip\r\n\r\n"},
      {"bad chunk size",
       "POST /load HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\nzz\r\nhello\r\n0\r\n\r\n"},
      {"no Host", "GET /health HTTP/1.1\r\n\r\n"},
  };
  for (const auto& [what, bytes] : cases) {
    RawConnection c(s.port());
    c.send_all(bytes + "GET /health HTTP/1.1\r\nHost: x\r\n\r\n");
    const std::string a = c.read_all();
    EXPECT_EQ(status_line(a), "HTTP/1.1 400 Bad Request") << what << ": " << a.substr(0, 300);
    EXPECT_EQ(a.find("HTTP/1.1 200"), std::string::npos) << what << ": the bytes after it were served";
  }
  // HTTP/1.0 needs no Host.
  RawConnection old(s.port());
  old.send_all("GET /health HTTP/1.0\r\n\r\n");
  EXPECT_EQ(status_line(old.read_all()), "HTTP/1.0 200 OK");
}

TEST(HostileClients, PipelinedRequestsAreAnsweredInOrderAndBodiesAreNeverRequests) {
  Running s(test_options());
  RawConnection c(s.port());
  std::string many;
  for (int i = 0; i < 7; ++i) many += "GET /health HTTP/1.1\r\nHost: x\r\n\r\n";
  many += "GET /v1/models HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n";
  c.send_all(many);
  const std::string a = c.read_all();
  size_t n = 0;
  for (size_t at = a.find("HTTP/1.1 200 OK"); at != std::string::npos; at = a.find("HTTP/1.1 200 OK", at + 1)) ++n;
  EXPECT_EQ(n, 8u) << a.substr(0, 500);
  EXPECT_NE(a.rfind("\"object\":\"list\""), std::string::npos) << "the last answer is /v1/models'";
  // A request hidden in a body at byte 4096 is body, never executed or answered.
  const std::string hidden = "GET /nonexistent HTTP/1.1\r\nHost: x\r\n\r\n";
  std::string body(4096, 'a');
  body += hidden;
  RawConnection d(s.port());
  d.send_all("POST /v1/audio/transcriptions HTTP/1.1\r\nHost: x\r\nContent-Type: text/plain\r\nContent-Length: " +
             std::to_string(body.size()) + "\r\n\r\n" + body +
             "GET /health HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n");
  const std::string b = d.read_all();
  EXPECT_EQ(status_line(b), "HTTP/1.1 400 Bad Request") << b.substr(0, 300);  // no file
  EXPECT_EQ(b.find("no such route"), std::string::npos) << b;
  EXPECT_NE(b.find("HTTP/1.1 200 OK"), std::string::npos) << "the request after the body: " << b;
}

TEST(HostileClients, APostWithoutABodyIsAnsweredAtOnce) {
  Running s(test_options());
  RawConnection c(s.port());
  const auto t0 = std::chrono::steady_clock::now();
  c.send_all("POST /v1/audio/transcriptions HTTP/1.1\r\nHost: x\r\n\r\n");
  std::string a;
  char buf[4096];
  const ssize_t n = ::recv(c.fd, buf, sizeof buf, 0);
  if (n > 0) a.assign(buf, static_cast<size_t>(n));
  EXPECT_EQ(status_line(a), "HTTP/1.1 400 Bad Request") << a;
  EXPECT_NE(a.find("\"param\":\"file\""), std::string::npos) << a;
  EXPECT_LT(std::chrono::steady_clock::now() - t0, std::chrono::seconds(5)) << "the server waited for a body";
}

TEST(HostileClients, PostsFromForeignOriginsAreRefusedWithoutKeys) {
  Running s(test_options());
  auto c = s.client();
  httplib::Headers evil = {{"Origin", "http://evil.example"}};
  auto r = c.Post("/load", evil, "model=micro", "application/x-www-form-urlencoded");
  ASSERT_TRUE(r);
  EXPECT_EQ(r->status, 403) << r->body;
  httplib::Headers own = {{"Origin", "http://127.0.0.1:" + std::to_string(s.port())}};
  r = c.Post("/load", own, "model=micro", "application/x-www-form-urlencoded");
  ASSERT_TRUE(r);
  EXPECT_EQ(r->status, 200) << r->body;
  // The transcription routes too (they spend the server's compute); --cors allows its origin.
  r = c.Post("/v1/audio/transcriptions", evil, form(tones_wav(1.5)));
  ASSERT_TRUE(r);
  EXPECT_EQ(r->status, 403) << r->body;
  r = c.Post("/v1/audio/transcriptions", own, form(tones_wav(1.5)));
  ASSERT_TRUE(r);
  EXPECT_EQ(r->status, 200) << r->body;
}

TEST(HostileClients, IdleAndSlowConnectionsStarveNoOne) {
  ServerOptions o = test_options();
  o.header_timeout_sec = 30;
  o.keep_alive_timeout_sec = 30;
  Running s(o);
  std::vector<std::unique_ptr<RawConnection>> idle;
  for (int i = 0; i < 300; ++i) {
    idle.push_back(std::make_unique<RawConnection>(s.port()));
    if (i % 3 == 1) idle.back()->send_all("GET /health HTTP/1.1\r\nHo");  // a head that stalls
    if (i % 3 == 2) idle.back()->send_all(post_head("/v1/audio/transcriptions", 1 << 20) + "--b\r\n");  // a body
  }
  std::this_thread::sleep_for(Ms(200));
  auto c = s.client();
  auto h = c.Get("/health");
  ASSERT_TRUE(h);
  EXPECT_EQ(h->status, 200);
  auto r = c.Post("/v1/audio/transcriptions", form(tones_wav(), {{"response_format", "text"}}));
  ASSERT_TRUE(r);
  EXPECT_EQ(r->status, 200) << r->body;
  // ... while every one of them is still open.
  size_t open = 0;
  for (const auto& conn : idle) {
    pollfd p{conn->fd, POLLIN, 0};
    if (::poll(&p, 1, 0) == 0) ++open;
  }
  EXPECT_EQ(open, idle.size());
}

// A body that keeps above --min-body-rate still ends at --upload-timeout (408); an idle
// keep-alive connection is closed after --keep-alive-timeout.
TEST(HostileClients, UploadAndKeepAliveDeadlines) {
  ServerOptions o = test_options();
  o.upload_timeout_sec = 1;
  o.min_body_rate = 0;
  o.keep_alive_timeout_sec = 0.5;
  Running s(o);
  RawConnection slow(s.port());
  slow.send_all(post_head("/v1/audio/transcriptions", 1 << 20));
  std::string answer;
  for (int i = 0; i < 100 && answer.empty(); ++i) {  // a byte every 50 ms: 20 B/s, never idle long
    pollfd p{slow.fd, POLLIN, 0};
    if (::poll(&p, 1, 50) > 0) break;
    slow.send_all("x");
  }
  answer = slow.read_all();
  EXPECT_EQ(status_line(answer), "HTTP/1.1 408 Request Timeout") << answer.substr(0, 300);
  RawConnection idle(s.port());
  idle.send_all("GET /health HTTP/1.1\r\nHost: x\r\n\r\n");
  const auto t0 = std::chrono::steady_clock::now();
  const std::string a = idle.read_all();  // the answer, then the close when the keep-alive ends
  EXPECT_EQ(status_line(a), "HTTP/1.1 200 OK");
  EXPECT_LT(std::chrono::steady_clock::now() - t0, std::chrono::seconds(10));
}

TEST(HostileClients, LoadingAModelAHundredTimesKeepsMemoryFlat) {
  ServerOptions o = test_options();
  // The tiny preset's size (75 MB of f16 weights), as the reproduction: the small micro
  // model's buffers stay under the allocator's thresholds and would show nothing.
  const fs::path path_p = scratch() / "reload-tiny.bin";
  if (!fs::exists(path_p)) {
    TestModelOptions t;
    test_model_preset("tiny", &t.hparams);
    t.weight_type = DType::F16;
    write_test_model(t, path_p.string());
  }
  const std::string path = path_p.string();
  o.load_allow = {path};
  Running s(o);
  auto c = s.client();
  auto load = [&] {
    auto r = c.Post("/load", "model=" + path, "application/x-www-form-urlencoded");
    return r ? r->status : -1;
  };
  for (int i = 0; i < 5; ++i) ASSERT_EQ(load(), 200);  // warm: the allocator's own pools settle
  const size_t before = rss_bytes();
  for (int i = 0; i < 100; ++i) ASSERT_EQ(load(), 200);
  EXPECT_LT(rss_bytes(), before + (50u << 20)) << "RSS " << (before >> 20) << " -> " << (rss_bytes() >> 20) << " MB";
  auto r = c.Post("/v1/audio/transcriptions", form(tones_wav(1.5)));
  ASSERT_TRUE(r);
  EXPECT_EQ(r->status, 200);
}

TEST(HostileClients, ASecondServerOnAPortInUseFailsToStart) {
  Running first(test_options());
  ServerOptions o = test_options();
  o.port = first.port();
  Service svc(o);
  HttpServer second(svc);
  try {
    second.start();
    ADD_FAILURE() << "two servers listen on port " << o.port;
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("in use"), std::string::npos) << e.what();
  }
}

// While stopping, /health answers 503 (not a refused connection) and new requests 503, and the
// running job finishes within the grace.
TEST(HostileClients, HealthIs503WhileDraining) {
  ServerOptions o = test_options();
  o.shutdown_grace_sec = 60;
  auto s = std::make_unique<Running>(o);
  int job_status = 0;
  std::thread job([&] {
    auto r = s->client().Post("/v1/audio/transcriptions", form(tones_wav(120), {{"response_format", "text"}}));
    job_status = r ? r->status : -1;
  });
  // Wait until it runs, then stop on another thread.
  for (int i = 0; i < 500 && s->service->health().running == 0; ++i) std::this_thread::sleep_for(Ms(10));
  ASSERT_EQ(s->service->health().running, 1);
  std::thread stopper([&] { s->http->stop(); });
  bool saw_503 = false, saw_refused_post = false;
  for (int i = 0; i < 500 && !(saw_503 && saw_refused_post); ++i) {
    auto c = s->client();
    auto h = c.Get("/health");
    if (h && h->status == 503) saw_503 = true;
    auto r = c.Get("/v1/models");
    if (r && r->status == 503) saw_refused_post = true;
    std::this_thread::sleep_for(Ms(10));
  }
  stopper.join();
  job.join();
  EXPECT_TRUE(saw_503) << "/health never answered 503 while draining";
  EXPECT_TRUE(saw_refused_post) << "a new request was not answered 503 while draining";
  EXPECT_EQ(job_status, 200) << "the running job did not finish within the grace";
}

TEST(HostileClients, StopIsBoundedWhateverClientsDo) {
  ServerOptions o = test_options();
  o.shutdown_grace_sec = 1;
  auto s = std::make_unique<Running>(o);
  // A slow upload, an idle connection and a stalled head hold connections open.
  RawConnection slow(s->port()), idle(s->port()), stalled(s->port());
  slow.send_all(post_head("/v1/audio/transcriptions", 1 << 20) + "--b\r\n");
  stalled.send_all("GET /hea");
  std::this_thread::sleep_for(Ms(100));
  const auto t0 = std::chrono::steady_clock::now();
  s->http->stop();
  EXPECT_LT(std::chrono::steady_clock::now() - t0, std::chrono::seconds(3));
  // Every connection was closed.
  for (const RawConnection* c : {&slow, &idle, &stalled}) {
    pollfd p{c->fd, POLLIN, 0};
    EXPECT_EQ(::poll(&p, 1, 2000), 1);
  }
}

}  // namespace
}  // namespace hark::server::testing
