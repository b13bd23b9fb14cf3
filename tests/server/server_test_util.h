// What the server tests share: a micro model and a short WAV made once per process, a server
// started in-process on a free loopback port, multipart requests through httplib's client, and a
// raw socket for what no well-behaved client sends.
#pragma once
#include <httplib.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cmath>
#include <filesystem>
#include <fstream>
#include <memory>
#include <sstream>
#include <string>

#include "audio/audio.h"
#include "model/model_writer.h"
#include "server/http_server.h"
#include "server/service.h"

namespace hark::server::testing {

namespace fs = std::filesystem;

// A folder for this process's files, removed at exit.
struct Scratch {
  fs::path dir;
  Scratch() {
    const char* tmp = std::getenv("TMPDIR");
    dir = fs::path(tmp && *tmp ? tmp : "/tmp") / ("hark-server-test-" + std::to_string(::getpid()));
    fs::create_directories(dir);
  }
  ~Scratch() {
    std::error_code ec;
    fs::remove_all(dir, ec);
  }
};
inline const fs::path& scratch() {
  static Scratch s;
  return s.dir;
}

// The micro preset (2 layers, width 64, the real vocabulary size): a transcription takes a moment.
inline std::string micro_model(const std::string& file = "micro.bin") {
  const fs::path p = scratch() / file;
  if (!fs::exists(p)) {
    TestModelOptions o;
    test_model_preset("micro", &o.hparams);
    o.weight_type = DType::F16;
    write_test_model(o, p.string());
  }
  return p.string();
}

inline std::string read_bytes(const fs::path& p) {
  std::ifstream f(p, std::ios::binary);
  std::stringstream ss;
  ss << f.rdbuf();
  return ss.str();
}

// `seconds` of gliding tones with pauses, as a 16-bit WAV file's bytes.
inline std::string tones_wav(double seconds = 4.0) {
  const fs::path p = scratch() / ("tones-" + std::to_string(static_cast<int>(seconds * 1000)) + ".wav");
  if (!fs::exists(p)) {
    audio::WavWriter w(p.string(), audio::kSampleRate);
    std::vector<float> a(static_cast<size_t>(seconds * audio::kSampleRate));
    for (size_t i = 0; i < a.size(); ++i) {
      const double t = static_cast<double>(i) / audio::kSampleRate;
      a[i] = static_cast<float>((std::fmod(t, 2.0) < 1.5 ? 0.3 : 0.0) * std::sin(2 * M_PI * (200 + 30 * t) * t));
    }
    w.write(a.data(), a.size());
    w.close();
  }
  return read_bytes(p);
}

// Options every test starts from: the micro model as "micro", no temperature fallback (random
// weights would fall back on every window: same checks, many times the work), any free port.
inline ServerOptions test_options() {
  ServerOptions o;
  o.models = {{"micro", micro_model()}};
  o.port = 0;
  o.parallel = 1;
  o.threads = 1;
  o.decoding.temperature_inc = 0.0f;
  return o;
}

// A server on a free loopback port, stopped (gracefully) when destroyed.
struct Running {
  std::unique_ptr<Service> service;
  std::unique_ptr<HttpServer> http;
  explicit Running(const ServerOptions& o) : service(std::make_unique<Service>(o)) {
    http = std::make_unique<HttpServer>(*service);
    http->start();
  }
  ~Running() { http->stop(); }
  int port() const { return http->port(); }
  httplib::Client client() const {
    httplib::Client c("127.0.0.1", port());
    c.set_read_timeout(120, 0);
    return c;
  }
};

inline httplib::MultipartFormDataItems form(const std::string& audio,
                                            std::initializer_list<std::pair<std::string, std::string>> fields = {}) {
  httplib::MultipartFormDataItems items{{"file", audio, "tones.wav", "audio/wav"}};
  for (const auto& [k, v] : fields) items.push_back({k, v, "", ""});
  return items;
}

// A TCP connection to the server for bytes no proper client sends. send_all then read_all (until
// the server closes or `max` bytes).
struct RawConnection {
  int fd = -1;
  explicit RawConnection(int port) {
    fd = ::socket(AF_INET, SOCK_STREAM, 0);
    sockaddr_in a{};
    a.sin_family = AF_INET;
    a.sin_port = htons(static_cast<uint16_t>(port));
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    if (::connect(fd, reinterpret_cast<sockaddr*>(&a), sizeof a) != 0) {
      ::close(fd);
      fd = -1;
    }
    timeval tv{60, 0};
    setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
  }
  ~RawConnection() { close(); }
  void close() {
    if (fd >= 0) ::close(fd);
    fd = -1;
  }
  bool send_all(const std::string& s) const {
    size_t off = 0;
    while (off < s.size()) {
      const ssize_t n = ::send(fd, s.data() + off, s.size() - off, MSG_NOSIGNAL);
      if (n <= 0) return false;
      off += static_cast<size_t>(n);
    }
    return true;
  }
  std::string read_all(size_t max = 1 << 20) const {
    std::string out;
    char buf[4096];
    while (out.size() < max) {
      const ssize_t n = ::recv(fd, buf, sizeof buf, 0);
      if (n <= 0) break;
      out.append(buf, static_cast<size_t>(n));
    }
    return out;
  }
};

}  // namespace hark::server::testing
