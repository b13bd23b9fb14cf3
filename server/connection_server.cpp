#include "connection_server.h"

#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <thread>

namespace hark::server {

namespace {

thread_local const GuardedStream* t_stream = nullptr;  // the request this worker reads
thread_local int t_socket = -1;                        // the connection this worker serves

using Clock = std::chrono::steady_clock;

}  // namespace

void ConnectionServer::set_upgrade_handler(std::vector<std::string> paths, std::function<void(int fd)> handler) {
  upgrade_paths_ = std::move(paths);
  upgrade_ = std::move(handler);
}

bool ConnectionServer::request_timed_out() { return t_stream && t_stream->timed_out(); }

int ConnectionServer::current_socket() { return t_socket; }

bool ConnectionServer::process_and_close_socket(int sock) {
  t_socket = sock;
  const bool ok = serve_connection(sock);
  t_socket = -1;
  ::shutdown(sock, SHUT_RDWR);
  ::close(sock);
  return ok;
}

bool ConnectionServer::wait_for_request(int sock) const {
  // In short steps, so a stopping server (svr_sock_ invalid) lets idle connections go at once.
  const auto until = Clock::now() + std::chrono::seconds(keep_alive_timeout_sec_);
  while (svr_sock_ != INVALID_SOCKET) {
    pollfd p{sock, POLLIN, 0};
    const int r = ::poll(&p, 1, 100);
    if (r > 0) return true;
    if (r < 0 && errno != EINTR) return false;
    if (Clock::now() >= until) return false;
  }
  return false;
}

// Peeks (reads nothing) at the request line until it shows whether this is `GET <path>` for an
// upgrade path: only a request that starts with "GET /" is waited for, and no longer than the
// header timeout.
bool ConnectionServer::is_upgrade_request(int sock) const {
  if (!upgrade_) return false;
  size_t longest = 0;
  for (const auto& p : upgrade_paths_) longest = std::max(longest, p.size());
  const size_t need = 4 + longest + 1;  // "GET " + path + the byte after it
  const auto until = Clock::now() + std::chrono::duration_cast<Clock::duration>(
                                        std::chrono::duration<double>(limits_.header_timeout_s));
  std::string head(need, '\0');
  while (true) {
    const ssize_t n = ::recv(sock, head.data(), need, MSG_PEEK | MSG_DONTWAIT);
    if (n < 0 && errno != EAGAIN && errno != EWOULDBLOCK && errno != EINTR) return false;
    const size_t got = n > 0 ? static_cast<size_t>(n) : 0;
    const std::string seen = head.substr(0, got);
    if (std::string("GET /").compare(0, std::min<size_t>(got, 5), seen, 0, std::min<size_t>(got, 5)) != 0) return false;
    for (const auto& p : upgrade_paths_) {
      const std::string line = "GET " + p;
      if (got > line.size() && seen.compare(0, line.size(), line) == 0) {
        const char next = seen[line.size()];
        if (next == ' ' || next == '?') return true;
      }
    }
    if (got >= need || seen.find('\n') != std::string::npos || n == 0) return false;
    if (Clock::now() >= until || svr_sock_ == INVALID_SOCKET) return false;
    pollfd p{sock, POLLIN, 0};
    ::poll(&p, 1, 20);  // more bytes come; MSG_PEEK leaves the socket readable, so pace the loop
    if (p.revents & (POLLHUP | POLLERR)) return false;
  }
}

bool ConnectionServer::serve_connection(int sock) {
  bool ok = false;
  for (size_t left = keep_alive_max_count_; left > 0 && svr_sock_ != INVALID_SOCKET; --left) {
    if (!wait_for_request(sock)) break;
    if (is_upgrade_request(sock)) {
      upgrade_(sock);
      return true;
    }
    GuardedStream stream(sock, limits_);
    bool connection_closed = false;
    t_stream = &stream;
    ok = process_request(stream, left == 1, connection_closed, nullptr);
    t_stream = nullptr;
    if (!ok && stream.timed_out() && stream.in_head()) {
      // httplib gives up on a head it could not read without answering; say why.
      const std::string body = R"j({"error":{"message":"the request head was not sent in time (--header-timeout)",)j"
                               R"j("type":"invalid_request_error","param":null,"code":"request_timeout"}})j";
      const std::string answer =
          "HTTP/1.1 408 Request Timeout\r\nConnection: close\r\nContent-Type: application/json\r\n"
          "Content-Length: " +
          std::to_string(body.size()) + "\r\n\r\n" + body;
      stream.write(answer.data(), answer.size());
    }
    // A client too slow once gets no second chance on the same connection.
    if (!ok || connection_closed || stream.timed_out()) break;
  }
  return ok;
}

}  // namespace hark::server
