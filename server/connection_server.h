// cpp-httplib's server with the connection loop in hark's hands, for two things httplib 0.11
// cannot do itself: requests are read through GuardedStream (deadlines a slow client cannot
// stretch, server/guarded_stream.h), and a connection whose request is `GET <upgrade path>` (the
// realtime WebSocket) is handed over, unread, to a handler that speaks WebSocket on it.
//
// httplib runs each accepted connection through the virtual process_and_close_socket on a worker
// thread of its pool; this class overrides it and rebuilds httplib's keep-alive loop from its
// protected parts (process_request and the timeouts), so routing, handlers, content providers
// and the logger stay httplib's.
#pragma once
#include <httplib.h>

#include <functional>
#include <string>
#include <vector>

#include "guarded_stream.h"

namespace hark::server {

class ConnectionServer : public httplib::Server {
 public:
  // Takes over a connection whose first request is a GET of one of `paths` (before its head is
  // read) and returns once done with it; the socket is closed afterwards by this class.
  void set_upgrade_handler(std::vector<std::string> paths, std::function<void(int fd)> handler);
  void set_read_limits(const ReadLimits& limits) { limits_ = limits; }
  const ReadLimits& read_limits() const { return limits_; }

  // On a worker thread: whether the request it is answering failed because the client was too
  // slow (the error handler answers 408 then).
  static bool request_timed_out();
  // The socket of the connection this worker thread is serving, -1 outside one: a handler's own
  // connection (for ConnectionProbe).
  static int current_socket();

 private:
  bool process_and_close_socket(int sock) override;
  bool serve_connection(int sock);
  // Waits (up to the keep-alive timeout, or the server stopping) for the next request's bytes.
  bool wait_for_request(int sock) const;
  bool is_upgrade_request(int sock) const;

  ReadLimits limits_;
  std::vector<std::string> upgrade_paths_;
  std::function<void(int)> upgrade_;
};

}  // namespace hark::server
