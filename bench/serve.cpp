// bench_serve: `hark serve`'s throughput and latency, and what the HTTP layer adds, as JSON.
//
//   bench_serve --preset tiny [--type f16] [--clip-sec 5] [--parallel 4] [-t 1]
//               [--concurrency 1,4,16,50] [--requests 0]
//   bench_serve -m MODEL ...
//
// - levels: for each concurrency C, C clients post the same clip (a 16-bit WAV of speech-like
//   tones) to /v1/audio/transcriptions over loopback until --requests are answered (0: 2 x C,
//   at least 8): requests per second, p50 and p95 latency, and how many were not 200.
// - overhead: one client, one request at a time, against State::transcribe of the same samples
//   with the same options (medians): the HTTP layer's cost (upload, form parsing, audio decoding,
//   admission, the answer).
// - hostile: /health latency (p50/p95 of 20) and the process's RSS with --idle idle connections
//   and --slow slow uploads (a head and a few body bytes) open; and a decompression bomb (an
//   hour of constant samples as FLAC, three at once) against --max-audio-sec 30: the peak RSS it
//   adds (VmHWM, measured first).
#include <CLI/CLI.hpp>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstring>
#include <sstream>
#include <thread>

#include <httplib.h>
#include <netinet/in.h>
#include <sndfile.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cstring>
#include <fstream>
#include <nlohmann/json.hpp>

#include "bench_util.h"
#include "hark/hark.hpp"
#include "server/http_server.h"
#include "server/service.h"

