// `hark serve`'s HTTP/1.1 transport, on Boost.Beast over Boost.Asio, event-driven: OpenAI's audio
// API (/v1/audio/transcriptions, /v1/audio/translations, /v1/models), whisper.cpp's server API
// (/inference, /load), /health and /metrics, with API keys, CORS, server-sent events, and the
// realtime WebSocket (GET /v1/realtime, handed to server/realtime_session.h).
//
// One I/O thread serves every connection; a connection costs its buffer, not a thread. Every
// limit is enforced as the bytes arrive: the head's size, line count and target length, the API
// key before one body byte is read, the upload size (Content-Length at once, chunked bodies as
// they come), the time the head, each read, the whole body and an idle keep-alive may take. A
// connection's read-ahead stays in its own buffer, so pipelined requests are answered in order
// and bytes inside a body are never read as a request. Transcriptions and /load run on threads
// of their own (through the Service's admission); the I/O thread only parses and writes.
#pragma once
#include <memory>

#include "service.h"

namespace hark::server {

class HttpServer {
 public:
  explicit HttpServer(Service& service);
  ~HttpServer();  // stop()s if still running
  HttpServer(const HttpServer&) = delete;
  HttpServer& operator=(const HttpServer&) = delete;

  // Binds options().host:port (port 0: a free one) and serves on a thread of its own. Throws
  // hark::Error when the address cannot be bound (a port in use is named as such).
  void start();
  int port() const;
  // Graceful: /health answers 503 and new requests 503 while running jobs finish within
  // options().shutdown_grace_sec (the rest are aborted, queued ones answered 503); then every
  // connection is closed (uploads in progress cut, WebSockets closed with 1001). Returns within
  // the grace plus about a second, whatever the clients do.
  void stop();

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace hark::server
