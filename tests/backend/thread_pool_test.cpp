// The CPU thread pool: every thread runs each job once, barriers separate phases, broken barriers
// release everyone, and waits that sleep are woken, also with more threads than cores; and
// WorkClaims, which hands a node's items to the pool's threads. Pools
// built with a spin of 0 sleep at every wait, so the sleeping paths run on every machine; tests
// that need a thread to be asleep wait for the pool to say so (sleeping()), never for a time. A
// hang shows up as the test timing out.
#include <gtest/gtest.h>

#if defined(__linux__)
#include <sched.h>
#include <sys/resource.h>
#endif

#include <algorithm>
#include <atomic>
#include <chrono>
#include <memory>
#include <thread>
#include <vector>

#include "backend/cpu/cpu_ops.h"
#include "backend/cpu/thread_pool.h"

namespace hark::cpu {
namespace {

int more_threads_than_cores() { return 2 * static_cast<int>(std::max(1u, std::thread::hardware_concurrency())) + 1; }

// Until `pool` reports `n` threads asleep.
void await_sleeping(const ThreadPool& pool, int n) {
  while (pool.sleeping() < n) std::this_thread::yield();
}

// Pools to run each behaviour on: always sleeping, a short spin, the default.
std::vector<int64_t> spins() { return {0, 1'000, ThreadPool::kDefaultSpinNs}; }

TEST(ThreadPool, EveryThreadRunsEachJobOnce) {
  for (int n : {1, 2, 3, 8, more_threads_than_cores()}) {
    for (int64_t spin : spins()) {
      ThreadPool pool(n, spin);
      EXPECT_EQ(pool.size(), n);
      for (int job = 0; job < 200; ++job) {
        std::vector<std::atomic<int>> ran(static_cast<size_t>(n));
        std::atomic<int> wrong_nth{0};
        pool.run([&](int ith, int nth) {
          ran[static_cast<size_t>(ith)].fetch_add(1);
          if (nth != n) wrong_nth.fetch_add(1);
        });
        for (int i = 0; i < n; ++i)
          ASSERT_EQ(ran[static_cast<size_t>(i)].load(), 1) << "n=" << n << " spin=" << spin << " thread " << i;
        ASSERT_EQ(wrong_nth.load(), 0);
      }
    }
  }
}

// Every item of a node goes to exactly one thread, in pieces of the chunk size (the last one
// shorter), whatever the thread count, chunk and item count; without a shared counter each thread
// takes its even share, as ComputeContext::range gives it.
TEST(WorkClaims, EveryItemClaimedExactlyOnce) {
  for (int n : {1, 2, 3, 8}) {
    ThreadPool pool(n, 1'000);
    for (int64_t items : {int64_t{0}, int64_t{1}, int64_t{63}, int64_t{64}, int64_t{1000}, int64_t{51865}}) {
      for (int64_t chunk : {int64_t{1}, int64_t{64}, int64_t{1000}}) {
        for (bool shared : {true, false}) {
          std::vector<std::atomic<int>> taken(static_cast<size_t>(items));
          std::atomic<int64_t> counter{0};
          std::atomic<int> bad_piece{0};
          pool.run([&](int ith, int nth) {
            ComputeContext ctx;
            ctx.ith = ith;
            ctx.nth = nth;
            ctx.claim = shared ? &counter : nullptr;
            WorkClaims claims(ctx, items, chunk);
            for (int64_t b, e; claims.next(&b, &e);) {
              if (shared && (b % chunk != 0 || e - b > chunk)) bad_piece.fetch_add(1);
              if (!shared) {
                int64_t rb, re;
                ctx.range(items, &rb, &re);
                if (b != rb || e != re) bad_piece.fetch_add(1);
              }
              for (int64_t i = b; i < e; ++i) taken[static_cast<size_t>(i)].fetch_add(1);
            }
          });
          ASSERT_EQ(bad_piece.load(), 0) << "n=" << n << " items=" << items << " chunk=" << chunk;
          for (int64_t i = 0; i < items; ++i)
            ASSERT_EQ(taken[static_cast<size_t>(i)].load(), 1)
                << "n=" << n << " items=" << items << " chunk=" << chunk << " shared=" << shared << " item " << i;
        }
      }
    }
  }
}

TEST(ThreadPool, FewerThanOneThreadMeansOne) {
  ThreadPool pool(0);
  EXPECT_EQ(pool.size(), 1);
  int calls = 0;
  pool.run([&](int ith, int nth) {
    EXPECT_EQ(ith, 0);
    EXPECT_EQ(nth, 1);
    ++calls;
  });
  EXPECT_EQ(calls, 1);
}

// Each round every thread writes its slot, waits at a barrier, then checks that every slot holds
// this round; a second barrier keeps the next round's writes after all checks. A thread that
// left a barrier early would see an old round (or overwrite a slot being checked).
void expect_barriers_separate_rounds(ThreadPool& pool, int rounds) {
  const int n = pool.size();
  std::vector<std::atomic<int>> slot(static_cast<size_t>(n));
  for (auto& s : slot) s.store(-1);
  std::atomic<int> errors{0};
  pool.run([&](int ith, int nth) {
    for (int r = 0; r < rounds; ++r) {
      slot[static_cast<size_t>(ith)].store(r, std::memory_order_relaxed);
      pool.barrier();
      for (int j = 0; j < nth; ++j)
        if (slot[static_cast<size_t>(j)].load(std::memory_order_relaxed) != r) errors.fetch_add(1);
      pool.barrier();
    }
  });
  EXPECT_EQ(errors.load(), 0) << "threads=" << n << " spin=" << pool.spin_ns();
}

TEST(ThreadPool, BarriersSeparateRoundsOverManyIterations) {
  for (int n : {2, 3, 4}) {
    for (int64_t spin : spins()) {
      ThreadPool pool(n, spin);
      expect_barriers_separate_rounds(pool, 5000);
    }
  }
}

TEST(ThreadPool, MoreThreadsThanCoresStillPassBarriers) {
  // Every barrier needs all threads, and some of them are always off a core: this only ends if
  // waiting threads give their cores up.
  for (int64_t spin : spins()) {
    ThreadPool pool(more_threads_than_cores(), spin);
    expect_barriers_separate_rounds(pool, 300);
    for (int job = 0; job < 50; ++job) expect_barriers_separate_rounds(pool, 2);
  }
}

TEST(ThreadPool, SleepingBarrierWaitersAreWoken) {
  for (int n : {2, 4}) {
    ThreadPool pool(n, 0);
    for (int round = 0; round < 100; ++round) {
      std::atomic<int> passed{0};
      pool.run([&](int ith, int) {
        // The others are asleep at the barrier when thread 0 arrives: its arrival must wake them.
        if (ith == 0) await_sleeping(pool, n - 1);
        pool.barrier();
        passed.fetch_add(1);
      });
      ASSERT_EQ(passed.load(), n);
    }
  }
}

TEST(ThreadPool, WorkersAsleepBetweenJobsWakeForTheNextJob) {
  for (int n : {2, 4}) {
    ThreadPool pool(n, 0);
    for (int job = 0; job < 50; ++job) {
      await_sleeping(pool, n - 1);  // every worker asleep, waiting for a job
      std::atomic<int> ran{0};
      pool.run([&](int, int) { ran.fetch_add(1); });
      ASSERT_EQ(ran.load(), n);
    }
  }
}

TEST(ThreadPool, CallerAsleepWaitingForWorkersIsWoken) {
  ThreadPool pool(3, 0);
  for (int job = 0; job < 50; ++job) {
    std::atomic<bool> caller_done{false};
    pool.run([&](int ith, int) {
      if (ith == 0) {
        caller_done.store(true);
      } else {
        while (!caller_done.load()) std::this_thread::yield();
        await_sleeping(pool, 1);  // the caller, waiting for the workers to finish
      }
    });
  }
  SUCCEED();
}

TEST(ThreadPool, BreakBarriersReleasesWaitersForTheRestOfTheJob) {
  for (int64_t spin : spins()) {
    const int n = 4;
    ThreadPool pool(n, spin);
    std::atomic<int> passed{0};
    pool.run([&](int ith, int) {
      if (ith == 1) {
        // Never arrives: breaks the barriers instead, as a failing op does.
        pool.break_barriers();
        return;
      }
      for (int b = 0; b < 10; ++b) pool.barrier();
      passed.fetch_add(1);
    });
    EXPECT_EQ(passed.load(), n - 1);
    // The next job has whole barriers again.
    expect_barriers_separate_rounds(pool, 200);
  }
}

TEST(ThreadPool, BreakBarriersWakesSleepingWaiters) {
  const int n = 4;
  ThreadPool pool(n, 0);
  for (int round = 0; round < 50; ++round) {
    std::atomic<int> passed{0};
    pool.run([&](int ith, int) {
      if (ith == 1) {
        await_sleeping(pool, n - 1);  // the other three asleep at the barrier
        pool.break_barriers();
        return;
      }
      pool.barrier();
      passed.fetch_add(1);
    });
    ASSERT_EQ(passed.load(), n - 1);
  }
  expect_barriers_separate_rounds(pool, 200);
}

TEST(ThreadPool, BreakWhileSomeHaveArrivedLeavesNoOneBehind) {
  // A break can come while a barrier is partly full and others are between barriers; a thread
  // that arrives later must not wait for the count that will never complete.
  const int n = 4;
  for (int64_t spin : spins()) {
    ThreadPool pool(n, spin);
    for (int round = 0; round < 200; ++round) {
      std::atomic<int> passed{0};
      pool.run([&](int ith, int) {
        for (int b = 0; b < 20; ++b) {
          if (ith == (round % (n - 1)) + 1 && b == round % 20) {
            pool.break_barriers();
            return;
          }
          pool.barrier();
        }
        passed.fetch_add(1);
      });
      ASSERT_EQ(passed.load(), n - 1) << "round " << round;
    }
  }
}

#if defined(__linux__)
uint64_t involuntary_switches() {
  rusage ru{};
  getrusage(RUSAGE_THREAD, &ru);
  return static_cast<uint64_t>(ru.ru_nivcsw);
}

// Pins the calling thread to the first CPU it may use (threads it makes later inherit that), so
// that they and a busy thread must share it; `old_set` gets the affinity to restore.
bool pin_to_one_cpu(cpu_set_t* old_set) {
  if (sched_getaffinity(0, sizeof(*old_set), old_set) != 0) return false;
  cpu_set_t one;
  CPU_ZERO(&one);
  int cpu = 0;
  while (!CPU_ISSET(cpu, old_set)) ++cpu;
  CPU_SET(cpu, &one);
  return sched_setaffinity(0, sizeof(one), &one) == 0;
}

TEST(ThreadPool, APreemptedThreadCutsTheSpin) {
  // The pool's threads and a busy thread share one CPU, so the caller is taken off it while it
  // could still run (an involuntary switch): the pool then spins less, and still works.
  if (sched_getscheduler(0) != SCHED_OTHER)
    GTEST_SKIP() << "needs time-sharing scheduling (a real-time thread is never preempted by its equals)";
  cpu_set_t old_set;
  ASSERT_TRUE(pin_to_one_cpu(&old_set));  // threads made from here on inherit it
  {
    ThreadPool pool(2);
    EXPECT_EQ(pool.spin_ns(), ThreadPool::kDefaultSpinNs);
    std::atomic<bool> stop{false};
    std::thread busy([&] {
      while (!stop.load(std::memory_order_relaxed)) {
      }
    });
    pool.run([&](int ith, int) {
      if (ith != 0) return;
      const uint64_t before = involuntary_switches();
      while (involuntary_switches() == before) {
      }
    });
    stop.store(true);
    busy.join();
    EXPECT_LT(pool.spin_ns(), ThreadPool::kDefaultSpinNs);
    EXPECT_GT(pool.spin_ns(), 0);
    expect_barriers_separate_rounds(pool, 200);
  }
  ASSERT_EQ(sched_setaffinity(0, sizeof(old_set), &old_set), 0);
}

// Jobs that may run narrow run on the caller alone once the pool's threads lose their cores at
// an oversubscribed rate (here the pool's two threads and a busy thread share one CPU), with
// barriers that return at once and the work split for one thread; jobs that must run on every
// thread still do; and once the CPU is free again the jobs go back to full width.
TEST(ThreadPool, OversubscribedJobsRunNarrowThenWidenAgain) {
  if (sched_getscheduler(0) != SCHED_OTHER)
    GTEST_SKIP() << "needs time-sharing scheduling (a real-time thread is never preempted by its equals)";
  using Clock = std::chrono::steady_clock;
  cpu_set_t old_set;
  ASSERT_TRUE(pin_to_one_cpu(&old_set));  // threads made from here on inherit it
  ThreadPool pool(2);
  std::atomic<bool> stop{false};
  std::thread busy([&] {
    while (!stop.load(std::memory_order_relaxed)) {
    }
  });
  // A job that splits 1000 items by nth, with a barrier between two phases, and keeps thread 0
  // busy for `busy_for`; it returns its width.
  std::vector<int> items(1000);
  auto job = [&](std::chrono::microseconds busy_for) {
    std::atomic<int> width{0};
    std::fill(items.begin(), items.end(), 0);
    pool.run(
        [&](int ith, int nth) {
          if (ith == 0) width.store(nth);
          const int64_t per = (1000 + nth - 1) / nth;
          for (int64_t i = ith * per; i < std::min<int64_t>(1000, (ith + 1) * per); ++i)
            items[static_cast<size_t>(i)] += 1;
          pool.barrier();
          for (int64_t i = ith * per; i < std::min<int64_t>(1000, (ith + 1) * per); ++i)
            items[static_cast<size_t>(i)] *= 2;
          if (ith == 0)
            for (const auto end = Clock::now() + busy_for; Clock::now() < end;) {
            }
        },
        ThreadPool::Width::AdaptToLoad);
    for (int v : items) EXPECT_EQ(v, 2);
    return width.load();
  };
  // Bounded, so a machine that never preempts fails here instead of hanging.
  int width = 2;
  for (int j = 0; j < 1000 && width == 2; ++j) width = job(std::chrono::milliseconds(2));
  EXPECT_EQ(width, 1);
  EXPECT_GT(pool.narrow_jobs(), 0u);
  // A job that must run on every thread still does.
  std::atomic<int> ran{0};
  pool.run([&](int, int nth) { ran.fetch_add(nth); });
  EXPECT_EQ(ran.load(), 4);  // two threads, each told nth = 2
  stop.store(true);
  busy.join();
  ASSERT_EQ(sched_setaffinity(0, sizeof(old_set), &old_set), 0);
  // The CPU is free again: after the narrow spell a job runs on both threads.
  for (const auto give_up = Clock::now() + std::chrono::seconds(20); width == 1 && Clock::now() < give_up;)
    width = job(std::chrono::microseconds(100));
  EXPECT_EQ(width, 2);
}
#endif

TEST(ThreadPool, DestroyedWithWorkersAsleep) {
  for (int n : {2, 5}) {
    auto pool = std::make_unique<ThreadPool>(n, 0);
    pool->run([](int, int) {});
    await_sleeping(*pool, n - 1);
    pool.reset();  // joins: the workers must wake to see the pool stopping
  }
  SUCCEED();
}

}  // namespace
}  // namespace hark::cpu
