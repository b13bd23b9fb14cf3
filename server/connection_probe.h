// Whether the client of a request still holds its connection, so a job whose client went away
// is aborted instead of computing an answer nobody reads. The HTTP server does not read from a
// connection while its request runs; the probe looks at the socket itself, without reading.
#pragma once

namespace hark::server {

class ConnectionProbe {
 public:
  explicit ConnectionProbe(int fd) : fd_(fd) {}
  // The peer closed the connection (end of stream, reset or hang-up). Bytes the client sent ahead
  // (a pipelined request) count as alive; a client that shuts down its sending half while it
  // waits counts as gone. Takes no time (no blocking).
  bool closed() const;

 private:
  int fd_;
};

}  // namespace hark::server
