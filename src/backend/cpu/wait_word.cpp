#include "backend/cpu/wait_word.h"

#include <algorithm>
#include <chrono>
#include <climits>

#if defined(__linux__)
#include <linux/futex.h>
#include <sys/syscall.h>
#include <unistd.h>
#endif

#if defined(__x86_64__) || defined(__i386__)
#include <immintrin.h>
#define HARK_CPU_RELAX() _mm_pause()
#elif defined(__aarch64__)
#define HARK_CPU_RELAX() __asm__ __volatile__("yield")
#else
#define HARK_CPU_RELAX() ((void)0)
#endif

namespace hark::cpu {

namespace {

#if defined(__linux__)
// The futex calls take the word's address; std::atomic<uint32_t> is a plain 32-bit word.
static_assert(sizeof(std::atomic<uint32_t>) == sizeof(uint32_t) && std::atomic<uint32_t>::is_always_lock_free);

uint32_t* word_address(const std::atomic<uint32_t>& a) {
  return reinterpret_cast<uint32_t*>(const_cast<std::atomic<uint32_t>*>(&a));
}

void sleep_while(const std::atomic<uint32_t>& a, uint32_t old) {
  // Returns at once (EAGAIN) if the word is no longer `old` when the kernel looks, so a wake
  // between our last check and the call cannot be lost; EINTR and spurious wakes just return.
  syscall(SYS_futex, word_address(a), FUTEX_WAIT_PRIVATE, old, nullptr, nullptr, 0);
}

void wake(const std::atomic<uint32_t>& a) {
  syscall(SYS_futex, word_address(a), FUTEX_WAKE_PRIVATE, INT_MAX, nullptr, nullptr, 0);
}
#else
void sleep_while(const std::atomic<uint32_t>& a, uint32_t old) { a.wait(old, std::memory_order_seq_cst); }
void wake(const std::atomic<uint32_t>& a) { const_cast<std::atomic<uint32_t>&>(a).notify_all(); }
#endif

}  // namespace

uint32_t WaitWord::add(uint32_t d) {
  // seq_cst on both sides (this write then the sleepers read here; the sleepers write then the
  // value read in wait_while): either the writer sees the sleeper, or the sleeper sees the new
  // value and does not sleep.
  const uint32_t prev = v_.fetch_add(d, std::memory_order_seq_cst);
  if (sleepers_.load(std::memory_order_seq_cst) != 0) wake_all();
  return prev;
}

uint32_t WaitWord::sub(uint32_t d) {
  const uint32_t now = v_.fetch_sub(d, std::memory_order_seq_cst) - d;
  if (now == 0 && sleepers_.load(std::memory_order_seq_cst) != 0) wake_all();
  return now;
}

void WaitWord::wake_all() { wake(v_); }

int64_t WaitWord::wait_while(uint32_t old, int64_t spin_ns) const {
  if (v_.load(std::memory_order_acquire) != old) return 0;
  using Clock = std::chrono::steady_clock;
  const Clock::time_point start = Clock::now();
  if (spin_ns > 0) {
    // Look at the clock every few pauses only: a pause is ~10-150 cycles depending on the CPU,
    // so the budget is kept in time, not in pauses.
    const Clock::time_point until = start + std::chrono::nanoseconds(spin_ns);
    do {
      for (int i = 0; i < 16; ++i) {
        HARK_CPU_RELAX();
        if (v_.load(std::memory_order_acquire) != old) return 0;
      }
    } while (Clock::now() < until);
  }
  sleepers_.fetch_add(1, std::memory_order_seq_cst);
  while (v_.load(std::memory_order_seq_cst) == old) sleep_while(v_, old);
  sleepers_.fetch_sub(1, std::memory_order_relaxed);
  return std::max<int64_t>(1, std::chrono::duration_cast<std::chrono::nanoseconds>(Clock::now() - start).count());
}

}  // namespace hark::cpu
