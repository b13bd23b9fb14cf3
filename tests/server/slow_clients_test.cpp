// Slow clients (slowloris): connections that send a request's head or body a byte at a time, more
// of them than the server has worker threads, are cut off with 408 by the read deadlines
// (--header-timeout, --read-timeout, --min-body-rate), and a normal request sent meanwhile is
// still answered.
#include <gtest/gtest.h>
#include <poll.h>

#include <string>
#include <thread>
#include <vector>

#include "server_test_util.h"

namespace hark::server::testing {
namespace {

// Sends `head` at once, then `trickle` one byte every 100 ms until the server answers or closes
// (or 30 s pass, which would be a failure). Returns what the server sent back.
std::string trickle(int port, const std::string& head, const std::string& trickle_bytes, bool* cut) {
  RawConnection c(port);
  if (c.fd < 0 || !c.send_all(head)) return {};
  *cut = false;
  for (size_t i = 0; i < 300; ++i) {
    pollfd p{c.fd, POLLIN, 0};
    if (::poll(&p, 1, 100) > 0) {  // an answer, or the connection closed
      *cut = true;
      break;
    }
    if (!c.send_all(trickle_bytes.substr(i % trickle_bytes.size(), 1))) {
      *cut = true;
      break;
    }
  }
  return c.read_all();
}

TEST(SlowClients, TricklersAreCutOffWhileANormalRequestIsServed) {
  ServerOptions o = test_options();
  o.queue_size = 0;  // 1 state + 0 queued + 4 spare: five workers, fewer than the slow clients
  o.header_timeout_sec = 1;
  o.read_timeout_sec = 1;
  o.min_body_rate = 1000;
  Running s(o);

  const std::string slow_head = "POST /v1/audio/transcriptions HTTP/1.1\r\nHost: x\r\nX-Slow: ";
  const std::string slow_body_head =
      "POST /v1/audio/transcriptions HTTP/1.1\r\nHost: x\r\n"
      "Content-Type: multipart/form-data; boundary=b\r\nContent-Length: 100000\r\n\r\n--b\r\n";
  constexpr int kEach = 4;
  std::vector<std::string> answers(2 * kEach);
  bool cut[2 * kEach] = {};
  std::vector<std::thread> slow;
  for (int i = 0; i < kEach; ++i) {
    slow.emplace_back([&, i] { answers[i] = trickle(s.port(), slow_head, "abcdefgh", &cut[i]); });
    slow.emplace_back([&, i] { answers[kEach + i] = trickle(s.port(), slow_body_head, "xyz", &cut[kEach + i]); });
  }
  std::this_thread::sleep_for(std::chrono::milliseconds(300));  // let them take the workers

  auto c = s.client();
  auto r = c.Post("/v1/audio/transcriptions", form(tones_wav(), {{"response_format", "text"}}));
  ASSERT_TRUE(r) << httplib::to_string(r.error());
  EXPECT_EQ(r->status, 200) << r->body;

  for (auto& t : slow) t.join();
  for (int i = 0; i < 2 * kEach; ++i) {
    EXPECT_TRUE(cut[i]) << "slow client " << i << " was never cut off";
    EXPECT_EQ(answers[i].rfind("HTTP/1.1 408", 0), 0u) << "slow client " << i << ": " << answers[i].substr(0, 200);
  }
  auto h = c.Get("/health");
  ASSERT_TRUE(h);
  EXPECT_EQ(h->status, 200);
}

TEST(SlowClients, ASlowRealtimeUpgradeIsCutOffToo) {
  ServerOptions o = test_options();
  o.header_timeout_sec = 1;
  Running s(o);
  bool cut = false;
  trickle(s.port(), "GET /v1/realtime HTTP/1.1\r\nHost: x\r\nX-Slow: ", "abc", &cut);
  EXPECT_TRUE(cut);
  auto h = s.client().Get("/health");
  ASSERT_TRUE(h);
  EXPECT_EQ(h->status, 200);
}

}  // namespace
}  // namespace hark::server::testing