namespace {

using Clock = std::chrono::steady_clock;

size_t status_kb(const char* key) {  // a field of /proc/self/status, kB
  std::ifstream f("/proc/self/status");
  std::string line;
  while (std::getline(f, line))
    if (line.rfind(key, 0) == 0) return std::stoull(line.substr(std::strlen(key)));
  return 0;
}

int raw_connect(int port) {
  const int fd = ::socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_port = htons(static_cast<uint16_t>(port));
  a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  if (::connect(fd, reinterpret_cast<sockaddr*>(&a), sizeof a) != 0) {
    ::close(fd);
    return -1;
  }
  return fd;
}

// An hour of constant samples at 8 kHz as FLAC bytes (a few hundred KB).
std::string flac_bomb(const std::string& path) {
  SF_INFO info{};
  info.samplerate = 8000;
  info.channels = 1;
  info.format = SF_FORMAT_FLAC | SF_FORMAT_PCM_16;
  SNDFILE* f = sf_open(path.c_str(), SFM_WRITE, &info);
  if (!f) return {};
  std::vector<short> block(8000 * 60, 1000);
  for (int m = 0; m < 60; ++m) sf_write_short(f, block.data(), sf_count_t(block.size()));
  sf_close(f);
  std::ifstream in(path, std::ios::binary);
  return std::string((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
}
double ms_since(Clock::time_point a) { return std::chrono::duration<double, std::milli>(Clock::now() - a).count(); }

double percentile(std::vector<double> v, double q) {
  if (v.empty()) return 0;
  std::sort(v.begin(), v.end());
  return v[std::min(v.size() - 1, static_cast<size_t>(q * static_cast<double>(v.size() - 1) + 0.5))];
}

// 16 kHz mono 16-bit PCM WAV bytes.
std::string wav_bytes(const std::vector<float>& a) {
  auto u32 = [](std::string& s, uint32_t v) { s.append(reinterpret_cast<const char*>(&v), 4); };
  auto u16 = [](std::string& s, uint16_t v) { s.append(reinterpret_cast<const char*>(&v), 2); };
  std::string w = "RIFF";
  u32(w, static_cast<uint32_t>(36 + 2 * a.size()));
  w += "WAVEfmt ";
  u32(w, 16), u16(w, 1), u16(w, 1), u32(w, hark::kSampleRate), u32(w, 2 * hark::kSampleRate), u16(w, 2), u16(w, 16);
  w += "data";
  u32(w, static_cast<uint32_t>(2 * a.size()));
  for (float x : a) u16(w, static_cast<uint16_t>(static_cast<int16_t>(std::clamp(x, -1.0f, 1.0f) * 32767)));
  return w;
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"bench_serve: hark serve's requests per second, latency and HTTP overhead (JSON)"};
  std::string model, preset = "tiny", type = "f16";
  double clip_sec = 5;
  int parallel = 4, threads = 1, requests = 0;
  std::vector<int> levels = {1, 4, 16, 50};
  int idle = 1000, slow = 100;
  app.add_option("-m,--model", model, "Whisper model (default: a seeded --preset model)");
  app.add_option("--preset", preset, "Size of the seeded model")->capture_default_str();
  app.add_option("--type", type, "Weight type of the seeded model")->capture_default_str();
  app.add_option("--clip-sec", clip_sec, "Length of the clip every request sends")->capture_default_str();
  app.add_option("--parallel", parallel, "States of the server")->capture_default_str();
  app.add_option("-t,--threads", threads, "Threads per state")->capture_default_str();
  app.add_option("--concurrency", levels, "Client counts")->delimiter(',');
  app.add_option("--requests", requests, "Requests per level (0: 2 x concurrency, at least 8)");
  app.add_option("--idle", idle, "Idle connections held open for the hostile figures")->capture_default_str();
  app.add_option("--slow", slow, "Slow uploads held open for the hostile figures")->capture_default_str();
  CLI11_PARSE(app, argc, argv);
  try {
    bench::TempModel temp;
    if (model.empty()) {
      bench::write_preset_model(temp, preset, type);
      model = temp.path;
    }
    nlohmann::json hostile;
    {  // The bomb first: VmHWM only rises, so later work would hide what it adds.
      hark::server::ServerOptions b;
      b.models = {{"bench", model}};
      b.port = 0;
      b.max_audio_sec = 30;
      b.queue_size = 4;
      hark::server::Service bsvc(b);
      hark::server::HttpServer bhttp(bsvc);
      bhttp.start();
      const std::string bomb = flac_bomb(temp.path + ".bomb.flac");
      std::remove((temp.path + ".bomb.flac").c_str());
      const size_t hwm0 = status_kb("VmHWM:");
      std::vector<std::thread> ts;
      std::vector<int> st(3, 0);
      for (int i = 0; i < 3; ++i)
        ts.emplace_back([&, i] {
          httplib::Client c("127.0.0.1", bhttp.port());
          c.set_read_timeout(600, 0);
          auto r = c.Post("/v1/audio/transcriptions",
                          httplib::MultipartFormDataItems{{"file", bomb, "bomb.flac", "audio/flac"}});
          st[static_cast<size_t>(i)] = r ? r->status : 0;
        });
      for (auto& t : ts) t.join();
      hostile["bomb_flac_bytes"] = bomb.size();
      hostile["bomb_statuses"] = st;
      hostile["bomb_peak_rss_added_mb"] = static_cast<double>(status_kb("VmHWM:") - hwm0) / 1024.0;
      bhttp.stop();
    }
    hark::server::ServerOptions o;
    o.models = {{"bench", model}};
    o.port = 0;
    o.parallel = parallel;
    o.threads = threads;
    o.queue_size = 64;                  // each waiting request holds a server thread; the largest level fits
    o.decoding.temperature_inc = 0.0f;  // random weights would fall back on every window
    o.decoding.language = "en";
    hark::server::Service svc(o);
    hark::server::HttpServer http(svc);
    http.start();
    const std::string wav = wav_bytes(bench::synth_audio(clip_sec));
    // What the server transcribes: the WAV's 16-bit samples (random weights answer the float
    // original with other tokens, so other work).
    const std::vector<float> samples = hark::decode_audio(wav.data(), wav.size());
    const httplib::MultipartFormDataItems form{{"file", wav, "clip.wav", "audio/wav"}, {"model", "bench", "", ""}};
    auto post = [&](httplib::Client& c) {
      auto r = c.Post("/v1/audio/transcriptions", form);
      return r ? r->status : 0;
    };

    // Overhead: the same work through the library and through HTTP, one at a time.
    hark::ContextParams cp;
    cp.n_threads = threads;
    auto ctx = hark::Context::load(model, cp);
    auto state = ctx->new_state(threads);
    hark::TranscribeParams p = o.decoding;
    httplib::Client one("127.0.0.1", http.port());
    one.set_read_timeout(3600, 0);
    state->transcribe(samples, p);  // warm-up
    post(one);
    std::vector<double> direct, over_http;
    for (int i = 0; i < 5; ++i) {
      auto t0 = Clock::now();
      state->transcribe(samples, p);
      direct.push_back(ms_since(t0));
      t0 = Clock::now();
      post(one);
      over_http.push_back(ms_since(t0));
    }
    nlohmann::json out{{"model", model == temp.path ? preset + ":" + type : model},
                       {"clip_sec", clip_sec},
                       {"parallel", parallel},
                       {"threads", threads},
                       {"direct_ms_p50", percentile(direct, 0.5)},
                       {"http_ms_p50", percentile(over_http, 0.5)},
                       {"http_overhead_ms", percentile(over_http, 0.5) - percentile(direct, 0.5)}};
    nlohmann::json rows = nlohmann::json::array();
    for (int c : levels) {
      const int n = requests > 0 ? requests : std::max(8, 2 * c);
      std::atomic<int> next{0}, failed{0};
      std::vector<double> lat(static_cast<size_t>(n));
      const auto start = Clock::now();
      std::vector<std::thread> clients;
      for (int k = 0; k < c; ++k)
        clients.emplace_back([&] {
          httplib::Client cl("127.0.0.1", http.port());
          cl.set_read_timeout(3600, 0);
          for (int i; (i = next++) < n;) {
            const auto t0 = Clock::now();
            if (post(cl) != 200) ++failed;
            lat[static_cast<size_t>(i)] = ms_since(t0);
          }
        });
      for (auto& t : clients) t.join();
      const double wall_s = ms_since(start) / 1000.0;
      rows.push_back({{"concurrency", c},
                      {"requests", n},
                      {"not_200", failed.load()},
                      {"requests_per_s", n / wall_s},
                      {"p50_ms", percentile(lat, 0.5)},
                      {"p95_ms", percentile(lat, 0.95)}});
    }
    out["levels"] = rows;

    // Hostile: idle connections and slow uploads held open while /health is asked.
    auto health_ms = [&] {
      std::vector<double> v;
      httplib::Client c("127.0.0.1", http.port());
      for (int i = 0; i < 20; ++i) {
        const auto t0 = Clock::now();
        auto r = c.Get("/health");
        v.push_back(r && r->status == 200 ? ms_since(t0) : -1);
      }
      return std::make_pair(percentile(v, 0.5), percentile(v, 0.95));
    };
    const auto [h50_quiet, h95_quiet] = health_ms();
    const size_t rss0 = status_kb("VmRSS:");
    std::vector<int> fds;
    for (int i = 0; i < idle; ++i) fds.push_back(raw_connect(http.port()));
    const std::string slow_head =
        "POST /v1/audio/transcriptions HTTP/1.1\r\nHost: x\r\nContent-Type: multipart/form-data; boundary=b\r\n"
        "Content-Length: 5000000\r\n\r\n--b\r\n";
    for (int i = 0; i < slow; ++i) {
      const int fd = raw_connect(http.port());
      if (fd >= 0) (void)!::send(fd, slow_head.data(), slow_head.size(), MSG_NOSIGNAL);
      fds.push_back(fd);
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(500));
    const auto [h50, h95] = health_ms();
    const size_t rss1 = status_kb("VmRSS:");
    int open = 0;
    for (int fd : fds) open += fd >= 0;
    hostile["idle_connections"] = idle;
    hostile["slow_uploads"] = slow;
    hostile["connections_open"] = open;
    hostile["health_ms_p50_quiet"] = h50_quiet;
    hostile["health_ms_p95_quiet"] = h95_quiet;
    hostile["health_ms_p50"] = h50;
    hostile["health_ms_p95"] = h95;
    hostile["rss_mb_before"] = static_cast<double>(rss0) / 1024.0;
    hostile["rss_mb_with_them"] = static_cast<double>(rss1) / 1024.0;
    for (int fd : fds)
      if (fd >= 0) ::close(fd);
    out["hostile"] = hostile;
    http.stop();
    std::printf("%s\n", out.dump(2).c_str());
    return 0;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "bench_serve: error: %s\n", e.what());
    return 1;
  }
}
