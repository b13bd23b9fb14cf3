// Whether the client of a request still holds its connection, so a job whose client went away
// is aborted instead of computing an answer nobody reads.
//
// cpp-httplib 0.11 (Debian's) gives a handler no way to see its socket (is_connection_closed
// came in later versions). hark's ConnectionServer knows it (on_socket); without it, find()
// searches: the one TCP socket of this process whose local
// port is the request's local port and whose peer is the request's remote address and port. The
// worker thread answering the request owns that descriptor until the response is written, so it
// stays the same socket for as long as the handler (or its content provider) runs.
#pragma once
#include <string>

namespace hark::server {

class ConnectionProbe {
 public:
  ConnectionProbe() = default;
  static ConnectionProbe find(const std::string& remote_addr, int remote_port, int local_port);
  // The probe of a socket known already (ConnectionServer::current_socket): no search.
  static ConnectionProbe on_socket(int fd) {
    ConnectionProbe p;
    p.fd_ = fd;
    return p;
  }

  bool found() const { return fd_ >= 0; }
  // The peer closed the connection (end of stream, reset or hang-up). false when not found.
  // Bytes the client sent ahead (a pipelined request) count as alive; a client that shuts down
  // its sending half while it waits counts as gone. Takes no time (no blocking).
  bool closed() const;

 private:
  int fd_ = -1;
};

}  // namespace hark::server
