#include "guarded_stream.h"

#include <netdb.h>
#include <poll.h>
#include <sys/socket.h>

#include <algorithm>
#include <cerrno>
#include <cstring>

namespace hark::server {

namespace {

int wait_for(int fd, short events, int ms) {
  pollfd p{fd, events, 0};
  int r;
  do r = ::poll(&p, 1, std::max(ms, 0));
  while (r < 0 && errno == EINTR);
  return r;
}

void ip_and_port(const sockaddr_storage& a, socklen_t len, std::string& ip, int& port) {
  char host[NI_MAXHOST], serv[NI_MAXSERV];
  if (getnameinfo(reinterpret_cast<const sockaddr*>(&a), len, host, sizeof host, serv, sizeof serv,
                  NI_NUMERICHOST | NI_NUMERICSERV) == 0) {
    ip = host;
    port = std::atoi(serv);
  }
}

}  // namespace

GuardedStream::GuardedStream(int fd, const ReadLimits& limits) : fd_(fd), limits_(limits), start_(Clock::now()) {}

int GuardedStream::wait_ms() const {
  using ms = std::chrono::milliseconds;
  const auto per_read = std::chrono::duration<double>(limits_.read_timeout_s);
  Clock::time_point deadline;
  if (!head_done_) {
    deadline =
        start_ + std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double>(limits_.header_timeout_s));
  } else if (limits_.min_body_rate > 0) {
    // Grace of one read timeout, then the body must keep up the minimum rate on average.
    deadline = head_end_ +
               std::chrono::duration_cast<Clock::duration>(
                   per_read + std::chrono::duration<double>(static_cast<double>(body_bytes_) / limits_.min_body_rate));
  } else {
    deadline = Clock::time_point::max();
  }
  const auto now = Clock::now();
  const auto by_deadline =
      deadline == Clock::time_point::max() ? ms::max() : std::chrono::duration_cast<ms>(deadline - now);
  const auto by_read = std::chrono::duration_cast<ms>(per_read);
  return static_cast<int>(std::max<long long>(0, std::min(by_deadline, by_read).count()));
}

bool GuardedStream::is_readable() const {
  if (buf_off_ < buf_len_) return true;
  const bool ready = wait_for(fd_, POLLIN, wait_ms()) > 0;
  if (!ready) timed_out_ = true;
  return ready;
}

bool GuardedStream::is_writable() const {
  return wait_for(fd_, POLLOUT, static_cast<int>(limits_.write_timeout_s * 1000)) > 0;
}

ssize_t GuardedStream::read(char* ptr, size_t size) {
  if (buf_off_ == buf_len_) {
    if (!is_readable()) return -1;
    ssize_t n;
    do n = ::recv(fd_, buf_, sizeof buf_, 0);
    while (n < 0 && errno == EINTR);
    if (n <= 0) return n;
    buf_off_ = 0;
    buf_len_ = static_cast<size_t>(n);
  }
  const size_t n = std::min(size, buf_len_ - buf_off_);
  std::memcpy(ptr, buf_ + buf_off_, n);
  buf_off_ += n;
  if (head_done_) {
    body_bytes_ += n;
  } else {
    for (size_t i = 0; i < n && !head_done_; ++i) {
      tail_ = (tail_ << 8) | static_cast<unsigned char>(ptr[i]);
      if (tail_ == 0x0d0a0d0au) {  // "\r\n\r\n": the head is complete
        head_done_ = true;
        head_end_ = Clock::now();
        body_bytes_ = n - i - 1;
      }
    }
  }
  return static_cast<ssize_t>(n);
}

ssize_t GuardedStream::write(const char* ptr, size_t size) {
  if (!is_writable()) return -1;
  ssize_t n;
  do n = ::send(fd_, ptr, size, MSG_NOSIGNAL);
  while (n < 0 && errno == EINTR);
  return n;
}

void GuardedStream::get_remote_ip_and_port(std::string& ip, int& port) const {
  sockaddr_storage a{};
  socklen_t len = sizeof a;
  if (getpeername(fd_, reinterpret_cast<sockaddr*>(&a), &len) == 0) ip_and_port(a, len, ip, port);
}

void GuardedStream::get_local_ip_and_port(std::string& ip, int& port) const {
  sockaddr_storage a{};
  socklen_t len = sizeof a;
  if (getsockname(fd_, reinterpret_cast<sockaddr*>(&a), &len) == 0) ip_and_port(a, len, ip, port);
}

}  // namespace hark::server
