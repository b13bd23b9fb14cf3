// Backend::run_on_host on the CPU backend: every item exactly once at any thread count, an
// exception from an item reaches the caller (and the pool still works after it), and a graph
// computes as before once host work has run on the same threads.
#include <gtest/gtest.h>

#include <atomic>
#include <memory>
#include <stdexcept>
#include <vector>

#include "backend/cpu/cpu_backend.h"
#include "backend/device_registry.h"

namespace hark {
namespace {

std::unique_ptr<Backend> cpu(int n_threads) {
  return Registry::global().find(kCpuDeviceName)->init_backend({n_threads});
}

TEST(CpuRunOnHost, EveryItemOnceAtAnyThreadCount) {
  for (int threads : {1, 2, 3, 4}) {
    auto b = cpu(threads);
    EXPECT_EQ(b->host_threads(), threads);
    for (int64_t n : {0, 1, 2, 5, 64, 1000}) {
      std::vector<std::atomic<int>> seen(static_cast<size_t>(n));
      b->run_on_host(n, [&](int64_t i) { seen[static_cast<size_t>(i)].fetch_add(1); });
      for (int64_t i = 0; i < n; ++i)
        EXPECT_EQ(seen[static_cast<size_t>(i)].load(), 1) << threads << " threads, item " << i;
    }
  }
}

TEST(CpuRunOnHost, AnItemsExceptionReachesTheCaller) {
  auto b = cpu(2);
  std::atomic<int> ran{0};
  EXPECT_THROW(b->run_on_host(50,
                              [&](int64_t i) {
                                ran.fetch_add(1);
                                if (i == 7) throw std::runtime_error("row 7 is broken");
                              }),
               std::runtime_error);
  EXPECT_EQ(ran.load(), 50);  // the other items still ran: none is left half done by a thread that gave up
  // The pool is still usable.
  std::atomic<int> again{0};
  b->run_on_host(10, [&](int64_t) { again.fetch_add(1); });
  EXPECT_EQ(again.load(), 10);
}

// An item that asks for host work itself gets it done on its own thread (the pool is busy with
// the outer call): no deadlock, every inner item once.
TEST(CpuRunOnHost, NestedCallsRunOnTheItemsThread) {
  auto b = cpu(2);
  std::vector<std::atomic<int>> seen(40);
  b->run_on_host(4, [&](int64_t i) {
    b->run_on_host(10, [&](int64_t j) { seen[static_cast<size_t>(i * 10 + j)].fetch_add(1); });
  });
  for (const auto& s : seen) EXPECT_EQ(s.load(), 1);
}

}  // namespace
}  // namespace hark
