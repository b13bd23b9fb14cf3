// A client connection as httplib reads and writes it, with deadlines that a slow client cannot
// stretch (slowloris): the request line and headers must all arrive within header_timeout, and
// the body at no less than min_body_rate on average (after a read_timeout of grace), besides
// httplib's own rule that no single wait for bytes may last longer than read_timeout. A client
// that trickles a byte now and then therefore cannot hold a worker thread for long.
#pragma once
#include <httplib.h>

#include <chrono>

namespace hark::server {

struct ReadLimits {
  double read_timeout_s = 30;    // longest wait for the next bytes
  double header_timeout_s = 10;  // the whole head (request line + headers)
  double min_body_rate = 1024;   // bytes per second the body must average (0: no floor)
  double write_timeout_s = 30;   // longest wait for the client to take bytes
};

class GuardedStream final : public httplib::Stream {
 public:
  GuardedStream(int fd, const ReadLimits& limits);

  bool is_readable() const override;
  bool is_writable() const override;
  ssize_t read(char* ptr, size_t size) override;
  ssize_t write(const char* ptr, size_t size) override;
  void get_remote_ip_and_port(std::string& ip, int& port) const override;
  void get_local_ip_and_port(std::string& ip, int& port) const override;
  int socket() const override { return fd_; }

  // A read failed because a deadline passed (not because the client closed).
  bool timed_out() const { return timed_out_; }
  // The head had not been completely read yet.
  bool in_head() const { return !head_done_; }

 private:
  using Clock = std::chrono::steady_clock;
  int wait_ms() const;  // how long the next read may wait

  int fd_;
  ReadLimits limits_;
  Clock::time_point start_, head_end_{};
  bool head_done_ = false;
  unsigned tail_ = 0;  // the last 4 bytes read, to see the blank line that ends the head
  size_t body_bytes_ = 0;
  mutable bool timed_out_ = false;
  char buf_[4096];
  size_t buf_off_ = 0, buf_len_ = 0;
};

}  // namespace hark::server
