#include "connection_probe.h"

#include <poll.h>
#include <sys/socket.h>

#include <cerrno>

namespace hark::server {

bool ConnectionProbe::closed() const {
  if (fd_ < 0) return false;
  pollfd p{fd_, POLLIN | POLLRDHUP, 0};
  if (poll(&p, 1, 0) <= 0) return false;  // nothing happened: still connected
  if (p.revents & (POLLRDHUP | POLLHUP | POLLERR | POLLNVAL)) return true;
  if (p.revents & POLLIN) {
    char c;
    const ssize_t n = recv(fd_, &c, 1, MSG_PEEK | MSG_DONTWAIT);
    return n == 0 || (n < 0 && errno != EAGAIN && errno != EWOULDBLOCK && errno != EINTR);
  }
  return false;
}

}  // namespace hark::server
