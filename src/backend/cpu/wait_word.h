// WaitWord: a 32-bit counter that threads wait on to change: they spin for a bounded time, then
// sleep in the kernel (a futex on Linux, std::atomic::wait elsewhere) until a writer wakes them.
//
// Spinning answers in well under a microsecond, which is what a decoder step's ~150 barriers need
// when every thread has its own core; sleeping hands the core to whoever needs it when the
// machine is busy (a spinning thread burns the core its partner is waiting to run on). Writers
// pay a system call only when someone sleeps.
#pragma once
#include <atomic>
#include <cstdint>

namespace hark::cpu {

class WaitWord {
 public:
  uint32_t load() const { return v_.load(std::memory_order_acquire); }

  // Adds `d` (wrapping) and wakes every sleeper. Returns the previous value.
  uint32_t add(uint32_t d);
  // Subtracts `d`; wakes the sleepers only when the result is 0 (a count that waiters wait to
  // reach zero). Returns the new value.
  uint32_t sub(uint32_t d);
  // Threads asleep on this word now (or about to be: counted just before they sleep).
  uint32_t sleepers() const { return sleepers_.load(std::memory_order_seq_cst); }
  // Sets the value without waking anyone: only while nobody can be waiting on it.
  void reset(uint32_t v) { v_.store(v, std::memory_order_relaxed); }

  // Returns once the value is no longer `old` (at once if it already differs). Spins for up to
  // `spin_ns` nanoseconds first (0: sleep at once). Returns 0 if it never slept, else how long
  // it waited in all, spin and sleep (at least 1 ns).
  int64_t wait_while(uint32_t old, int64_t spin_ns) const;

 private:
  void wake_all();

  std::atomic<uint32_t> v_{0};
  mutable std::atomic<uint32_t> sleepers_{0};
};

}  // namespace hark::cpu
