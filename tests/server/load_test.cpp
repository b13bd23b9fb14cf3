// Load: 50 uploads at once against 4 states and a queue of 2. Every request is answered exactly
// once, either with the same text as the clip transcribed alone or with 503 + Retry-After (queue
// full), and the server is healthy and idle afterwards. Micro model, 2-second clips.
#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <string>
#include <thread>
#include <vector>

#include <nlohmann/json.hpp>

#include "server_test_util.h"

namespace hark::server::testing {
namespace {

using nlohmann::json;

TEST(Load, FiftyConcurrentUploadsAreEachAnsweredOnce) {
  ServerOptions o = test_options();
  o.parallel = 4;
  o.threads = 1;
  o.queue_size = 2;
  Running s(o);
  const std::string wav = tones_wav(2.0);
  auto alone = s.client().Post("/v1/audio/transcriptions", form(wav, {{"response_format", "text"}}));
  ASSERT_TRUE(alone);
  ASSERT_EQ(alone->status, 200) << alone->body;

  constexpr int kClients = 50;
  struct Answer {
    int answers = 0;  // responses this client got
    int status = 0;
    std::string body, retry_after, error;
  };
  std::vector<Answer> got(kClients);
  std::atomic<int> ready{0};
  std::vector<std::thread> clients;
  for (int i = 0; i < kClients; ++i) {
    clients.emplace_back([&, i] {
      auto c = s.client();
      ++ready;
      while (ready.load() < kClients) std::this_thread::yield();  // all at once
      auto r = c.Post("/v1/audio/transcriptions", form(wav, {{"response_format", "text"}}));
      if (!r) {
        got[i].error = httplib::to_string(r.error());
        return;
      }
      ++got[i].answers;
      got[i].status = r->status;
      got[i].body = r->body;
      got[i].retry_after = r->get_header_value("Retry-After");
    });
  }
  for (auto& t : clients) t.join();

  int ok = 0, busy = 0;
  for (int i = 0; i < kClients; ++i) {
    const Answer& a = got[i];
    ASSERT_EQ(a.answers, 1) << "client " << i << " got no answer: " << a.error;
    if (a.status == 200) {
      ++ok;
      EXPECT_EQ(a.body, alone->body) << "client " << i;
    } else {
      ASSERT_EQ(a.status, 503) << "client " << i << ": " << a.body;
      ++busy;
      EXPECT_EQ(a.retry_after, "1");
      EXPECT_EQ(json::parse(a.body)["error"]["code"], "queue_full") << a.body;
    }
  }
  EXPECT_EQ(ok + busy, kClients);
  EXPECT_GE(ok, 4);    // at least every state ran one
  EXPECT_GE(busy, 1);  // a queue of 2 cannot hold the burst

  // The server counted each request once (its log line, and so the count, comes just after the
  // answer is written: wait for the last ones).
  auto c = s.client();
  const std::string ok_line =
      "hark_requests_total{route=\"/v1/audio/transcriptions\",status=\"200\"} " + std::to_string(ok + 1) + "\n";
  const std::string busy_line =
      "hark_requests_total{route=\"/v1/audio/transcriptions\",status=\"503\"} " + std::to_string(busy) + "\n";
  std::string metrics;
  for (int i = 0; i < 250; ++i) {
    auto m = c.Get("/metrics");
    ASSERT_TRUE(m);
    metrics = m->body;
    if (metrics.find(ok_line) != std::string::npos && metrics.find(busy_line) != std::string::npos) break;
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  EXPECT_NE(metrics.find(ok_line), std::string::npos) << metrics;
  EXPECT_NE(metrics.find(busy_line), std::string::npos) << metrics;
  auto h = c.Get("/health");
  ASSERT_TRUE(h);
  EXPECT_EQ(h->status, 200);
  const json health = json::parse(h->body);
  EXPECT_EQ(health["jobs_running"], 0);
  EXPECT_EQ(health["jobs_queued"], 0);
  auto again = c.Post("/v1/audio/transcriptions", form(wav, {{"response_format", "text"}}));
  ASSERT_TRUE(again);
  EXPECT_EQ(again->status, 200);
  EXPECT_EQ(again->body, alone->body);
}

}  // namespace
}  // namespace hark::server::testing
