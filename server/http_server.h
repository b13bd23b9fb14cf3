// `hark serve`'s HTTP transport, on cpp-httplib: OpenAI's audio API (/v1/audio/transcriptions,
// /v1/audio/translations, /v1/models), whisper.cpp's server API (/inference, /load), /health and
// /metrics, with API keys, CORS, the upload limit, server-sent events and slow-client deadlines,
// and hands GET /v1/realtime connections to the WebSocket session (server/realtime_session.h). It parses requests into
// server/request.h, lets the Service do the work, and writes the answers (server/responses.h).
#pragma once
#include <memory>
#include <thread>

#include "service.h"

namespace hark::server {

class ConnectionServer;

class HttpServer {
 public:
  explicit HttpServer(Service& service);
  ~HttpServer();  // stop()s if still running
  HttpServer(const HttpServer&) = delete;
  HttpServer& operator=(const HttpServer&) = delete;

  // Binds options().host:port (port 0: a free one) and serves on a thread of its own. Throws
  // hark::Error when the address cannot be bound.
  void start();
  int port() const { return port_; }
  // Graceful: stops accepting, lets running jobs finish within options().shutdown_grace_sec,
  // aborts the rest, answers what is in flight, and returns once every connection is closed.
  void stop();

 private:
  void routes();

  Service& svc_;
  std::unique_ptr<ConnectionServer> http_;
  std::thread thread_;
  int port_ = -1;
  bool stopped_ = false;
};

}  // namespace hark::server
