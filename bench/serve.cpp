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
#include <CLI/CLI.hpp>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstring>
#include <sstream>
#include <thread>

#include <httplib.h>
#include <nlohmann/json.hpp>

#include "bench_util.h"
#include "hark/hark.hpp"
#include "server/http_server.h"
#include "server/service.h"

namespace {

using Clock = std::chrono::steady_clock;
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
  app.add_option("-m,--model", model, "Whisper model (default: a seeded --preset model)");
  app.add_option("--preset", preset, "Size of the seeded model")->capture_default_str();
  app.add_option("--type", type, "Weight type of the seeded model")->capture_default_str();
  app.add_option("--clip-sec", clip_sec, "Length of the clip every request sends")->capture_default_str();
  app.add_option("--parallel", parallel, "States of the server")->capture_default_str();
  app.add_option("-t,--threads", threads, "Threads per state")->capture_default_str();
  app.add_option("--concurrency", levels, "Client counts")->delimiter(',');
  app.add_option("--requests", requests, "Requests per level (0: 2 x concurrency, at least 8)");
  CLI11_PARSE(app, argc, argv);
  try {
    bench::TempModel temp;
    if (model.empty()) {
      bench::write_preset_model(temp, preset, type);
      model = temp.path;
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
    http.stop();
    std::printf("%s\n", out.dump(2).c_str());
    return 0;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "bench_serve: error: %s\n", e.what());
    return 1;
  }
}
